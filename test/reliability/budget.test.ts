/**
 * The lossy budget and forbidden kinds, as properties over random prune sequences (lone spans and tool
 * call/result groups, copies fresh or rotated, every mode, `accept_lossy` true/false/absent):
 * - a session never makes more lossy commitments than `limits.lossyBudget` (group members count one
 *   each, as the audit log counts them), across a restart of the window on the same session too;
 * - once the budget is spent, a prune that could only be lossy is rejected with `lossy-budget`, and
 *   reversible prunes still go through;
 * - a span of a kind whose policy forbids lossy commitment never becomes a tombstone, whatever the
 *   directive says or the store holds; a `sealed` span (unbacked, forbid) never changes at all.
 *
 * Seen to fail when broken on purpose: `PRUNEGUARD_SABOTAGE=ignore-budget` mocks `decideSpan` to
 * always see budget left: the budget property fails ("lossy commitments 1 > budget 0");
 * `PRUNEGUARD_SABOTAGE=ignore-forbid` mocks it to read every kind as `with-flag`: the forbidden-kind
 * property fails ("span_1 (sealed) became a tombstone").
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { ManualClock, type KindPolicy, type PruneMode } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { fuzzRuns, HOUR, KINDS, RETENTION_MS, tempDir, timeoutFor, type Kind } from "./helpers.js";
import { immediate } from "../window/immediate.js";

vi.mock("../../src/decision/span.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/decision/span.js")>();
  type Args = Parameters<typeof real.decideSpan>;
  const sabotage = process.env["PRUNEGUARD_SABOTAGE"];
  if (sabotage === "ignore-budget") return { ...real, decideSpan: (i: Args[0], c: Args[1]) => real.decideSpan({ ...i, budgetLeft: true }, c) };
  if (sabotage === "ignore-forbid") {
    return { ...real, decideSpan: (i: Args[0], c: Args[1]) => real.decideSpan({ ...i, policy: { ...i.policy, lossy: "with-flag" } as KindPolicy }, c) };
  }
  return real;
});

const dir = tempDir("budget");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

interface Step {
  readonly kinds: readonly Kind[];
  readonly grouped: boolean;
  readonly pick: number;
  readonly mode: PruneMode;
  readonly lossy: boolean | null;
  readonly rotateFirst: boolean;
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  kinds: fc.array(fc.constantFrom<Kind>("tool", "plain", "locked", "scratch", "sealed"), { minLength: 1, maxLength: 2 }),
  grouped: fc.boolean(),
  pick: fc.nat(),
  mode: fc.constantFrom<PruneMode>("drop", "summarize", "compress"),
  lossy: fc.constantFrom(true, true, false, null),
  rotateFirst: fc.boolean(),
});

const FORBID = new Set(Object.entries(KINDS).filter(([, k]) => k.lossy === "forbid").map(([n]) => n));

describe("lossy budget and forbidden kinds", () => {
  it(`never more lossy commitments than the budget, never a tombstone for a forbidding kind (${fuzzRuns(200)} runs)`, { timeout: timeoutFor(200, 10) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 }), fc.array(stepArb, { minLength: 1, maxLength: 12 }), async (budget, steps) => {
        const clock = new ManualClock(10 * HOUR);
        const store = new MemoryStore({ name: "log", retentionMs: RETENTION_MS, clock });
        const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds: KINDS, limits: { lossyBudget: budget } }));
        const sealed = new Map<string, string>();
        let group = 0;
        for (const step of steps) {
          const g = step.grouped && step.kinds.length > 1 ? `call_${group++}` : undefined;
          const ids: string[] = [];
          for (const k of step.kinds) {
            const id = await win.append({ kind: k, text: `${k} text ${ids.length}`, ...(g ? { group: g } : {}) });
            ids.push(id);
            if (k === "sealed") sealed.set(id, `${k} text ${ids.length - 1}`);
          }
          if (step.rotateFirst) {
            clock.advance(3 * HOUR);
            await store.rotate();
          }
          const live = win.entries().filter((e) => e.state === "live");
          const target = live[step.pick % live.length];
          if (target === undefined || target.state !== "live") continue;
          const directive: Record<string, unknown> = { op: "prune", span_id: target.span.id, mode: step.mode };
          if (step.mode === "summarize") directive["digest"] = "digest";
          if (step.lossy !== null) directive["accept_lossy"] = step.lossy;
          const spentBefore = await store.countLossy("s");
          const out = await win.applyDirective(directive);
          if (out.status === "rejected" && spentBefore >= budget && step.lossy === true && out.reason !== "unknown-span") {
            // Spent: a prune that could only be lossy names the budget (or a stricter reason that comes first).
            expect(["lossy-budget", "lossy-forbidden", "mode-not-allowed", "group", "already-pruned"]).toContain(out.reason);
          }
          const spent = await store.countLossy("s");
          expect(spent <= budget, `lossy commitments ${spent} > budget ${budget}`).toBe(true);
          for (const e of win.entries()) {
            if (e.state === "tombstone") expect(FORBID.has(e.kind), `${e.spanId} (${e.kind}) became a tombstone`).toBe(false);
          }
          for (const [id, text] of sealed) expect(win.span(id)?.text, `${id} (sealed) changed`).toBe(text);
        }
        // The audit log and the window agree on what was spent.
        expect(win.entries().filter((e) => e.state === "tombstone")).toHaveLength(await store.countLossy("s"));
      }),
      { numRuns: fuzzRuns(200) },
    );
  });

  it("once spent, accept_lossy is rejected with lossy-budget while reversible prunes still succeed", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds: KINDS, limits: { lossyBudget: 1 } }));
    const a = await win.append({ kind: "scratch", text: "a" });
    const b = await win.append({ kind: "scratch", text: "b" });
    const c = await win.append({ kind: "tool", text: "c" });
    expect((await win.applyDirective({ op: "prune", span_id: a, mode: "drop", accept_lossy: true })).status).toBe("lossy");
    const refused = await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true });
    expect(refused).toMatchObject({ status: "rejected", reason: "lossy-budget" });
    expect(refused.status === "rejected" && refused.line).toBe("span_2 kept: prune rejected (no backing store, lossy budget spent)");
    expect((await win.applyDirective({ op: "prune", span_id: c, mode: "drop", accept_lossy: true })).status).toBe("reversible");
    // The reason recorded is the one the model was told: no backing store.
    expect((await store.auditLog("s")).map((r) => r.reason)).toEqual(["unbacked", "lossy-budget:unbacked", null]);
  });

  it("a budget of zero forbids every lossy commitment; a group whose members would overspend is refused whole", async () => {
    const clock = new ManualClock(0);
    const store = new MemoryStore({ name: "log", clock });
    const zero = new ContextWindow(immediate({ session: "z", clock, stores: { log: store }, kinds: KINDS, limits: { lossyBudget: 0 } }));
    const z = await zero.append({ kind: "scratch", text: "z" });
    expect(await zero.applyDirective({ op: "prune", span_id: z, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
    const one = new ContextWindow(immediate({ session: "g", clock, stores: { log: store }, kinds: KINDS, limits: { lossyBudget: 1 } }));
    await one.append({ kind: "scratch", text: "call", group: "g" });
    const r = await one.append({ kind: "scratch", text: "result", group: "g" });
    expect(await one.applyDirective({ op: "prune", span_id: r, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected" });
    expect(one.entries().map((e) => e.state)).toEqual(["live", "live"]);
    expect(await store.countLossy("g")).toBe(0);
  });

  it("the budget survives a restart: a window rebuilt on the same session counts what the log already holds", async () => {
    const path = join(dir, `restart-${files++}.db`);
    const clock = new ManualClock(0);
    const first = new SqliteStore({ name: "log", path, clock });
    const w1 = new ContextWindow(immediate({ session: "s", clock, stores: { log: first }, kinds: KINDS, limits: { lossyBudget: 2 } }));
    for (const t of ["a", "b"]) {
      const id = await w1.append({ kind: "scratch", text: t });
      expect((await w1.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true })).status).toBe("lossy");
    }
    await first.close();
    const second = new SqliteStore({ name: "log", path, clock });
    const w2 = new ContextWindow(immediate({ session: "s", clock, stores: { log: second }, kinds: KINDS, limits: { lossyBudget: 2 } }));
    const id = await w2.append({ kind: "scratch", text: "c" });
    expect(await w2.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
    await second.close();
  });
});
