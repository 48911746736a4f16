/**
 * Tool call/result groups by position: a provider reusing a call id makes two groups, and a result that
 * arrives after its call was pruned joins the group's fate through the same check.
 */
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore } from "../../src/index.js";
import { toOpenAI } from "../../src/providers/index.js";
import { immediate } from "./immediate.js";

const kinds = {
  call: { store: "log", modes: ["drop"], lossy: "with-flag" },
  result: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  scratchCall: { store: null, modes: ["drop"], lossy: "with-flag" },
  scratchResult: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

function window() {
  const clock = new ManualClock(0);
  return new ContextWindow(immediate({ session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) }, kinds }));
}

describe("tool groups by position", () => {
  it("a reused call id makes a second group: pruning one pair leaves the other live", async () => {
    const win = window();
    await win.append({ kind: "call", text: "{}", message: { role: "tool-call", callId: "c1", toolName: "run" } });
    const first = await win.append({ kind: "result", text: "first", message: { role: "tool-result", callId: "c1", toolName: "run" } });
    await win.append({ kind: "call", text: "{}", message: { role: "tool-call", callId: "c1", toolName: "run" } });
    await win.append({ kind: "result", text: "second", message: { role: "tool-result", callId: "c1", toolName: "run" } });
    expect(win.entries().map((e) => (e.state === "live" ? e.span.group : null))).toEqual(["call:c1", "call:c1", "call:c1#2", "call:c1#2"]);
    const out = await win.prune({ span: first, mode: "drop" });
    expect(out.groupPruned).toEqual(["span_1"]);
    expect(win.entries().map((e) => e.state)).toEqual(["pruned", "pruned", "live", "live"]);
  });

  it("a result arriving after its call was pruned is dropped on arrival, reversibly, and audited", async () => {
    const win = window();
    const call = await win.append({ kind: "call", text: '{"q":"x"}', message: { role: "tool-call", callId: "c1", toolName: "search" } });
    await win.prune({ span: call, mode: "drop" });
    await win.append({ kind: "result", text: "late output", message: { role: "tool-result", callId: "c1", toolName: "search" } });
    const [, late] = win.entries();
    expect(late).toMatchObject({ state: "pruned", spanId: "span_2", text: "span_2 pruned, recall #2: search" });
    expect((await win.recall("span_2")).status).toBe("found");
    const log = await win.auditLog();
    expect(log.at(-2)).toMatchObject({ op: "prune", spanId: "span_2", status: "reversible" });
    expect(toOpenAI(win)).toEqual([
      { role: "assistant", content: "span_1 pruned, recall #1: search q=x", tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "span_2 pruned, recall #2: search" },
    ]);
  });

  it("the late result of a call pruned lossily is lost too, and one that cannot join stays live with the reason", async () => {
    const win = window();
    const call = await win.append({ kind: "scratchCall", text: "{}", message: { role: "tool-call", callId: "c1", toolName: "run" } });
    await win.prune({ span: call, mode: "drop", acceptLossy: true });
    await win.append({ kind: "scratchResult", text: "out", message: { role: "tool-result", callId: "c1", toolName: "run" } });
    expect(win.entries()[1]).toMatchObject({ state: "tombstone", spanId: "span_2" });

    const other = window();
    const c = await other.append({ kind: "call", text: "{}", message: { role: "tool-call", callId: "c2", toolName: "run" } });
    await other.prune({ span: c, mode: "drop" });
    // The group was pruned reversibly; this result has no store, and nobody accepted losing it.
    await other.append({ kind: "scratchResult", text: "out", message: { role: "tool-result", callId: "c2", toolName: "run" } });
    expect(other.entries()[1]).toMatchObject({ state: "live", notice: expect.stringMatching(/^span_2 kept: prune rejected/) });
  });
});
