import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../compiler/cli/main.js";
import type { CliIO } from "../../compiler/cli/context.js";
import { PostgresStore, SCHEMA_VERSION } from "../../src/postgres.js";
import { describeWithServer, dropSchemas, PG_URL, testPool, uniqueSchema } from "./pg-helpers.js";

function io(): CliIO & { out: string; err: string } {
  const r = { cwd: process.cwd(), color: false, out: "", err: "", stdout: (t: string) => void (r.out += t), stderr: (t: string) => void (r.err += t) };
  return r;
}

describe("pruneguard migrate", () => {
  it("exits 2 with one line when the server is unreachable, and never prints a stack trace", async () => {
    const o = io();
    expect(await main(["migrate", "--url", "postgres://postgres@127.0.0.1:1/test"], o)).toBe(2);
    expect(o.err).toMatch(/^pruneguard: migrate: .*ECONNREFUSED/);
    expect(o.err).not.toMatch(/\n\s+at /);
  });

  it("exits 2 when no URL is given", async () => {
    const saved = process.env["PRUNEGUARD_PG_URL"];
    delete process.env["PRUNEGUARD_PG_URL"];
    try {
      const o = io();
      expect(await main(["migrate"], o)).toBe(2);
      expect(o.err).toContain("PRUNEGUARD_PG_URL");
    } finally {
      if (saved !== undefined) process.env["PRUNEGUARD_PG_URL"] = saved;
    }
  });

  it("exits 2 on a schema name it will not use", async () => {
    const o = io();
    expect(await main(["migrate", "--url", "postgres://postgres@127.0.0.1:1/test", "--schema", "Robert'); DROP"], o)).toBe(2);
    expect(o.err).toMatch(/schema must match/);
  });

  describeWithServer("on the real server", { needs: "any" }, () => {
    const schema = uniqueSchema("cli");
    const pool = PG_URL ? testPool(1) : null;
    afterAll(async () => {
      if (pool) {
        await dropSchemas(pool, [schema]);
        await pool.end();
      }
    });

    it("migrates, is idempotent, and reads PRUNEGUARD_PG_URL by default", async () => {
      const a = io();
      expect(await main(["migrate", "--schema", schema], a)).toBe(0);
      expect(a.out).toBe(`schema ${schema} migrated from version 0 to ${SCHEMA_VERSION}\n`);
      const b = io();
      expect(await main(["migrate", "--url", PG_URL, "--schema", schema], b)).toBe(0);
      expect(b.out).toBe(`schema ${schema} is up to date (version ${SCHEMA_VERSION})\n`);
      const store = await PostgresStore.connect({ name: "toolLog", pool: pool!, schema });
      await store.close();
    });

    // Version 2 (search's trigram index) shipped before version 3 (sessions and spans), and version 6 drops
    // version 2's indexes again: a database at either older version migrates to the current one, and a
    // store refuses it until then.
    it.each([1, 2])("migrates a schema left at version %i", async (at) => {
      const old = uniqueSchema(`cliv${at}`);
      try {
        expect(await main(["migrate", "--url", PG_URL, "--schema", old], io())).toBe(0);
        const q = (text: string) => pool!.query(text);
        await q(`DROP TABLE ${old}.sessions, ${old}.spans`);
        if (at < 2) await q(`DROP INDEX IF EXISTS ${old}.records_gone, ${old}.records_text_trgm`);
        await q(`DELETE FROM ${old}.schema_version WHERE version > ${at}`);
        await expect(PostgresStore.connect({ name: "toolLog", pool: pool!, schema: old })).rejects.toThrow(new RegExp(`version ${at}`));
        const o = io();
        expect(await main(["migrate", "--url", PG_URL, "--schema", old], o)).toBe(0);
        expect(o.out).toBe(`schema ${old} migrated from version ${at} to ${SCHEMA_VERSION}\n`);
        const tables = await q(`SELECT to_regclass('${old}.sessions') IS NOT NULL AS s, to_regclass('${old}.spans') IS NOT NULL AS p,
          to_regclass('${old}.records_gone') IS NOT NULL AS g, to_regclass('${old}.records_text_trgm') IS NOT NULL AS t`);
        expect(tables.rows[0]).toEqual({ s: true, p: true, g: false, t: false });
        const store = await PostgresStore.connect({ name: "toolLog", pool: pool!, schema: old });
        await store.close();
      } finally {
        await dropSchemas(pool!, [old]);
      }
    });
  });
});
