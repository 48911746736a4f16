/**
 * Range summaries: a run of the window replaced by one digest, all or nothing, keeping the tree; recall
 * expands one level; pins carried at every level; search reaches members at any depth.
 */
import { describe, expect, it } from "vitest";
import type { DirectiveOutcome, RangeSummaryOutcome, RecallOutcome, SearchOutcome } from "../../src/outcome.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { ManualClock, type KindPolicy } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { DEFAULT_TOMBSTONE } from "../../src/render/lines.js";
import { parseRuntimeLine } from "../../src/render/grammar.js";
import { MAX_SUMMARY_IDS, MORE_IDS } from "../../src/window/range.js";
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

// F4 (red team, semantic round): one summary over 400 spans of 50 request ids each took 33 s, carrying all
// 20,000 ids; summaries of summaries carried them all again at each level.
describe("the ids a range summary carries are bounded", () => {
  const ids = (from: number, n: number) => Array.from({ length: n }, (_, k) => `req_${(0x10000000 + from + k).toString(16)}`);
  const output = (from: number) => ids(from, 50).map((id) => `GET /api/x 200 X-Request-Id: ${id}`).join("\n");

  it(`carries at most ${MAX_SUMMARY_IDS} (the first and the last half), says there are more, and search finds the rest`, async () => {
    const { win } = setup();
    for (let i = 0; i < 60; i++) await win.append({ kind: "tool", text: output(i * 50) });
    const r = summarized(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_60", digest: "access logs, all 200" }));
    const all = ids(0, 3_000);
    expect(r.pinsCarried).toEqual([...all.slice(0, MAX_SUMMARY_IDS / 2), ...all.slice(-MAX_SUMMARY_IDS / 2)]);
    expect(r.line.split("\n").at(-1)).toBe(`│ ids: ${r.pinsCarried.join(", ")}, ${MORE_IDS}`);
    // An id left out is in its member's copy: search reads it there.
    const s = (await win.search(all[1_500]!)) as SearchOutcome;
    expect(s.matches.map((m) => [m.spanId, m.source])).toEqual([["span_31", "copy"]]);
  });

  it("a rolling summary (the last summary and the next span, level after level) carries no more at any level, and keeps the newest ids", async () => {
    const { win } = setup();
    await win.append({ kind: "tool", text: output(0) });
    let top = "span_1";
    let carried = 0;
    for (let level = 1; level <= 12; level++) {
      const span = await win.append({ kind: "tool", text: output(level * 50) });
      const r = summarized(await win.summarizeRange({ from: top, to: span.split("@")[0]!, digest: `level ${level}` }));
      expect(r.pinsCarried.length).toBeLessThanOrEqual(MAX_SUMMARY_IDS);
      carried += r.pinsCarried.length;
      top = r.spanId;
      expect(r.line).toContain(ids(level * 50, 50).at(-1)!); // the newest span's last id
      if (level >= 2) expect(r.line.endsWith(MORE_IDS)).toBe(true);
    }
    // Every level re-carried everything below it before: 50 + 100 + … + 650 = 4,550 ids.
    expect(carried).toBeLessThanOrEqual(12 * MAX_SUMMARY_IDS);
    // Level 6's span (span_12) is in no digest above level 7: search reads it in its copy.
    const s = (await win.search(ids(300, 1)[0]!)) as SearchOutcome;
    expect(s.matches.map((m) => [m.spanId, m.source])).toContainEqual(["span_12", "copy"]);
  });

  it("a digest that already names every id carries none, and still says when there are more", async () => {
    const { win } = setup();
    for (let i = 0; i < 3; i++) await win.append({ kind: "tool", text: output(i * 50) });
    const all = ids(0, 150);
    const kept = [...all.slice(0, 50), ...all.slice(-50)];
    const r = summarized(await win.summarizeRange({ from: "span_1", to: "span_3", digest: kept.join(" ") }));
    expect(r.pinsCarried).toEqual([]);
    expect(r.line.split("\n").at(-1)).toBe(`│ ids: ${MORE_IDS}`);
  });
});

// F2 (red team, semantic round): a range summary over copies kept only until a time said nothing of it, and
// went on offering its recall after the copies were rotated out.
describe("a range summary says until when its members' copies are kept", () => {
  function unheld() {
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 0, 0));
    const store = new MemoryStore({ name: "log", retentionMs: 2 * HOUR, clock, holds: false });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds: KINDS, limits: { lossyBudget: 0 } }));
    return { win, clock, store };
  }

  it("as an index line does: the earliest of its members', on its line and outcome; past it, copies may be lost", async () => {
    const { win, clock, store } = unheld();
    await win.append({ kind: "tool", text: "one req_aaaaaaaa11" });
    clock.advance(HOUR / 2);
    await win.append({ kind: "tool", text: "two" });
    await win.append({ kind: "tool", text: "tail" });
    const single = await win.applyDirective({ op: "prune", span_id: "span_3", mode: "drop" });
    expect(single).toMatchObject({ line: "span_3 pruned, recall #3 until 02:30Z" });
    const r = summarized(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_2", digest: "two outputs" }));
    expect(r.until).toBe(Date.UTC(2026, 5, 1, 2, 0));
    expect(r.line.split("\n")[0]).toBe("span_4 summary of span_1–span_2 (2), recall span_4 until 02:00Z");
    expect(parseRuntimeLine(r.line.split("\n")[0]!, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "range-summary", until: "02:00Z", mayBeLost: false });
    const audit = (await win.auditLog()).filter((a) => a.op === "prune" && (a.spanId === "span_1" || a.spanId === "span_2"));
    expect(Math.min(...audit.map((a) => a.until!))).toBe(r.until);
    // A summary over it (and span_3, kept until 02:30Z) says the earliest of every member's, at any depth.
    await win.append({ kind: "tool", text: "later" });
    const up = summarized(await win.summarizeRange({ from: "span_4", to: "span_5", digest: "all" }));
    expect(up.until).toBe(r.until);
    expect(up.line.split("\n")[0]).toBe("span_6 summary of span_4–span_5 (3), recall span_6 until 02:00Z");
    // Past it the line no longer offers the recall as certain, with no other decision to make it change.
    clock.advance(2 * HOUR);
    await store.rotate();
    const head = win.render().split("\n")[0]!;
    expect(head).toBe("span_6 summary of span_4–span_5 (3), copies may be lost, recall span_6");
    expect(parseRuntimeLine(head, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "range-summary", until: null, mayBeLost: true });
    const level = (await win.recall("span_6")) as Extract<RecallOutcome, { status: "expanded" }>;
    expect(level.text.split("\n")[0]).toBe("span_4 summary of span_1–span_2 (2), copies may be lost, recall span_4");
    expect(await win.recall("span_1")).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
  });

  it("says nothing more when every copy is held for the session", async () => {
    const { win } = setup();
    await win.append({ kind: "tool", text: "a" });
    await win.append({ kind: "tool", text: "b" });
    const r = summarized(await win.summarizeRange({ from: "span_1", to: "span_2", digest: "d" }));
    expect(r.until).toBeNull();
    expect(r.line.split("\n")[0]).toBe("span_3 summary of span_1–span_2 (2), recall span_3");
  });
});
