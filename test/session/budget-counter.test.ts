/**
 * Finding 25.11 (runtime half): the session's lossy budget counter lives in a row anyone with write access to
 * the store can edit. A counter reset below the lossy commitments the home store's own chain records was
 * tampered with; it must not hand the session its budget again. The runtime fails closed: the budget counts
 * as spent (prunes that need a lossy commitment are refused with `lossy-budget`), whether the commitment
 * would be made in the home store (counted inside the commit transaction) or in another store (reserved on
 * the home counter first). `pruneguard audit --verify` names the counter (test/reliability/audit-cli.test.ts).
 *
 * Seen to fail before the fix (with `lossySpent` in src/stores/commit.ts returning the counter as it is, as
 * the adapters read it before): all four tests, `expected { … } to match object { status: 'rejected', … }` on
 * the prune after the reset, which came back `lossy` — the reset refilled the budget.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, SqliteStore, type BackingStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres.js";
import { dropSchemas, freshSchema, itWithServer, NO_SERVER, testPool } from "../stores/pg-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-budget-counter-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// `note` has no store: its lossy prunes commit in the home store. `scratch` names a read-only second store:
// it never has a copy, so its prunes are lossy, committed there, with units reserved on the home counter.
const kinds = {
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
  scratch: { store: "notes", modes: ["drop"], lossy: "with-flag" },
} as const;

/** Two lossy-budget scenarios over a pair of stores and a way to reset the home counter behind the runtime. */
function scenarios(open: () => Promise<{ log: BackingStore; notes: BackingStore; reset: (session: string) => Promise<void>; close: () => Promise<void> }>) {
  return {
    async homeCommit() {
      const { log, notes, reset, close } = await open();
      try {
        const win = new ContextWindow({ session: "h", stores: { log, notes }, kinds, limits: { lossyBudget: 1 } });
        const a = await win.append({ kind: "note", text: "first" });
        expect(await win.applyDirective({ op: "prune", span_id: a, mode: "drop", accept_lossy: true })).toMatchObject({ status: "lossy" });
        const b = await win.append({ kind: "note", text: "second" });
        expect(await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
        await reset("h");
        // The counter says 0, the chain records one lossy commitment: the budget stays spent.
        expect(await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
        expect(await log.countLossy("h")).toBe(1);
      } finally {
        await close();
      }
    },
    async reservation() {
      const { log, notes, reset, close } = await open();
      try {
        const win = new ContextWindow({ session: "r", stores: { log, notes }, kinds, limits: { lossyBudget: 2 } });
        const a = await win.append({ kind: "note", text: "first" });
        expect(await win.applyDirective({ op: "prune", span_id: a, mode: "drop", accept_lossy: true })).toMatchObject({ status: "lossy" });
        await reset("r");
        // Committed in `notes`, reserved on the home counter: a counter below the home chain grants nothing.
        const b = await win.append({ kind: "scratch", text: "scratch" });
        expect(await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
        expect(await notes.countLossy("r")).toBe(0);
      } finally {
        await close();
      }
    },
  };
}

describe("Finding 25.11: a reset lossy counter does not refill the budget (SQLite)", () => {
  let n = 0;
  const sqlite = scenarios(async () => {
    const path = join(dir, `budget-${n++}.db`);
    const clock = new ManualClock(0);
    const log = new SqliteStore({ name: "log", path, clock });
    const notes = new SqliteStore({ name: "notes", path, clock, writable: false, handlePrefix: "n" });
    return {
      log, notes,
      reset: async (session) => {
        const db = new DatabaseSync(path);
        db.prepare("UPDATE pruneguard_sessions SET lossy_used = 0 WHERE store = 'log' AND session = ?").run(session);
        db.close();
      },
      close: async () => {
        await log.close();
        await notes.close();
      },
    };
  });
  it("a lossy prune in the home store, counted inside its transaction", () => sqlite.homeCommit());
  it("a lossy prune in another store, reserved on the home counter", () => sqlite.reservation());
});

describe("Finding 25.11: a reset lossy counter does not refill the budget (PostgreSQL)", () => {
  const pool = NO_SERVER === null ? testPool(2) : null;
  const schemas: string[] = [];
  afterAll(async () => {
    if (pool === null) return;
    await dropSchemas(pool, schemas);
    await pool.end();
  });
  const postgres = scenarios(async () => {
    const schema = await freshSchema(pool!, "budgetctr", schemas);
    const log = new PostgresStore({ name: "log", pool: pool!, schema });
    const notes = new PostgresStore({ name: "notes", pool: pool!, schema, writable: false, handlePrefix: "n" });
    return {
      log, notes,
      reset: async (session) => {
        await pool!.query(`UPDATE ${pg.escapeIdentifier(schema)}.sessions SET lossy_used = 0 WHERE store = 'log' AND session = $1`, [session]);
      },
      close: async () => {
        await log.close();
        await notes.close();
      },
    };
  });
  itWithServer("a lossy prune in the home store, counted inside its transaction", { needs: "any" }, () => postgres.homeCommit(), 30_000);
  itWithServer("a lossy prune in another store, reserved on the home counter", { needs: "any" }, () => postgres.reservation(), 30_000);
});
