/**
 * One lossy budget per session, across processes: N agent processes share a session, race to make lossy
 * commitments, and together never make more than the session's budget — and, since every attempt past the
 * budget is refused only for the budget, exactly min(budget, attempts). On SQLite and on PostgreSQL.
 *
 * Seen to fail when broken on purpose: making `planCommit` ignore the counter it read (`lossyUsed` taken
 * as 0, its own over-budget check off) let two processes commit 2 lossy prunes against a budget of 1
 * (counterexample `{ processes: 2, budget: 1, tries: 2 }`: "lossy commitments: expected 2 to be 1").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import type { BackingStore } from "../../src/stores/store.js";
import { freshSchema, itWithServer, PG_URL, schemasDroppedAfterAll, testPool } from "../stores/pg-helpers.js";
import { PostgresStore } from "../../src/postgres.js";
import { spawnChild } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-session-budget-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let sessions = 0;

const caseArb = fc.record({ processes: fc.integer({ min: 2, max: 3 }), budget: fc.integer({ min: 0, max: 3 }), tries: fc.integer({ min: 2, max: 6 }) });

async function race(location: Record<string, unknown>, open: () => Promise<BackingStore>, c: { processes: number; budget: number; tries: number }) {
  const session = `budget-${sessions++}`;
  const children = Array.from({ length: c.processes }, (_, i) => spawnChild({ role: "lossy", session, budget: c.budget, tries: c.tries, tag: `p${i}`, ...location }));
  await Promise.all(children.map((ch) => ch.waitFor((l) => l["ready"] === true)));
  for (const ch of children) ch.proc.stdin!.end("go\n");
  const results = await Promise.all(children.map((ch) => ch.waitFor((l) => "lossy" in l) as Promise<{ lossy: number; budget: number }>));
  await Promise.all(children.map((ch) => ch.exited));
  const attempts = c.processes * Math.ceil(c.tries / 2);
  const lossy = results.reduce((n, r) => n + r.lossy, 0);
  const refused = results.reduce((n, r) => n + r.budget, 0);
  expect(lossy, "lossy commitments").toBe(Math.min(c.budget, attempts));
  expect(refused, "refused for the budget").toBe(attempts - lossy);
  const store = await open();
  try {
    expect(await store.countLossy(session), "lossy records in the store").toBe(lossy);
  } finally {
    await store.close();
  }
}

describe("N processes sharing a session never exceed its lossy budget", () => {
  it("SQLite (property over processes, budget and attempts)", { timeout: 180_000 }, async () => {
    const path = join(dir, "budget.db");
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => race({ engine: "sqlite", path }, async () => new SqliteStore({ name: "log", path }), c)),
      { numRuns: 4 },
    );
  });

  const schemas = schemasDroppedAfterAll();
  itWithServer("PostgreSQL (property over processes, budget and attempts)", { needs: "server", why: "processes racing for one lossy budget on row locks" }, async () => {
    const pool = testPool(1);
    const schema = await freshSchema(pool, "budget", schemas);
    await pool.end();
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => race({ engine: "postgres", url: PG_URL, schema }, () => PostgresStore.connect({ name: "log", url: PG_URL, schema }), c)),
      { numRuns: 4 },
    );
  }, 180_000);
});
