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
import { describe, expect, it } from "vitest";
import { anthropicTools, ContextWindow, directiveSchema, directiveTools, ManualClock, MemoryStore, openAIChatTools, openAIResponsesTools } from "../../src/index.js";

const kinds = {
  note: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

function window() {
  const clock = new ManualClock(0);
  return new ContextWindow({ session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) }, kinds });
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
    expect(directiveTools({ names: { prune: "context_prune" } }).map((t) => t.name)).toEqual(["context_prune", "recall"]);
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
    expect(found?.text).toBe("span_1 recalled (#1):\nX-Request-Id: req_7f3a9c2e41");
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

  it("renamed tools dispatch by their names", async () => {
    const tools = directiveTools({ names: { prune: "context_prune", recall: "context_recall" } });
    const win = window();
    await win.append({ kind: "note", text: "a" });
    expect(await win.handleToolCall({ name: "prune", arguments: { span_id: "span_1", mode: "drop" } }, tools)).toBeNull();
    expect((await win.handleToolCall({ name: "context_prune", arguments: { span_id: "span_1", mode: "drop" } }, tools))?.outcome.status).toBe("reversible");
  });
});
