/**
 * Test helpers for the PostgreSQL store: an in-process PGlite, the real server when `PRUNEGUARD_PG_URL`
 * is set, and schemas that are unique per test file and dropped afterwards, so no run depends on what
 * another left behind.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Pool } from "pg";
import { afterAll, describe, it } from "vitest";
import { createPool, migrate, type PgQueryable } from "../../src/postgres.js";

export const PG_URL = process.env["PRUNEGUARD_PG_URL"] ?? "";

/** Why the suites that need the real server cannot run here, or `null` when they can. */
export const NO_SERVER: string | null = PG_URL === "" ? "PRUNEGUARD_PG_URL is not set, so there is no PostgreSQL server to test against" : null;

/**
 * `describe` for a suite that needs the real server. Without one the suite is skipped out loud: its name
 * in the report says why, and a warning is printed, so a green run never hides that it did not run.
 */
export function describeWithServer(name: string, body: () => void): void {
  if (NO_SERVER === null) return void describe(name, body);
  console.warn(`skipped "${name}": ${NO_SERVER}`);
  describe.skip(`${name} [skipped: ${NO_SERVER}]`, body);
}

/** `it` for one test that needs the real server; skipped out loud like `describeWithServer`. */
export function itWithServer(name: string, body: () => Promise<void>, timeout?: number): void {
  if (NO_SERVER === null) return void it(name, body, timeout);
  console.warn(`skipped "${name}": ${NO_SERVER}`);
  it.skip(`${name} [skipped: ${NO_SERVER}]`, body);
}

/** A schema name no other run uses: `pgt_<tag>_<random>`. */
export function uniqueSchema(tag: string): string {
  return `pgt_${tag}_${randomBytes(5).toString("hex")}`;
}

/** Drops schemas created by a test file. */
export async function dropSchemas(target: Pool | PgQueryable, schemas: Iterable<string>): Promise<void> {
  for (const s of schemas) {
    const q = `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(s)} CASCADE`;
    if ("exec" in target && typeof (target as PgQueryable).exec === "function") await (target as PgQueryable).exec(q);
    else await (target as Pool).query(q);
  }
}

/** A fresh migrated schema on `target`; remembered in `created` for cleanup. */
export async function freshSchema(target: Pool | PgQueryable, tag: string, created: string[]): Promise<string> {
  const schema = uniqueSchema(tag);
  created.push(schema);
  await migrate(target, { schema });
  return schema;
}

/** A pool on the real server for tests (small, with an error listener). */
export function testPool(max = 4): Pool {
  return createPool({ url: PG_URL, max });
}

export async function newPglite(): Promise<PgQueryable & { close(): Promise<void> }> {
  const { PGlite } = await import("@electric-sql/pglite");
  const db = new PGlite();
  await db.waitReady;
  return db as unknown as PgQueryable & { close(): Promise<void> };
}

/**
 * The list `freshSchema` records a suite's schemas in, dropped on the real server after the suite; call it
 * where `afterAll` may be called (a file's or a describe's body).
 */
export function schemasDroppedAfterAll(): string[] {
  const schemas: string[] = [];
  afterAll(async () => {
    if (schemas.length === 0) return;
    const pool = testPool(1);
    await dropSchemas(pool, schemas);
    await pool.end();
  });
  return schemas;
}
