/**
 * Fault injection, the way SQLite tests itself: for each operation, count the store calls it makes,
 * then run it again failing call 1, 2, … N — once, and persistently from N on. After every run:
 * - `applyDirective` returned an outcome (it never throws);
 * - the window is either unchanged (but for the rejection line) or exactly as after a fault-free run,
 *   and its outcome says which (`rejected`/`unavailable` vs the fault-free status);
 * - the store agrees with the window: an unchanged window left the store's records unchanged, and every
 *   span the window freed is held (it survives a rotation past retention);
 * - once the fault clears, the next directive flushes the pending audit record: every directive then
 *   has exactly one record and the chain verifies;
 * - SQLite's own integrity check passes.
 * A second walk injects faults inside the SQLite transaction itself (a trigger that aborts the Nth
 * write) to prove that re-persist, hold and audit roll back together.
 *
 * Seen to fail when broken on purpose: with `PRUNEGUARD_SABOTAGE=skip-hold` every prune walk fails on
 * its fault-free run (freedSpanProblems lists span_3 and span_5 "freed under #n but the store answers
 * expired" after the rotation); replacing the transaction in `SqliteStore.commitPrune` by a direct call
 * (a local edit, reverted) made three of the four trigger walks fail with "store records changed
 * although the window did not" (the re-persist stayed when a later write aborted).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync as Database } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { verifyAuditChain } from "../../src/audit.js";
import type { DirectiveOutcome } from "../../src/outcome.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import type { BackingStore } from "../../src/stores/store.js";
import { ManualClock } from "../../src/types.js";
import type { ContextWindow } from "../../src/window/window.js";
import { FaultyStore, freedSpanProblems, HOUR, maybeSabotage, RETENTION_MS, tempDir, windowSnapshot, type FaultPlan } from "./helpers.js";
import { makeWindow } from "./model.js";
import { refSpanId } from "../../src/window/refs.js";

const dir = tempDir("faults");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

type Variant = "memory" | "sqlite";

interface Scenario {
  readonly clock: ManualClock;
  readonly faulty: FaultyStore;
  readonly sqlite: SqliteStore | null;
  readonly path: string | null;
  /** The window the operation runs in. */
  win: ContextWindow;
  readonly originals: Map<string, string>;
  /** Directives applied so far in the window's session (each must end with one audit record). */
  directives: number;
}

/**
 * A session with one span of every fate: a live `tool` span with a fresh copy, a `tool` span whose copy
 * rotated out (re-persist), a `plain` span whose copy rotated out (lossy with the flag), a scratch span
 * (unbacked), a pruned span (for recall), and a tool call/result group.
 */
async function scenario(variant: Variant, opts: { crash?: boolean } = {}): Promise<Scenario> {
  const clock = new ManualClock(10 * HOUR);
  let sqlite: SqliteStore | null = null;
  let path: string | null = null;
  let inner: BackingStore;
  if (variant === "memory") inner = new MemoryStore({ name: "log", retentionMs: RETENTION_MS, clock });
  else {
    path = join(dir, `faults-${files++}.db`);
    inner = sqlite = new SqliteStore({ name: "log", path, retentionMs: RETENTION_MS, clock, busyTimeoutMs: 50 });
  }
  const faulty = new FaultyStore(maybeSabotage(inner));
  const win = makeWindow("s", faulty, clock);
  const s: Scenario = { clock, faulty, sqlite, path, win, originals: new Map(), directives: 0 };
  const add = async (kind: "tool" | "plain" | "scratch", text: string, group?: string) => {
    const id = await win.append({ kind, text, ...(group ? { group } : {}) });
    s.originals.set(refSpanId(id), text);
    return id;
  };
  await add("tool", "aged tool output E1042");          // span_1: copy will rotate (re-persist)
  await add("plain", "aged plain output req_8f3a2c91"); // span_2: copy will rotate (lossy with flag)
  clock.advance(3 * HOUR);
  await faulty.rotate();
  await add("tool", "fresh tool output");               // span_3: fresh copy
  await add("scratch", "scratch notes");                // span_4: unbacked
  await add("tool", "already pruned");                  // span_5: pruned below
  await add("scratch", "search(q)", "call_1");          // span_6: tool call (unbacked)
  await add("tool", "3 results", "call_1");             // span_7: tool result
  expect((await win.applyDirective({ op: "prune", span_id: "span_5", mode: "drop" })).status).toBe("reversible");
  s.directives++;
  if (opts.crash) {
    // A new process: the same store, a window rebuilt over the same session that only recalls.
    s.win = makeWindow("s", faulty, clock);
  }
  return s;
}

const OPERATIONS: ReadonlyArray<{ name: string; directive: unknown; crash?: boolean }> = [
  { name: "reversible drop", directive: { op: "prune", span_id: "span_3", mode: "drop" } },
  { name: "re-persist summarize", directive: { op: "prune", span_id: "span_1", mode: "summarize", digest: "E1042 seen" } },
  { name: "lossy drop within budget", directive: { op: "prune", span_id: "span_2", mode: "drop", accept_lossy: true } },
  { name: "lossy unbacked drop", directive: { op: "prune", span_id: "span_4", mode: "drop", accept_lossy: true } },
  { name: "group prune", directive: { op: "prune", span_id: "span_7", mode: "summarize", digest: "3 hits", accept_lossy: true } },
  { name: "rejected prune", directive: { op: "prune", span_id: "span_2", mode: "drop" } },
  { name: "recall from store", directive: { op: "recall", span_id: "span_5" } },
  { name: "recall by handle", directive: { op: "recall", span_id: "#5" } },
  { name: "recall unknown", directive: { op: "recall", span_id: "span_99" } },
  { name: "invalid directive", directive: { op: "prune", span_id: "span_3", mode: "drop", accept_lossy: "true" } },
];

/** Strips the rejection notice, which a refused prune adds by design. */
const shape = (win: ContextWindow) => windowSnapshot(win).map((e) => (e.state === "live" ? { ...e, notice: null } : e));

async function records(s: Scenario) {
  const out: Record<string, unknown> = {};
  for (const id of s.originals.keys()) out[id] = await s.faulty.inner.lookup("s", { spanId: id });
  return out;
}

/** Runs one operation under a fault plan and checks every consistency property. */
async function runUnderFault(variant: Variant, op: (typeof OPERATIONS)[number], plan: FaultPlan | null, clean: { window: unknown; status: string } | null) {
  const s = await scenario(variant, { crash: op.crash === true });
  try {
    const before = shape(s.win);
    const storeBefore = await records(s);
    if (plan) s.faulty.arm(plan);
    else s.faulty.arm({ failAt: Number.POSITIVE_INFINITY, mode: "once" });
    let out: DirectiveOutcome | undefined;
    let thrown: unknown = null;
    try {
      out = await s.win.applyDirective(op.directive);
    } catch (err) {
      thrown = err;
    }
    const calls = s.faulty.calls.length;
    s.faulty.disarm();
    s.directives++;
    expect(thrown, "applyDirective threw").toBeNull();
    const after = shape(s.win);
    const label = `${op.name} ${plan ? `failing call ${plan.failAt} ${plan.mode}` : "fault-free"}: ${JSON.stringify(out).slice(0, 300)}`;
    if (clean !== null) {
      const unchanged = JSON.stringify(after) === JSON.stringify(before);
      const committed = JSON.stringify(after) === JSON.stringify(clean.window);
      expect(unchanged || committed, `${label}: window neither unchanged nor fully committed`).toBe(true);
      if (committed && !unchanged) expect(out!.status, label).toBe(clean.status);
      if (unchanged && !committed) {
        expect(["rejected", "unavailable", "invalid", clean.status], label).toContain(out!.status);
        if (out!.op === "prune" && (out!.status === "reversible" || out!.status === "lossy")) throw new Error(`${label}: outcome says freed but the window did not change`);
        expect(await records(s), `${label}: store records changed although the window did not`).toEqual(storeBefore);
      }
      if (out!.op === "recall" && clean.status !== "unknown") {
        // A failing store may make the copy unreachable now, never make it "never existed".
        expect(out!.status, `${label}: a store failure answered as if the span never existed`).not.toBe("unknown");
      }
    }
    if (s.sqlite) expect(s.sqlite.integrityCheck()).toBe("ok");
    // The fault is gone: the next directive flushes what could not be logged.
    expect((await s.win.applyDirective({ op: "recall", span_id: "span_98" })).status).toBe("unknown");
    s.directives++;
    expect(s.win.pendingAudit).toBe(0);
    const log = await s.faulty.inner.auditLog("s");
    expect(verifyAuditChain(log)).toBeNull();
    const perSpan = op.directive && (op.directive as { span_id?: string }).span_id === "span_7" && out?.status !== "rejected" ? 1 : 0;
    // A group prune logs one record per member; everything else exactly one per directive.
    expect(log.length, `${label}: audit records`).toBe(s.directives + perSpan);
    // Whatever the window freed is held: it survives rotation past retention.
    s.clock.advance(3 * HOUR);
    await s.faulty.inner.rotate();
    expect(await freedSpanProblems(s.win, s.faulty.inner, s.originals), label).toEqual([]);
    return { calls, window: after, status: out!.status };
  } finally {
    await s.faulty.inner.close();
    if (s.path) rmSync(s.path, { force: true });
  }
}

describe("fault injection: every store call of every operation fails in turn", () => {
  for (const variant of ["memory", "sqlite"] as const) {
    for (const op of OPERATIONS) {
      it(`${variant}: ${op.name}`, async () => {
        const clean = await runUnderFault(variant, op, null, null);
        expect(clean.calls).toBeGreaterThan(0);
        for (const mode of ["once", "persistent"] as const) {
          // One past the last call too: a plan that never fires must change nothing.
          for (let n = 1; n <= clean.calls + 1; n++) await runUnderFault(variant, op, { failAt: n, mode }, clean);
        }
      });
    }
  }

  it("a window rebuilt after a restart answers `unavailable`, never `unknown`, when the store fails during recall", async () => {
    // Found by this suite: recall from the stores used to skip a failing store and answer "never in this
    // session". Fixed in src/recall.ts (923be0b); kept as a regression.
    const op = { name: "recall after restart", directive: { op: "recall", span_id: "span_5" }, crash: true };
    const clean = await runUnderFault("memory", op, null, null);
    expect(clean.status).toBe("found");
    for (const mode of ["once", "persistent"] as const) {
      for (let n = 1; n <= clean.calls + 1; n++) await runUnderFault("memory", op, { failAt: n, mode }, clean);
    }
  });
});

describe("fault injection inside the SQLite transaction", () => {
  /** A trigger on the store's own file that aborts one write, installed through a second connection. */
  function inject(path: string, sql: string): () => void {
    const db = new Database(path);
    db.exec(`DROP TRIGGER IF EXISTS pg_fault; CREATE TRIGGER pg_fault ${sql} BEGIN SELECT RAISE(ABORT, 'injected write fault'); END;`);
    return () => {
      db.exec("DROP TRIGGER IF EXISTS pg_fault");
      db.close();
    };
  }

  // The group prune writes: the call's lossy audit record, the result's re-persist, its audit record with
  // its hold. The result's copy is made to expire first so that re-persist runs.
  const POINTS = [
    "BEFORE INSERT ON pruneguard_audit WHEN NEW.seq = 2",
    "BEFORE INSERT ON pruneguard_audit WHEN NEW.seq = 3",
    "BEFORE UPDATE OF text ON pruneguard_records",
    "BEFORE INSERT ON pruneguard_audit WHEN NEW.hold_span IS NOT NULL",
  ];

  for (const point of POINTS) {
    it(`a write that aborts (${point}) rolls back the whole prune`, async () => {
      const clock = new ManualClock(0);
      const path = join(dir, `trigger-${files++}.db`);
      const store = new SqliteStore({ name: "log", path, retentionMs: RETENTION_MS, clock });
      try {
        const win = makeWindow("s", store, clock);
        await win.append({ kind: "scratch", text: "search(q)", group: "g" });
        await win.append({ kind: "tool", text: "3 results", group: "g" });
        clock.advance(3 * HOUR);
        await store.rotate();
        await win.applyDirective({ op: "recall", span_id: "span_9" }); // seq 1
        const before = shape(win);
        const recordsBefore = await store.lookup("s", { spanId: "span_2" });
        const release = inject(path, point);
        let out;
        try {
          out = await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop", accept_lossy: true });
        } finally {
          release();
        }
        expect(out).toMatchObject({ status: "rejected", reason: "store-error" });
        expect(shape(win)).toEqual(before);
        expect(await store.lookup("s", { spanId: "span_2" }), "store records changed although the window did not").toEqual(recordsBefore);
        expect(store.integrityCheck()).toBe("ok");
        // The fault is gone: the same prune commits in full.
        expect(await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop", accept_lossy: true })).toMatchObject({ status: "reversible", groupPruned: ["span_1"] });
        const log = await store.auditLog("s");
        expect(verifyAuditChain(log)).toBeNull();
        expect(log.map((r) => `${r.spanId}:${r.status}:${r.reason ?? ""}`)).toEqual([
          "span_9:unknown:", "span_2:rejected:store-error", "span_1:lossy:unbacked", "span_2:reversible:repersisted:expired",
        ]);
      } finally {
        await store.close();
      }
    });
  }
});
