// Outcomes that tell the truth when something around them fails (issue 35, items 4 and 5):
// - a range summary whose COMMIT answer is lost is held in doubt like a prune, never reported as "nothing
//   was committed", and settled by the next directive over its spans;
// - `end()` applies what is pending, and once it released the holds no line offers a recall its copy
//   cannot honour.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, verifyAuditChain, type BackingStore, type SessionLimits } from "../../src/index.js";
import type { PruneCommit } from "../../src/stores/store.js";
import { OutcomeUnknownError } from "../../src/errors.js";
import { fuzzRuns, timeoutFor } from "../reliability/helpers.js";
import { immediate } from "./immediate.js";

const HOUR = 3_600_000;
const kinds = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
} as const;

/**
 * A store whose next `commitPrune` commits and then loses its answer: `resolve` cannot say until `sayable`
 * (or says nothing committed when `committed` is false: the COMMIT never reached the server).
 */
function losingReplies(store: MemoryStore) {
  const state = { armed: false, committed: true, sayable: false, resolves: 0 };
  const commitPrune = store.commitPrune.bind(store);
  store.commitPrune = async (input) => {
    if (!state.armed) return commitPrune(input);
    state.armed = false;
    const commit = state.committed ? await commitPrune(input) : null;
    throw new OutcomeUnknownError(store.name, "connection lost after COMMIT", async () => {
      state.resolves++;
      if (!state.sayable) throw new Error("the store still cannot say");
      return commit as PruneCommit | null;
    });
  };
  return state;
}

function setup(deferred = false) {
  const clock = new ManualClock(0);
  const store = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
  const win = new ContextWindow(
    deferred
      ? { session: "s", clock, stores: { log: store }, kinds }
      : immediate({ session: "s", clock, stores: { log: store }, kinds }),
  );
  return { clock, store, win };
}

/**
 * A store (retention 2 h) and the options of an immediate window of `tool` spans on it, the clock at 10:00:
 * `options` makes them again for a window resumed on the same session.
 */
function atTen(limits: SessionLimits = {}) {
  const clock = new ManualClock(10 * HOUR);
  const store = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
  const options = () => immediate({ session: "s", clock, stores: { log: store }, kinds, limits });
  return { clock, store, options };
}

const prunes = async (store: BackingStore) => (await store.auditLog("s")).filter((r) => r.op === "prune" && r.status === "reversible");

describe("a range summary whose commit answer is lost", () => {
  it("is in doubt, not 'nothing was committed'; a retry commits nothing twice; the next directive applies what committed", async () => {
    const { store, win } = setup();
    const refs = [];
    for (let i = 1; i <= 3; i++) refs.push(await win.append({ kind: "tool", text: `step ${i}` }));
    const before = win.render();
    const lost = losingReplies(store);
    lost.armed = true;
    const out = await win.summarizeRange({ from: refs[0]!, to: refs[2]!, digest: "three steps" });
    expect(out).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
    expect(out.status === "rejected" && out.message).not.toMatch(/nothing was committed/);
    expect(win.entries().map((e) => e.state)).toEqual(["live", "live", "live"]);
    expect(win.render().startsWith(before)).toBe(true);
    // The store did commit: one record per member.
    expect(await prunes(store)).toHaveLength(3);
    // While the store cannot say, a retry (of the summary, or of a member's prune) is refused and commits nothing.
    expect(await win.summarizeRange({ from: refs[0]!, to: refs[2]!, digest: "again" })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
    expect(await win.tryPrune({ span: refs[1]!, mode: "drop" })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
    expect(await prunes(store)).toHaveLength(3);
    // Once it can, the next directive over the run reads back, applies the committed summary, then answers.
    lost.sayable = true;
    expect(await win.tryPrune({ span: refs[1]!, mode: "drop" })).toMatchObject({ status: "rejected" });
    expect(win.entries().map((e) => e.state)).toEqual(["summary"]);
    expect(win.render()).toContain("summary of span_1–span_3 (3)");
    expect(await prunes(store)).toHaveLength(3);
    expect(await win.recall("span_2")).toMatchObject({ status: "found", text: "step 2" });
    expect(verifyAuditChain(await store.auditLog("s"))).toBeNull();
  });

  it("when the read-back says nothing committed, the run stays and a later summary commits once", async () => {
    const { store, win } = setup();
    const refs = [];
    for (let i = 1; i <= 2; i++) refs.push(await win.append({ kind: "tool", text: `step ${i}` }));
    const lost = losingReplies(store);
    lost.armed = true;
    lost.committed = false;
    expect(await win.summarizeRange({ from: refs[0]!, to: refs[1]!, digest: "d" })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
    lost.sayable = true;
    expect(await win.summarizeRange({ from: refs[0]!, to: refs[1]!, digest: "two steps" })).toMatchObject({ status: "summarized" });
    expect(await prunes(store)).toHaveLength(2);
  });

  it(`property: lost answers at any summary or prune, settled in any order, never commit twice and leave window and store agreeing (${fuzzRuns(60)} runs)`, { timeout: timeoutFor(60, 200) }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ op: fc.constantFrom("summarize", "prune"), at: fc.nat(3), lose: fc.boolean(), committed: fc.boolean(), sayable: fc.boolean() }), { minLength: 1, maxLength: 8 }),
        async (steps) => {
          const { store, win } = setup();
          const refs = [];
          for (let i = 1; i <= 5; i++) refs.push(await win.append({ kind: "tool", text: `step ${i}` }));
          const lost = losingReplies(store);
          for (const step of steps) {
            lost.armed = step.lose;
            lost.committed = step.committed;
            lost.sayable = step.sayable;
            const out = step.op === "summarize"
              ? await win.summarizeRange({ from: refs[step.at]!, to: refs[step.at + 1]!, digest: "d" })
              : await win.tryPrune({ span: refs[step.at]!, mode: "drop" });
            // A lost answer is never reported as a store error that committed nothing.
            if (step.lose && step.committed && out.status === "rejected") expect(out.reason).not.toBe("store-error");
          }
          // The store recovers; one directive per span settles every doubt.
          lost.armed = false;
          lost.sayable = true;
          for (const r of refs) await win.recall(r);
          for (const r of refs) await win.tryPrune({ span: r, mode: "drop" });
          // Each span was decided at most once, and the window shows exactly what the store committed.
          const log = await prunes(store);
          const perSpan = new Map<string, number>();
          for (const rec of log) perSpan.set(rec.spanId!, (perSpan.get(rec.spanId!) ?? 0) + 1);
          for (const [id, n] of perSpan) expect(n, id).toBe(1);
          const shownPruned = new Set<string>();
          // A summary lists its members one level down; a lower summary among them (a run named by a member of
          // it nests it) lists its own. A summary over spans pruned already is recorded under its own id: it
          // touched no copy.
          const walk = async (id: string): Promise<void> => {
            const r = await win.recall(id);
            if (r.status !== "expanded") return void shownPruned.add(id);
            if (perSpan.has(id)) shownPruned.add(id);
            for (const m of r.members) await walk(m);
          };
          for (const e of win.entries()) {
            if (e.state === "pruned") shownPruned.add(e.spanId);
            if (e.state === "summary") await walk(e.spanId);
          }
          expect([...shownPruned].sort()).toEqual([...perSpan.keys()].sort());
          expect(verifyAuditChain(await store.auditLog("s"))).toBeNull();
        },
      ),
      { numRuns: fuzzRuns(60) },
    );
  });
});

describe("end()", () => {
  it("a held copy whose retention outlasts the horizon: after end() the line says until when, as a window resumed then says", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const store = new MemoryStore({ name: "log", clock, retentionMs: 3 * HOUR });
    const options = immediate({ session: "s", clock, stores: { log: store }, kinds, limits: { maxLengthMs: 2 * HOUR } }); // horizon 11:00
    const win = new ContextWindow(options);
    await win.append({ kind: "tool", text: "output one" });
    await win.append({ kind: "tool", text: "a live span" });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    const line = (w: ContextWindow<keyof typeof kinds>) => w.render().split("\n\n")[0];
    expect(line(win)).toBe("span_1 pruned, recall #1");
    await win.end();
    // The hold is released; retention keeps the copy until 12:00, past the horizon: no longer "for the session".
    expect(line(win)).toBe("span_1 pruned, recall #1 until 12:00Z");
    const resumed = await ContextWindow.resume(options);
    expect(line(resumed)).toBe(line(win));
    expect(resumed.tokens()).toBe(win.tokens());
  });

  it("on a resumed window, a copy kept only until a time (pruned past the horizon) is still offered until then", async () => {
    const MIN = 60_000;
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const store = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
    const options = immediate({ session: "s", clock, stores: { log: store }, kinds, limits: { maxLengthMs: HOUR } });
    const first = new ContextWindow(options);
    await first.append({ kind: "tool", text: "before" });
    clock.advance(30 * MIN);
    await first.append({ kind: "tool", text: "output one" }); // copy written 09:30, retained until 11:30
    await first.append({ kind: "tool", text: "a live span" });
    clock.advance(40 * MIN); // 10:10: past the horizon (10:00), so no hold outlasts the retention
    expect(await first.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" })).toMatchObject({ status: "reversible", until: Date.UTC(2026, 11, 5, 11, 30) });
    const line = (w: ContextWindow<keyof typeof kinds>) => w.render().split("\n\n").find((b) => b.startsWith("span_2 "));
    expect(line(first)).toBe("span_2 pruned, recall #2 until 11:30Z");
    const resumed = await ContextWindow.resume(options);
    await resumed.end();
    // The retention still keeps it: the ending window says so, as the window that pruned it would.
    expect(line(resumed)).toBe("span_2 pruned, recall #2 until 11:30Z");
    expect(await resumed.recall("span_2")).toMatchObject({ status: "found", text: "output one" });
    await first.end();
    expect(line(first)).toBe(line(resumed));
  });

  it("applies a prune still pending, and once the holds are released no line offers a recall past the copy's retention", async () => {
    const { clock, store, win } = setup(true);
    const ref = await win.append({ kind: "tool", text: "output with req_7f3a9c2e41" });
    await win.append({ kind: "tool", text: "x".repeat(20) });
    await win.prune({ span: ref, mode: "drop" });
    // Deferred: the prune is decided, not yet shown.
    expect(win.entries()[0]!.state).toBe("live");
    await win.end();
    expect(win.entries()[0]!).toMatchObject({ state: "pruned", line: expect.stringMatching(/^span_1 pruned, recall #1.* until 02:00Z/) });
    // The store's retention passes and its job deletes the copy: the line no longer offers it.
    clock.advance(2 * HOUR + 1);
    await store.rotate();
    expect(win.render()).toMatch(/^span_1 pruned, copy may be lost/);
    expect(await win.recall(ref)).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
    // The compaction point end() made is audited, once.
    expect((await store.auditLog("s")).filter((r) => r.op === "compact")).toHaveLength(1);
  });

  it(`property: whatever happened before and after end(), a line that offers a recall is one recall honours (${fuzzRuns(60)} runs)`, { timeout: timeoutFor(60, 100) }, async () => {
    const step = fc.oneof(
      fc.record({ t: fc.constant("append" as const) }),
      fc.record({ t: fc.constant("prune" as const), at: fc.nat(5) }),
      fc.record({ t: fc.constant("advance" as const), hours: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ t: fc.constant("rotate" as const) }),
      fc.record({ t: fc.constant("end" as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 16 }), async (steps) => {
        const { clock, store, win } = setup(true);
        const refs = [];
        let ended = false;
        for (const s of steps) {
          if (s.t === "append" && !ended) refs.push(await win.append({ kind: "tool", text: `output ${refs.length}` }));
          else if (s.t === "prune" && !ended && refs[s.at] !== undefined) await win.tryPrune({ span: refs[s.at]!, mode: "drop" });
          else if (s.t === "advance") clock.advance(s.hours * HOUR);
          else if (s.t === "rotate") await store.rotate();
          else if (s.t === "end") {
            await win.end();
            ended = true;
          }
          for (const e of win.entries()) {
            if (e.state !== "pruned" || !/recall #\d+/.test(e.line)) continue;
            expect(await store.lookup("s", { handle: e.handle }), `${e.line} after ${JSON.stringify(steps)}`).toMatchObject({ status: "found" });
          }
        }
      }),
      { numRuns: fuzzRuns(60) },
    );
  });
});

describe("a group member that joins after a prune of its group went into doubt", () => {
  // Seen before the fix: the call's prune was in doubt (not held for the result, which did not exist yet); a
  // prune of the result took the call with it and committed it a second time: `1:span_1:lossy 2:span_1:lossy
  // 3:span_2:lossy`, the lossy budget charged 3 for 2 spans lost.
  const groupKinds = { scratch: { store: null, modes: ["drop"], lossy: "with-flag" } } as const;
  for (const sayable of [false, true]) {
    it(`is not pruned past the doubt: ${sayable ? "the doubt settles first, nothing commits twice" : "kept while the store cannot say"}`, async () => {
      const clock = new ManualClock(0);
      const store = new MemoryStore({ name: "log", clock });
      const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds: groupKinds, limits: { lossyBudget: 3 } }));
      await win.append({ kind: "scratch", text: "call grep", message: { role: "tool-call", callId: "c1", toolName: "grep" } });
      const lost = losingReplies(store);
      lost.armed = true;
      expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
      await win.append({ kind: "scratch", text: "grep output", message: { role: "tool-result", callId: "c1", toolName: "grep" } });
      lost.sayable = sayable;
      const out = await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop", accept_lossy: true });
      if (!sayable) expect(out).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
      const lossy = (await store.auditLog("s")).filter((r) => r.op === "prune" && r.status === "lossy").map((r) => r.spanId);
      expect(new Set(lossy).size, lossy.join(" ")).toBe(lossy.length);
      expect(await store.lossySpent("s")).toBe(lossy.length);
      expect(verifyAuditChain(await store.auditLog("s"))).toBeNull();
    });
  }
});

describe("auditLog() reads each chain in its own order", () => {
  it("called while a prune's transaction runs, it waits for it: records queued by a rendering are written after it", async () => {
    const clock = new ManualClock(10 * HOUR);
    const store = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
    let open: (() => void) | null = null;
    const commitPrune = store.commitPrune.bind(store);
    store.commitPrune = async (txn) => {
      await new Promise<void>((resolve) => (open = resolve));
      return commitPrune(txn);
    };
    const win = new ContextWindow({ session: "s", clock, stores: { log: store }, kinds, limits: { compaction: { minFreedTokens: 1024, atTokens: null } } });
    await win.append({ kind: "tool", text: Array.from({ length: 1500 }, (_, i) => `w${i}`).join(" ") });
    await win.append({ kind: "tool", text: "small" });
    const first = win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    await vi.waitFor(() => expect(open).not.toBeNull());
    open!();
    await first;
    open = null;
    const second = win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    await vi.waitFor(() => expect(open).not.toBeNull());
    win.render(); // a compaction point is due: its record is queued, decided after the running prune
    const logged = win.auditLog();
    open!();
    await second;
    const log = await logged;
    expect(verifyAuditChain(log)).toBeNull();
    expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
  });

  it("two windows on one session, each with its own decision clock: the chain is read by seq, and verifies", async () => {
    const store = new MemoryStore({ name: "log" });
    const a = new ContextWindow({ session: "s", clock: new ManualClock(10 * HOUR), stores: { log: store }, kinds });
    const b = new ContextWindow({ session: "s", clock: new ManualClock(10 * HOUR), stores: { log: store }, kinds });
    for (let i = 0; i < 3; i++) await a.applyDirective({ op: "recall", span_id: `span_${90 + i}` });
    await b.applyDirective({ op: "recall", span_id: "span_99" }); // decided at B's first tick: earlier than A's last
    for (const w of [a, b]) {
      const log = await w.auditLog();
      expect(log.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
      expect(verifyAuditChain(log)).toBeNull();
    }
  });
});

describe("a prune settled late, after its hold lapsed and its copy was rotated out", () => {
  // Seen before the fix: the window answered recalls from the live bytes while the prune was in doubt; the
  // session passed its horizon, rotation emptied the copy, and the doubt settled as committed: the window
  // dropped the bytes, and recall answered `copy-lost` for a span it had held all along.
  it("writes the copy again from the bytes the window kept, so nothing is lost", async () => {
    const { clock, store, options } = atTen({ maxLengthMs: HOUR });
    const win = new ContextWindow(options());
    await win.append({ kind: "tool", text: "alpha req_abc" });
    const lost = losingReplies(store);
    lost.armed = true;
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
    expect(await win.applyDirective({ op: "recall", span_id: "span_1" })).toMatchObject({ status: "found", source: "window" });
    clock.advance(4 * HOUR);
    expect((await store.rotate()).rotated).toBe(1);
    lost.sayable = true;
    expect(await win.applyDirective({ op: "recall", span_id: "span_1" })).toMatchObject({ status: "found", text: "alpha req_abc" });
    expect(win.span("span_1")).toBeUndefined(); // pruned now, as committed
    expect(await win.recall("span_1")).toMatchObject({ status: "found", source: "store", text: "alpha req_abc" });
  });

  it("end() settles decisions in doubt before it releases the holds", async () => {
    const { store, options } = atTen();
    const win = new ContextWindow(options());
    await win.append({ kind: "tool", text: "alpha req_abc" });
    const lost = losingReplies(store);
    lost.armed = true;
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    lost.sayable = true;
    await win.end();
    expect(win.span("span_1")).toBeUndefined();
    // Its line promises the copy only as long as retention keeps it, from the release on.
    expect(win.render()).toMatch(/span_1 pruned, recall #1 until /);
  });
});

describe("a range summary refused after its id was minted", () => {
  // Seen before the fix: search named the refused summary's id as a span "another window of this session"
  // appended, and recall of it answered "lost in a restart" (one window, no restart).
  it("leaves an id that search does not count and recall calls never in the session", async () => {
    const clock = new ManualClock(10 * HOUR);
    const store = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
    const plain = { plain: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" } } as const;
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds: plain }));
    await win.append({ kind: "plain", text: "alpha" });
    await win.append({ kind: "plain", text: "beta" });
    clock.advance(3 * HOUR);
    await store.rotate(); // both copies gone, and the kind cannot write them again: the summary is refused
    expect(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_2", digest: "x" })).toMatchObject({ status: "rejected" });
    expect((await store.sessionSpans("s")).map((r) => r.spanId)).toContain("span_3");
    const found = await win.applyDirective({ op: "search", query: "nothing-here" });
    if (found.op !== "search" || found.status === "invalid") throw new Error(`expected a search answer, got ${JSON.stringify(found)}`);
    expect(JSON.stringify(found.coverage)).not.toContain("span_3");
    expect(found.text).not.toMatch(/another window/);
    expect(await win.applyDirective({ op: "recall", span_id: "span_3" })).toMatchObject({ status: "unknown" });
  });
});

describe("a session resumed after end()", () => {
  // Seen before the fix: the window that ended the session showed `recall #1 until <retention>`, a window
  // resumed after it showed `recall #1` (held to the horizon) for a copy no hold kept any more; after
  // rotation its recall answered copy-lost for a line that promised the copy.
  it("shows the promise the ending window showed: copies pruned before the end kept by retention alone; later prunes held again", async () => {
    const { clock, store, options } = atTen({ maxLengthMs: 8 * HOUR });
    const win = new ContextWindow(options());
    await win.append({ kind: "tool", text: "alpha" });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(win.render()).toMatch(/span_1 pruned, recall #1(?! until)/);
    await win.end();
    const ended = win.render();
    expect(ended).toMatch(/span_1 pruned, recall #1 until 12:00Z/);
    expect((await store.auditLog("s")).at(-1)).toMatchObject({ op: "end", status: "ended" });
    const resumed = await ContextWindow.resume(options());
    expect(resumed.render()).toBe(ended);
    // A prune after the resume places a hold again: its line promises the copy to the horizon.
    await resumed.append({ kind: "tool", text: "beta" });
    await resumed.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    clock.advance(3 * HOUR);
    expect((await store.rotate()).rotated).toBe(1);
    expect(resumed.render()).toMatch(/span_1 pruned, copy may be lost/);
    expect(await resumed.recall("span_2")).toMatchObject({ status: "found" });
    expect(verifyAuditChain(await resumed.auditLog())).toBeNull();
  });
});

describe("what a resume infers from the session's end, by chain order", () => {
  // Seen before the fix: two windows on one clock; B's prune came before A's end in the chain (seq 2, 3) but
  // was decided a microsecond later by B's clock. The resume compared decision times, promised span_2's copy
  // to the horizon although the end had released its hold, and recall answered copy-lost after rotation.
  it("a prune before the end in the chain is released by it, whatever the windows' clocks said", async () => {
    const { clock, store, options } = atTen({ maxLengthMs: 8 * HOUR });
    const a = new ContextWindow(options());
    await a.append({ kind: "tool", text: "alpha" });
    const b = await ContextWindow.resume(options());
    await b.append({ kind: "tool", text: "beta" });
    await b.recall("span_1");
    await b.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    await a.end();
    const c = await ContextWindow.resume(options());
    expect(c.render()).toMatch(/span_2 pruned, recall #2 until /);
  });
});

