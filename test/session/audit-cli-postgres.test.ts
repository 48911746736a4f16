/**
 * `pruneguard audit --url` reads a PostgreSQL store's audit log the way `pruneguard audit <file>` reads a
 * SQLite one: sessions, a session's decisions, `--verify` with exit 1 naming an edited record.
 */
import { spawn } from "node:child_process";
import pg from "pg";
import { afterAll, expect } from "vitest";
import { PostgresStore } from "../../src/postgres.js";
import { MAX_AUDIT_FIELD_BYTES, MAX_AUDIT_ROWS } from "../../src/stores/audit-reader.js";
import { ManualClock } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { describeWithServer, dropSchemas, freshSchema, itWithServer, PG_URL, testPool } from "../stores/pg-helpers.js";

function cli(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    // COLUMNS=0: each message on one line (test/compiler/output-width.test.ts checks the layout).
    const child = spawn(process.execPath, ["bin/pruneguard.js", "audit", ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, COLUMNS: "0" } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code) => {
      expect(err, "a stack trace reached the user").not.toMatch(/\n\s+at /);
      resolve({ code, out, err });
    });
  });
}

describeWithServer("pruneguard audit --url (PostgreSQL)", { needs: "any" }, () => {
  const pool = testPool(2);
  const schemas: string[] = [];
  afterAll(async () => {
    await dropSchemas(pool, schemas);
    await pool.end();
  });

  itWithServer("lists sessions and decisions, verifies the chain, and exits 1 naming an edited record", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "auditcli", schemas);
    const clock = new ManualClock(Date.UTC(2026, 10, 13, 9));
    const store = new PostgresStore({ name: "toolLog", pool, schema, clock });
    const win = new ContextWindow({ session: "s-42", clock, stores: { toolLog: store }, kinds: { tool: { store: "toolLog", modes: ["drop"], lossy: "with-flag" } } });
    const a = await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
    await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    await win.recall(a);

    const listed = await cli("--url", PG_URL, "--schema", schema, "--format", "json");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toMatchObject({ file: `postgres:${schema}`, sessions: [{ store: "toolLog", session: "s-42", n: 2 }] });

    const verified = await cli("--url", PG_URL, "--schema", schema, "--session", "s-42", "--verify");
    expect(verified.code).toBe(0);
    expect(verified.out).toMatch(/chain ok: 2 records/);
    expect(verified.out).not.toContain(new URL(PG_URL).host === "" ? "\u0000" : PG_URL);

    await pool.query(`UPDATE ${pg.escapeIdentifier(schema)}.audit SET record = replace(record, '"reversible"', '"lossy"'), status = 'lossy' WHERE seq = 1`);
    const broken = await cli("--url", PG_URL, "--schema", schema, "--session", "s-42", "--verify", "--format", "json");
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.out).verify).toMatchObject({ ok: false, break: { seq: 1, problem: "hash-mismatch" } });

    expect((await cli()).code).toBe(2);
    expect((await cli("agent.db", "--url", PG_URL)).err).toMatch(/one of them/);
    const missing = await cli("--url", PG_URL, "--schema", "pgt_nothing_here");
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/no audit table/);
  }, 60_000);

  // Finding 25.11 on PostgreSQL: a record whose text names a key twice verifies under JSON.parse (the last
  // value is the sealed one) and is refused as tampered; a lossy counter reset below the chain's lossy
  // records is named. Before the fix both runs exited 0 ("chain ok").
  itWithServer("Finding 25.11: --verify refuses a record with a key written twice and a reset lossy counter", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "auditcanon", schemas);
    const store = new PostgresStore({ name: "toolLog", pool, schema });
    const win = new ContextWindow({
      session: "s-7", stores: { toolLog: store }, limits: { lossyBudget: 1 },
      kinds: { note: { store: null, modes: ["drop"], lossy: "with-flag" } },
    });
    const a = await win.append({ kind: "note", text: "thinking" });
    await win.applyDirective({ op: "prune", span_id: a, mode: "drop", accept_lossy: true });
    await win.recall(a);
    const args = ["--url", PG_URL, "--schema", schema, "--session", "s-7", "--verify", "--format", "json"] as const;
    expect((await cli(...args)).code).toBe(0);
    const audit = `${pg.escapeIdentifier(schema)}.audit`;

    await pool.query(`UPDATE ${audit} SET record = '{"status":"rejected",' || substr(record, 2) WHERE seq = 1`);
    const doubled = await cli(...args);
    expect(doubled.code).toBe(1);
    expect(JSON.parse(doubled.out).verify).toMatchObject({ ok: false, break: { seq: 1, problem: "non-canonical" } });
    // Back as it was: the chain verifies again.
    await pool.query(`UPDATE ${audit} SET record = '{' || substr(record, length('{"status":"rejected",') + 1) WHERE seq = 1`);
    expect((await cli(...args)).code).toBe(0);

    await pool.query(`UPDATE ${pg.escapeIdentifier(schema)}.sessions SET lossy_used = 0 WHERE session = 's-7'`);
    const reset = await cli(...args);
    expect(reset.code).toBe(1);
    expect(JSON.parse(reset.out).verify).toMatchObject({
      ok: false, break: { seq: 1, problem: "counter-mismatch", detail: expect.stringContaining(`${schema}.sessions.lossy_used`) },
    });
  }, 60_000);

  // As on SQLite (test/audit/audit-hostile.test.ts): a planted kind of megabytes is left on the server and
  // its registry row reported, and a registry past the row bound is refused; the built CLI exits cleanly.
  // Before the fix, the page held the kind whole (a 200 MB one exhausted the heap).
  itWithServer("reports a registry row whose kind is past the field bound, and refuses a registry past the row bound", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "auditbounds", schemas);
    const store = new PostgresStore({ name: "toolLog", pool, schema });
    const win = new ContextWindow({ session: "s-5", stores: { toolLog: store }, kinds: { tool: { store: "toolLog", modes: ["drop"], lossy: "with-flag" } } });
    const a = await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
    await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    const spans = `${pg.escapeIdentifier(schema)}.spans`;
    await pool.query(`UPDATE ${spans} SET kind = repeat('<', $1)`, [4 * 1024 * 1024]);
    const args = ["--url", PG_URL, "--schema", schema, "--session", "s-5", "--format", "html"] as const;
    const page = await cli(...args);
    expect(page.code, page.err).toBe(0);
    expect(page.out.length).toBeLessThan(64 * 1024);
    expect(page.out).toContain(`registry row for span span_1 at position 1 in store toolLog: its kind column is ${4 * 1024 * 1024} bytes long, over the ${MAX_AUDIT_FIELD_BYTES} bytes`);
    expect(page.out).not.toContain("&lt;&lt;");

    await pool.query(`INSERT INTO ${spans} (store, session, ordinal, span_id, kind, hash) SELECT 'toolLog', 's-5', i, 'span_' || i, 'tool', 'h' FROM generate_series(2, $1::bigint) AS i`, [MAX_AUDIT_ROWS + 1]);
    const refused = await cli(...args);
    expect(refused.code).toBe(2);
    expect(refused.out).toBe("");
    expect(refused.err).toContain(`the span registry of session s-5 in store toolLog holds ${MAX_AUDIT_ROWS + 1} rows`);
  }, 60_000);

  // As on SQLite (test/reliability/audit-cli.test.ts): a store with copies but no chain is named as such.
  itWithServer("--store names a store without an audit chain as such, and a search is listed with its query", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "auditnochain", schemas);
    const toolLog = new PostgresStore({ name: "toolLog", pool, schema });
    const transcript = new PostgresStore({ name: "transcript", pool, schema, handlePrefix: "t" });
    const win = new ContextWindow({
      session: "s-9", stores: { toolLog, transcript }, auditStore: "transcript",
      kinds: { tool: { store: "toolLog", modes: ["drop"], lossy: "with-flag" } },
    });
    await win.append({ kind: "tool", text: "GET /deploy -> 500 req_7f3a9c" });
    await win.search("req_7f3a");
    const none = await cli("--url", PG_URL, "--schema", schema, "--session", "s-9", "--store", "toolLog");
    expect(none.code).toBe(2);
    expect(none.err).toContain(`store toolLog in postgres:${schema} has no audit chain`);
    expect(none.err).toContain("stores with an audit chain: transcript");
    expect((await cli("--url", PG_URL, "--schema", schema, "--session", "s-9", "--store", "nope")).err).toContain("(stores: toolLog, transcript)");
    const listed = await cli("--url", PG_URL, "--schema", schema, "--session", "s-9");
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(/1\s+\S+\s+search\s+match\s+"req_7f3a"\s/);
  }, 60_000);
});
