/**
 * The directive tools: one per operation of the directive union, each a root object schema every
 * provider takes; the strict variants are fixed points of OpenAI's and Anthropic's own strict-schema
 * helpers (so the SDKs would send them unchanged), and a strict call's `null`s are executed.
 */
import type { Tool as AnthropicToolParam } from "@anthropic-ai/sdk/resources/messages/messages";
import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import type { ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import type { FunctionTool } from "openai/resources/responses/responses";
import { toStrictJsonSchema } from "openai/lib/transform";
import type { JSONSchema } from "openai/lib/jsonschema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fuzzRuns } from "../reliability/helpers.js";
import type { ToolSet } from "ai";
import { aiSDKTools, anthropicTools, ContextWindow, directiveSchema, directiveTools, ManualClock, MemoryStore, openAIChatTools, openAIResponsesTools, Transcript } from "../../src/index.js";
import { immediate } from "../window/immediate.js";

const kinds = {
  note: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

function window() {
  const clock = new ManualClock(0);
  return new ContextWindow(immediate({ session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) }, kinds }));
}

describe("directive tools", () => {
  it("one tool per member of the directive union, named by its op, each a closed root object", () => {
    const tools = directiveTools();
    expect(tools.map((t) => t.name)).toEqual(directiveSchema().options.map((o) => o.shape.op.value));
    for (const t of tools) {
      for (const schema of [t.inputSchema, t.strict.openai, t.strict.anthropic]) {
        expect(schema.type).toBe("object");
        expect(schema.additionalProperties).toBe(false);
        expect(Object.keys(schema.properties)).not.toContain("op");
        expect(schema).not.toHaveProperty("oneOf");
        expect(schema).not.toHaveProperty("anyOf");
      }
      expect(t.description.length).toBeGreaterThan(20);
    }
  });

  it("names are configurable, and a name providers refuse or a duplicate throws", () => {
    expect(directiveTools({ names: { prune: "context_prune" } }).map((t) => t.name)).toEqual(["context_prune", "recall", "map", "search", "summarize_range", "compact"]);
    expect(() => directiveTools({ names: { prune: "context prune" } })).toThrow(TypeError);
    expect(() => directiveTools({ names: { prune: "recall" } })).toThrow(/two operations/);
    expect(() => directiveTools({ names: { purge: "x" } })).toThrow(/no operation purge/);
  });

  it("OpenAI strict: every property required, optional ones nullable, and OpenAI's helper leaves it unchanged", () => {
    for (const t of directiveTools()) {
      const s = t.strict.openai;
      expect([...s.required].sort()).toEqual(Object.keys(s.properties).sort());
      for (const key of Object.keys(s.properties)) {
        if (!t.inputSchema.required.includes(key)) expect(JSON.stringify(s.properties[key])).toContain('"null"');
      }
      expect(toStrictJsonSchema(s as unknown as JSONSchema)).toEqual(s);
      expect(JSON.stringify(s)).not.toMatch(/minLength|maxLength|\$schema|oneOf/);
    }
  });

  it("for every set of modes a policy can allow, both strict variants stay fixed points of the SDKs' helpers", () => {
    const modes = ["drop", "summarize", "compress"] as const;
    for (let mask = 1; mask < 8; mask++) {
      const subset = modes.filter((_, i) => mask & (1 << i));
      for (const t of directiveTools({ modes: subset })) {
        expect(toStrictJsonSchema(t.strict.openai as unknown as JSONSchema)).toEqual(t.strict.openai);
        expect(transformJSONSchema(t.strict.anthropic)).toEqual(t.strict.anthropic);
      }
    }
  });

  it("Anthropic strict: Anthropic's helper leaves it unchanged (nothing it would move into the description)", () => {
    for (const t of directiveTools()) {
      expect(transformJSONSchema(t.strict.anthropic)).toEqual(t.strict.anthropic);
      expect(JSON.stringify(t.strict.anthropic)).not.toMatch(/pattern|minLength|maxLength|\$schema/);
    }
  });

  it("the non-strict schemas are the zod schema's own JSON Schema, minus op", () => {
    const prune = directiveTools()[0]!;
    expect(prune.inputSchema.properties["span_id"]).toMatchObject({ type: "string", pattern: "^span_[1-9][0-9]{0,8}$" });
    expect(prune.inputSchema.required).toEqual(["span_id", "mode"]);
    expect(directiveTools({ modes: ["drop"] })[0]!.inputSchema.properties["mode"]).toMatchObject({ enum: ["drop"] });
  });

  it("provider shapes are assignable to each SDK's request types", () => {
    const chat: ChatCompletionFunctionTool[] = openAIChatTools(directiveTools(), { strict: true });
    const responses: FunctionTool[] = openAIResponsesTools();
    const anthropic: AnthropicToolParam[] = anthropicTools(directiveTools(), { strict: true });
    expect(chat[0]!.function.strict).toBe(true);
    expect(responses[0]!.strict).toBe(false);
    expect(anthropic[0]!.strict).toBe(true);
  });
});

describe("window.handleToolCall", () => {
  it("a strict-mode call with nulls is executed", async () => {
    const win = window();
    await win.append({ kind: "note", text: "deploy log" });
    const r = await win.handleToolCall({ name: "prune", arguments: '{"span_id":"span_1","mode":"drop","digest":null,"accept_lossy":null}' });
    expect(r).toMatchObject({ op: "prune", isError: false, outcome: { status: "reversible" }, text: "span_1 pruned, recall #1" });
  });

  it("accept_lossy counts only as the JSON value true, also through a tool call", async () => {
    const win = window();
    await win.append({ kind: "scratch", text: "plan" });
    const quoted = await win.handleToolCall({ name: "prune", arguments: { span_id: "span_1", mode: "drop", accept_lossy: "true" } });
    expect(quoted).toMatchObject({ isError: true, outcome: { status: "invalid", op: "prune" } });
    const nulled = await win.handleToolCall({ name: "prune", arguments: { span_id: "span_1", mode: "drop", accept_lossy: null } });
    expect(nulled).toMatchObject({ isError: false, outcome: { status: "rejected" } });
    const real = await win.handleToolCall({ name: "prune", arguments: { span_id: "span_1", mode: "drop", accept_lossy: true } });
    expect(real).toMatchObject({ outcome: { status: "lossy" }, text: "span_1 pruned, unrecoverable, contents unknown" });
  });

  it("recall answers with the bytes, and the three answers stay apart", async () => {
    const win = window();
    await win.append({ kind: "note", text: "X-Request-Id: req_7f3a9c2e41" });
    await win.handleToolCall({ name: "prune", arguments: { span_id: "span_1", mode: "drop" } });
    const found = await win.handleToolCall({ name: "recall", arguments: '{"span_id":"#1"}' });
    expect(found?.text).toBe("span_1 recalled (#1):\n│ X-Request-Id: req_7f3a9c2e41");
    const unknown = await win.handleToolCall({ name: "recall", arguments: { span_id: "span_9" } });
    expect(unknown?.outcome.status).toBe("unknown");
  });

  it("bad arguments are invalid outcomes, audited, the window unchanged; other tools are not handled", async () => {
    const win = window();
    await win.append({ kind: "note", text: "keep me" });
    const before = win.render();
    for (const args of ["{not json", "[1,2]", 42, null, { span_id: "span_1", mode: "shred" }, "x".repeat(100_000)]) {
      const r = await win.handleToolCall({ name: "prune", arguments: args });
      expect(r?.outcome.status, String(args).slice(0, 20)).toBe("invalid");
      expect(r?.isError).toBe(true);
      expect(r?.text).toMatch(/^directive ignored: /);
    }
    expect(win.render().split("\n\n")[0]).toBe(before);
    const log = await win.auditLog();
    expect(log.filter((r) => r.status === "invalid")).toHaveLength(6);
    expect(await win.handleToolCall({ name: "get_weather", arguments: "{}" })).toBeNull();
    const hostile = { get name(): string { throw new Error("boom"); }, arguments: {} };
    expect(await win.handleToolCall(hostile)).toBeNull();
  });

  it("any arguments, as text or values: an outcome, never a throw; a refused call changes nothing and is audited", async () => {
    const args = fc.oneof(
      fc.jsonValue(),
      fc.string({ maxLength: 80 }),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.record({ span_id: fc.constantFrom("span_1", "span_2", "#1", "x"), mode: fc.constantFrom("drop", "summarize", "x", null), digest: fc.option(fc.string()), accept_lossy: fc.constantFrom(true, false, null, "true", 1) }, { requiredKeys: [] }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("prune", "recall"), args, async (name, a) => {
        const win = window();
        await win.append({ kind: "note", text: "deploy log" });
        const before = win.render();
        const r = await win.handleToolCall({ name, arguments: a });
        expect(r).not.toBeNull();
        expect(r!.text.length).toBeGreaterThan(0);
        const log = await win.auditLog();
        expect(log).toHaveLength(1);
        expect(log[0]!.status).toBe(r!.outcome.status);
        if (r!.outcome.status === "invalid") {
          expect(r!.isError).toBe(true);
          expect(win.render().split("\n\n")[0]).toBe(before);
        }
      }),
      { numRuns: fuzzRuns(500) },
    );
  });

  it("renamed tools dispatch by their names", async () => {
    const tools = directiveTools({ names: { prune: "context_prune", recall: "context_recall" } });
    const win = window();
    await win.append({ kind: "note", text: "a" });
    expect(await win.handleToolCall({ name: "prune", arguments: { span_id: "span_1", mode: "drop" } }, tools)).toBeNull();
    expect((await win.handleToolCall({ name: "context_prune", arguments: { span_id: "span_1", mode: "drop" } }, tools))?.outcome.status).toBe("reversible");
  });
});

describe("aiSDKTools", () => {
  it("is a ToolSet; the model is sent each tool's schema (strict when asked) and every input reaches the window", async () => {
    const { generateText } = await import("ai");
    const { MockLanguageModelV4 } = await import("ai/test");
    const win = window();
    await win.append({ kind: "note", text: "deploy log" });
    const tools: ToolSet = aiSDKTools(win, directiveTools(), { agentTools: {}, strict: true });
    const seen: unknown[] = [];
    let step = 0;
    const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 0, text: 0, reasoning: undefined } };
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        seen.push(options.tools);
        const calls = step++ === 0 ? [{ type: "tool-call" as const, toolCallId: "c1", toolName: "prune", input: '{"span_id":7}' }] : [];
        return { content: calls, finishReason: { unified: calls.length ? "tool-calls" : "stop", raw: undefined }, usage, warnings: [] };
      },
    });
    const { isStepCount } = await import("ai");
    const result = await generateText({ model, prompt: "go", tools, stopWhen: isStepCount(3) });
    const sent = seen[0] as Array<{ name: string; inputSchema: unknown; strict?: boolean }>;
    expect(sent.map((t) => [t.name, t.strict])).toEqual([["prune", true], ["recall", true], ["map", true], ["search", true], ["summarize_range", true], ["compact", true]]);
    expect(sent[0]!.inputSchema).toEqual(directiveTools()[0]!.strict.openai);
    // A span_id that is a number: the SDK did not refuse it; the window did, and audited it.
    expect(result.steps[0]!.toolResults[0]!.output).toMatchObject({ status: "invalid", isError: true });
    expect((await win.auditLog()).map((r) => r.status)).toEqual(["invalid"]);
  });
});

/**
 * Finding 25.8, second half: an agent with its own `search` tool, wired as the README showed it
 * (`{ ...myTools, ...aiSDKTools(win) }`, `[...myTools, ...openAIChatTools(directiveTools())]`, a Transcript
 * running its calls), lost that tool without a word: the directive tool of the same name replaced it, and
 * the agent's runner was never called. Each builder and the Transcript now take the agent's tools and
 * refuse a shared name at set-up, naming both; `directiveTools({ names })` resolves it.
 * Seen failing before the fix: no builder threw, and the AI SDK set's `search` was the directive tool.
 */
describe("Finding 25.8: a directive tool never takes the name of one of the agent's tools", () => {
  const collision = /your tool "search" and the directive tool "search" \(the search operation\) have one name.*directiveTools\(\{ names: \{ search: "context_search" \} \}\)/;
  const renamed = () => directiveTools({ names: { search: "context_search" } });

  it("each provider builder refuses a shared name, naming both, and returns the agent's tools with the directive tools", async () => {
    const { tool } = await import("ai");
    const { z } = await import("zod");
    const win = window();
    const schema = { type: "object" as const, properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false as const };
    const chatOwn: ChatCompletionFunctionTool[] = [{ type: "function", function: { name: "search", description: "web search", parameters: schema } }];
    const responsesOwn: FunctionTool[] = [{ type: "function", name: "search", description: "web search", parameters: schema, strict: true }];
    const anthropicOwn: AnthropicToolParam[] = [{ name: "search", description: "web search", input_schema: schema }];
    let ran = 0;
    const aiOwn: ToolSet = { search: tool({ description: "web search", inputSchema: z.object({ q: z.string() }), execute: async () => `hits ${++ran}` }) };

    expect(() => openAIChatTools(directiveTools(), { strict: true, agentTools: chatOwn })).toThrow(collision);
    expect(() => openAIResponsesTools(directiveTools(), { agentTools: responsesOwn })).toThrow(collision);
    expect(() => anthropicTools(directiveTools(), { strict: true, agentTools: anthropicOwn })).toThrow(collision);
    expect(() => aiSDKTools(win, directiveTools(), { agentTools: aiOwn })).toThrow(collision);
    expect(() => openAIChatTools(directiveTools(), { agentTools: [{ type: "custom", custom: { name: "search" } }] })).toThrow(collision);

    // Renamed, every builder sends the agent's tools first, then the directive tools, under their types.
    const chat: ChatCompletionFunctionTool[] = openAIChatTools(renamed(), { strict: true, agentTools: chatOwn }) as ChatCompletionFunctionTool[];
    expect(chat.map((t) => t.function.name)).toEqual(["search", "prune", "recall", "map", "context_search", "summarize_range", "compact"]);
    const responses: FunctionTool[] = openAIResponsesTools(renamed(), { agentTools: responsesOwn });
    expect(responses.map((t) => t.name)).toEqual(["search", "prune", "recall", "map", "context_search", "summarize_range", "compact"]);
    const anthropic: AnthropicToolParam[] = anthropicTools(renamed(), { agentTools: anthropicOwn });
    expect(anthropic.map((t) => t.name)).toEqual(["search", "prune", "recall", "map", "context_search", "summarize_range", "compact"]);
    const ai: ToolSet = aiSDKTools(win, renamed(), { agentTools: aiOwn });
    expect(Object.keys(ai)).toEqual(["search", "prune", "recall", "map", "context_search", "summarize_range", "compact"]);
    // The agent's search is the agent's: its execute runs.
    expect(await (ai["search"]!.execute as (input: unknown, options: unknown) => Promise<unknown>)({ q: "x" }, { toolCallId: "c1", messages: [] })).toBe("hits 1");
  });

  it("a Transcript refuses a shared name too, and with the directive tools renamed the agent's runner gets its calls", async () => {
    const win = window();
    const kindsOf = { user: "note", assistant: "note", toolCall: "note", toolResult: "note" } as const;
    expect(() => new Transcript(win, kindsOf, { agentTools: ["search", "readLog"] })).toThrow(collision);
    expect(() => new Transcript(win, kindsOf, { agentTools: { search: {} } })).toThrow(collision);
    // With the directive tools renamed there is no collision: `search` goes to the runner, `context_search` to the window.
    const t = new Transcript(win, kindsOf, { tools: renamed(), agentTools: ["search"] });
    await t.user("find the request id");
    const seen: string[] = [];
    const results = await t.handleToolCalls(
      [{ id: "c1", name: "search", arguments: '{"q":"req"}' }, { id: "c2", name: "context_search", arguments: '{"query":"request"}' }],
      (call) => {
        seen.push(call.name);
        return "agent hits";
      },
    );
    expect(seen).toEqual(["search"]);
    expect(results.map((r) => [r.name, r.directive?.op ?? null])).toEqual([["search", null], ["context_search", "search"]]);
  });
});

/**
 * Issue 35b: `{ ...myTools, ...aiSDKTools(win) }` replaced the agent's own `search` before any code of ours
 * ran, and the AI SDK shows no tool and no `prepareStep` the set it was given, so no check at a later call
 * can see the dropped tool. The builder that meets both sets is the one place to refuse it: `agentTools` is
 * required there (`{}` for none), in the type and at run time. Seen failing before: `aiSDKTools(win)`
 * compiled and returned a bare set, and the spread lost the agent's `search` without a word.
 */
describe("Issue 35b: the AI SDK tool set cannot be built without the agent's tools", () => {
  it("a bare set does not compile and throws; with agentTools, generateText routes the agent's calls to the agent", async () => {
    const { generateText, isStepCount, tool } = await import("ai");
    const { MockLanguageModelV4 } = await import("ai/test");
    const { z } = await import("zod");
    const win = window();
    // @ts-expect-error agentTools is required
    expect(() => aiSDKTools(win)).toThrow(/pass your own tools as agentTools/);
    // @ts-expect-error agentTools is required
    expect(() => aiSDKTools(win, directiveTools(), { strict: true })).toThrow(/pass your own tools as agentTools/);
    expect(() => aiSDKTools(win, directiveTools(), { agentTools: null as unknown as ToolSet })).toThrow(/agentTools/);

    let ran = 0;
    const myTools = { search: tool({ description: "web search", inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => `web hits for ${q} (${++ran})` }) } satisfies ToolSet;
    expect(() => aiSDKTools(win, directiveTools(), { agentTools: myTools })).toThrow(/your tool "search" and the directive tool "search"/);

    const tools = aiSDKTools(win, directiveTools({ names: { search: "context_search" } }), { agentTools: myTools });
    const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 0, text: 0, reasoning: undefined } };
    let step = 0;
    const sent: string[][] = [];
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        sent.push((options.tools ?? []).map((t) => t.name));
        const calls = step++ === 0
          ? [{ type: "tool-call" as const, toolCallId: "c1", toolName: "search", input: '{"q":"req_7f3a"}' }, { type: "tool-call" as const, toolCallId: "c2", toolName: "context_search", input: '{"query":"req_7f3a"}' }]
          : [];
        return { content: calls, finishReason: { unified: calls.length ? "tool-calls" : "stop", raw: undefined }, usage, warnings: [] };
      },
    });
    const result = await generateText({ model, prompt: "go", tools, stopWhen: isStepCount(3) });
    expect(sent[0]).toEqual(["search", "prune", "recall", "map", "context_search", "summarize_range", "compact"]);
    expect(ran).toBe(1);
    const outputs = Object.fromEntries(result.steps[0]!.toolResults.map((r) => [r.toolName, r.output]));
    expect(outputs["search"]).toBe("web hits for req_7f3a (1)");
    expect(outputs["context_search"]).toMatchObject({ status: "no-match" });
  });
});

describe("Issue 35b, for every set of names: no directive tool ever replaces one of the agent's", () => {
  it("the builder either refuses a shared name, naming it, or returns every agent tool as the agent's own", () => {
    const ops = directiveTools().map((t) => t.op);
    const name = fc.constantFrom("search", "prune", "recall", "map", "compact", "summarize_range", "context_search", "web", "readLog", "ctx_prune");
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 6 }), fc.dictionary(fc.constantFrom(...ops), name, { maxKeys: 3 }), (own, renames) => {
        let tools;
        try {
          tools = directiveTools({ names: renames });
        } catch {
          return; // two operations given one name: refused where the names are chosen
        }
        const agentTools = Object.fromEntries(own.map((n) => [n, { description: `agent's ${n}` }]));
        const shared = tools.map((t) => t.name).filter((n) => (own as readonly string[]).includes(n));
        const win = window();
        if (shared.length > 0) {
          expect(() => aiSDKTools(win, tools, { agentTools })).toThrow(new RegExp(`your tool "${shared[0]}"`));
          return;
        }
        const set = aiSDKTools(win, tools, { agentTools });
        for (const n of own) expect(set[n]).toBe(agentTools[n]);
        expect(Object.keys(set)).toEqual([...own, ...tools.map((t) => t.name)]);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});
