/**
 * A SQLite file as the legacy schema wrote it, before the audit table was keyed by (chain, seq): for the
 * tests that open such a file with a store (which upgrades it) or with `pruneguard audit` (which must not).
 */
import { DatabaseSync } from "node:sqlite";
import { EMPTY_CHAIN, sealChainJson, type AuditDraft } from "../../src/audit.js";
import { contentHash } from "../../src/hash.js";
import { testDraft } from "./conformance.js";

/** The legacy schema: the same tables, columns and constraints (reflowed). */
const LEGACY_SCHEMA = `
CREATE TABLE IF NOT EXISTS pruneguard_records (
  store TEXT NOT NULL, session TEXT NOT NULL, span_id TEXT NOT NULL, handle TEXT NOT NULL, kind TEXT NOT NULL, text TEXT,
  hash TEXT NOT NULL, created_at INTEGER NOT NULL, expired_at INTEGER, held INTEGER NOT NULL DEFAULT 0, held_until INTEGER,
  UNIQUE (store, session, span_id), UNIQUE (store, session, handle)
);
CREATE INDEX IF NOT EXISTS pruneguard_records_age ON pruneguard_records (store, created_at) WHERE text IS NOT NULL;
CREATE TABLE IF NOT EXISTS pruneguard_handles (
  store TEXT NOT NULL, session TEXT NOT NULL, next INTEGER NOT NULL, PRIMARY KEY (store, session)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pruneguard_audit (
  store TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL, status TEXT NOT NULL, hash TEXT NOT NULL, record TEXT NOT NULL,
  UNIQUE (store, session, seq)
);
`;

/** A file as the legacy schema wrote it: one persisted span and a few audit records in three chains. */
export function legacyFile(path: string): Map<string, string[]> {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL;");
  db.exec(LEGACY_SCHEMA);
  db.prepare("INSERT INTO pruneguard_records (store, session, span_id, handle, kind, text, hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    .run("toolLog", "s1", "span_1", "#1", "toolResult", "old bytes", contentHash("old bytes"), 0);
  db.prepare("INSERT INTO pruneguard_handles (store, session, next) VALUES (?, ?, ?)").run("toolLog", "s1", 1);
  const insert = db.prepare("INSERT INTO pruneguard_audit (store, session, seq, status, hash, record) VALUES (?, ?, ?, ?, ?, ?)");
  const stored = new Map<string, string[]>();
  const chains: Array<[string, string, AuditDraft[]]> = [
    ["toolLog", "s1", [testDraft("invalid"), testDraft("lossy", { spanId: "span_9" }), testDraft("rejected", { directive: '{"op":"prune","span_id":"span_1","mode":"drop"}' })]],
    ["toolLog", "s2", [testDraft("lossy")]],
    ["other", "s1", [testDraft("reversible"), testDraft("invalid")]],
  ];
  for (const [store, session, drafts] of chains) {
    const sealed = sealChainJson(EMPTY_CHAIN, drafts, { at: 5, session, store });
    for (const { record, json } of sealed) insert.run(store, session, record.seq, record.status, record.hash, json);
    stored.set(`${store}/${session}`, sealed.map((s) => s.json));
  }
  db.close();
  return stored;
}

/**
 * Schema version 0 as the last unnumbered version wrote it (`PRAGMA user_version` 0): audit keyed by
 * (chain, seq), holds placed by an `UPDATE` of the record's `held`/`held_until` (reflowed, same DDL).
 */
const VERSION_0_SCHEMA = `
CREATE TABLE pruneguard_records (
  store TEXT NOT NULL, session TEXT NOT NULL, span_id TEXT NOT NULL, handle TEXT NOT NULL, kind TEXT NOT NULL, text TEXT,
  hash TEXT NOT NULL, created_at INTEGER NOT NULL, expired_at INTEGER, held INTEGER NOT NULL DEFAULT 0, held_until INTEGER, doc INTEGER,
  UNIQUE (store, session, span_id), UNIQUE (store, session, handle)
);
CREATE INDEX pruneguard_records_age ON pruneguard_records (store, created_at) WHERE text IS NOT NULL;
CREATE INDEX pruneguard_records_gone ON pruneguard_records (store, session) WHERE text IS NULL;
CREATE UNIQUE INDEX pruneguard_records_doc ON pruneguard_records (doc);
CREATE TRIGGER pruneguard_records_doc_ins AFTER INSERT ON pruneguard_records BEGIN
  UPDATE pruneguard_records SET doc = (SELECT coalesce(max(doc), 0) + 1 FROM pruneguard_records) WHERE rowid = new.rowid AND doc IS NULL;
END;
CREATE TABLE pruneguard_handles (store TEXT NOT NULL, session TEXT NOT NULL, next INTEGER NOT NULL, PRIMARY KEY (store, session)) WITHOUT ROWID;
CREATE TABLE pruneguard_chains (chain INTEGER PRIMARY KEY, store TEXT NOT NULL, session TEXT NOT NULL, UNIQUE (store, session));
CREATE TABLE pruneguard_audit (
  id INTEGER PRIMARY KEY CHECK ((id & 4294967295) > 0), status TEXT NOT NULL, hash TEXT NOT NULL, record TEXT NOT NULL,
  chain INTEGER GENERATED ALWAYS AS (id >> 32) VIRTUAL, seq INTEGER GENERATED ALWAYS AS (id & 4294967295) VIRTUAL
);
CREATE TABLE pruneguard_sessions (
  store TEXT NOT NULL, session TEXT NOT NULL, next_span INTEGER NOT NULL, lossy_used INTEGER NOT NULL, started_at INTEGER, PRIMARY KEY (store, session)
) WITHOUT ROWID;
CREATE TABLE pruneguard_spans (
  store TEXT NOT NULL, session TEXT NOT NULL, ordinal INTEGER NOT NULL, span_id TEXT NOT NULL, kind TEXT NOT NULL, hash TEXT NOT NULL,
  grp TEXT, message TEXT, backing TEXT, replacement TEXT, PRIMARY KEY (store, session, ordinal), UNIQUE (store, session, span_id)
) WITHOUT ROWID;
CREATE INDEX pruneguard_audit_lossy ON pruneguard_audit (id) WHERE status = 'lossy';
CREATE INDEX pruneguard_audit_span ON pruneguard_audit (json_extract(record, '$.spanId')) WHERE status IN ('reversible', 'lossy');
`;

/**
 * A file of schema version 0 with session `s1` of store `toolLog`: copies of span_1 … span_4 written at 0,
 * span_1 held until released, span_2 held until `heldUntil`, span_3 not held, span_4 held but already rotated
 * out; one reversible audit record for each held span. Returns the stored audit JSON.
 */
export function version0File(path: string, heldUntil: number): string[] {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL;");
  db.exec(VERSION_0_SCHEMA);
  const rec = db.prepare("INSERT INTO pruneguard_records (store, session, span_id, handle, kind, text, hash, created_at, expired_at, held, held_until) VALUES ('toolLog', 's1', ?, ?, 'toolResult', ?, ?, 0, ?, ?, ?)");
  const copies: Array<[string, string | null, number | null, number, number | null]> = [
    ["span_1", "one", null, 1, null], ["span_2", "two", null, 1, heldUntil], ["span_3", "three", null, 0, null], ["span_4", null, 5, 0, null],
  ];
  copies.forEach(([span, text, expiredAt, held, until], i) => rec.run(span, `#${i + 1}`, text, contentHash(text ?? span), expiredAt, held, until));
  db.prepare("INSERT INTO pruneguard_handles (store, session, next) VALUES ('toolLog', 's1', 4)").run();
  db.prepare("INSERT INTO pruneguard_sessions (store, session, next_span, lossy_used, started_at) VALUES ('toolLog', 's1', 4, 0, 0)").run();
  const chain = (db.prepare("INSERT INTO pruneguard_chains (store, session) VALUES ('toolLog', 's1') RETURNING chain").get() as { chain: number }).chain;
  const sealed = sealChainJson(EMPTY_CHAIN, ["span_1", "span_2", "span_4"].map((spanId) => testDraft("reversible", { spanId })), { at: 1, session: "s1", store: "toolLog" });
  const insert = db.prepare("INSERT INTO pruneguard_audit (id, status, hash, record) VALUES ((? << 32) + ?, ?, ?, ?)");
  for (const { record, json } of sealed) insert.run(chain, record.seq, record.status, record.hash, json);
  db.close();
  return sealed.map((s) => s.json);
}
