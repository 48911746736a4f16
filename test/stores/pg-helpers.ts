/**
 * Test helpers for the PostgreSQL store: an in-process PGlite, the PostgreSQL the run found (a real server,
 * or PGlite behind a socket server — see test/setup/postgres.ts), and schemas that are unique per test file
 * and dropped afterwards, so no run depends on what another left behind.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Pool } from "pg";
import { afterAll, describe, inject, it } from "vitest";
import { createPool, migrate, type PgQueryable } from "../../src/postgres.js";
import type { PostgresForTests } from "../setup/postgres.js";

/** What test/setup/global-postgres.ts found; read from the environment when that setup did not run. */
function found(): PostgresForTests {
  let provided: PostgresForTests | undefined;
  try {
    provided = inject("pruneguardPostgres");
  } catch {
    provided = undefined;
  }
  if (provided !== undefined) return provided;
  const url = process.env["PRUNEGUARD_PG_URL"] ?? "";
  return url !== ""
    ? { kind: "server", url, description: "PRUNEGUARD_PG_URL", reason: "" }
    : { kind: "none", url: "", description: "none", reason: "PRUNEGUARD_PG_URL is not set and test/setup/global-postgres.ts (the run's PostgreSQL finder, vitest.config.ts's globalSetup) did not run" };
}

/** The PostgreSQL this run's store suites use. */
export const POSTGRES: PostgresForTests = found();

/** Its URL, or "" when there is none. */
export const PG_URL = POSTGRES.url;

/**
 * What a suite needs. `any`: PostgreSQL's SQL, on one connection at a time — a real server or PGlite
 * behind its socket server. `server`: a real server, with `why` saying what PGlite (one session, its
 * connections taking turns) cannot do for this suite: sessions blocking on each other's locks, backends
 * terminated, processes racing.
 */
export type Needs = { readonly needs: "any" } | { readonly needs: "server"; readonly why: string };

/** Why a suite with `req` cannot run here, or `null` when it can. */
export function unavailable(req: Needs): string | null {
  if (POSTGRES.kind === "none") return POSTGRES.reason;
  if (req.needs === "server" && POSTGRES.kind !== "server") {
    return `needs a real PostgreSQL server (${req.why}); this run has ${POSTGRES.description} because ${POSTGRES.reason} — install PostgreSQL or set PRUNEGUARD_PG_URL`;
  }
  return null;
}

/** Why the suites that need any PostgreSQL cannot run here, or `null` when they can. */
export const NO_SERVER: string | null = unavailable({ needs: "any" });

// The PGlite URL is not exported to the whole run (only real servers are); a file that runs on it sees
// it as PRUNEGUARD_PG_URL like it would a server's, for its own duration.
if (POSTGRES.kind === "pglite" && (process.env["PRUNEGUARD_PG_URL"] ?? "") === "") {
  process.env["PRUNEGUARD_PG_URL"] = POSTGRES.url;
  afterAll(() => {
    if (process.env["PRUNEGUARD_PG_URL"] === POSTGRES.url) delete process.env["PRUNEGUARD_PG_URL"];
  });
}

/**
 * `describe` for a suite that needs PostgreSQL, declaring which (`req`). When this run cannot give it,
 * the suite is skipped out loud: its name in the report says why, and a warning is printed, so a green
 * run never hides that it did not run.
 */
export function describeWithServer(name: string, req: Needs, body: () => void): void {
  const why = unavailable(req);
  if (why === null) return void describe(name, body);
  console.warn(`skipped "${name}": ${why}`);
  describe.skip(`${name} [skipped: ${why}]`, body);
}

/** `it` for one test that needs PostgreSQL (`req`); skipped out loud like `describeWithServer`. */
export function itWithServer(name: string, req: Needs, body: () => Promise<void>, timeout?: number): void {
  const why = unavailable(req);
  if (why === null) return void it(name, body, timeout);
  console.warn(`skipped "${name}": ${why}`);
  it.skip(`${name} [skipped: ${why}]`, body);
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

/** A pool on the run's PostgreSQL for tests (small, with an error listener). */
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
 * The list `freshSchema` records a suite's schemas in, dropped on the run's PostgreSQL after the suite; call it
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
