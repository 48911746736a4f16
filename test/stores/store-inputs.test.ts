/**
 * Values a store keeps as SQL must reach it unaltered, or be refused before anything is written:
 *
 * - a session id with a lone surrogate is stored by SQLite and PostgreSQL as U+FFFD (UTF-8), so two ids named
 *   one session — its copies, chain and budget (seen: a window resumed as `tenant-\ude00` recalled the bytes
 *   of `tenant-\ud83d`). Refused by the window's options and by the stores; PostgreSQL, which cannot hold NUL,
 *   refuses a session id with one as a store error (SQLite and memory keep it: test/reliability/tenancy);
 * - the hold's horizon `startedAt + maxLengthMs` with a fractional or huge `maxLengthMs` was not a safe
 *   integer, and every prune on PostgreSQL failed with a store error ("not a safe integer");
 * - a `statementTimeoutMs` past PostgreSQL's int4 failed every call at the server; refused at construction;
 * - the PostgreSQL audit reader cast bigint seqs to int4 and failed past 2^31 − 1.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, refSpanId, SqliteStore, type BackingStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres.js";
import { openPostgresAuditReader } from "../../src/stores/postgres/postgres-audit.js";
import { sqlState, storeError } from "../../src/stores/postgres/driver.js";
import { contentHash } from "../../src/hash.js";
import { freshSchema, itWithServer, PG_URL, schemasDroppedAfterAll, testPool } from "./pg-helpers.js";
import { testDraft } from "./conformance.js";

const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), "pruneguard-store-inputs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const schemas = schemasDroppedAfterAll();
let pool: pg.Pool | null = null;
afterAll(async () => {
  await pool?.end();
});

const KINDS = { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } } as const;
const BAD_SESSIONS = ["tenant-\ud83d", "tenant-\ude00"];

let n = 0;
type Make = () => Promise<BackingStore>;
const sqlite: Make = async () => new SqliteStore({ name: "log", path: join(dir, `s${n++}.db`), clock: new ManualClock(0) });
const postgres: Make = async () => {
  pool ??= testPool(2);
  const schema = await freshSchema(pool, "inputs", schemas);
  return new PostgresStore({ name: "log", pool, schema, clock: new ManualClock(0) });
};

describe("session ids a store would keep altered", () => {
  it("ContextWindow refuses them in its options, saying why", () => {
    for (const session of BAD_SESSIONS) {
      expect(() => new ContextWindow({ session, kinds: KINDS, stores: { log: new MemoryStore({ name: "log" }) } }), JSON.stringify(session))
        .toThrow(/session.*well-formed text: a lone surrogate/s);
    }
  });

  const refuses = async (make: Make) => {
    const store = await make();
    try {
      for (const session of BAD_SESSIONS) {
        const text = "secret of one tenant";
        await expect(store.persist({ session, spanId: "span_1", kind: "tool", text, hash: contentHash(text) })).rejects.toThrow(/not well-formed text \(a lone surrogate\)/);
        await expect(store.lookup(session, { spanId: "span_1" })).rejects.toThrow(/not well-formed text \(a lone surrogate\)/);
        await expect(store.appendAudit(session, testDraft("invalid"))).rejects.toThrow(/not well-formed text \(a lone surrogate\)/);
        await expect(store.auditLog(session)).rejects.toThrow(/not well-formed text \(a lone surrogate\)/);
        await expect(store.registerSpan(session, { kind: "tool", hash: contentHash(text), group: null, message: null, store: "log" })).rejects.toThrow(/not well-formed/);
      }
      // Nothing was written for any of them; a well-formed id with the same prefix is a session of its own.
      expect(await store.auditLog("tenant-\ufffd")).toEqual([]);
      expect(await store.lookup("tenant-\ufffd", { spanId: "span_1" })).toMatchObject({ status: "absent" });
    } finally {
      await store.close();
    }
  };
  it("SqliteStore refuses them on every session-scoped call", () => refuses(sqlite));
  itWithServer("PostgresStore refuses them on every session-scoped call, and a NUL it cannot hold", { needs: "any" }, async () => {
    await refuses(postgres);
    const store = await postgres();
    try {
      await expect(store.auditLog("a\u0000b")).rejects.toThrow(/holds a NUL, which this store cannot keep/);
    } finally {
      await store.close();
    }
  });
});

describe("the hold's horizon from a fractional or huge maxLengthMs", () => {
  const prunes = async (make: Make, maxLengthMs: number) => {
    const store = await make();
    const clock = new ManualClock(1_700_000_000_000);
    const win = new ContextWindow({ session: `h${n++}`, clock, kinds: KINDS, stores: { log: store }, limits: { maxLengthMs } });
    const ref = await win.append({ kind: "tool", text: "a tool's output" });
    const outcome = await win.tryPrune({ span: ref, mode: "drop" });
    expect(outcome.status, JSON.stringify(outcome)).toBe("reversible");
    expect((await win.recall(refSpanId(ref))).status).toBe("found");
    await win.end();
  };
  for (const [label, max] of [["fractional", HOUR + 0.5], ["past 2^53", Number.MAX_SAFE_INTEGER]] as const) {
    it(`memory and SQLite prune reversibly with a ${label} maxLengthMs`, async () => {
      await prunes(async () => new MemoryStore({ name: "log" }), max);
      await prunes(sqlite, max);
    });
    itWithServer(`PostgreSQL prunes reversibly with a ${label} maxLengthMs`, { needs: "any" }, () => prunes(postgres, max));
  }
});

describe("PostgreSQL limits said at construction, and bigints read whole", () => {
  it("refuses a statementTimeoutMs past PostgreSQL's int4 before any call", () => {
    for (const statementTimeoutMs of [2 ** 31, 30 * 24 * HOUR, 0, Number.NaN]) {
      expect(() => new PostgresStore({ name: "log", url: "postgres://nobody@127.0.0.1:1/none", statementTimeoutMs }), String(statementTimeoutMs))
        .toThrow(/statementTimeoutMs must be a positive number of milliseconds up to 2147483647/);
    }
    expect(() => new PostgresStore({ name: "log", url: "postgres://nobody@127.0.0.1:1/none", statementTimeoutMs: 2 ** 31 - 1 }).close()).not.toThrow();
  });

  it("a socket's five-letter error code (EPIPE) is not read as a SQLSTATE; the server's are", () => {
    const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE", errno: -32, syscall: "write" });
    expect(sqlState(epipe)).toBeNull();
    expect(storeError("log", "prune", epipe).message).not.toContain("[EPIPE]");
    expect(sqlState(Object.assign(new Error("could not serialize access"), { code: "40001", severity: "ERROR" }))).toBe("40001");
    expect(sqlState(Object.assign(new Error("terminating connection"), { code: "57P01", severity: "FATAL" }))).toBe("57P01");
  });

  itWithServer("the audit reader reads a seq past 2^31 − 1", { needs: "any" }, async () => {
    pool ??= testPool(2);
    const schema = await freshSchema(pool, "inputs", schemas);
    const store = new PostgresStore({ name: "log", pool, schema, clock: new ManualClock(0) });
    await store.appendAudit("s", testDraft("invalid"));
    await store.close();
    await pool.query(`UPDATE ${pg.escapeIdentifier(schema)}.audit SET seq = 2147483648`);
    const reader = await openPostgresAuditReader(PG_URL!, schema);
    try {
      expect((await reader.rows("log", "s")).map((r) => r.seq)).toEqual([2147483648]);
      expect(await reader.sessions()).toEqual([{ store: "log", session: "s", n: 1 }]);
    } finally {
      await reader.close();
    }
  });
});
