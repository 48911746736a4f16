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
