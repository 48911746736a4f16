/**
 * `ContextWindow.resume`: a window opened over an existing session puts every span back in its place —
 * live, pruned (index line or digest), tombstone, or an explicit lost line — continues the numbering, and
 * answers recall of a lost span with `lost`, never `unknown`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, SqliteStore, refSpanId, verifyAuditChain } from "../../src/index.js";
import type { BackingStore } from "../../src/index.js";
import { immediate } from "./immediate.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kinds = {
  tool: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

const variants: Array<[string, (clock: ManualClock) => { open: () => BackingStore }]> = [
  ["memory", (clock) => {
    const store = new MemoryStore({ name: "log", clock });
    return { open: () => store };
  }],
  ["sqlite", (clock) => {
    const path = join(dir, `resume-${Math.random().toString(36).slice(2)}.db`);
    return { open: () => new SqliteStore({ name: "log", path, clock }) };
  }],
];

describe.each(variants)("ContextWindow.resume (%s)", (_label, make) => {
  it("restores every position, says what was lost, continues numbering and prunes normally", async () => {
    const clock = new ManualClock(0);
    const { open } = make(clock);
    const first = new ContextWindow(immediate({ session: "s", clock, stores: { log: open() }, kinds, limits: { lossyBudget: 2 } }));
    const live = await first.append({ kind: "tool", text: "live tool output req_1234abcd" });
    const dropped = await first.append({ kind: "tool", text: "dropped output" });
    const summarized = await first.append({ kind: "tool", text: "a long output that gets summarized E1042" });
    const tomb = await first.append({ kind: "note", text: "a note pruned lossily" });
    const lost = await first.append({ kind: "note", text: "a note only the first process had" });
    await first.prune({ span: dropped, mode: "drop" });
    await first.prune({ span: summarized, mode: "summarize", digest: "summary of the long output" });
    await first.prune({ span: tomb, mode: "drop", acceptLossy: true });
    const before = first.render();

    const resumed = await ContextWindow.resume(immediate({ session: "s", clock, stores: { log: open() }, kinds, limits: { lossyBudget: 2 } }));
    expect(resumed.entries().map((e) => e.state)).toEqual(["live", "pruned", "pruned", "tombstone", "lost"]);
    // Everything but the lost line renders exactly as the first process rendered it.
    expect(resumed.render()).toBe(before.replace(`[${refSpanId(lost)} note]\n│ a note only the first process had`, `${refSpanId(lost)} lost in a restart, contents unknown`));
    expect(resumed.span(live)?.text).toBe("live tool output req_1234abcd");

    expect(await resumed.recall(live)).toMatchObject({ status: "found", source: "window", text: "live tool output req_1234abcd" });
    expect(await resumed.recall(dropped)).toMatchObject({ status: "found", source: "store", text: "dropped output" });
    expect(await resumed.recall(summarized)).toMatchObject({ status: "found", text: "a long output that gets summarized E1042" });
    expect(await resumed.recall(tomb)).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
    expect(await resumed.recall(lost)).toEqual(expect.objectContaining({ status: "lost", spanId: refSpanId(lost), kind: "note", line: `${refSpanId(lost)} lost in a restart, contents unknown` }));
    expect(await resumed.recall("span_6")).toMatchObject({ status: "unknown" });
    expect(await resumed.applyDirective({ op: "prune", span_id: refSpanId(lost), mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "lost" });
    // The first window's refs are that window's: the resumed one refuses them, and gives its own by id.
    expect(await resumed.tryPrune({ span: live, mode: "drop" })).toMatchObject({ status: "rejected", reason: "foreign-ref" });

    // New work continues after the old ids, and the lossy budget remembers the first process's commitment.
    const next = await resumed.append({ kind: "note", text: "new note" });
    expect(refSpanId(next)).toBe("span_6");
    expect(await resumed.prune({ span: resumed.ref(live), mode: "drop" })).toMatchObject({ status: "reversible" });
    expect(await resumed.prune({ span: next, mode: "drop", acceptLossy: true })).toMatchObject({ status: "lossy" });
    const another = await resumed.append({ kind: "note", text: "one too many" });
    expect(await resumed.tryPrune({ span: another, mode: "drop", acceptLossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
    expect(verifyAuditChain(await resumed.auditLog())).toBeNull();

    // A window opened with the constructor, not resumed, does not show the old spans, but recall still
    // knows the session had them: the lost note is `lost`, not "never in this session".
    const fresh = new ContextWindow(immediate({ session: "s", clock, stores: { log: open() }, kinds, limits: { lossyBudget: 2 } }));
    expect(await fresh.recall(lost)).toMatchObject({ status: "lost", spanId: refSpanId(lost), kind: "note" });
    expect(await fresh.recall(dropped)).toMatchObject({ status: "found", text: "dropped output" });
    expect(await fresh.recall("span_99")).toMatchObject({ status: "unknown" });
  });
});

describe("a resumed window keeps honest reversibility", () => {
  it("a prune reversible only until a time says so after a restart, and stops offering the recall once it passes", async () => {
    const HOUR = 3_600_000;
    const clock = new ManualClock(0);
    // No holds and two hours of retention, in a session of up to eight hours: the prune is reversible until then.
    const log = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR, holds: false });
    const limits = { maxLengthMs: 8 * HOUR };
    const first = new ContextWindow(immediate({ session: "s", clock, stores: { log }, kinds, limits }));
    const ref = await first.append({ kind: "tool", text: "output kept for two hours" });
    await first.prune({ span: ref, mode: "drop" });
    expect(first.render()).toBe("span_1 pruned, recall #1 until 02:00Z");
    clock.advance(HOUR);
    const resumed = await ContextWindow.resume(immediate({ session: "s", clock, stores: { log }, kinds, limits }));
    expect(resumed.render()).toBe("span_1 pruned, recall #1 until 02:00Z");
    clock.advance(HOUR);
    expect(resumed.render()).toBe("span_1 pruned, copy may be lost");
  });
});

describe.each(variants)("ContextWindow.resume after range summaries and with lost spans (%s)", (_label, make) => {
  it("draws a range summary again in its run's place, digest and all: the same lines, the same answers", async () => {
    const clock = new ManualClock(0);
    const { open } = make(clock);
    const options = () => immediate({ session: "s", clock, stores: { log: open() }, kinds, limits: { lossyBudget: 2 } });
    const first = new ContextWindow(options());
    const a = await first.append({ kind: "tool", text: "step one req_aaaa1111" });
    const b = await first.append({ kind: "tool", text: "step two" });
    await first.append({ kind: "tool", text: "step three" });
    const d = await first.append({ kind: "tool", text: "step four" });
    await first.applyDirective({ op: "prune", span_id: refSpanId(b), mode: "drop" });
    // A run of live spans, an index line and a lower summary: the tree is drawn again as it was.
    const lower = await first.summarizeRange({ from: refSpanId(a), to: refSpanId(b), digest: "two steps" });
    expect(lower).toMatchObject({ status: "summarized", spanId: "span_5" });
    expect(await first.summarizeRange({ from: "span_5", to: refSpanId(d), digest: "four steps, req ids kept" })).toMatchObject({ status: "summarized", spanId: "span_6" });
    await first.append({ kind: "tool", text: "after the summaries" });

    const resumed = await ContextWindow.resume(options());
    expect(resumed.render()).toBe(first.render());
    expect(resumed.tokens()).toBe(first.tokens());
    expect(resumed.entries().map((e) => [e.state === "live" ? e.span.id : e.spanId, e.state])).toEqual([["span_6", "summary"], ["span_7", "live"]]);
    const { auditSeq: _a, ...before } = await first.recall("span_6");
    const { auditSeq: _b, ...after } = await resumed.recall("span_6");
    expect(after).toEqual(before);
    expect(await resumed.recall("span_5")).toMatchObject({ status: "expanded" });
    for (const [id, text] of [[a, "step one req_aaaa1111"], [b, "step two"], [d, "step four"]] as const) {
      expect(await resumed.recall(id)).toMatchObject({ status: "found", source: "store", text });
    }
    expect(await resumed.search("req_aaaa1111")).toMatchObject({ status: "match", matches: [expect.objectContaining({ spanId: refSpanId(a), source: "copy" })] });
    // It stands in the window as before: a later summary takes it in.
    expect(await resumed.summarizeRange({ from: "span_6", to: "span_7", digest: "all of it" })).toMatchObject({ status: "summarized" });
    expect(verifyAuditChain(await resumed.auditLog())).toBeNull();
  });

  it("without its note (a summary applied before summaries were noted), brings its members back pruned with their copies, and search names lost spans as holes", async () => {
    const clock = new ManualClock(0);
    const { open } = make(clock);
    const home = open();
    // The note is what a store from before summaries were noted never got.
    home.noteReplacement = () => Promise.reject(new Error("not noted"));
    const first = new ContextWindow(immediate({ session: "s", clock, stores: { log: home }, kinds, limits: { lossyBudget: 2 } }));
    const a = await first.append({ kind: "tool", text: "step one req_aaaa1111" });
    const b = await first.append({ kind: "tool", text: "step two" });
    const c = await first.append({ kind: "tool", text: "step three" });
    const gone = await first.append({ kind: "note", text: "a note holding req_lost9999" });
    const summary = await first.summarizeRange({ from: a, to: c, digest: "three steps" });
    expect(summary).toMatchObject({ status: "summarized", spanId: "span_5" });
    // Both processes mint ids in the home store: the summary took span_5, the next append span_6.
    expect(refSpanId(await first.append({ kind: "tool", text: "after the summary" }))).toBe("span_6");

    const resumed = await ContextWindow.resume(immediate({ session: "s", clock, stores: { log: open() }, kinds, limits: { lossyBudget: 2 } }));
    // Without its note the summary's tree is not rebuilt: its members come back in their own places, pruned with their copies.
    expect(resumed.entries().map((e) => [e.state === "live" ? e.span.id : e.spanId, e.state])).toEqual([
      ["span_1", "pruned"], ["span_2", "pruned"], ["span_3", "pruned"], ["span_4", "lost"], ["span_6", "live"],
    ]);
    for (const [id, text] of [[a, "step one req_aaaa1111"], [b, "step two"], [c, "step three"]] as const) {
      expect(await resumed.recall(id)).toMatchObject({ status: "found", source: "store", text });
    }
    // The summary's own id: not "never existed", not a lossy prune — its digest was never recorded, its members are back.
    expect(await resumed.recall("span_5")).toMatchObject({ status: "lost", spanId: "span_5", line: expect.stringMatching(/^span_5 was a range summary before a restart: .*members are in the window/) });
    expect(await resumed.recall(gone)).toMatchObject({ status: "lost" });

    const found = await resumed.search("req_aaaa1111");
    expect(found).toMatchObject({ status: "match", matches: [expect.objectContaining({ spanId: refSpanId(a), source: "copy" })] });
    // The summary is not another window's span, as the search once counted it.
    expect(found.status === "match" ? found.text : "").not.toMatch(/another window/);
    const missing = await resumed.search("req_lost9999");
    expect(missing).toMatchObject({ status: "no-match" });
    if (!("coverage" in missing)) throw new Error("expected a search answer");
    expect(missing.coverage.holes).toEqual(expect.arrayContaining([{ spanId: refSpanId(gone), why: "copy-lost" }]));
    expect(missing.text).toMatch(new RegExp(`${refSpanId(gone)}.* unrecoverable and may have held it`));
    // A run over a lost span is refused: a summary over it would hide the hole.
    expect(await resumed.summarizeRange({ from: resumed.ref(c), to: resumed.ref(gone), digest: "d" })).toMatchObject({ status: "rejected", reason: "range" });
    expect(verifyAuditChain(await resumed.auditLog())).toBeNull();
  });
});

describe("range summaries and a policy kind named summary", () => {
  it("a kind called summary is the policy's own: its spans come back live, and the range summary is drawn again by its note", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ name: "log", clock });
    const own = { ...kinds, summary: { store: "log", modes: ["drop"], lossy: "with-flag" } } as const;
    const first = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds: own }));
    const a = await first.append({ kind: "tool", text: "step one" });
    const b = await first.append({ kind: "tool", text: "step two" });
    expect(await first.summarizeRange({ from: a, to: b, digest: "two steps" })).toMatchObject({ status: "summarized" });
    const mine = await first.append({ kind: "summary", text: "the team's own weekly summary" });

    const resumed = await ContextWindow.resume(immediate({ session: "s", clock, stores: { log: store }, kinds: own }));
    expect(resumed.entries().map((e) => [e.state === "live" ? e.span.id : e.spanId, e.state, e.state === "live" ? e.span.kind : e.kind])).toEqual([
      ["span_3", "summary", "summary"], [refSpanId(mine), "live", "summary"],
    ]);
    expect(await resumed.recall("span_3")).toMatchObject({ status: "expanded", members: [refSpanId(a), refSpanId(b)] });
    expect(await resumed.recall(mine)).toMatchObject({ status: "found", text: "the team's own weekly summary" });
  });
});
