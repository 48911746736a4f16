/**
 * A SQLite store file read the way `pruneguard audit` needs it: opened read only, never created and never
 * migrated (a file in the legacy audit schema is read as it is), so auditing changes nothing it audits.
 */
import { existsSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../../errors.js";
import { AuditReadError, MAX_AUDIT_RECORD_BYTES, type AuditChainCount, type AuditCopy, type AuditReader, type AuditRow, type AuditSpan } from "../audit-reader.js";
import { hasColumn, SEQ_MASK, SQLITE_SCHEMA_VERSION, sqliteAuditRows, type SchemaReader } from "./sqlite-schema.js";
import { sqliteText } from "./sqlite-text.js";

/** A copy's row as SQLite returns it. */
interface CopyRow {
  readonly store: string;
  readonly span_id: string;
  readonly handle: string;
  readonly created_at: number;
  readonly expired_at: number | null;
  readonly held: number;
  readonly held_until: number | null;
  readonly text?: Uint8Array | string | null;
}

/** A text column read as bytes, as text again (`null` and absent: `null`). */
const utf8 = (v: Uint8Array | string | null | undefined): string | null => sqliteText(v) ?? null;

/**
 * Opens the SQLite file at `path` for reading its audit records. Throws `AuditReadError` naming the file as
 * `label` (default: `path`) when it does not exist, cannot be opened or read (a lock another connection
 * holds exclusively included: the reader does not wait for it), or holds no pruneguard store.
 */
export function openSqliteAuditReader(path: string, options: { readonly label?: string } = {}): AuditReader {
  const label = options.label ?? path;
  // Checked first: opening a missing file, even read only, is not what an audit of it should do.
  if (!existsSync(path)) throw new AuditReadError("missing", `no such file: ${label}`);
  // Loaded here, as the store loads it: importing this module prints nothing on a Node where node:sqlite warns.
  const { DatabaseSync: Database } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");
  let db: DatabaseSync;
  try {
    db = new Database(path, { readOnly: true });
  } catch (err) {
    throw new AuditReadError("unopenable", `cannot open ${label}: ${errorMessage(err)}`, { cause: err });
  }
  let table: unknown;
  try {
    table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pruneguard_audit'").get();
  } catch (err) {
    db.close();
    throw new AuditReadError("unreadable", `cannot read ${label}: ${errorMessage(err)}`, { cause: err });
  }
  if (table === undefined) {
    db.close();
    throw new AuditReadError("not-a-store", `${label} is not a pruneguard store (no pruneguard_audit table)`);
  }
  // A later format may keep holds or records where this reader does not look: refused, as the store refuses it.
  const version = Number((db.prepare("PRAGMA user_version").get() as { user_version: number } | undefined)?.user_version ?? 0);
  if (version > SQLITE_SCHEMA_VERSION) {
    db.close();
    throw new AuditReadError("newer", `${label} is at SQLite store format ${version}, newer than this pruneguard reads (${SQLITE_SCHEMA_VERSION}); upgrade pruneguard`);
  }
  let audit: string;
  try {
    // Either schema of the audit table (files written before it was keyed by chain are read as they are).
    audit = sqliteAuditRows(db);
  } catch (err) {
    db.close();
    throw err;
  }
  // Tables a file written by an older version lacks are read as empty, not as an error.
  const has = (name: string) => db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  return {
    label,
    stores: async () => {
      const tables = ["pruneguard_records", "pruneguard_handles", "pruneguard_spans", "pruneguard_sessions", "pruneguard_chains"].filter(has);
      const union = [...tables.map((t) => `SELECT store FROM ${t}`), `SELECT store FROM ${audit}`].join(" UNION ");
      return (db.prepare(`SELECT store FROM (${union}) ORDER BY store`).all() as Array<{ store: string }>).map((r) => r.store);
    },
    sessions: async () =>
      db.prepare(`SELECT store, session, count(*) AS n FROM ${audit} GROUP BY store, session ORDER BY store, session`)
        .all() as unknown as AuditChainCount[],
    // SQLite answers octet_length() of a text from the row's header, without reading the text itself (nor
    // its overflow pages): a record past the bound stays in the file.
    rows: async (store, session) =>
      db.prepare(`SELECT seq, status, hash, octet_length(record) AS bytes, CASE WHEN octet_length(record) <= ${MAX_AUDIT_RECORD_BYTES} THEN record END AS record
                  FROM ${audit} WHERE store = ? AND session = ? ORDER BY seq`)
        .all(store, session) as unknown as AuditRow[],
    counters: async (store, session) => {
      // Files written before the counters existed have no such table.
      if (!has("pruneguard_sessions")) return null;
      const row = db.prepare("SELECT next_span, lossy_used FROM pruneguard_sessions WHERE store = ? AND session = ?").get(store, session) as
        | { next_span: number; lossy_used: number }
        | undefined;
      const max = has("pruneguard_spans")
        ? (db.prepare("SELECT coalesce(max(ordinal), 0) AS n FROM pruneguard_spans WHERE store = ? AND session = ?").get(store, session) as { n: number }).n
        : 0;
      return {
        table: "pruneguard_sessions", lossyUsed: row === undefined ? null : Number(row.lossy_used),
        nextSpan: row === undefined ? null : Number(row.next_span), registered: Number(max),
      };
    },
    registry: async (store, session, content): Promise<AuditSpan[]> =>
      // Text as its bytes (`CAST … AS BLOB`), decoded here: Node 22's node:sqlite reads text only up to a NUL.
      !has("pruneguard_spans") ? [] : (db.prepare(`SELECT ordinal, span_id, kind, backing${content ? ", CAST(replacement AS BLOB) AS replacement" : ""} FROM pruneguard_spans WHERE store = ? AND session = ? ORDER BY ordinal`)
        .all(store, session) as Array<{ ordinal: number; span_id: string; kind: string; backing: string | null; replacement?: Uint8Array | string | null }>)
        .map((r) => ({ ordinal: Number(r.ordinal), spanId: r.span_id, kind: r.kind, backing: r.backing, ...(content ? { replacement: utf8(r.replacement) } : {}) })),
    copies: async (session, content): Promise<AuditCopy[]> =>
      !has("pruneguard_records") ? [] : (db.prepare(copiesSql(db, content)).all(session) as unknown as CopyRow[]).map((r) => ({
        store: r.store, spanId: r.span_id, handle: r.handle, createdAt: Number(r.created_at), expiredAt: r.expired_at === null ? null : Number(r.expired_at),
        held: r.held === 1, heldUntil: r.held_until === null ? null : Number(r.held_until), ...(content ? { text: utf8(r.text) } : {}),
      })),
    close: async () => db.close(),
  };
}

/**
 * The session's copies with the holds they have now. In a file of schema version 1 or later a prune's hold is written
 * in its audit row and folded into the record's `held_folded`/`held_until` by the next rotation or release: a
 * span's latest hold among its chain's rows not yet folded (after `folded`) is the one in force, else the
 * record's. A file of version 0 (read as it is: the reader never migrates) keeps every hold in `held`.
 */
function copiesSql(db: SchemaReader, content: boolean): string {
  const text = content ? ", CAST(r.text AS BLOB) AS text" : "";
  if (!(hasColumn(db, "pruneguard_audit", "hold_span") && hasColumn(db, "pruneguard_chains", "folded"))) {
    const held = hasColumn(db, "pruneguard_records", "held_folded") ? "held_folded" : "held";
    return `SELECT r.store, r.span_id, r.handle, r.created_at, r.expired_at, r.${held} AS held, r.held_until${text} FROM pruneguard_records r WHERE r.session = ?1 ORDER BY r.store, r.created_at`;
  }
  return `SELECT r.store, r.span_id, r.handle, r.created_at, r.expired_at,
            CASE WHEN h.hold_span IS NULL THEN r.held_folded ELSE 1 END AS held, CASE WHEN h.hold_span IS NULL THEN r.held_until ELSE h.hold_until END AS held_until${text}
          FROM pruneguard_records r
          LEFT JOIN (SELECT c.store, a.hold_span, a.hold_until, max(a.id) FROM pruneguard_chains c
                     JOIN pruneguard_audit a ON a.id BETWEEN (c.chain << 32) + c.folded + 1 AND (c.chain << 32) + ${SEQ_MASK}
                     WHERE c.session = ?1 AND a.hold_span IS NOT NULL GROUP BY c.store, a.hold_span) h
            ON h.store = r.store AND h.hold_span = r.span_id
          WHERE r.session = ?1 ORDER BY r.store, r.created_at`;
}
