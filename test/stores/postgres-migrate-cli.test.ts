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

  describeWithServer("on the real server", () => {
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
  });
});
