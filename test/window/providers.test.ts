import type { ModelMessage } from "ai";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore } from "../../src/index.js";
import { toAISDK, toAnthropic, toOpenAI } from "../../src/providers.js";

const kinds = {
  system: { store: null, modes: ["drop"], lossy: "forbid" },
  chat: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  toolCall: { store: "log", modes: ["drop"], lossy: "with-flag" },
  toolResult: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
} as const;

async function conversation() {
  const clock = new ManualClock(0);
  const win = new ContextWindow({ session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) }, kinds });
  await win.append({ kind: "system", text: "You are a deploy assistant.", message: { role: "system" } });
  await win.append({ kind: "chat", text: "Why did deploy 8812 fail?", message: { role: "user" } });
  const call = await win.append({ kind: "toolCall", text: '{"id":8812}', message: { role: "tool-call", callId: "call_1", toolName: "getDeploy" } });
  await win.append({ kind: "chat", text: "(note appended between call and result)", message: { role: "assistant" } });
  const result = await win.append({ kind: "toolResult", text: "HTTP 502, X-Request-Id: req_7f3a9c2e41", message: { role: "tool-result", callId: "call_1", toolName: "getDeploy" } });
  await win.append({ kind: "toolCall", text: '{"q":"orders"}', message: { role: "tool-call", callId: "call_2", toolName: "search" } });
  await win.append({ kind: "toolResult", text: "3 hits", message: { role: "tool-result", callId: "call_2", toolName: "search" } });
  return { win, call, result };
}

/** Every tool result in an OpenAI array follows, without a gap, the assistant message that called it. */
function openAIPairsIntact(msgs: ChatCompletionMessageParam[]): boolean {
  const pending = new Set<string>();
  for (const m of msgs) {
    if (m.role === "assistant" && m.tool_calls) {
      if (pending.size > 0) return false;
      for (const c of m.tool_calls) pending.add(c.id);
    } else if (m.role === "tool") {
      if (!pending.delete(m.tool_call_id)) return false;
    } else if (pending.size > 0) return false;
  }
  return pending.size === 0;
}

describe("rendering to provider message shapes", () => {
  it("live calls and results render as tool messages, paired, assignable to each SDK's types", async () => {
    const { win } = await conversation();
    // These assignments are the shape check: `npm test` type-checks the test tree with tsc.
    const ai: ModelMessage[] = toAISDK(win.entries());
    const openai: ChatCompletionMessageParam[] = toOpenAI(win.entries());
    const anthropic: { system: string; messages: MessageParam[] } = toAnthropic(win.entries());
    // The note appended between call_1 and its result moves after the result and merges with call_2.
    expect(ai.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "tool"]);
    expect(openai.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "assistant", "tool"]);
    expect(openAIPairsIntact(openai)).toBe(true);
    expect(anthropic.system).toBe("[span_1]\n│ You are a deploy assistant.");
    expect(anthropic.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    const firstCall = anthropic.messages[1]!.content as Array<{ type: string; input?: unknown }>;
    expect(firstCall[0]).toMatchObject({ type: "tool_use", input: { id: 8812 } });
  });

  it("a pruned call/result pair becomes text: no orphaned tool message in any shape", async () => {
    const { win, result } = await conversation();
    const out = await win.prune({ span: result, mode: "summarize", digest: "deploy failed with a 502" });
    expect(out.groupPruned).toEqual(["span_3"]);
    const openai: ChatCompletionMessageParam[] = toOpenAI(win.entries());
    expect(openAIPairsIntact(openai)).toBe(true);
    expect(openai.filter((m) => m.role === "tool")).toHaveLength(1);
    const texts = openai.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
    expect(texts).toContain("span_3 pruned, recall #2");
    expect(texts).toContain("span_5 summary, recall #4");
    const ai = toAISDK(win.entries());
    const calls = ai.flatMap((m) => (m.role === "assistant" ? m.content.filter((p) => p.type === "tool-call") : []));
    const results = ai.flatMap((m) => (m.role === "tool" ? m.content : []));
    expect(calls.map((c) => (c as { toolCallId: string }).toolCallId)).toEqual(results.map((r) => r.toolCallId));
    const { messages } = toAnthropic(win.entries());
    const uses = messages.flatMap((m) => m.content.filter((b) => b.type === "tool_use"));
    const res = messages.flatMap((m) => m.content.filter((b) => b.type === "tool_result"));
    expect(uses).toHaveLength(1);
    expect(res).toHaveLength(1);
  });

  it("tombstones are text parts in the pruned span's place", async () => {
    const clock = new ManualClock(0);
    const win = new ContextWindow({ session: "s", clock, stores: {}, kinds: { note: { store: null, modes: ["drop"], lossy: "with-flag" } } });
    const a = await win.append({ kind: "note", text: "scratch", message: { role: "assistant" } });
    await win.prune({ span: a, mode: "drop", acceptLossy: true });
    expect(toOpenAI(win.entries())).toEqual([{ role: "assistant", content: "span_1 pruned, unrecoverable, contents unknown" }]);
  });
});
