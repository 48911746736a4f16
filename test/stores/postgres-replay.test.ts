/**
 * The incident replay (a tool result pruned, its copy rotated out, the model told the truth about it; see
 * examples/incident-replay.ts), with its guarded sides on PostgresStore: on PGlite
 * always, and on the real server when PRUNEGUARD_PG_URL is set. Its table must match the SQLite run's.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Pool } from "pg";
import { replay } from "../../examples/incident-replay.js";
import { PostgresStore, type PgQueryable } from "../../src/postgres.js";
import { dropSchemas, freshSchema, itWithServer, newPglite, testPool } from "./pg-helpers.js";

const HOUR = 3_600_000;

async function replayOn(backend: Pool | PgQueryable, schemas: string[]): Promise<string[]> {
  const lines: string[] = [];
  await replay({
    write: (l) => lines.push(l),
    store: async (clock, name) =>
      new PostgresStore({ name: "toolLog", pool: backend, schema: await freshSchema(backend, name.replace(/[^a-z]/g, ""), schemas), retentionMs: 2 * HOUR, clock }),
  });
  return lines;
}

describe("incident replay on PostgresStore", () => {
  const schemas: string[] = [];
  let lite: (PgQueryable & { close(): Promise<void> }) | null = null;
  let pool: Pool | null = null;
  afterAll(async () => {
    if (lite) {
      await dropSchemas(lite, schemas);
      await lite.close();
    }
    if (pool) {
      await dropSchemas(pool, schemas);
      await pool.end();
    }
  });

  it("prints the same table on PGlite as on SQLite", async () => {
    lite = await newPglite();
    const sqlite: string[] = [];
    await replay({ write: (l) => sqlite.push(l) });
    expect(await replayOn(lite, schemas)).toEqual(sqlite);
  });

  itWithServer("prints the same table on the real server", { needs: "any" }, async () => {
    pool = testPool(2);
    const sqlite: string[] = [];
    await replay({ write: (l) => sqlite.push(l) });
    expect(await replayOn(pool, schemas)).toEqual(sqlite);
  });
});
