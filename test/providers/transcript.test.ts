/**
 * The transcript: each SDK's response appended with the kind mapping, tool calls run (directive tools by
 * the window, the agent's own by its runner, failures as error results), AI SDK steps appended once; and
 * over generated loops (calls left pending, ids reused, directive calls with any arguments) every
 * rendering stays valid for every provider.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, Transcript, type WindowEntry } from "../../src/index.js";
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
