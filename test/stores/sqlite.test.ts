import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DatabaseSync } from "node:sqlite";
import { verifyAuditChain } from "../../src/audit.js";
import { contentHash } from "../../src/hash.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { ManualClock } from "../../src/types.js";
import { describeStoreConformance, testDraft } from "./conformance.js";
import { legacyFile } from "./sqlite-legacy.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-sqlite-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStoreConformance("SqliteStore (file, WAL)", async (o) => new SqliteStore({ ...o, path: join(dir, `conf-${n++}.db`) }));

describe("SqliteStore specifics", () => {
  it("reads back text holding NULs whole, on every supported Node (a copy, its search, a replacement body)", async () => {
    const path = join(dir, "nul.db");
    const store = new SqliteStore({ name: "toolLog", path, retentionMs: 1000, clock: new ManualClock(0) });
    const text = "head\0middle\0\0tail ✓";
    // A group is a provider's call id: any text (two ids that differ after a NUL are two groups).
    expect((await store.registerSpan("s", { kind: "k", hash: contentHash(text), group: "call:a\0x", message: null, store: "toolLog" })).spanId).toBe("span_1");
    const p = await store.persist({ session: "s", spanId: "span_1", kind: "k", text, hash: contentHash(text) });
    expect(await store.lookup("s", { handle: p.handle })).toMatchObject({ status: "found", text, hash: contentHash(text) });
    expect(await store.lookup("s", { spanId: "span_1" })).toMatchObject({ status: "found", text });
    const found = await store.searchCopies("s", { copies: [{ handle: p.handle, hash: contentHash(text) }], literal: "\0middle\0", limit: 8 });
    expect(found.candidates.map((c) => c.text)).toEqual([text]);
    await store.noteReplacement("s", "span_1", "digest\0with a NUL");
    expect((await store.sessionSpans("s"))[0]!.replacement).toBe("digest\0with a NUL");
    expect((await store.lookupSpan!("s", "span_1"))!.replacement).toBe("digest\0with a NUL");
    expect((await store.sessionSpans("s"))[0]!.group).toBe("call:a\0x");
    expect((await store.lookupSpan!("s", "span_1"))!.group).toBe("call:a\0x");
    // A record written by another version as TEXT reads the same way (the bytes are the same either way).
    await store.close();
    const db = new DatabaseSync(path);
    db.prepare("UPDATE pruneguard_records SET text = ? WHERE span_id = 'span_1'").run("plain text");
    db.close();
    const again = new SqliteStore({ name: "toolLog", path, retentionMs: 1000, clock: new ManualClock(0) });
    expect(await again.lookup("s", { handle: p.handle })).toMatchObject({ status: "found", text: "plain text" });
    await again.close();
  });

  it("survives reopening the file: records, holds and the audit chain persist", async () => {
    const path = join(dir, "reopen.db");
    const clock = new ManualClock(0);
    const a = new SqliteStore({ name: "toolLog", path, retentionMs: 1000, clock });
    await a.persist({ session: "s", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
    await a.appendAudit("s", {
      op: "prune", status: "invalid", spanId: null, kind: null, mode: null, conditions: null, handle: null,
      repersisted: false, acceptLossy: false, reason: "parse", pinsCarried: 0, directive: "{}",
    });
    await a.close();
    const b = new SqliteStore({ name: "toolLog", path, retentionMs: 1000, clock });
    expect(await b.lookup("s", { handle: "#1" })).toMatchObject({ status: "found", text: "t" });
    expect((await b.auditLog("s")).map((r) => r.seq)).toEqual([1]);
    expect(b.integrityCheck()).toBe("ok");
    await b.close();
  });

  it("two stores may share one file without seeing each other's records", async () => {
    const path = join(dir, "shared.db");
    const a = new SqliteStore({ name: "a", path });
    const b = new SqliteStore({ name: "b", path });
    await a.persist({ session: "s", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
    expect(await b.lookup("s", { spanId: "span_1" })).toEqual({ status: "absent" });
    await a.close();
    await b.close();
  });

  // Finding 25.15: the former FTS5 index was shared by every session, so a search's cost told whether another
  // session held a string; search now reads the window's own copies by handle, and the index is dropped.
  it("a file with the former FTS5 search index is migrated: index and triggers dropped, copies searched by handle", async () => {
    const path = join(dir, "fts.db");
    const { DatabaseSync } = await import("node:sqlite");
    const s0 = new SqliteStore({ name: "a", path });
    const text = "X-Request-Id: req_7f3a9c2e41";
    const { handle } = await s0.persist({ session: "s", spanId: "span_1", kind: "k", text, hash: contentHash(text) });
    await s0.close();
    const db = new DatabaseSync(path);
    db.exec(`CREATE VIRTUAL TABLE pruneguard_copies_fts USING fts5(text, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1');
      CREATE TRIGGER pruneguard_records_text AFTER UPDATE OF text ON pruneguard_records BEGIN DELETE FROM pruneguard_copies_fts WHERE rowid = old.doc; END;`);
    db.close();
    const s = new SqliteStore({ name: "a", path });
    const names = new DatabaseSync(path).prepare("SELECT name FROM sqlite_master WHERE name LIKE 'pruneguard_copies%' OR name = 'pruneguard_records_text'").all();
    expect(names).toEqual([]);
    expect(await s.searchCopies("s", { copies: [{ handle, hash: contentHash(text) }], literal: "req_7f", limit: 5 })).toMatchObject({ candidates: [{ spanId: "span_1" }], gone: [] });
    expect(s.integrityCheck()).toBe("ok");
    await s.close();
  });

  it("a file written before the search index gets one when opened, and VACUUM does not detach it from the copies", async () => {
    const path = join(dir, "old-format.db");
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(path);
    db.exec(`CREATE TABLE pruneguard_records (store TEXT NOT NULL, session TEXT NOT NULL, span_id TEXT NOT NULL, handle TEXT NOT NULL,
      kind TEXT NOT NULL, text TEXT, hash TEXT NOT NULL, created_at INTEGER NOT NULL, expired_at INTEGER, held INTEGER NOT NULL DEFAULT 0,
      held_until INTEGER, UNIQUE (store, session, span_id), UNIQUE (store, session, handle))`);
    const ins = db.prepare("INSERT INTO pruneguard_records (store, session, span_id, handle, kind, text, hash, created_at) VALUES ('a', 's', ?, ?, 'k', ?, ?, 0)");
    for (let i = 1; i <= 20; i++) ins.run(`span_${i}`, `#${i}`, `row ${i} id_${i}_end`, contentHash(`row ${i} id_${i}_end`));
    // Rows deleted before the VACUUM make SQLite renumber the rest.
    db.exec("DELETE FROM pruneguard_records WHERE span_id IN ('span_1', 'span_2', 'span_3')");
    db.close();
    const a = new SqliteStore({ name: "a", path });
    const copies = Array.from({ length: 21 }, (_, k) => ({ handle: `#${k + 1}`, hash: contentHash(`row ${k + 1} id_${k + 1}_end`) }));
    expect((await a.searchCopies("s", { copies, literal: "id_17_end", limit: 5 })).candidates.map((c) => c.spanId)).toEqual(["span_17"]);
    await a.close();
    const v = new DatabaseSync(path);
    v.exec("VACUUM");
    v.close();
    const b = new SqliteStore({ name: "a", path });
    const { handle } = await b.persist({ session: "s", spanId: "span_21", kind: "k", text: "row 21 id_21_end", hash: contentHash("row 21 id_21_end") });
    copies[20] = { handle, hash: contentHash("row 21 id_21_end") };
    for (const i of [4, 17, 20, 21]) {
      expect((await b.searchCopies("s", { copies, literal: `id_${i}_end`, limit: 5 })).candidates.map((c) => c.spanId)).toEqual([`span_${i}`]);
      expect((await b.searchCopies("s", { copies, literal: `row ${i} id_${i}_end`, limit: 5 })).candidates.map((c) => c.spanId)).toEqual([`span_${i}`]);
    }
    expect(b.integrityCheck()).toBe("ok");
    await b.close();
  });

  // Issue 28: the counter row is updated first and created only when the update finds none.
  it("a session's first registration creates its counter after what the file holds of it; later ones, on any connection, count on", async () => {
    const path = join(dir, "counter.db");
    const a = new SqliteStore({ name: "log", path });
    const reg = { kind: "k", hash: contentHash("k"), group: null, message: null, store: "log" };
    // A session begun before the counters existed: a copy of span_5, no counter row.
    await a.persist({ session: "old", spanId: "span_5", kind: "k", text: "t", hash: contentHash("t") });
    expect((await a.registerSpan("old", reg)).spanId).toBe("span_6");
    expect((await a.registerSpan("new", reg)).spanId).toBe("span_1");
    const b = new SqliteStore({ name: "log", path });
    expect((await b.registerSpan("old", reg)).spanId).toBe("span_7");
    expect((await a.registerSpan("old", reg)).spanId).toBe("span_8");
    expect((await b.registerSpan("new", reg)).spanId).toBe("span_2");
    // The session's start and its lossy counter go through the same row.
    expect(await b.sessionStart("fresh", 42)).toBe(42);
    expect(await a.sessionStart("fresh", 99)).toBe(42);
    expect((await a.registerSpan("fresh", reg)).spanId).toBe("span_1");
    const db = new DatabaseSync(path);
    expect(db.prepare("SELECT session, next_span FROM pruneguard_sessions WHERE store = 'log' ORDER BY session").all()).toEqual([
      { session: "fresh", next_span: 1 }, { session: "new", next_span: 2 }, { session: "old", next_span: 8 },
    ]);
    db.close();
    await a.close();
    await b.close();
  });

  it("uses WAL journaling", async () => {
    const path = join(dir, "wal.db");
    const s = new SqliteStore({ name: "a", path });
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(path, { readOnly: true });
    expect(db.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    db.close();
    await s.close();
  });
});

describe("SqliteStore audit table: keyed by (chain, seq), upgraded from the legacy schema", () => {
  it("the stored JSON of a record is the JSON of the record, written once", async () => {
    const path = join(dir, "stored-json.db");
    const s = new SqliteStore({ name: "toolLog", path, clock: new ManualClock(7) });
    const rec = await s.appendAudit("s", testDraft("invalid", { directive: '{"op":"x","\\u2028":"\u2028"}' }));
    await s.close();
    const db = new DatabaseSync(path, { readOnly: true });
    const row = db.prepare("SELECT record, seq, chain FROM pruneguard_audit").get() as { record: string; seq: number; chain: number };
    db.close();
    expect(row.record).toBe(JSON.stringify(rec));
    expect(row.seq).toBe(1);
  });

  it("opens a file made by the legacy schema: every record byte-identical, chains intact and continued", async () => {
    const path = join(dir, "legacy.db");
    const before = legacyFile(path);
    const clock = new ManualClock(1_000);
    const a = new SqliteStore({ name: "toolLog", path, clock });
    const other = new SqliteStore({ name: "other", path, clock });
    for (const [store, session, s] of [["toolLog", "s1", a], ["toolLog", "s2", a], ["other", "s1", other]] as const) {
      const log = await s.auditLog(session);
      expect(log.map((r) => JSON.stringify(r)), `${store}/${session}`).toEqual(before.get(`${store}/${session}`));
      expect(verifyAuditChain(log)).toBeNull();
    }
    expect(await a.countLossy("s1")).toBe(1);
    expect(await a.countLossy("s2")).toBe(1);
    expect(await other.countLossy("s1")).toBe(0);
    // The span persisted under the legacy schema prunes reversibly, and its audit record continues the chain.
    const commit = await a.commitPrune({
      session: "s1", holdUntil: null,
      items: [{ spanId: "span_1", kind: "toolResult", backed: true, handle: "#1", hash: contentHash("old bytes"), text: "old bytes" }],
      decide: (checks) => checks.map(() => ({ status: "reversible", repersist: false, hold: true, audit: testDraft("reversible", { spanId: "span_1" }) })),
    });
    expect(commit.items[0]!.check.copy).toBe("ok");
    expect(commit.items[0]!.audit.seq).toBe(4);
    const log = await a.auditLog("s1");
    expect(log.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(verifyAuditChain(log)).toBeNull();
    expect((await a.persist({ session: "s1", spanId: "span_2", kind: "toolResult", text: "new", hash: contentHash("new") })).handle).toBe("#2");
    expect(a.integrityCheck()).toBe("ok");
    await a.close();
    await other.close();
    // Reopening the upgraded file changes nothing.
    const again = new SqliteStore({ name: "toolLog", path, clock });
    expect((await again.auditLog("s1")).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    await again.close();
    const db = new DatabaseSync(path, { readOnly: true });
    const columns = (db.prepare("SELECT name FROM pragma_table_info('pruneguard_audit')").all() as Array<{ name: string }>).map((c) => c.name);
    const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'pruneguard_audit'").all();
    db.close();
    expect(columns).toEqual(["id", "status", "hash", "record", "hold_span", "hold_until"]);
    // No unique index beside the key: only the partial index over lossy prunes (Finding 25.11); the prunes by
    // span (Finding 25.16) are in a table of their own that the prunes do not write (schema version 2).
    expect(indexes).toEqual([{ name: "pruneguard_audit_lossy" }]);
  });

  it("still refuses a second record at a (store, session, seq), and a second chain for a (store, session)", async () => {
    const path = join(dir, "unique.db");
    const s = new SqliteStore({ name: "toolLog", path });
    await s.appendAudit("s1", testDraft("invalid"));
    await s.close();
    const db = new DatabaseSync(path);
    try {
      expect(() => db.prepare("INSERT INTO pruneguard_audit (id, status, hash, record) SELECT (chain << 32) + 1, 'x', 'x', '{}' FROM pruneguard_chains").run())
        .toThrow(/UNIQUE constraint failed: pruneguard_audit.id/);
      expect(() => db.prepare("INSERT INTO pruneguard_chains (store, session) VALUES ('toolLog', 's1')").run())
        .toThrow(/UNIQUE constraint failed: pruneguard_chains.store, pruneguard_chains.session/);
      expect(() => db.prepare("INSERT INTO pruneguard_audit (id, status, hash, record) VALUES (1 << 32, 'x', 'x', '{}')").run())
        .toThrow(/CHECK constraint failed/);
    } finally {
      db.close();
    }
  });

  it("two connections appending to one chain keep it contiguous: a stale cached head retries from the stored one", async () => {
    const path = join(dir, "two-writers.db");
    const a = new SqliteStore({ name: "toolLog", path });
    const b = new SqliteStore({ name: "toolLog", path });
    const seqs: number[] = [];
    for (let i = 0; i < 6; i++) seqs.push((await (i % 3 === 0 ? b : a).appendAudit("s1", testDraft("invalid", { pinsCarried: i }))).seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
    const log = await a.auditLog("s1");
    expect(log.map((r) => r.pinsCarried)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(verifyAuditChain(log)).toBeNull();
    await a.close();
    await b.close();
  });

  it("a transaction that rolls back leaves no chain number behind for another session to share", async () => {
    const path = join(dir, "rollback-chain.db");
    const s = new SqliteStore({ name: "toolLog", path });
    // A draft JSON cannot serialise fails after the chain row was inserted, inside the transaction.
    const unserialisable = testDraft("invalid", { pinsCarried: 1n as unknown as number });
    await expect(s.appendAudit("s1", unserialisable)).rejects.toThrow(/BigInt/);
    await s.appendAudit("s2", testDraft("invalid", { spanId: "span_2" }));
    await s.appendAudit("s1", testDraft("invalid", { spanId: "span_1" }));
    expect((await s.auditLog("s1")).map((r) => [r.session, r.seq, r.spanId])).toEqual([["s1", 1, "span_1"]]);
    expect((await s.auditLog("s2")).map((r) => [r.session, r.seq, r.spanId])).toEqual([["s2", 1, "span_2"]]);
    await s.close();
  });
});
