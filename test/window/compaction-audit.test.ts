/**
 * The audit chain under the default compaction (decisions now, rewrites at compaction points), over generated
 * sessions: appends, prunes, renderings (which make compaction points and queue their records), `compact()`,
 * `auditLog()` calls (which flush the queue, also two at once), and a home store that fails writes for a while,
 * sometimes after committing (the reply lost). Whatever the order, once the store is healthy again and the queue
 * is flushed: every decision has exactly one record, every compaction point that applied something has one,
 * nothing is written twice, and each chain verifies in decision order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { verifyAuditChain, type AuditDraft, type AuditRecord } from "../../src/audit.js";
import { OutcomeUnknownError, StoreError } from "../../src/errors.js";
import { ContextWindow, ManualClock, MemoryStore, type KindPolicy } from "../../src/index.js";
import { fuzzRuns, HOUR } from "../reliability/helpers.js";

const KINDS = { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } } as const satisfies Record<string, KindPolicy>;

type Op =
  | { t: "append"; tokens: number }
  | { t: "prune"; pick: number }
  | { t: "render"; thenLog: "no" | "once" | "twice" }
  | { t: "compact" }
  | { t: "auditLog"; twice: boolean }
  | { t: "fail"; writes: number; lostReply: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant("append" as const), tokens: fc.integer({ min: 200, max: 1_500 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("prune" as const), pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("render" as const), thenLog: fc.constantFrom("no" as const, "once" as const, "twice" as const) }) },
  { weight: 1, arbitrary: fc.constant({ t: "compact" as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("auditLog" as const), twice: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("fail" as const), writes: fc.integer({ min: 1, max: 3 }), lostReply: fc.boolean() }) },
);

const output = (tokens: number) => Array.from({ length: Math.ceil(tokens / 9) }, (_, k) => `line ${k} of output: ok`).join("\n");

/** A memory store whose next `failing` audit writes fail; with `lostReply`, each commits first and loses its reply. */
function flaky(clock: ManualClock) {
  const inner = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
  const state = { failing: 0, lostReply: false };
  const append = inner.appendAudit.bind(inner);
  inner.appendAudit = async (session: string, draft: AuditDraft): Promise<AuditRecord> => {
    if (state.failing === 0) return append(session, draft);
    state.failing--;
    if (!state.lostReply) throw new StoreError("log", "write failed");
    const record = await append(session, draft);
    throw new OutcomeUnknownError("log", "reply lost", async () => {
      if (state.failing > 0) throw new StoreError("log", "still cannot say");
      return record;
    });
  };
  return { store: inner, state };
}

describe("the audit chain under deferred compaction, with a failing store", () => {
  it("one record per decision and per compaction point that applied something, in decision order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        const clock = new ManualClock(Date.UTC(2026, 11, 4, 9, 0));
        const { store, state } = flaky(clock);
        const win = new ContextWindow({
          session: "s", clock, stores: { log: store }, kinds: KINDS,
          limits: { maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 1_024, atTokens: null } },
        });
        const ids: string[] = [];
        let decisions = 0;
        for (const op of ops) {
          clock.advance(1_000);
          if (op.t === "append") ids.push(String(await win.append({ kind: "tool", text: output(op.tokens) })));
          else if (op.t === "prune" && ids.length > 0) {
            await win.applyDirective({ op: "prune", span_id: ids[op.pick % ids.length], mode: "drop" });
            decisions++;
          } else if (op.t === "render") {
            // A rendering may queue a compaction record; a flush may follow at once, from one caller or two.
            win.render();
            if (op.thenLog === "once") await win.auditLog();
            if (op.thenLog === "twice") await Promise.all([win.auditLog(), win.auditLog()]);
          }
          else if (op.t === "compact") {
            await win.compact();
            decisions++;
          } else if (op.t === "auditLog") await (op.twice ? Promise.all([win.auditLog(), win.auditLog()]) : win.auditLog());
          else if (op.t === "fail") Object.assign(state, { failing: op.writes, lostReply: op.lostReply });
        }
        // Healthy again: the queue drains.
        state.failing = 0;
        const records = await win.auditLog();
        expect(win.pendingAudit).toBe(0);
        const chain = await store.auditLog("s");
        expect(verifyAuditChain(chain)).toBeNull();
        expect(chain.map((r) => r.seq)).toEqual(chain.map((_, i) => i + 1));
        // Decision order is chain order; no decision value appears twice (nothing written twice).
        const decided = chain.map((r) => r.decided!);
        expect(decided).toEqual([...decided].sort((a, b) => a - b));
        expect(new Set(decided).size).toBe(decided.length);
        // Exactly one record per decision the caller made.
        expect(chain.filter((r) => !(r.op === "compact" && r.directive === null)).length).toBe(decisions);
        // Every compaction point has its record: those asked for, and the window's own (here each applies a
        // decision: nothing folds, no promise lapses, no copy is found lost).
        // An asked compaction that found nothing to rewrite is recorded ("unchanged") but is no compaction point.
        const automatic = chain.filter((r) => r.op === "compact" && r.directive === null).length;
        const asked = chain.filter((r) => r.op === "compact" && r.directive !== null && r.status === "compacted").length;
        expect(chain.filter((r) => r.op === "compact" && r.directive === null && r.status !== "compacted")).toEqual([]);
        expect(automatic + asked).toBe(win.compactionPoints);
        expect(records).toHaveLength(chain.length);
      }),
      { numRuns: fuzzRuns(150) },
    );
  });
});
