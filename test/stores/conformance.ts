/**
 * The conformance suite every BackingStore adapter must pass. Adapters call
 * `describeStoreConformance(label, factory)` from their own test file.
 */
import { describe, expect, it } from "vitest";
import type { AuditDraft } from "../../src/audit.js";
import { verifyAuditChain } from "../../src/audit.js";
import { contentHash } from "../../src/hash.js";
import type { StoreOptions } from "../../src/stores/store-options.js";
import { SESSION_SCAN_COPIES } from "../../src/stores/records.js";
import type { BackingStore, CheckResult, PruneDecision, PruneItem } from "../../src/stores/store.js";
import { ManualClock } from "../../src/types.js";

export type StoreFactory = (options: StoreOptions & { clock: ManualClock }) => Promise<BackingStore>;

const HOUR = 3_600_000;

/** An audit draft for store tests: a prune decision with every field at its neutral value. */
export function testDraft(status: AuditDraft["status"], extra: Partial<AuditDraft> = {}): AuditDraft {
  return {
    op: "prune", status, spanId: null, kind: "toolResult", mode: "drop", conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: null, pinsCarried: 0, directive: null, ...extra,
  };
}

function draft(status: AuditDraft["status"], spanId: string | null = null, extra: Partial<AuditDraft> = {}): AuditDraft {
  return testDraft(status, { spanId, ...extra });
}

function item(spanId: string, text: string, handle: string | null, backed = true): PruneItem {
  return { spanId, kind: "toolResult", backed, handle, hash: contentHash(text), text };
}

/** A decide function that records the checks it saw: reversible when all three conditions hold (or, when asked, after a re-persist), else rejected. */
function reversibleIfHolds(seen: CheckResult[][], opts: { repersist?: boolean } = {}) {
  return (checks: readonly CheckResult[]): PruneDecision[] => {
    seen.push([...checks]);
    return checks.map((c) => {
      const ok = c.conditions.existence && c.conditions.addressability && c.conditions.provenance;
      if (ok) return { status: "reversible", repersist: false, hold: true, audit: draft("reversible") };
      if (opts.repersist && c.conditions.provenance) return { status: "reversible", repersist: true, hold: true, audit: draft("reversible", null, { repersisted: true }) };
      return { status: "rejected", audit: draft("rejected") };
    });
  };
}

export function describeStoreConformance(label: string, factory: StoreFactory): void {
  describe(`BackingStore conformance: ${label}`, () => {
    const make = async (o: Partial<StoreOptions> = {}) => {
      const clock = new ManualClock(1_000_000);
      const store = await factory({ name: "toolLog", retentionMs: 2 * HOUR, ...o, clock });
      return { clock, store };
    };

    it("persists with a session-scoped handle and finds byte-identical text by handle and by span id", async () => {
      const { store } = await make();
      const text = "request req_8f3a2c failed: E1042 — naïve ünïcode ✓ 🚀";
      const p = await store.persist({ session: "s1", spanId: "span_1", kind: "toolResult", text, hash: contentHash(text) });
      expect(p.handle).toBe("#1");
      const again = await store.persist({ session: "s1", spanId: "span_1", kind: "toolResult", text, hash: contentHash(text) });
      expect(again.handle).toBe("#1");
      const other = await store.persist({ session: "s2", spanId: "span_1", kind: "toolResult", text: "other", hash: contentHash("other") });
      expect(other.handle).toBe("#1");
      const byHandle = await store.lookup("s1", { handle: "#1" });
      expect(byHandle).toMatchObject({ status: "found", text, hash: contentHash(text), spanId: "span_1" });
      expect(await store.lookup("s1", { spanId: "span_1" })).toMatchObject({ status: "found", text });
      // The same handle in another session resolves to that session's record, never this one's.
      expect(await store.lookup("s2", { handle: "#1" })).toMatchObject({ status: "found", text: "other" });
      expect(await store.lookup("s3", { handle: "#1" })).toEqual({ status: "absent" });
      expect(await store.lookup("s1", { handle: "#2" })).toEqual({ status: "absent" });
      await store.close();
    });

    it("refuses to overwrite a live copy with other bytes, but revives an expired one", async () => {
      const { store, clock } = await make();
      await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "first", hash: contentHash("first") });
      await expect(store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "second", hash: contentHash("second") })).rejects.toThrow(/overwrite/);
      expect(await store.lookup("s1", { spanId: "span_1" })).toMatchObject({ status: "found", text: "first" });
      clock.advance(3 * HOUR);
      await store.rotate();
      const revived = await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "second", hash: contentHash("second") });
      expect(revived.handle).toBe("#1");
      expect(await store.lookup("s1", { handle: "#1" })).toMatchObject({ status: "found", text: "second" });
      await store.close();
    });

    it("mints distinct handles per span and honours handlePrefix", async () => {
      const { store } = await make({ handlePrefix: "t" });
      const a = await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
      const b = await store.persist({ session: "s1", spanId: "span_2", kind: "k", text: "b", hash: contentHash("b") });
      expect([a.handle, b.handle]).toEqual(["t#1", "t#2"]);
      await store.close();
    });

    it("checks existence, hash, handle and provenance inside commitPrune and holds the copy", async () => {
      const { store, clock } = await make();
      const text = "x".repeat(100);
      const p = await store.persist({ session: "s1", spanId: "span_1", kind: "toolResult", text, hash: contentHash(text) });
      const seen: CheckResult[][] = [];
      const commit = await store.commitPrune({ session: "s1", items: [item("span_1", text, p.handle)], holdUntil: null, decide: reversibleIfHolds(seen) });
      expect(seen).toHaveLength(1);
      expect(seen[0]![0]).toMatchObject({ copy: "ok", handle: "#1", conditions: { existence: true, addressability: true, provenance: true } });
      expect(commit.items[0]).toMatchObject({ handle: "#1", decision: { status: "reversible" }, audit: { seq: 1, status: "reversible", handle: "#1" } });
      clock.advance(3 * HOUR);
      expect(await store.rotate()).toEqual({ rotated: 0, keptByHold: 1 });
      expect(await store.lookup("s1", { handle: "#1" })).toMatchObject({ status: "found", text });
      // Released, the copy ages out like any other and leaves a marker behind.
      expect(await store.releaseHolds("s1")).toBe(1);
      expect(await store.rotate()).toEqual({ rotated: 1, keptByHold: 0 });
      expect(await store.lookup("s1", { handle: "#1" })).toMatchObject({ status: "expired", handle: "#1", spanId: "span_1" });
      await store.close();
    });

    it("a hold with an expiry protects only until then", async () => {
      const { store, clock } = await make();
      const p = await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
      await store.commitPrune({ session: "s1", items: [item("span_1", "t", p.handle)], holdUntil: clock.now() + 4 * HOUR, decide: reversibleIfHolds([]) });
      clock.advance(3 * HOUR);
      expect(await store.rotate()).toEqual({ rotated: 0, keptByHold: 1 });
      clock.advance(2 * HOUR);
      expect(await store.rotate()).toEqual({ rotated: 1, keptByHold: 0 });
      await store.close();
    });

    it("reports each failed condition: expired, hash mismatch, no handle, absent", async () => {
      const { store, clock } = await make();
      await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "old", hash: contentHash("old") });
      await store.persist({ session: "s1", spanId: "span_2", kind: "k", text: "stored", hash: contentHash("stored") });
      clock.advance(2 * HOUR);
      expect((await store.rotate()).rotated).toBe(2);
      await store.persist({ session: "s1", spanId: "span_3", kind: "k", text: "stored", hash: contentHash("stored") });
      const seen: CheckResult[][] = [];
      await store.commitPrune({
        session: "s1",
        items: [item("span_1", "old", "#1"), item("span_3", "changed in the window", "#3"), item("span_4", "never persisted", null), item("span_5", "forged", "#99")],
        holdUntil: null,
        decide: reversibleIfHolds(seen),
      });
      expect(seen[0]!.map((c) => c.copy)).toEqual(["expired", "hash-mismatch", "no-handle", "absent"]);
      expect(seen[0]![2]!.conditions.addressability).toBe(false);
      expect(seen[0]!.map((c) => c.conditions.existence)).toEqual([false, false, false, false]);
      await store.close();
    });

    it("a handle of another span does not vouch for this one", async () => {
      const { store } = await make();
      await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
      const seen: CheckResult[][] = [];
      await store.commitPrune({ session: "s1", items: [item("span_2", "a", "#1")], holdUntil: null, decide: reversibleIfHolds(seen) });
      expect(seen[0]![0]!.copy).toBe("absent");
      await store.close();
    });

    it("without provenance, a rotated record looks absent and every check lacks condition 3", async () => {
      const { store, clock } = await make({ distinguishesAbsent: false });
      const p = await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
      const seen: CheckResult[][] = [];
      await store.commitPrune({ session: "s1", items: [item("span_1", "t", p.handle)], holdUntil: null, decide: reversibleIfHolds(seen) });
      expect(seen[0]![0]!.conditions).toEqual({ existence: true, addressability: true, provenance: false });
      clock.advance(3 * HOUR);
      await store.rotate();
      expect(await store.lookup("s1", { handle: "#1" })).toEqual({ status: "absent" });
      await store.close();
    });

    it("re-persist revives an expired copy under its handle, and mints one when there was none", async () => {
      const { store, clock } = await make();
      await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "block", hash: contentHash("block") });
      clock.advance(2 * HOUR);
      await store.rotate();
      const commit = await store.commitPrune({
        session: "s1", items: [item("span_1", "block", "#1"), item("span_2", "fresh", null)], holdUntil: null,
        decide: reversibleIfHolds([], { repersist: true }),
      });
      expect(commit.items.map((i) => i.handle)).toEqual(["#1", "#2"]);
      expect(commit.items.map((i) => i.audit.handle)).toEqual(["#1", "#2"]);
      expect(await store.lookup("s1", { handle: "#1" })).toMatchObject({ status: "found", text: "block" });
      expect(await store.lookup("s1", { spanId: "span_2" })).toMatchObject({ status: "found", text: "fresh", handle: "#2" });
      clock.advance(10 * HOUR);
      expect(await store.rotate()).toEqual({ rotated: 0, keptByHold: 2 });
      await store.close();
    });

    it("commits nothing when decide throws or answers for the wrong number of items", async () => {
      const { store, clock } = await make();
      const p = await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
      await expect(store.commitPrune({ session: "s1", items: [item("span_1", "t", p.handle)], holdUntil: null, decide: () => { throw new Error("boom"); } })).rejects.toThrow("boom");
      await expect(store.commitPrune({ session: "s1", items: [item("span_1", "t", p.handle)], holdUntil: null, decide: () => [] })).rejects.toThrow();
      expect(await store.auditLog("s1")).toEqual([]);
      clock.advance(3 * HOUR);
      expect((await store.rotate()).rotated).toBe(1);
      await store.close();
    });

    it("a group with an unbacked member commits both audit records in one chain", async () => {
      const { store } = await make();
      const p = await store.persist({ session: "s1", spanId: "span_2", kind: "k", text: "result", hash: contentHash("result") });
      const commit = await store.commitPrune({
        session: "s1", items: [item("span_1", "call", null, false), item("span_2", "result", p.handle)], holdUntil: null,
        decide: (checks) => checks.map((c) => ({ status: "rejected" as const, audit: draft("rejected", null, { reason: c.copy }) })),
      });
      expect(commit.items.map((i) => i.check.copy)).toEqual(["unbacked", "ok"]);
      expect(commit.items.map((i) => i.audit.seq)).toEqual([1, 2]);
      await store.close();
    });

    it("keeps a per-session hash-chained audit log and counts lossy commitments", async () => {
      const { store } = await make();
      await store.appendAudit("s1", draft("invalid"));
      await store.appendAudit("s1", draft("lossy", "span_1"));
      await store.appendAudit("s2", draft("lossy", "span_1"));
      await store.appendAudit("s1", draft("lossy", "span_2"));
      const log = await store.auditLog("s1");
      expect(log.map((r) => [r.seq, r.status])).toEqual([[1, "invalid"], [2, "lossy"], [3, "lossy"]]);
      expect(verifyAuditChain(log)).toBeNull();
      expect(verifyAuditChain([log[0]!, log[2]!])).toMatchObject({ problem: "seq-gap" });
      expect(verifyAuditChain([log[0]!, { ...log[1]!, reason: "parse" }, log[2]!])).toMatchObject({ seq: 2, problem: "hash-mismatch" });
      expect(await store.countLossy("s1")).toBe(2);
      expect(await store.countLossy("s2")).toBe(1);
      expect(await store.countLossy("nobody")).toBe(0);
      await store.close();
    });

    it("mints session span ids and registers spans in order, per session; notes a replacement", async () => {
      const { store } = await make();
      const reg = (kind: string, store_: string | null = "toolLog") =>
        ({ kind, hash: contentHash(kind), group: null, message: null, store: store_ });
      expect((await store.registerSpan("s1", reg("a"))).spanId).toBe("span_1");
      expect((await store.registerSpan("s2", reg("x"))).spanId).toBe("span_1");
      expect(await store.registerSpan("s1", { ...reg("b", null), group: "call:c1", message: { role: "tool-result", callId: "c1", toolName: "t" } }))
        .toMatchObject({ spanId: "span_2", ordinal: 2, store: null, group: "call:c1" });
      await store.noteReplacement("s1", "span_2", "digest of b");
      expect(await store.sessionSpans("s1")).toEqual([
        { spanId: "span_1", ordinal: 1, kind: "a", hash: contentHash("a"), group: null, message: null, store: "toolLog", replacement: null },
        { spanId: "span_2", ordinal: 2, kind: "b", hash: contentHash("b"), group: "call:c1", message: { role: "tool-result", callId: "c1", toolName: "t" }, store: null, replacement: "digest of b" },
      ]);
      expect(await store.sessionSpans("nobody")).toEqual([]);
      await store.close();
    });

    // Finding 25.16: what recall reads for a span the window does not hold, by key; the same records a
    // filter over the whole chain finds, the same row the whole registry holds, in this session only.
    it("prunesOf and lookupSpan answer by key what the whole chain and registry would, per session", async () => {
      const { store } = await make();
      expect(store.prunesOf).toBeTypeOf("function");
      expect(store.lookupSpan).toBeTypeOf("function");
      const registered = await store.registerSpan("s1", { kind: "a", hash: contentHash("a"), group: null, message: null, store: "toolLog" });
      const p = await store.persist({ session: "s1", spanId: "span_1", kind: "toolResult", text: "one", hash: contentHash("one") });
      await store.appendAudit("s1", draft("rejected", "span_1", { handle: p.handle }));
      await store.commitPrune({
        session: "s1", items: [item("span_1", "one", p.handle)], holdUntil: null,
        decide: (checks) => checks.map(() => ({ status: "reversible" as const, repersist: false, hold: true, audit: draft("reversible", "span_1", { handle: p.handle }) })),
      });
      await store.appendAudit("s1", { ...draft("found", "span_1", { handle: p.handle }), op: "recall" });
      await store.appendAudit("s1", draft("lossy", "span_2"));
      await store.appendAudit("s2", draft("lossy", "span_1"));
      // A prune not applied after all (`lapse.ts`): its `kept` record is a prune decision recall reads too.
      await store.appendAudit("s1", draft("kept", "span_1", { handle: p.handle }));
      const byScan = async (id: string) => (await store.auditLog("s1")).filter((r) =>
        r.op === "prune" && (r.status === "reversible" || r.status === "lossy" || r.status === "kept") && (r.spanId === id || r.handle === id));
      for (const id of ["span_1", p.handle, "span_2", "span_3", "#99", "nonsense"]) {
        expect(await store.prunesOf!("s1", id), id).toEqual(await byScan(id));
      }
      expect((await store.prunesOf!("s1", "span_1")).map((r) => [r.seq, r.status])).toEqual([[2, "reversible"], [5, "kept"]]);
      expect((await store.prunesOf!("s2", "span_1")).map((r) => r.status)).toEqual(["lossy"]);
      expect(await store.prunesOf!("nobody", "span_1")).toEqual([]);
      expect(registered.spanId).toBe("span_1");
      expect(await store.lookupSpan!("s1", "span_1")).toEqual((await store.sessionSpans("s1"))[0]);
      expect(await store.lookupSpan!("s1", "span_2")).toBeNull();
      expect(await store.lookupSpan!("s2", "span_1")).toBeNull();
      await store.close();
    });

    // The SQL stores walk the session's records from SESSION_SCAN_COPIES copies on, and probe by handle below.
    it("a search of many copies answers as searches of few copies do, in this session only", async () => {
      const { store } = await make();
      const copies = [];
      for (let i = 0; i < 700; i++) {
        const text = `output ${i}${i % 3 === 0 ? " req_match" : ""}`;
        const p = await store.persist({ session: "s", spanId: `span_${i + 1}`, kind: "k", text, hash: contentHash(text) });
        // Some asked about with another hash (altered), some not asked about at all (a live span's record).
        if (i % 50 === 7) copies.push({ handle: p.handle, hash: "0".repeat(64) });
        else if (i % 10 !== 9) copies.push({ handle: p.handle, hash: contentHash(text) });
      }
      // Another session's records holding the literal are never read.
      await store.persist({ session: "other", spanId: "span_1", kind: "k", text: "req_match elsewhere", hash: contentHash("req_match elsewhere") });
      copies.push({ handle: "#9999", hash: contentHash("nothing") }); // a handle with no record: gone
      expect(copies.length).toBeGreaterThanOrEqual(SESSION_SCAN_COPIES);
      const request = { copies, literal: "req_match", limit: 10_000 };
      const whole = await store.searchCopies("s", request);
      const parts = [];
      for (let i = 0; i < copies.length; i += 250) parts.push(await store.searchCopies("s", { ...request, copies: copies.slice(i, i + 250) }));
      expect(whole).toEqual({ candidates: parts.flatMap((p) => p.candidates), more: false, gone: parts.flatMap((p) => p.gone) });
      expect(whole.candidates.length).toBeGreaterThan(100);
      expect(whole.gone).toContain("#9999");
      // The candidate limit holds on the walk too.
      expect(await store.searchCopies("s", { ...request, limit: 5 })).toMatchObject({ more: true, candidates: whole.candidates.slice(0, 5) });
      await store.close();
    });

    it("sessionSpanCount is the number of span ids the session minted, per session", async () => {
      const { store } = await make();
      expect(store.sessionSpanCount).toBeTypeOf("function");
      expect(await store.sessionSpanCount!("s1")).toBe(0);
      for (const kind of ["a", "b", "c"]) await store.registerSpan("s1", { kind, hash: contentHash(kind), group: null, message: null, store: "toolLog" });
      await store.registerSpan("s2", { kind: "a", hash: contentHash("a"), group: null, message: null, store: "toolLog" });
      expect(await store.sessionSpanCount!("s1")).toBe(3);
      expect((await store.sessionSpans("s1")).map((r) => r.spanId)).toEqual(["span_1", "span_2", "span_3"]);
      expect(await store.sessionSpanCount!("s2")).toBe(1);
      expect(await store.sessionSpanCount!("nobody")).toBe(0);
      await store.close();
    });

    it("counts the session's lossy budget inside the commit, and reserves and releases units on the same counter", async () => {
      const { store } = await make();
      const lossy = (left: number[]) => (checks: readonly CheckResult[], lossyLeft: number): PruneDecision[] => {
        left.push(lossyLeft);
        return checks.map((_, i) => (i < lossyLeft ? { status: "lossy" as const, audit: draft("lossy") } : { status: "rejected" as const, audit: draft("rejected") }));
      };
      const seen: number[] = [];
      const items = [item("span_1", "a", null, false), item("span_2", "b", null, false)];
      const first = await store.commitPrune({ session: "s1", items, holdUntil: null, lossyBudget: 3, decide: lossy(seen) });
      expect(first.items.map((i) => i.decision.status)).toEqual(["lossy", "lossy"]);
      expect(await store.reserveLossy("s1", 3, 5)).toBe(1);
      expect(await store.reserveLossy("s1", 3, 1)).toBe(0);
      await store.releaseLossy("s1", 1);
      const second = await store.commitPrune({ session: "s1", items, holdUntil: null, lossyBudget: 3, decide: lossy(seen) });
      expect(second.items.map((i) => i.decision.status)).toEqual(["lossy", "rejected"]);
      expect(seen).toEqual([3, 1]);
      // A decide that goes over what it was told is refused before anything is written.
      await expect(store.commitPrune({
        session: "s1", items, holdUntil: null, lossyBudget: 3, decide: (checks) => checks.map(() => ({ status: "lossy" as const, audit: draft("lossy") })),
      })).rejects.toThrow(/budget/);
      expect(await store.countLossy("s1")).toBe(3);
      // Without a budget, decide is told Infinity; the other session's counter is its own.
      const other: number[] = [];
      await store.commitPrune({ session: "s2", items: [items[0]!], holdUntil: null, decide: lossy(other) });
      expect(other).toEqual([Number.POSITIVE_INFINITY]);
      expect(await store.reserveLossy("s2", 2, 5)).toBe(1);
      await store.close();
    });

    it("searchCopies reads only the copies asked about, in this session: candidates hold the literal; rotated, deleted and altered ones are gone", async () => {
      const { store, clock } = await make();
      const texts: Record<string, string> = {
        span_1: "GET /orders 502 X-Request-Id: req_7f3a9c2e41 upstream timeout",
        span_2: `it's 100% "quoted" \\ back_slash * NEAR(a b) ^col: naïve 🚀 req_7f3a`,
        span_3: "old output with req_7f3a9c2e41 that will rotate out",
        span_4: "nothing to see",
      };
      const handles: Record<string, string> = {};
      const persist = async (spanId: string, text: string) => {
        handles[spanId] = (await store.persist({ session: "s1", spanId, kind: "k", text, hash: contentHash(text) })).handle;
      };
      for (const [spanId, text] of Object.entries(texts)) await persist(spanId, text);
      await store.persist({ session: "s2", spanId: "span_1", kind: "k", text: "req_7f3a9c2e41 of another session", hash: contentHash("req_7f3a9c2e41 of another session") });
      // Only span_3 is old enough to rotate.
      clock.advance(HOUR);
      const late = "late req_7f3a9c2e41";
      await persist("span_5", late);
      texts["span_5"] = late;
      // A live copy nobody asks about (a live span's own record) is never read.
      await persist("span_6", "live span req_7f3a9c2e41");
      clock.advance(HOUR + 1);
      // Rotate what is older than two hours: span_1..span_4 and s2's span; keep them live by re-persisting all but span_3.
      await store.rotate();
      for (const id of ["span_1", "span_2", "span_4"]) await store.persist({ session: "s1", spanId: id, kind: "k", text: texts[id]!, hash: contentHash(texts[id]!) });
      const live = (id: string) => id !== "span_3";
      const copies = Object.keys(texts).map((id) => ({ handle: handles[id]!, hash: contentHash(texts[id]!) }));
      for (const literal of ["req_7f3a9c2e41", "req_7f3a", "7f", "%", "_", "\\", '"quoted"', "NEAR(a b)", "^col:", "naïve 🚀", "🚀", "*", "e", "absent-literal", "REQ_7F3A", `it's 100% "quoted"`, "X-Request-Id: req_7f3a9c2e41 upstream", "req_7f3a9c2e41 that will rotate"]) {
        const r = await store.searchCopies("s1", { copies, literal, limit: 100 });
        const expected = Object.entries(texts).filter(([id, t]) => live(id) && t.includes(literal)).map(([id]) => id).sort();
        const got = r.candidates.map((c) => c.spanId).sort();
        expect({ literal, got }).toEqual({ literal, got: expected });
        for (const c of r.candidates) expect(c).toMatchObject({ text: texts[c.spanId], hash: contentHash(texts[c.spanId]!) });
        expect(r.more).toBe(false);
        expect(r.gone).toEqual([handles["span_3"]]);
      }
      const all = await store.searchCopies("s1", { copies, literal: null, limit: 100 });
      expect(all.candidates.map((c) => c.spanId).sort()).toEqual(["span_1", "span_2", "span_4", "span_5"]);
      const capped = await store.searchCopies("s1", { copies, literal: "req_7f3a", limit: 2 });
      expect(capped.candidates).toHaveLength(2);
      expect(capped.more).toBe(true);
      // Asked with another hash (altered behind the runtime), or about a handle with no record (deleted): gone.
      const altered = await store.searchCopies("s1", { copies: [{ handle: handles["span_1"]!, hash: contentHash("other bytes") }, { handle: "#999", hash: contentHash("x") }], literal: "req", limit: 10 });
      expect(altered).toEqual({ candidates: [], more: false, gone: [handles["span_1"], "#999"] });
      // Another session's handle of the same number is not this session's record.
      expect(await store.searchCopies("s3", { copies: [copies[0]!], literal: "req", limit: 10 })).toEqual({ candidates: [], more: false, gone: [copies[0]!.handle] });
      // A literal holding a NUL filters on its longest run without one: a wider set, never a narrower one.
      const nul = await store.searchCopies("s1", { copies, literal: "\0req_7f3a9c2e41", limit: 100 });
      expect(nul.candidates.map((c) => c.spanId).sort()).toEqual(["span_1", "span_5"]);
      expect(await store.searchCopies("s1", { copies: [], literal: "req", limit: 10 })).toEqual({ candidates: [], more: false, gone: [] });
      await store.close();
    });

    // Issue 23, item 7: the lossy budget has one count, the home store's counter, which the map reads too.
    it("lossySpent reads the session's counter: reservations count, releases give back, other sessions apart", async () => {
      const { store } = await make();
      expect(await store.lossySpent("s1")).toBe(0);
      expect(await store.reserveLossy("s1", 3, 2)).toBe(2);
      expect(await store.lossySpent("s1")).toBe(2);
      await store.releaseLossy("s1", 1);
      expect(await store.lossySpent("s1")).toBe(1);
      expect(await store.lossySpent("s2")).toBe(0);
      await store.close();
    });

    it("retention null keeps records forever", async () => {
      const { store, clock } = await make({ retentionMs: null });
      await store.persist({ session: "s1", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
      clock.advance(1000 * HOUR);
      expect(await store.rotate()).toEqual({ rotated: 0, keptByHold: 0 });
      expect(await store.lookup("s1", { spanId: "span_1" })).toMatchObject({ status: "found" });
      await store.close();
    });
  });
}
