/**
 * The transcript: each SDK's response appended with the kind mapping, tool calls run (directive tools by
 * the window, the agent's own by its runner, failures as error results), AI SDK steps appended once; and
 * over generated loops (calls left pending, ids reused, directive calls with any arguments) every
 * rendering stays valid for every provider.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, refSpanId, Transcript, type WindowEntry } from "../../src/index.js";
import { toAISDK, toAnthropic, toOpenAI, toOpenAIResponses } from "../../src/providers/index.js";
import { fuzzRuns } from "../reliability/helpers.js";
import { aiSDKProblems, anthropicProblems, openAIChatProblems, openAIResponsesProblems } from "./rules.js";
import { immediate } from "../window/immediate.js";

function setup() {
  const clock = new ManualClock(0);
  const win = new ContextWindow(immediate({
    session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) },
    kinds: {
      turn: { store: "log", modes: ["drop", "summarize"], lossy: "forbid" },
      call: { store: "log", modes: ["drop"], lossy: "with-flag" },
      result: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
      scratchResult: { store: null, modes: ["drop"], lossy: "with-flag" },
    },
  }));
  const t = new Transcript(win, {
    user: "turn", assistant: "turn", toolCall: "call",
    toolResult: (tool) => (tool === "scratch" ? "scratchResult" : "result"),
  });
  return { win, t };
}

describe("Transcript", () => {
  it("appends each SDK's response shape: text as the model's turn, calls as tool calls, and returns the calls", async () => {
    const { win, t } = setup();
    const chat = await t.appendOpenAIChat({ choices: [{ message: { content: "checking", tool_calls: [{ id: "c1", type: "function", function: { name: "get", arguments: '{"a":1}' } }] } }] });
    const resp = await t.appendOpenAIResponse({ output: [{ type: "reasoning" }, { type: "message", content: [{ type: "output_text", text: "more" }] }, { type: "function_call", call_id: "c2", name: "get", arguments: "{}" }] });
    const anth = await t.appendAnthropic({ content: [{ type: "thinking" }, { type: "text", text: "and" }, { type: "tool_use", id: "toolu_1", name: "get", input: { b: 2 } }] });
    expect([...chat, ...resp, ...anth].map((c) => [c.id, c.arguments])).toEqual([["c1", '{"a":1}'], ["c2", "{}"], ["toolu_1", { b: 2 }]]);
    expect(win.entries().map((e) => (e.state === "live" ? [e.span.kind, e.span.message?.role, e.span.text] : null))).toEqual([
      ["turn", "assistant", "checking"], ["call", "tool-call", '{"a":1}'],
      ["turn", "assistant", "more"], ["call", "tool-call", "{}"],
      ["turn", "assistant", "and"], ["call", "tool-call", '{"b":2}'],
    ]);
  });

  it("runs calls: directive tools by the window, others by the runner; a missing or failing runner is an error result", async () => {
    const { win, t } = setup();
    await t.user("X-Request-Id: req_8f3a2c91");
    const calls = [
      { id: "a", name: "prune", arguments: '{"span_id":"span_1","mode":"drop"}' },
      { id: "b", name: "get", arguments: "{}" },
      { id: "c", name: "boom", arguments: "{}" },
      { id: "d", name: "scratch", arguments: "{}" },
    ];
    const results = await t.handleToolCalls(calls, (call) => {
      if (call.name === "boom") throw new Error("ENOENT: no such file");
      if (call.name === "scratch") return { text: "partial", isError: true };
      return "ok";
    });
    expect(results.map((r) => [r.id, r.text, r.isError])).toEqual([
      ["a", "span_1 pruned, recall #1: req_8f3a2c91", false], ["b", "ok", false], ["c", "ENOENT: no such file", true], ["d", "partial", true],
    ]);
    expect(win.entries().at(-1)).toMatchObject({ state: "live", span: { kind: "scratchResult", message: { isError: true } } });
    expect((await t.handleToolCalls([{ id: "e", name: "get", arguments: "{}" }]))[0]).toMatchObject({ isError: true, text: "no tool named get" });
  });

  it("AI SDK steps are appended once, whichever way they arrive", async () => {
    const { win, t } = setup();
    const step = {
      callId: "gen1", stepNumber: 0,
      content: [
        { type: "text", text: "looking" },
        { type: "tool-call", toolCallId: "c1", toolName: "get", input: { q: 1 } },
        { type: "tool-result", toolCallId: "c1", toolName: "get", input: { q: 1 }, output: { rows: 3 } },
        { type: "tool-call", toolCallId: "c2", toolName: "prune", input: {} },
        { type: "tool-result", toolCallId: "c2", toolName: "prune", input: {}, output: { status: "invalid", text: "directive ignored: x", isError: true } },
        { type: "tool-call", toolCallId: "c3", toolName: "get", input: {} },
        { type: "tool-error", toolCallId: "c3", toolName: "get", input: {}, error: new Error("timeout") },
      ],
    };
    await t.appendAISDKSteps([step]);
    await t.appendAISDKSteps([step]);
    const texts = win.entries().map((e) => (e.state === "live" ? e.span.text : ""));
    expect(texts).toEqual(["looking", '{"q":1}', '{"rows":3}', "{}", "directive ignored: x", "{}", "timeout"]);
    const tool = toAISDK(win).messages.filter((m) => m.role === "tool").flatMap((m) => m.content.map((p) => p.output.type));
    expect(tool).toEqual(["text", "error-text", "error-text"]);
  });

  it("appendResponse is the one path: by a provider's name it appends what each shortcut appends, AI SDK steps once, and refuses a name not registered", async () => {
    const chatResponse = { choices: [{ message: { content: "checking", tool_calls: [{ id: "c1", type: "function", function: { name: "get", arguments: '{"a":1}' } }] } }] } as const;
    const responsesResponse = { output: [{ type: "message", content: [{ type: "output_text", text: "more" }] }, { type: "function_call", call_id: "c2", name: "get", arguments: "{}" }] } as const;
    const anthropicMessage = { content: [{ type: "text", text: "and" }, { type: "tool_use", id: "toolu_1", name: "get", input: { b: 2 } }] } as const;
    const step = { callId: "gen1", stepNumber: 0, content: [{ type: "text", text: "looking" }, { type: "tool-call", toolCallId: "c9", toolName: "get", input: {} }] };
    const live = (w: ContextWindow) => w.entries().map((e) => (e.state === "live" ? [e.span.kind, e.span.message?.role, e.span.text] : null));
    const byName = setup();
    const byShortcut = setup();
    const calls = [
      ...(await byName.t.appendResponse("openai-chat", chatResponse)),
      ...(await byName.t.appendResponse("openai-responses", responsesResponse)),
      ...(await byName.t.appendResponse("anthropic", anthropicMessage)),
      ...(await byName.t.appendResponse("ai-sdk", step)),
    ];
    expect(await byName.t.appendResponse("ai-sdk", step)).toEqual([]);
    const shortcutCalls = [
      ...(await byShortcut.t.appendOpenAIChat(chatResponse)),
      ...(await byShortcut.t.appendOpenAIResponse(responsesResponse)),
      ...(await byShortcut.t.appendAnthropic(anthropicMessage)),
    ];
    await byShortcut.t.appendAISDKSteps([step, step]);
    expect(calls.slice(0, 3)).toEqual(shortcutCalls);
    expect(calls.map((c) => c.id)).toEqual(["c1", "c2", "toolu_1", "c9"]);
    expect(live(byName.win)).toEqual(live(byShortcut.win));
    await expect(byName.t.appendResponse("gemini" as "anthropic", anthropicMessage)).rejects.toThrow(
      'Transcript: no provider "gemini"; one of anthropic, openai-chat, openai-responses, ai-sdk',
    );
  });

  const DIRECTIVE_NAMES = new Set(["prune", "recall", "map", "search", "summarize_range", "compact"]);
  it(`generated loops: whatever the model calls and whatever is left pending, every rendering is valid (${fuzzRuns(400)} runs)`, { timeout: 120_000 }, async () => {
    const call = fc.record({
      id: fc.constantFrom("c1", "c2", "c3", "bad id"),
      // Names no provider takes back in history (finding 25.8) among them.
      name: fc.constantFrom("get", "prune", "recall", "scratch", "multi_tool_use.parallel", "functions.get", "名前", "search", "map", "compact"),
      arguments: fc.oneof(
        fc.record({ span_id: fc.constantFrom("span_1", "span_2", "span_3", "span_5", "#1", "#2"), mode: fc.constantFrom("drop", "summarize", "compress"), digest: fc.constantFrom(null, "gist"), accept_lossy: fc.constantFrom(null, true) }).map((a) => JSON.stringify(a)),
        fc.constantFrom('{"query":"gist"}', '{"query":"span_id"}', "{}"),
        fc.string({ maxLength: 12 }),
      ),
    });
    const turn = fc.record({ text: fc.option(fc.string({ maxLength: 10 })), calls: fc.array(call, { maxLength: 3 }), answer: fc.constantFrom("all", "some", "none") });
    await fc.assert(
      fc.asyncProperty(fc.array(turn, { minLength: 1, maxLength: 6 }), fc.option(fc.constantFrom("done\n", "ok \n\n", "x\u2028", "")), async (turns, endOnModel) => {
        const { win, t } = setup();
        await t.user("question");
        for (const tr of turns) {
          const calls = await t.appendOpenAIChat({
            choices: [{ message: { content: tr.text, tool_calls: tr.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) } }],
          });
          const answered = tr.answer === "all" ? calls : tr.answer === "some" ? calls.slice(0, 1) : [];
          const results = await t.handleToolCalls(answered, () => "ok");
          // A search never matches a directive tool's call or answer, its own call included, whatever the
          // ids (a provider may reuse one for the agent's own tool) (issue 24, item 6).
          const traffic = new Set(win.entries().flatMap((e) => (e.state === "live" && e.span.message && "callId" in e.span.message && DIRECTIVE_NAMES.has(e.span.message.toolName) ? [e.span.id] : [])));
          for (const r of results) {
            if (r.directive?.outcome.op !== "search" || r.directive.outcome.status === "invalid") continue;
            for (const m of r.directive.outcome.matches) expect({ match: m.spanId, traffic: traffic.has(m.spanId) }).toEqual({ match: m.spanId, traffic: false });
          }
        }
        // A loop may end on the model's text (finding 25.10: Anthropic refuses it ending in whitespace).
        if (endOnModel === null) await t.user("next");
        else await t.assistant(endOnModel);
        const problems = [
          ...(await aiSDKProblems(toAISDK(win))),
          ...openAIChatProblems(toOpenAI(win)),
          ...openAIResponsesProblems(toOpenAIResponses(win)),
          ...anthropicProblems(toAnthropic(win)),
        ];
        expect(problems).toEqual([]);
        // A compaction point folds the directive calls acted on with their results, never leaving one orphaned,
        // and never one of the agent's own calls, even under an id a directive call reused.
        const idOf = (e: WindowEntry) => (e.state === "live" ? e.span.id : e.spanId);
        const own = win.entries().filter((e) => e.state === "live" && e.span.message && "callId" in e.span.message && !DIRECTIVE_NAMES.has(e.span.message.toolName)).map(idOf);
        await win.compact();
        const after = new Set(win.entries().map(idOf));
        expect(own.filter((id) => !after.has(id))).toEqual([]);
        expect([
          ...(await aiSDKProblems(toAISDK(win))),
          ...openAIChatProblems(toOpenAI(win)),
          ...openAIResponsesProblems(toOpenAIResponses(win)),
          ...anthropicProblems(toAnthropic(win)),
        ]).toEqual([]);
      }),
      { numRuns: fuzzRuns(400) },
    );
  });
});

/** What a call threw: its class and message; `null` when it did not throw. */
async function thrown(p: Promise<unknown>): Promise<[string, string] | null> {
  try {
    await p;
    return null;
  } catch (err) {
    return [(err as Error).constructor.name, (err as Error).message];
  }
}

describe("responses are untrusted: read whole before anything is appended, all or nothing", () => {
  const call = (id: unknown) => ({ id, type: "function", function: { name: "get", arguments: "{}" } });
  const step = (stepNumber: number, content: unknown) => ({ callId: "gen1", stepNumber, content });

  it("a Chat call whose id or name is not a string is refused, naming it, with nothing appended; the window renders on (p2, p3)", async () => {
    // Such an id was appended; then every renderer threw `id.replace is not a function`, also after a resume,
    // and a number id was sent back as a number.
    for (const id of [7, null, { bogus: 1 }, ["x"], undefined]) {
      const { win, t } = setup();
      await t.user("hello");
      const before = JSON.stringify(win.entries());
      const response = { choices: [{ message: { content: "calling", tool_calls: [call("c0"), call(id)] } }] };
      expect(await thrown(t.appendOpenAIChat(response as never))).toEqual(["TypeError", "Transcript.appendOpenAIChat: choices[0].message.tool_calls[1].id is not a string"]);
      expect(JSON.stringify(win.entries())).toBe(before);
      expect(toOpenAI(win)).toHaveLength(1);
    }
    const { win, t } = setup();
    for (const name of [undefined, 5, null]) {
      const message = { content: null, tool_calls: [{ id: "a", type: "function", function: { name, arguments: "{}" } }] };
      expect(await thrown(t.appendOpenAIChat(message as never))).toEqual(["TypeError", "Transcript.appendOpenAIChat: tool_calls[0].function.name is not a string"]);
    }
    // The same rule in every reader.
    expect(await thrown(t.appendAnthropic({ content: [{ type: "tool_use", id: 7, name: "get", input: {} }] } as never))).toEqual(["TypeError", "Transcript.appendAnthropic: content[0].id is not a string"]);
    expect(await thrown(t.appendOpenAIResponse({ output: [{ type: "function_call", call_id: "c", name: { n: 1 }, arguments: "{}" }] }))).toEqual(["TypeError", "Transcript.appendOpenAIResponse: output[0].name is not a string"]);
    expect(await thrown(t.appendAISDKSteps([step(0, [{ type: "tool-call", toolName: "get", input: {} }])] as never))).toEqual(["TypeError", "Transcript.appendAISDKSteps: steps[0].content[0].toolCallId is not a string"]);
    // And by the transcript's own methods, before the window is asked.
    expect(await thrown(t.toolCall({ id: 7 as unknown as string, name: "get", arguments: "{}" }))).toEqual(["TypeError", "Transcript.toolCall: the call's id is not a string"]);
    expect(await thrown(t.toolResult({ id: "a", name: null as unknown as string, text: "ok", isError: false }))).toEqual(["TypeError", "Transcript.toolResult: the result's name is not a string"]);
    expect(win.entries()).toEqual([]);
  });

  // [method, response, the error's message after `Transcript.<method>: `]
  const cases: ReadonlyArray<readonly [string, (t: ReturnType<typeof setup>["t"]) => Promise<unknown>, string]> = [
    ["anthropic, content null", (t) => t.appendAnthropic({ content: null } as never), "appendAnthropic: content is not an array"],
    ["anthropic, content missing", (t) => t.appendAnthropic({} as never), "appendAnthropic: content is not an array"],
    ["anthropic, content a string", (t) => t.appendAnthropic({ content: "hi" } as never), "appendAnthropic: content is not an array"],
    ["anthropic, no response", (t) => t.appendAnthropic(null as never), "appendAnthropic: the response is not an object"],
    ["anthropic, null block after text", (t) => t.appendAnthropic({ content: [{ type: "text", text: "partial" }, null] } as never), "appendAnthropic: content[1] is not an object"],
    ["anthropic, null after a tool_use", (t) => t.appendAnthropic({ content: [{ type: "text", text: "t" }, { type: "tool_use", id: "a", name: "get", input: {} }, null] } as never), "appendAnthropic: content[2] is not an object"],
    ["anthropic, text not a string", (t) => t.appendAnthropic({ content: [{ type: "text", text: 5 }] } as never), "appendAnthropic: content[0].text is not a string"],
    ["anthropic, applied_edits not an array", (t) => t.appendAnthropic({ content: [{ type: "text", text: "t" }], context_management: { applied_edits: 5 } } as never), "appendAnthropic: context_management.applied_edits is not an array"],
    ["anthropic, applied_edits [null]", (t) => t.appendAnthropic({ content: [{ type: "text", text: "t" }], context_management: { applied_edits: [null] } } as never), "appendAnthropic: context_management.applied_edits[0] is not an object"],
    ["anthropic, a getter that throws", (t) => t.appendAnthropic({ get content(): never { throw new Error("boom"); } }), "appendAnthropic: the response cannot be read (boom)"],
    ["chat, choices null", (t) => t.appendOpenAIChat({ choices: null } as never), "appendOpenAIChat: choices is not an array"],
    ["chat, choices [null]", (t) => t.appendOpenAIChat({ choices: [null] } as never), "appendOpenAIChat: choices[0] is not an object"],
    ["chat, content a number", (t) => t.appendOpenAIChat({ content: 5 } as never), "appendOpenAIChat: content is neither a string nor null"],
    ["chat, tool_calls a string", (t) => t.appendOpenAIChat({ content: "text first", tool_calls: "abc" } as never), "appendOpenAIChat: tool_calls is not an array"],
    ["chat, tool_calls [null]", (t) => t.appendOpenAIChat({ content: "text first", tool_calls: [null] } as never), "appendOpenAIChat: tool_calls[0] is not an object"],
    ["chat, a good call then function null", (t) => t.appendOpenAIChat({ content: "t", tool_calls: [call("a"), { id: "b", type: "function", function: null }] } as never), "appendOpenAIChat: tool_calls[1].function is not an object"],
    ["responses, output null", (t) => t.appendOpenAIResponse({ output: null } as never), "appendOpenAIResponse: output is not an array"],
    ["responses, null after a message", (t) => t.appendOpenAIResponse({ output: [{ type: "message", content: [{ type: "output_text", text: "first" }] }, null] } as never), "appendOpenAIResponse: output[1] is not an object"],
    ["responses, content [null]", (t) => t.appendOpenAIResponse({ output: [{ type: "message", content: [null] }] }), "appendOpenAIResponse: output[0].content[0] is not an object"],
    ["responses, a good call then call_id 7", (t) => t.appendOpenAIResponse({ output: [{ type: "function_call", call_id: "a", name: "get", arguments: "{}" }, { type: "function_call", call_id: 7, name: "get" }] }), "appendOpenAIResponse: output[1].call_id is not a string"],
    ["compact, output [null]", (t) => t.appendOpenAICompaction({ output: [null] } as never), "appendOpenAICompaction: output[0] is not an object"],
    ["ai sdk, steps null", (t) => t.appendAISDKSteps(null as never), "appendAISDKSteps: steps is not an array"],
    ["ai sdk, step null", (t) => t.appendAISDKSteps([null] as never), "appendAISDKSteps: steps[0] is not an object"],
    ["ai sdk, content null", (t) => t.appendAISDKSteps([step(0, null)] as never), "appendAISDKSteps: steps[0].content is not an array"],
    ["ai sdk, a good step then a part null", (t) => t.appendAISDKSteps([step(0, [{ type: "text", text: "hello" }]), step(1, [{ type: "text", text: "more" }, null])] as never), "appendAISDKSteps: steps[1].content[1] is not an object"],
    ["by name, content null", (t) => t.appendResponse("anthropic", { content: null } as never), "appendResponse: content is not an array"],
  ];

  it("a response that cannot be read is a TypeError naming the field, and nothing of it (nor of the steps with it) is appended (p1)", async () => {
    for (const [label, append, message] of cases) {
      const { win, t } = setup();
      await t.user("hello");
      const before = JSON.stringify(win.entries());
      const audited = (await win.auditLog()).length;
      expect([label, await thrown(append(t))]).toEqual([label, ["TypeError", `Transcript.${message}`]]);
      expect([label, JSON.stringify(win.entries())]).toEqual([label, before]);
      expect((await win.auditLog()).length).toBe(audited);
      // No id was taken: the next span is the second the session registered.
      expect(refSpanId(await t.user("after"))).toBe("span_2");
    }
  });

  it("AI SDK steps refused together are appended when given again, each once", async () => {
    const { win, t } = setup();
    const good = step(0, [{ type: "text", text: "hello" }, { type: "tool-call", toolCallId: "c1", toolName: "get", input: { q: 1 } }]);
    expect(await thrown(t.appendAISDKSteps([good, step(1, [null])] as never))).not.toBeNull();
    await t.appendAISDKSteps([good, good] as never);
    await t.appendAISDKSteps([good] as never);
    expect(win.entries().map((e) => (e.state === "live" ? e.span.text : ""))).toEqual(["hello", '{"q":1}']);
  });

  it("handleToolCalls checks every call before running any: an id that is not a string runs nothing, appends nothing", async () => {
    const { win, t } = setup();
    const ran: string[] = [];
    const calls = [{ id: "a", name: "get", arguments: "{}" }, { id: 7, name: "get", arguments: "{}" }] as never;
    expect(await thrown(t.handleToolCalls(calls, (c) => (ran.push(c.id), "ok")))).toEqual(["TypeError", "Transcript.handleToolCalls: calls[1]'s id is not a string"]);
    expect(ran).toEqual([]);
    expect(win.entries()).toEqual([]);
  });
});
