/**
 * Issue 24, item 6: renderers and tools that hold with every client — the strict variant each provider
 * takes through the AI SDK, an opening user turn in every renderer, a directive's own call never a search
 * match, outcomes that say what happened to every member of a group, range summaries in their members' role.
 */
import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import { describe, expect, it } from "vitest";
import { aiSDKTools, ContextWindow, directiveTools, ManualClock, MemoryStore, toAISDK, toAnthropic, toOpenAI, Transcript, type KindPolicy } from "../../src/index.js";
import { aiSDKProblems, anthropicProblems, openAIChatProblems } from "./rules.js";
import { immediate } from "../window/immediate.js";

const kinds = {
  turn: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  toolCall: { store: null, modes: ["drop"], lossy: "with-flag" },
  toolResult: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
} as const satisfies Record<string, KindPolicy>;

function setup(callsBacked = false) {
  const clock = new ManualClock(0);
  const k = callsBacked ? { ...kinds, toolCall: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" } as const } : kinds;
  const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) }, kinds: k }));
  const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
  return { win, t };
}

describe("renderers and tools that hold with every client (issue 24, item 6)", () => {
  it("a search made through the Transcript never lists its own call, or earlier answers, as a match", async () => {
    const { t } = setup();
    await t.user("find it");
    const first = await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "s1", name: "search", input: { query: "req_only_in_the_query" } }] }));
    expect(first[0]!.text).toMatch(/^search "req_only_in_the_query": no match/);
    const again = await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "s2", name: "search", input: { query: "req_only_in_the_query" } }] }));
    expect(again[0]!.text).toMatch(/: no match/);
    expect(again[0]!.text).toContain("nothing pruned is unrecoverable");
  });

  it("a group prune says what happened to every member: a call with no store is lost while its result is kept", async () => {
    const { win, t } = setup();
    await t.user("go");
    await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "c1", name: "read", input: { f: "a" } }] }), () => "the file");
    const [call, result] = win.entries().slice(1).map((e) => (e.state === "live" ? e.span.id : e.spanId));
    const r = await win.handleToolCall({ name: "prune", arguments: { span_id: result, mode: "drop", accept_lossy: true } });
    expect(r?.outcome).toMatchObject({ status: "reversible", groupPruned: [call], group: [{ spanId: call, status: "lossy" }] });
    expect(r?.text.split("\n")).toEqual([`${result} pruned, recall #2: read`, `${call} pruned, unrecoverable, contents unknown`]);
  });

  it("a range summary over tool pairs renders in the model's role, and every renderer opens with a user turn", async () => {
    const { win, t } = setup(true);
    for (const id of ["c1", "c2"]) await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id, name: "read", input: { id } }] }), () => `out ${id}`);
    // No user turn at all: the window opens with the model's calls.
    for (const m of [toAISDK(win).messages[0], toAnthropic(win).messages[0]]) expect(m?.role).toBe("user");
    expect(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_4", digest: "read two files" })).toMatchObject({ status: "summarized" });
    const anthropic = toAnthropic(win);
    expect(anthropic.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(anthropic.messages[1])).toContain("summary of span_1–span_4");
    expect(toOpenAI(win).map((m) => m.role)).toEqual(["assistant"]);
    expect(anthropicProblems(anthropic)).toEqual([]);
    expect(openAIChatProblems(toOpenAI(win))).toEqual([]);
    expect(await aiSDKProblems(toAISDK(win))).toEqual([]);
  });

  it("aiSDKTools sends the strict variant of the provider the model runs on", async () => {
    const { win } = setup();
    const schemaOf = (tool: unknown) => (tool as { inputSchema: { "~standard": { jsonSchema: { input: () => unknown } } } }).inputSchema["~standard"].jsonSchema.input();
    const anthropic = aiSDKTools(win, directiveTools(), { agentTools: {}, strict: "anthropic" });
    const openai = aiSDKTools(win, directiveTools(), { agentTools: {}, strict: true });
    for (const t of directiveTools()) {
      expect(schemaOf(anthropic[t.name])).toEqual(t.strict.anthropic);
      expect(transformJSONSchema(schemaOf(anthropic[t.name]) as Record<string, unknown>)).toEqual(t.strict.anthropic);
      expect(schemaOf(openai[t.name])).toEqual(t.strict.openai);
    }
    expect(JSON.stringify(schemaOf(anthropic["search"]))).not.toContain('"pattern"');
  });
});
