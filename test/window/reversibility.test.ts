/**
 * Honest reversibility: a prune is `reversible` only while something promises its copy for the rest of
 * the session; otherwise it is reversible until a time the outcome, the line and the audit record carry,
 * or (for a kind that forbids lossy commitment) refused. When the promise ends, the line stops offering a
 * recall before the model reads it again.
 *
 * Seen failing: with `keepOf` returning "kept for the session" always, the no-holds scenario answers
 * `reversible` with `until: null` and the property finds `recall #1` rendered after rotation with recall
 * answering pruned-unrecoverable; with `goneLine` ignoring `keptUntil`, the hold-lapse scenario renders
 * `span_1 pruned, recall #1` at 9h over a rotated copy.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, type KindPolicy } from "../../src/index.js";
import { DEFAULT_TOMBSTONE } from "../../src/render/lines.js";
import { readRendered } from "../../src/render/grammar.js";
import { fuzzRuns, HOUR } from "../reliability/helpers.js";
import { immediate } from "./immediate.js";

const KINDS = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  strict: { store: "log", modes: ["drop"], lossy: "forbid" },
  fresh: { store: "log", modes: ["drop"], lossy: "forbid", repersist: true },
} as const satisfies Record<string, KindPolicy>;

function setup(o: { holds: boolean; retentionMs?: number | null; maxLengthMs?: number | null }) {
  const clock = new ManualClock(0);
  const log = new MemoryStore({ name: "log", clock, retentionMs: o.retentionMs === undefined ? 2 * HOUR : o.retentionMs, holds: o.holds });
  const win = new ContextWindow(immediate({ session: "s", clock, stores: { log }, kinds: KINDS, limits: { maxLengthMs: o.maxLengthMs === undefined ? 8 * HOUR : o.maxLengthMs } }));
  return { clock, log, win };
}

describe("reversible, reversible-until, or refused", () => {
  it("a store without holds: reversible only until its retention ends, said in the outcome, the line and the audit record", async () => {
    const { clock, log, win } = setup({ holds: false });
    await win.append({ kind: "tool", text: "a bad gateway" });
    clock.advance(HOUR);
    const out = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(out).toMatchObject({ status: "reversible", until: 2 * HOUR, line: "span_1 pruned, recall #1 until 02:00Z" });
    expect((await win.auditLog()).at(-1)).toMatchObject({ status: "reversible", until: 2 * HOUR });
    clock.advance(HOUR - 60_000);
    // The line says until when, so it does not tick: the same bytes a minute before the copy lapses.
    expect(win.render()).toBe("span_1 pruned, recall #1 until 02:00Z");
    clock.advance(60_000);
    // The moment retention may rotate it, the line stops offering a recall — before any rotation ran.
    expect(win.render()).toBe("span_1 pruned, copy may be lost");
    await log.rotate();
    expect(await win.recall("span_1")).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
    expect(win.render()).toBe("span_1 pruned, copy lost, contents unknown");
  });

  it("checkCopies also reaches the members of a range summary: its expansion stops offering their recall", async () => {
    const { clock, log, win } = setup({ holds: true, retentionMs: 0 });
    await win.append({ kind: "tool", text: "first" });
    await win.append({ kind: "tool", text: "second" });
    expect(await win.summarizeRange({ from: "span_1", to: "span_2", digest: "two outputs" })).toMatchObject({ status: "summarized", spanId: "span_3" });
    await log.releaseHolds("s"); // another writer releases the session's holds
    clock.advance(1);
    await log.rotate();
    expect(await win.checkCopies()).toBe(2);
    expect(await win.recall("span_3")).toMatchObject({
      status: "expanded", text: "span_1 pruned, copy lost, contents unknown\nspan_2 pruned, copy lost, contents unknown",
    });
  });

  it("a kind that forbids lossy refuses a prune whose copy would run out mid-session, naming why", async () => {
    const { clock, win } = setup({ holds: false });
    await win.append({ kind: "strict", text: "an audit note" });
    clock.advance(HOUR);
    const out = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(out).toMatchObject({ status: "rejected", reason: "not-reversible", line: "span_1 kept: prune rejected (copy expires before the session ends)" });
    expect((await win.auditLog()).at(-1)).toMatchObject({ status: "rejected", reason: "not-reversible:expires" });
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop", accept_lossy: true })).toMatchObject({ reason: "lossy-forbidden" });
  });

  it("retention that outlasts the horizon, or holds, or forever: plainly reversible", async () => {
    for (const o of [{ holds: false, retentionMs: 9 * HOUR }, { holds: true }, { holds: false, retentionMs: null }]) {
      const { clock, win } = setup(o);
      await win.append({ kind: "strict", text: "x" });
      clock.advance(HOUR);
      expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" }), JSON.stringify(o)).toMatchObject({
        status: "reversible", until: null, line: "span_1 pruned, recall #1",
      });
    }
  });

  it("a re-persisted copy without holds is kept for its retention from the re-persist", async () => {
    const { clock, log, win } = setup({ holds: false, maxLengthMs: null });
    await win.append({ kind: "tool", text: "y" });
    await win.append({ kind: "fresh", text: "z" });
    clock.advance(3 * HOUR);
    await log.rotate();
    // No horizon: nothing finite is for the session, and a forbid kind is refused even after re-persist.
    expect(await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" })).toMatchObject({ status: "rejected", reason: "not-reversible" });
  });

  it("holds lapse at the horizon: the line stops offering a recall then, and later prunes are reversible-until", async () => {
    const { clock, log, win } = setup({ holds: true });
    await win.append({ kind: "tool", text: "held" });
    clock.advance(HOUR);
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ status: "reversible", until: null });
    clock.set(8 * HOUR - 1);
    await log.rotate();
    expect(win.render()).toBe("span_1 pruned, recall #1");
    expect(await win.recall("#1")).toMatchObject({ status: "found" });
    clock.set(8 * HOUR);
    expect(win.render()).toBe("span_1 pruned, copy may be lost");
    // Past the horizon the session overruns its policy: a prune is reversible only for its copy's retention.
    clock.set(8.5 * HOUR);
    await win.append({ kind: "tool", text: "late" });
    const late = await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    expect(late).toMatchObject({ status: "reversible", until: 10.5 * HOUR, line: "span_2 pruned, recall #2 until 10:30Z" });
  });

  it("a copy deleted behind the runtime's back: checkCopies marks it before the model reads the line", async () => {
    const { clock, log, win } = setup({ holds: true, retentionMs: 0 });
    await win.append({ kind: "tool", text: "gone soon" });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(win.render()).toBe("span_1 pruned, recall #1");
    await log.releaseHolds("s"); // another writer releases the session's holds
    clock.advance(1);
    await log.rotate();
    expect(await win.checkCopies()).toBe(1);
    expect(win.render()).toBe("span_1 pruned, copy lost, contents unknown");
  });
});

describe("the lines stay short", () => {
  it("an index line that says until when is at most 17 o200k tokens (span_99999, #9999), 20 with the day when a day or more ahead", async () => {
    const { formatUntil, indexLine, replacementHeader, uncertainCopyLine } = await import("../../src/render/lines.js");
    const { countTokens } = await import("../../src/index.js");
    for (const id of ["span_7", "span_99999"]) {
      const now = Date.UTC(2026, 11, 3, 9, 0);
      for (const ms of [30_000, 59 * 60_000, 23 * HOUR]) expect(countTokens(indexLine(id, "#9999", null, formatUntil(now + ms, now)))).toBeLessThanOrEqual(17);
      for (const ms of [24 * HOUR, (99 * 60 + 59) * 60_000, 300 * HOUR]) {
        expect(countTokens(indexLine(id, "#9999", null, formatUntil(now + ms, now)))).toBeLessThanOrEqual(20);
        expect(countTokens(replacementHeader(id, "summarize", "#9999", formatUntil(now + ms, now)))).toBeLessThanOrEqual(20);
      }
      expect(countTokens(uncertainCopyLine(id, "drop", "may be lost"))).toBeLessThanOrEqual(12);
    }
  });
});

describe("no line offers a recall that recall cannot honour", () => {
  type Step =
    | { t: "append"; kind: keyof typeof KINDS }
    | { t: "prune"; i: number; mode: "drop" | "summarize" }
    | { t: "advance"; ms: number }
    | { t: "rotate" };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ t: fc.constant("append" as const), kind: fc.constantFrom("tool", "strict", "fresh") }),
    fc.record({ t: fc.constant("prune" as const), i: fc.nat(3), mode: fc.constantFrom("drop", "summarize") }),
    fc.record({ t: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 5 * HOUR }) }),
    fc.record({ t: fc.constant("rotate" as const) }),
  );
  const config = fc.record({
    holds: fc.boolean(),
    retentionMs: fc.option(fc.oneof(fc.constantFrom(0, HOUR, 2 * HOUR), fc.integer({ min: 0, max: 12 * HOUR })), { nil: null }),
    maxLengthMs: fc.option(fc.integer({ min: HOUR, max: 12 * HOUR }), { nil: null }),
  });

  it("over schedules of appends, prunes, time and rotation, with and without holds, past the horizon too", async () => {
    await fc.assert(
      fc.asyncProperty(config, fc.array(step, { maxLength: 25 }), async (cfg, steps) => {
        const { clock, log, win } = setup(cfg);
        let n = 0;
        for (const s of steps) {
          if (s.t === "append") await win.append({ kind: s.kind, text: `span text ${++n}` });
          else if (s.t === "prune") await win.applyDirective({ op: "prune", span_id: `span_${s.i + 1}`, mode: s.mode, ...(s.mode === "summarize" ? { digest: "d" } : {}) });
          else if (s.t === "advance") clock.advance(s.ms);
          else await log.rotate();
          // Every line that offers a recall must be honoured now, byte-identical.
          const offers = readRendered(win.render(), { tombstone: DEFAULT_TOMBSTONE }).runtime.filter((l) => l.line === "index");
          for (const l of offers) {
            if (l.line !== "index") continue;
            const r = await win.recall(l.handle);
            expect(r, `${l.spanId} offers recall ${l.handle} at ${clock.now()}`).toMatchObject({ status: "found", spanId: l.spanId });
          }
        }
      }),
      { numRuns: fuzzRuns(1000) },
    );
  }, 60_000);
});
