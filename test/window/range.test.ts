/**
 * Range summaries: a run of the window replaced by one digest, all or nothing, keeping the tree; recall
 * expands one level; pins carried at every level; search reaches members at any depth.
 */
import { describe, expect, it } from "vitest";
import type { DirectiveOutcome, RangeSummaryOutcome, RecallOutcome, SearchOutcome } from "../../src/outcome.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { ManualClock, type KindPolicy } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { immediate } from "./immediate.js";
import { sqliteFile } from "./sqlite-file.js";

const HOUR = 3_600_000;
const REQ = { name: "req", pattern: "req_[0-9a-f]{6,}" };
const KINDS: Record<string, KindPolicy> = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag", pins: [REQ] },
  fragile: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  note: { store: null, modes: ["drop", "summarize"], lossy: "with-flag" },
  fixed: { store: "log", modes: ["drop"], lossy: "forbid" },
};

function setup() {
  const clock = new ManualClock(0);
  const store = new MemoryStore({ name: "log", retentionMs: 2 * HOUR, clock });
  const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds: KINDS }));
  return { win, clock, store };
}

const summarized = (o: DirectiveOutcome): RangeSummaryOutcome => {
  if (o.op !== "summarize_range" || o.status !== "summarized") throw new Error(`not summarized: ${JSON.stringify(o)}`);
  return o;
};

describe("range summaries", () => {
  it("replace a run with one digest, hold every member's copy, and expand one level on recall", async () => {
    const { win } = setup();
    await win.append({ kind: "note", text: "start" });
    for (let i = 2; i <= 5; i++) await win.append({ kind: "tool", text: `call ${i}: ok${i === 4 ? " X-Request-Id: req_4a4a4a4a" : ""}` });
    await win.append({ kind: "note", text: "after" });
    const r = summarized(await win.applyDirective({ op: "summarize_range", from: "span_2", to: "span_5", digest: "four calls, one failed" }));
    expect(r).toMatchObject({ spanId: "span_7", members: ["span_2", "span_3", "span_4", "span_5"], pinsCarried: ["req_4a4a4a4a"] });
    expect(r.pruned.map((p) => p.handle)).toEqual(["#1", "#2", "#3", "#4"]);
    expect(win.render()).toBe("[span_1 note]\n│ start\n\nspan_7 summary of span_2–span_5 (4), recall span_7\n│ four calls, one failed\n│ ids: req_4a4a4a4a\n\n[span_6 note]\n│ after");
    const top = (await win.recall("span_7")) as Extract<RecallOutcome, { status: "expanded" }>;
    expect(top).toMatchObject({ status: "expanded", members: ["span_2", "span_3", "span_4", "span_5"] });
    // Index lines carry the window's hints (the first identifier a span held), as a drop's do.
    expect(top.text).toBe("span_2 pruned, recall #1\nspan_3 pruned, recall #2\nspan_4 pruned, recall #3: req_4a4a4a4a\nspan_5 pruned, recall #4");
    expect(await win.recall("span_4")).toMatchObject({ status: "found", source: "store", text: "call 4: ok X-Request-Id: req_4a4a4a4a" });
    expect(await win.recall("#2")).toMatchObject({ status: "found", text: "call 3: ok" });
    // Positions after the summary still work: the note after it prunes normally.
    expect((await win.tryPrune({ span: win.ref("span_6"), mode: "drop", acceptLossy: true })).status).toBe("lossy");
    // Every record carries its decision number, so the log reads in the order decisions were made.
    const log = await win.auditLog();
    expect(log.every((r) => typeof r.decided === "number")).toBe(true);
    const decided = log.map((r) => r.decided!);
    expect(decided).toEqual([...decided].sort((a, b) => a - b));
    expect(new Set(decided).size).toBe(decided.length);
  });

  it("re-summarizes digests into a higher level, carrying pins up, and recall walks down the tree", async () => {
    const { win } = setup();
    for (let i = 1; i <= 6; i++) await win.append({ kind: "tool", text: `step ${i} req_${String(i).repeat(8)}` });
    summarized(await win.summarizeRange({ from: "span_1", to: "span_3", digest: "steps 1-3" }));
    summarized(await win.summarizeRange({ from: "span_4", to: "span_5", digest: "steps 4-5" }));
    const top = summarized(await win.summarizeRange({ from: "span_7", to: "span_6", digest: "first half" }));
    // span_7 and span_8 are the two summaries; span_6 stayed live between... (order: span_7, span_8, span_6)
    expect(top.members).toEqual(["span_7", "span_8", "span_6"]);
    expect(win.render()).toBe(
      "span_9 summary of span_7–span_6 (3), recall span_9\n│ first half\n│ ids: req_11111111, req_22222222, req_33333333, req_44444444, req_55555555, req_66666666",
    );
    const l1 = (await win.recall("span_9")) as Extract<RecallOutcome, { status: "expanded" }>;
    expect(l1.text.split("\n")[0]).toBe("span_7 summary of span_1–span_3 (3), recall span_7");
    expect(l1.text).toContain("span_6 pruned, recall #6: req_66666666");
    const l2 = (await win.recall("span_8")) as Extract<RecallOutcome, { status: "expanded" }>;
    expect(l2.text).toBe("span_4 pruned, recall #4: req_44444444\nspan_5 pruned, recall #5: req_55555555");
    expect(await win.recall("span_2")).toMatchObject({ status: "found", text: "step 2 req_22222222" });
    const s = (await win.search("step 5")) as SearchOutcome;
    expect(s.matches).toMatchObject([{ spanId: "span_5", source: "copy", handle: "#5" }]);
    expect(s.coverage).toMatchObject({ live: 0, pruned: 6, holes: [] });
  });

  it("a result that arrives after its call was summarized joins the call's fate instead of standing orphaned", async () => {
    const { win } = setup();
    await win.append({ kind: "tool", text: '{"url":"/orders"}', message: { role: "tool-call", callId: "c1", toolName: "http" } });
    await win.append({ kind: "tool", text: "note while waiting" });
    summarized(await win.summarizeRange({ from: "span_1", to: "span_2", digest: "asked for the orders" }));
    await win.append({ kind: "tool", text: "502 from /orders", message: { role: "tool-result", callId: "c1", toolName: "http" } });
    expect(win.entries().map((e) => e.state)).toEqual(["summary", "pruned"]);
    expect(await win.recall("span_4")).toMatchObject({ status: "found", text: "502 from /orders" });
  });

  it("is all or nothing: a member whose copy cannot be held refuses the whole run, and the window is unchanged", async () => {
    const { win, clock, store } = setup();
    await win.append({ kind: "fragile", text: "old" });
    clock.advance(2 * HOUR + 1);
    await store.rotate();
    await win.append({ kind: "tool", text: "new" });
    const before = win.entries();
    const r = await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_2", digest: "x" });
    expect(r).toMatchObject({ op: "summarize_range", status: "rejected", reason: "not-reversible" });
    expect(win.entries().map((e) => e.state)).toEqual(before.map((e) => e.state));
    // Nothing was held: span_2's copy ages out like any unheld record.
    clock.advance(2 * HOUR + 1);
    expect((await store.rotate()).keptByHold).toBe(0);
    expect((await win.auditLog()).filter((a) => a.op === "prune").map((a) => [a.spanId, a.status])).toEqual([["span_1", "rejected"], ["span_2", "rejected"]]);
  });

  it("refuses runs it cannot replace, as data: a tombstone inside, reversed or unknown ends, unbacked or fixed members, a split tool group", async () => {
    const { win } = setup();
    await win.append({ kind: "tool", text: "a" });
    await win.append({ kind: "note", text: "b" });
    await win.append({ kind: "tool", text: "c" });
    await win.append({ kind: "fixed", text: "d" });
    await win.append({ kind: "tool", text: "call", message: { role: "tool-call", callId: "c1", toolName: "t" } });
    await win.append({ kind: "tool", text: "result", message: { role: "tool-result", callId: "c1", toolName: "t" } });
    const cases: Array<[object, string]> = [
      [{ from: "span_3", to: "span_1" }, "range"],
      [{ from: "span_1", to: "span_99" }, "unknown-span"],
      [{ from: "span_1", to: "span_3" }, "range"], // span_2 has no store
      [{ from: "span_3", to: "span_4" }, "mode-not-allowed"],
      [{ from: "span_4", to: "span_5" }, "mode-not-allowed"],
    ];
    for (const [range, reason] of cases) {
      expect(await win.applyDirective({ op: "summarize_range", ...range, digest: "d" })).toMatchObject({ status: "rejected", reason });
    }
    await win.tryPrune({ span: win.ref("span_2"), mode: "drop", acceptLossy: true });
    expect(await win.summarizeRange({ from: "span_1", to: "span_3", digest: "d" })).toMatchObject({ status: "rejected", reason: "range", message: expect.stringMatching(/span_2 is unrecoverable/) });
    const w2 = setup().win;
    await w2.append({ kind: "tool", text: "x" });
    await w2.append({ kind: "tool", text: "call", message: { role: "tool-call", callId: "c1", toolName: "t" } });
    await w2.append({ kind: "tool", text: "result", message: { role: "tool-result", callId: "c1", toolName: "t" } });
    expect(await w2.summarizeRange({ from: "span_1", to: "span_2", digest: "d" })).toMatchObject({ status: "rejected", reason: "group" });
    expect(await w2.summarizeRange({ from: "span_1", to: "span_3", digest: "d" })).toMatchObject({ status: "summarized" });
    expect(await w2.applyDirective({ op: "summarize_range", from: "span_1", to: "span_3" })).toMatchObject({ status: "invalid", op: "summarize_range" });
  });
});

// Finding 25.4: a digest over a lost copy would hide the hole; the ids of members dropped earlier are carried.
describe("range summaries over members pruned earlier", () => {
  async function sqliteSetup() {
    const clock = new ManualClock(0);
    const { log, sql } = sqliteFile(clock, "range");
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { log }, kinds: KINDS }));
    const del = (spanId: string) => sql("DELETE FROM pruneguard_records WHERE span_id = ?", spanId);
    return { win, log, del };
  }

  it("refuses a run whose earlier-pruned member lost its copy behind the runtime, and leaves the window as it was", async () => {
    const { win, log, del } = await sqliteSetup();
    for (const t of ["one", "two X-Request-Id: req_2b2b2b2b", "three"]) await win.append({ kind: "tool", text: t });
    expect((await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" })).status).toBe("reversible");
    del("span_2");
    const r = await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_3", digest: "three calls" });
    expect(r).toMatchObject({ status: "rejected", message: "span_2's copy is lost; a summary over it would hide the hole" });
    expect(win.entries().map((e) => e.state)).toEqual(["live", "pruned", "live"]);
    // The hole and its hint stay in the window; the line no longer offers the recall.
    expect(win.render()).toContain("span_2");
    expect(win.render()).toContain("req_2b2b2b2b");
    expect((await win.recall("span_2")).status).not.toBe("found");
    await log.close();
  });

  it("carries the pinned ids of members dropped earlier into the digest, read from their copies", async () => {
    const { win, log } = await sqliteSetup();
    for (const t of ["one", "two X-Request-Id: req_2b2b2b2b", "three X-Request-Id: req_3c3c3c3c"]) await win.append({ kind: "tool", text: t });
    await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    const r = summarized(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_3", digest: "three calls" }));
    expect([...r.pinsCarried].sort()).toEqual(["req_2b2b2b2b", "req_3c3c3c3c"]);
    expect(win.render()).toContain("req_2b2b2b2b");
    await log.close();
  });
});
