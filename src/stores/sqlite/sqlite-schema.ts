/**
 * The SQLite store's file format: its tables, the migrations that bring an older file up to them, and how
 * a reader that must not migrate (`pruneguard audit`) reads either audit table. The store and the audit
 * reader both take the format from here.
 */
import type { DatabaseSync } from "node:sqlite";

/**
 * An audit record's key is `chain << 32 | seq`: `pruneguard_chains` numbers each (store, session) once,
 * so the table's own rowid B-tree keeps a chain's records in order and makes (store, session, seq) unique
 * — one B-tree written per record, where a UNIQUE (store, session, seq) index was a second. A chain holds
 * up to 2^32 − 1 records; ids are computed in SQL (64-bit), never in JavaScript (53-bit). `node:sqlite` binds a
 * JavaScript number as REAL, and a sum with a REAL is a REAL, exact only below 2^53 (a chain number below
 * 2^21): every parameter added to `chain << 32` is cast to INTEGER first (a shift converts its own operands).
 */
export const SEQ_MASK = 0xffffffff;
const AUDIT_TABLE = `(
  id         INTEGER PRIMARY KEY CHECK ((id & ${SEQ_MASK}) > 0),
  status     TEXT    NOT NULL,
  hash       TEXT    NOT NULL,
  record     TEXT    NOT NULL,
  chain      INTEGER GENERATED ALWAYS AS (id >> 32) VIRTUAL,
  seq        INTEGER GENERATED ALWAYS AS (id & ${SEQ_MASK}) VIRTUAL,
  hold_span  TEXT,
  hold_until INTEGER
)`;

/**
 * The file format's version, kept in `PRAGMA user_version`: 0 for every file written before it was numbered,
 * 1 once holds are kept in audit rows (`hold_span`, `hold_until`) and folded into the records by rotation
 * and release (`pruneguard_chains.folded`), 2 once the committed prunes are indexed by span outside the
 * prune's transaction (`pruneguard_audit_spans`, `pruneguard_chains.indexed`) instead of by an index the
 * prune wrote. A file of a later version is refused: this code would not know where its holds are.
 */
export const SQLITE_SCHEMA_VERSION = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS pruneguard_records (
  store      TEXT    NOT NULL,
  session    TEXT    NOT NULL,
  span_id    TEXT    NOT NULL,
  handle     TEXT    NOT NULL,
  kind       TEXT    NOT NULL,
  text       TEXT,
  hash       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  expired_at INTEGER,
  -- Holds folded in from the audit rows (named held until version 1: renamed so an older process fails
  -- closed on this file instead of rotating copies whose holds it cannot see).
  held_folded INTEGER NOT NULL DEFAULT 0,
  held_until INTEGER,
  UNIQUE (store, session, span_id),
  UNIQUE (store, session, handle)
);
CREATE INDEX IF NOT EXISTS pruneguard_records_age ON pruneguard_records (store, created_at) WHERE text IS NOT NULL;
-- A search lists the session's rotated-out copies (possible holders it cannot read) without a scan.
CREATE INDEX IF NOT EXISTS pruneguard_records_gone ON pruneguard_records (store, session) WHERE text IS NULL;
CREATE TABLE IF NOT EXISTS pruneguard_handles (
  store   TEXT    NOT NULL,
  session TEXT    NOT NULL,
  next    INTEGER NOT NULL,
  PRIMARY KEY (store, session)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pruneguard_chains (
  chain   INTEGER PRIMARY KEY,
  store   TEXT    NOT NULL,
  session TEXT    NOT NULL,
  folded  INTEGER NOT NULL DEFAULT 0,
  indexed INTEGER NOT NULL DEFAULT 0,
  UNIQUE (store, session)
);
CREATE TABLE IF NOT EXISTS pruneguard_audit ${AUDIT_TABLE};
-- The committed prunes of each chain by the span id they name, through pruneguard_chains.indexed: written in
-- batches by a recall that needs them (see SqliteStore.prunesOf), never by the prune itself.
CREATE TABLE IF NOT EXISTS pruneguard_audit_spans (
  chain   INTEGER NOT NULL,
  span_id TEXT    NOT NULL,
  seq     INTEGER NOT NULL,
  PRIMARY KEY (chain, span_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pruneguard_sessions (
  store      TEXT    NOT NULL,
  session    TEXT    NOT NULL,
  next_span  INTEGER NOT NULL,
  lossy_used INTEGER NOT NULL,
  started_at INTEGER,
  PRIMARY KEY (store, session)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pruneguard_spans (
  store       TEXT    NOT NULL,
  session     TEXT    NOT NULL,
  ordinal     INTEGER NOT NULL,
  span_id     TEXT    NOT NULL,
  kind        TEXT    NOT NULL,
  hash        TEXT    NOT NULL,
  grp         TEXT,
  message     TEXT,
  backing     TEXT,
  replacement TEXT,
  PRIMARY KEY (store, session, ordinal),
  UNIQUE (store, session, span_id)
) WITHOUT ROWID;
`;

/**
 * The audit table's index over its lossy prunes, partial so that the other records (recalls, rejections,
 * searches…) pay nothing: counted against the session's lossy counter inside a lossy prune's transaction.
 * Created after an old audit table was migrated (the migration replaces the table and its indexes). The
 * prunes by span id are in `pruneguard_audit_spans`, not in an index here: an index is written by every
 * prune's transaction (one more B-tree, ~1 WAL page a prune), the table only when a recall needs it.
 */
const AUDIT_INDEXES = `
CREATE INDEX IF NOT EXISTS pruneguard_audit_lossy ON pruneguard_audit (id) WHERE status = 'lossy';
`;

/**
 * How many audit rows of a chain `SqliteStore.prunesOf` reads by their rowid range before it indexes them
 * in `pruneguard_audit_spans`: a recall of a span the window does not hold reads at most this many rows
 * besides the ones naming it (when it can take the write lock to index them).
 */
export const INDEX_TAIL = 256;

/** The audit rows of the chain of (@store, @session): a `FROM … WHERE …` to extend with more conditions. */
export const CHAIN_AUDIT = `FROM pruneguard_chains c JOIN pruneguard_audit a ON a.id BETWEEN (c.chain << 32) + 1 AND (c.chain << 32) + ${SEQ_MASK}
               WHERE c.store = @store AND c.session = @session`;

/**
 * Each record gets `doc`, a stable number on insert (a table's implicit rowid may be renumbered by VACUUM;
 * `doc` never is). Files written by 0.1 also had an FTS5 trigram index over the copies, for search; it is
 * dropped: an index shared by every session made a search's cost (and so its timing) depend on what other
 * sessions hold, and its triggers tripled the cost of a persist. Search now reads the window's own copies
 * by handle.
 */
const DOC_SCHEMA = `
DROP TRIGGER IF EXISTS pruneguard_records_text;
DROP TRIGGER IF EXISTS pruneguard_records_del;
DROP TRIGGER IF EXISTS pruneguard_records_ins;
DROP TABLE IF EXISTS pruneguard_copies_vocab;
DROP TABLE IF EXISTS pruneguard_copies_fts;
CREATE UNIQUE INDEX IF NOT EXISTS pruneguard_records_doc ON pruneguard_records (doc);
CREATE TRIGGER IF NOT EXISTS pruneguard_records_doc_ins AFTER INSERT ON pruneguard_records BEGIN
  UPDATE pruneguard_records SET doc = (SELECT coalesce(max(doc), 0) + 1 FROM pruneguard_records) WHERE rowid = new.rowid AND doc IS NULL;
END;
`;

/** Gives a file `doc` numbers and drops its former search index (idempotent; under the write lock). */
export function migrateDocs(db: DatabaseSync): void {
  const current = () =>
    (db.prepare("PRAGMA table_info(pruneguard_records)").all() as Array<{ name: string }>).some((c) => c.name === "doc") &&
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE name = 'pruneguard_records_doc_ins'").get() !== undefined &&
    db.prepare("SELECT 1 AS x FROM sqlite_master WHERE name = 'pruneguard_copies_fts'").get() === undefined;
  if (current()) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    if (!current()) {
      const columns = db.prepare("PRAGMA table_info(pruneguard_records)").all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === "doc")) db.exec("ALTER TABLE pruneguard_records ADD COLUMN doc INTEGER; UPDATE pruneguard_records SET doc = rowid;");
      // A build of SQLite without FTS5 cannot drop an FTS5 table; such a file never had one.
      db.exec(DOC_SCHEMA);
    }
    db.exec("COMMIT");
  } catch (err) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // Nothing to roll back.
    }
    throw err;
  }
}

/**
 * Files written before the audit table was keyed by chain had `pruneguard_audit (store, session, seq,
 * status, hash, record, UNIQUE (store, session, seq))`. Their records move over unchanged (same JSON,
 * same hashes, same seqs); the chain numbers are assigned here.
 */
const MIGRATE_AUDIT = `
INSERT OR IGNORE INTO pruneguard_chains (store, session)
  SELECT DISTINCT store, session FROM pruneguard_audit ORDER BY store, session;
CREATE TABLE pruneguard_audit_keyed ${AUDIT_TABLE};
INSERT INTO pruneguard_audit_keyed (id, status, hash, record)
  SELECT (c.chain << 32) + a.seq, a.status, a.hash, a.record
  FROM pruneguard_audit a JOIN pruneguard_chains c ON c.store = a.store AND c.session = a.session
  ORDER BY c.chain, a.seq;
DROP TABLE pruneguard_audit;
ALTER TABLE pruneguard_audit_keyed RENAME TO pruneguard_audit;
`;

/**
 * Version 0 → 1: holds move from an `UPDATE` of the record's row in the prune's transaction to the prune's
 * own audit row (`hold_span`, `hold_until`: no second B-tree written), folded into the records'
 * `held_folded`/`held_until` by rotation and release. Every hold the file had stays where it is, in the records;
 * each chain starts folded through its last record (none of those rows carries a hold), so no fold ever
 * rereads them. The records' `held` column is renamed `held_folded`: a process of an earlier version, which
 * would rotate copies without reading the holds in audit rows, then fails to open the file instead.
 */
const MIGRATE_HOLDS = (holdColumns: boolean, folded: boolean, renamed: boolean) => `
${renamed ? "" : "ALTER TABLE pruneguard_records RENAME COLUMN held TO held_folded;"}
${folded ? "" : "ALTER TABLE pruneguard_chains ADD COLUMN folded INTEGER NOT NULL DEFAULT 0;"}
${holdColumns ? "" : `ALTER TABLE pruneguard_audit ADD COLUMN hold_span TEXT; ALTER TABLE pruneguard_audit ADD COLUMN hold_until INTEGER;
UPDATE pruneguard_chains SET folded = coalesce((SELECT max(a.id) & ${SEQ_MASK} FROM pruneguard_audit a
  WHERE a.id BETWEEN (pruneguard_chains.chain << 32) + 1 AND (pruneguard_chains.chain << 32) + ${SEQ_MASK}), 0);`}
`;

/**
 * Version 1 → 2: the prunes' index by span (`pruneguard_audit_span`, an expression index every prune wrote)
 * is dropped; `pruneguard_audit_spans` (created with the schema) takes its place, filled from each chain's
 * start (`indexed` 0) by the first recall that needs it. A process of version 1 refuses the file (it reads
 * the version), so none goes on without the index it expects.
 */
const MIGRATE_SPANS = (indexed: boolean) => `
${indexed ? "" : "ALTER TABLE pruneguard_chains ADD COLUMN indexed INTEGER NOT NULL DEFAULT 0;"}
DROP INDEX IF EXISTS pruneguard_audit_span;
`;

/** Whether `table` has a column `name`. */
export function hasColumn(db: SchemaReader, table: string, name: string): boolean {
  return db.prepare(`SELECT 1 AS yes FROM pragma_table_info('${table}') WHERE name = '${name}'`).get() !== undefined;
}

/** Whether a file's audit table is the legacy one, keyed by (store, session, seq) columns and their UNIQUE index. */
function legacyAudit(db: SchemaReader): boolean {
  return db.prepare("SELECT 1 AS yes FROM pragma_table_info('pruneguard_audit') WHERE name = 'store'").get() !== undefined;
}

/**
 * What reading a file's schema needs of a connection: a structural type, so the published declarations do
 * not name `node:sqlite` (a consumer without `@types/node` type-checks them).
 */
export interface SchemaReader {
  prepare(sql: string): { get(): unknown };
}

/**
 * The audit records of a file as rows `(store, session, seq, status, hash, record)`, in either schema: for
 * readers that open a file without a store (`pruneguard audit` must not migrate the file it inspects).
 */
export function sqliteAuditRows(db: SchemaReader): string {
  return legacyAudit(db)
    ? "pruneguard_audit"
    : `(SELECT c.store AS store, c.session AS session, a.seq AS seq, a.status AS status, a.hash AS hash, a.record AS record
        FROM pruneguard_chains c JOIN pruneguard_audit a ON a.id BETWEEN (c.chain << 32) + 1 AND (c.chain << 32) + ${SEQ_MASK})`;
}

/**
 * Creates the tables, or upgrades a file's older audit table, under the write lock: two processes opening
 * one file cannot both migrate it. Rolled back when any step fails; the caller closes the connection.
 */
export function createSchema(db: DatabaseSync): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(SCHEMA);
    if (legacyAudit(db)) db.exec(MIGRATE_AUDIT);
    db.exec(AUDIT_INDEXES);
    // Files written before sessions kept their start: the column is added empty (`sessionStart` fills it).
    if (!hasColumn(db, "pruneguard_sessions", "started_at")) db.exec("ALTER TABLE pruneguard_sessions ADD COLUMN started_at INTEGER");
    const version = Number((db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new Error(`SQLite store file is at schema version ${version}, newer than this pruneguard (${SQLITE_SCHEMA_VERSION}); upgrade pruneguard`);
    }
    if (version < 1) db.exec(MIGRATE_HOLDS(hasColumn(db, "pruneguard_audit", "hold_span"), hasColumn(db, "pruneguard_chains", "folded"), hasColumn(db, "pruneguard_records", "held_folded")));
    if (version < 2) db.exec(MIGRATE_SPANS(hasColumn(db, "pruneguard_chains", "indexed")));
    if (version < SQLITE_SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
    db.exec("COMMIT");
  } catch (error) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // Already rolled back by SQLite.
    }
    throw error;
  }
}
