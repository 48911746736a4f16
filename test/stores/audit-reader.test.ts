/**
 * The audit readers (`src/stores/audit-reader.ts`): one session history written to a SQLite file and to a
 * PostgreSQL schema reads back the same through both readers, and `pruneguard audit` answers the same over
 * either, output for output, apart from how it names the source. The SQLite reader never creates, migrates
 * or waits on the file it reads; both readers refuse what is not a store with the error the command prints.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../compiler/cli/context.js";
import { main } from "../../compiler/cli/main.js";
import { ContextWindow, ManualClock, refSpanId } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres.js";
import { AuditReadError, type AuditReader } from "../../src/stores/audit-reader.js";
import { openPostgresAuditReader } from "../../src/stores/postgres/postgres-audit.js";
import { openSqliteAuditReader } from "../../src/stores/sqlite/sqlite-audit.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import type { BackingStore } from "../../src/stores/store.js";
import { legacyFile } from "./sqlite-legacy.js";
import { describeWithServer, dropSchemas, freshSchema, PG_URL, testPool } from "./pg-helpers.js";

const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), "pruneguard-audit-reader-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The same decisions on any two stores: a reversible prune, an unbacked one refused then accepted as lossy,
 * a search, a recall, an invalid directive, and a second session. Span ids are passed as plain ids, not
 * refs: a ref names its window, whose id is random, and would make the two chains' hashes differ.
 */
async function history(toolLog: BackingStore, transcript: BackingStore, clock: ManualClock): Promise<void> {
  const kinds = { tool: { store: "toolLog", modes: ["drop"], lossy: "with-flag" }, note: { store: null, modes: ["drop"], lossy: "with-flag" } } as const;
  const win = new ContextWindow({ session: "s-1", stores: { toolLog, transcript }, auditStore: "transcript", clock, limits: { lossyBudget: 3 }, kinds });
  const a = refSpanId(await win.append({ kind: "tool", text: "GET /deploy -> 500 req_7f3a9c" }));
  const b = refSpanId(await win.append({ kind: "note", text: "thinking" }));
  await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
  await win.applyDirective({ op: "prune", span_id: b, mode: "drop" });
  clock.advance(1000);
  await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true });
  await win.search("req_7f3a");
  await win.applyDirective({ op: "recall", span_id: a });
  await win.applyDirective('{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":"true"}');
  const other = new ContextWindow({ session: "s-2", stores: { toolLog }, clock, kinds: { tool: kinds.tool } });
  const c = refSpanId(await other.append({ kind: "tool", text: "x".repeat(50) }));
  await other.applyDirective({ op: "prune", span_id: c, mode: "drop" });
}

/** Everything a reader answers about the history, with the source's name left out. */
async function readAll(reader: AuditReader) {
  const sessions = await reader.sessions();
  const stores = await reader.stores();
  const per = [];
  for (const { store, session } of sessions) {
    const counters = await reader.counters(store, session);
    per.push({
      store, session, rows: await reader.rows(store, session),
      counters: counters === null ? null : { ...counters, table: "(table)" },
      registry: await reader.registry(store, session, true), registryBare: await reader.registry(store, session, false),
    });
  }
  const copies = await reader.copies("s-1", true);
  const bareCopies = await reader.copies("s-2", false);
  return { sessions, stores, per, copies, bareCopies };
}

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = { cwd: dir, stdout: (t) => void (out += t), stderr: (t) => void (err += t), color: false };
  const code = await main(["audit", ...argv], io);
  return { code, out, err };
}

const file = join(dir, "agent.db");

beforeAll(async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 2, 3, 4, 5));
  const toolLog = new SqliteStore({ name: "toolLog", path: file, retentionMs: HOUR, clock });
  const transcript = new SqliteStore({ name: "transcript", path: file, retentionMs: null, clock, handlePrefix: "t" });
  await history(toolLog, transcript, clock);
  await toolLog.close();
  await transcript.close();
});

describe("the SQLite audit reader", () => {
  it("reads the store's sessions, chains, counters, registry and copies", async () => {
    const reader = openSqliteAuditReader(file, { label: "agent.db" });
    try {
      expect(reader.label).toBe("agent.db");
      expect(await reader.sessions()).toEqual([
        { store: "toolLog", session: "s-1", n: 2 }, { store: "toolLog", session: "s-2", n: 1 }, { store: "transcript", session: "s-1", n: 4 },
      ]);
      expect(await reader.stores()).toEqual(["toolLog", "transcript"]);
      const rows = await reader.rows("transcript", "s-1");
      expect(rows.map((r) => [r.seq, r.status])).toEqual([[1, "rejected"], [2, "lossy"], [3, "match"], [4, "invalid"]]);
      expect(JSON.parse(rows[1]!.record!)).toMatchObject({ seq: 2, status: "lossy", spanId: "span_2", hash: rows[1]!.hash });
      expect(await reader.counters("transcript", "s-1")).toEqual({ table: "pruneguard_sessions", lossyUsed: 1, nextSpan: 2, registered: 2 });
      expect(await reader.registry("transcript", "s-1", false)).toEqual([
        { ordinal: 1, spanId: "span_1", kind: "tool", backing: "toolLog" }, { ordinal: 2, spanId: "span_2", kind: "note", backing: null },
      ]);
      expect(await reader.copies("s-1", true)).toEqual([{ store: "toolLog", spanId: "span_1", handle: "#1", createdAt: Date.UTC(2026, 0, 2, 3, 4, 5), expiredAt: null, held: true, heldUntil: null, text: "GET /deploy -> 500 req_7f3a9c" }]);
      expect((await reader.copies("s-1", false))[0]).not.toHaveProperty("text");
    } finally {
      await reader.close();
    }
  });

  it("pruneguard audit --session without --store prints every store's chain of the session, each verified", async () => {
    const r = await cli("agent.db", "--session", "s-1", "--verify");
    expect(r.code, r.err).toBe(0);
    expect(r.out.match(/^store \S+, session s-1: \d+ records?$/gm)).toEqual(["store toolLog, session s-1: 2 records", "store transcript, session s-1: 4 records"]);
    expect(r.out.match(/^chain ok: /gm)).toHaveLength(2);
    const anchored = await cli("agent.db", "--session", "s-1", "--verify", "--anchor", "0".repeat(64));
    expect([anchored.code, anchored.err.trim()]).toEqual([2, "pruneguard: session s-1 has records in stores toolLog, transcript; --anchor is one chain's head: choose its store with --store"]);
    const json = await cli("agent.db", "--session", "s-1", "--format", "json");
    expect([json.code, json.err.trim()]).toEqual([2, "pruneguard: session s-1 has records in stores toolLog, transcript; --format json reads one chain: choose one with --store"]);
  });

  it("never creates a missing file, and says so as the command does", () => {
    const missing = join(dir, "missing.db");
    expect(() => openSqliteAuditReader(missing, { label: "missing.db" })).toThrow(new AuditReadError("missing", "no such file: missing.db"));
    expect(existsSync(missing)).toBe(false);
  });

  it("leaves the file as it was: a legacy audit table is read, not upgraded", async () => {
    const legacy = join(dir, "legacy.db");
    const stored = legacyFile(legacy);
    const digest = () => createHash("sha256").update(readFileSync(legacy)).digest("hex");
    const before = digest();
    const reader = openSqliteAuditReader(legacy);
    const records = (await reader.rows("toolLog", "s1")).map((r) => r.record);
    await reader.close();
    expect(records).toEqual(stored.get("toolLog/s1"));
    expect(digest()).toBe(before);
    const db = new DatabaseSync(legacy, { readOnly: true });
    const columns = (db.prepare("SELECT name FROM pragma_table_info('pruneguard_audit')").all() as Array<{ name: string }>).map((c) => c.name);
    db.close();
    expect(columns).toContain("store");
  });

  it("does not wait on a file another connection holds locked: it cannot be read now", () => {
    const locked = join(dir, "locked.db");
    const holder = new DatabaseSync(locked);
    holder.exec("CREATE TABLE pruneguard_audit (x); PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; INSERT INTO pruneguard_audit VALUES (1);");
    try {
      const err = (() => {
        try {
          openSqliteAuditReader(locked, { label: "locked.db" });
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(AuditReadError);
      expect(err).toMatchObject({ reason: "unreadable", message: "cannot read locked.db: database is locked" });
    } finally {
      holder.exec("COMMIT");
      holder.close();
    }
  });

  it("refuses a database that is not a store, and a file that is not a database", () => {
    const plain = join(dir, "plain.db");
    new DatabaseSync(plain).close();
    expect(() => openSqliteAuditReader(plain, { label: "plain.db" })).toThrow(
      expect.objectContaining({ reason: "not-a-store", message: "plain.db is not a pruneguard store (no pruneguard_audit table)" }),
    );
    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, "this is not a database file at all, just text".repeat(100));
    expect(() => openSqliteAuditReader(garbage, { label: "garbage.db" })).toThrow(
      expect.objectContaining({ reason: "unreadable", message: "cannot read garbage.db: file is not a database" }),
    );
  });
});

describeWithServer("the PostgreSQL audit reader, and the audit command over either engine", { needs: "any" }, () => {
  const pool = testPool(2);
  const schemas: string[] = [];
  let schema = "";
  beforeAll(async () => {
    schema = await freshSchema(pool, "auditreader", schemas);
    const clock = new ManualClock(Date.UTC(2026, 0, 2, 3, 4, 5));
    const toolLog = new PostgresStore({ name: "toolLog", pool, schema, retentionMs: HOUR, clock });
    const transcript = new PostgresStore({ name: "transcript", pool, schema, retentionMs: null, clock, handlePrefix: "t" });
    await history(toolLog, transcript, clock);
    // The adapters differ in one row, which is theirs, not the readers': a PostgreSQL store creates the
    // session's counters when it commits any prune, a SQLite store only for a lossy one or a registration,
    // so toolLog (which committed span_1's reversible prune, for home store transcript) has counters for s-1
    // on PostgreSQL alone. Asserted, then removed, so that the two engines hold the same rows below.
    const sqlite = openSqliteAuditReader(file);
    const postgres = await openPostgresAuditReader(PG_URL, schema);
    expect(await sqlite.counters("toolLog", "s-1")).toEqual({ table: "pruneguard_sessions", lossyUsed: null, nextSpan: null, registered: 0 });
    expect(await postgres.counters("toolLog", "s-1")).toEqual({ table: `${schema}.sessions`, lossyUsed: 0, nextSpan: 1, registered: 0 });
    await sqlite.close();
    await postgres.close();
    await pool.query(`DELETE FROM "${schema}".sessions WHERE store = 'toolLog' AND session = 's-1'`);
  });
  afterAll(async () => {
    await dropSchemas(pool, schemas);
    await pool.end();
  });

  it("reads back what the SQLite reader reads, row for row", async () => {
    const sqlite = openSqliteAuditReader(file);
    const postgres = await openPostgresAuditReader(PG_URL, schema);
    try {
      expect(postgres.label).toBe(`postgres:${schema}`);
      const [a, b] = [await readAll(sqlite), await readAll(postgres)];
      expect(b).toEqual(a);
      expect(a.per.reduce((n, p) => n + p.rows.length, 0)).toBe(7);
      expect(await postgres.counters("transcript", "s-1")).toMatchObject({ table: `${schema}.sessions` });
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });

  it("pruneguard audit prints the same over both, in every format", async () => {
    const sqliteArgs = ["agent.db"];
    const postgresArgs = ["--url", PG_URL, "--schema", schema];
    const runs: string[][] = [
      [], ["--format", "json"], ["--store", "toolLog"], ["--session", "s-1"], ["--session", "s-1", "--verify"],
      ["--session", "s-1", "--store", "transcript", "--verify"], ["--session", "s-1", "--store", "transcript", "--verify", "--format", "json"],
      ["--session", "s-2", "--verify"], ["--session", "s-1", "--store", "toolLog", "--verify", "--anchor", "0".repeat(64)],
      ["--session", "s-1", "--format", "html", "--content", "--verify"], ["--session", "s-2", "--store", "transcript"], ["--session", "s-1", "--store", "nope"],
    ];
    // The source's name and the page's time are the only differences allowed.
    const same = (t: string, label: string) => t.replaceAll(label, "SOURCE").replace(/page made [^·]+·/, "page made ·");
    for (const args of runs) {
      const [s, p] = [await cli(...sqliteArgs, ...args), await cli(...postgresArgs, ...args)];
      expect({ code: p.code, out: same(p.out, `postgres:${schema}`), err: same(p.err, `postgres:${schema}`) }, args.join(" ")).toEqual({
        code: s.code, out: same(s.out, "agent.db"), err: same(s.err, "agent.db"),
      });
    }
    // A broken chain is named the same on both: the first lossy record's status column edited.
    const copy = join(dir, "edited.db");
    const db = new DatabaseSync(file);
    db.exec(`VACUUM INTO '${copy}'`);
    db.close();
    const edit = new DatabaseSync(copy);
    edit.exec("UPDATE pruneguard_audit SET status = 'rejected' WHERE status = 'lossy'");
    edit.close();
    await pool.query(`UPDATE "${schema}".audit SET status = 'rejected' WHERE status = 'lossy'`);
    const verify = ["--session", "s-1", "--store", "transcript", "--verify"];
    const [s, p] = [await cli("edited.db", ...verify), await cli(...postgresArgs, ...verify)];
    expect(s.code).toBe(1);
    expect(s.out).toMatch(/chain broken at record 2: column-mismatch: row 2: column status/);
    expect(same(p.out, `postgres:${schema}`)).toBe(same(s.out, "edited.db"));
  });

  it("refuses a bad schema name, a schema with no store and a server it cannot reach, never naming the URL", async () => {
    await expect(openPostgresAuditReader(PG_URL, "Bad-Name")).rejects.toMatchObject({ reason: "bad-schema", message: expect.stringContaining("PostgreSQL schema must match") });
    await expect(openPostgresAuditReader(PG_URL, "pgt_nothing_here")).rejects.toMatchObject({
      reason: "not-a-store", message: "schema pgt_nothing_here holds no pruneguard store (no audit table; run `pruneguard migrate`?)",
    });
    const unreachable = "postgres://someone:secret@127.0.0.1:1/none";
    const err = await openPostgresAuditReader(unreachable, "pruneguard").then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AuditReadError);
    expect(err).toMatchObject({ reason: "unreachable", message: expect.stringMatching(/^cannot read the PostgreSQL store: /) });
    expect((err as Error).message).not.toContain("secret");
  });
});
