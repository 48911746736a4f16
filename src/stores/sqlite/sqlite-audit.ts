/**
 * A SQLite store file read the way `pruneguard audit` needs it: opened read only, never created and never
 * migrated (a file in the legacy audit schema is read as it is), so auditing changes nothing it audits.
 */
import { existsSync } from "node:fs";
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { errorMessage } from "../../errors.js";
import {
  AUDIT_CONTENT_BYTES, AuditReadBudget, AuditReadError, boundedColumn, MAX_AUDIT_FIELD_BYTES, MAX_AUDIT_RECORD_BYTES, spentBytes, type AuditCopy, type AuditReader,
  type AuditSpan,
} from "../audit-reader.js";
import { auditCopy, auditRow, auditSpan, chainCount, COPY_COLUMNS, SPAN_COLUMNS, type AuditRowRead, type ChainRow, type CopyRow, type SpanRow } from "../audit-rows.js";
import { hasColumn, SEQ_MASK, SQLITE_SCHEMA_VERSION, sqliteAuditRows, type SchemaReader } from "./sqlite-schema.js";
import { sqliteText } from "./sqlite-text.js";

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
  const budget = new AuditReadBudget();
  /**
   * The rows of `select` (its value columns bounded with `boundedColumn`) in `order`: first counted, with the
   * bytes `spent` says they take (over the query as `q`), against the reader's budget, then read.
   */
  const read = <R>(what: string, select: string, spent: string, order: string, ...params: SQLInputValue[]): R[] => {
    const total = db.prepare(`SELECT count(*) AS n, coalesce(sum(${spent}), 0) AS b FROM (${select}) q`).get(...params) as { n: number; b: number };
    const limit = budget.spend(what, Number(total.n), Number(total.b));
    return db.prepare(`${select} ORDER BY ${order} LIMIT ${limit}`).all(...params) as unknown as R[];
  };
  return {
    label,
    // A store name past the bound is left out: nothing of it can be asked for by name.
    stores: async () => {
      const tables = ["pruneguard_records", "pruneguard_handles", "pruneguard_spans", "pruneguard_sessions", "pruneguard_chains"].filter(has);
      const union = [...tables, audit].map((t) => `SELECT CASE WHEN octet_length(store) <= ${MAX_AUDIT_FIELD_BYTES} THEN store END AS store FROM ${t}`).join(" UNION ");
      return read<{ store: string }>("the list of stores", `SELECT u.store AS store FROM (${union}) u WHERE u.store IS NOT NULL`, "octet_length(q.store)", "store").map((r) => r.store);
    },
    // Grouped by the bounded names and their lengths: a name past the bound is never read, even to group it.
    sessions: async () =>
      read<ChainRow>(
        "the list of audit chains",
        `SELECT * FROM (SELECT ${boundedColumn("store", "store")}, ${boundedColumn("session", "session")}, count(*) AS n FROM ${audit} GROUP BY 1, 2, 3, 4) g`,
        `${spentBytes("store")} + ${spentBytes("session")}`, "(g.store IS NULL), g.store, (g.session IS NULL), g.session, g.store_bytes, g.session_bytes",
      ).map(chainCount),
    // SQLite answers octet_length() of a text from the row's header, without reading the text itself (nor
    // its overflow pages): a record past the bound stays in the file, as does any other column past its own.
    rows: async (store, session) =>
      read<AuditRowRead>(
        `the audit chain of session ${session} in store ${store}`,
        `SELECT ${boundedColumn("a.seq", "seq")}, ${boundedColumn("a.status", "status")}, ${boundedColumn("a.hash", "hash")}, octet_length(a.record) AS bytes,
                CASE WHEN octet_length(a.record) <= ${MAX_AUDIT_RECORD_BYTES} THEN a.record END AS record
           FROM ${audit} a WHERE a.store = ? AND a.session = ?`,
        `${spentBytes("seq")} + ${spentBytes("status")} + ${spentBytes("hash")} + (CASE WHEN q.bytes > ${MAX_AUDIT_RECORD_BYTES} THEN 0 ELSE coalesce(q.bytes, 0) END)`,
        "a.seq", store, session,
      ).map(auditRow),
    counters: async (store, session) => {
      // Files written before the counters existed have no such table.
      if (!has("pruneguard_sessions")) return null;
      const row = db.prepare(`SELECT ${boundedColumn("next_span", "next_span")}, ${boundedColumn("lossy_used", "lossy_used")} FROM pruneguard_sessions WHERE store = ? AND session = ?`)
        .get(store, session) as { next_span: unknown; lossy_used: unknown } | undefined;
      const max = has("pruneguard_spans")
        ? (db.prepare(`SELECT ${boundedColumn("m", "n")} FROM (SELECT coalesce(max(ordinal), 0) AS m FROM pruneguard_spans WHERE store = ? AND session = ?)`).get(store, session) as { n: unknown }).n
        : 0;
      return {
        table: "pruneguard_sessions", lossyUsed: row === undefined ? null : counter(row.lossy_used),
        nextSpan: row === undefined ? null : counter(row.next_span), registered: counter(max),
      };
    },
    registry: async (store, session, content): Promise<AuditSpan[]> =>
      !has("pruneguard_spans") ? [] : read<SpanRow>(
        `the span registry of session ${session} in store ${store}`,
        `SELECT ${SPAN_COLUMNS.map((c) => boundedColumn(`s.${c}`, c)).join(", ")}${content ? `, ${contentColumn("s.replacement", "replacement")}` : ""}
           FROM pruneguard_spans s WHERE s.store = ? AND s.session = ?`,
        [...SPAN_COLUMNS.map((c) => spentBytes(c)), ...(content ? [spentBytes("replacement", MAX_AUDIT_RECORD_BYTES, AUDIT_CONTENT_BYTES)] : [])].join(" + "),
        "s.ordinal", store, session,
      ).map((r) => auditSpan({ ...r, replacement: utf8(r.replacement) }, content)),
    copies: async (session, content): Promise<AuditCopy[]> =>
      !has("pruneguard_records") ? [] : read<CopyRow>(
        `the copies of session ${session}`, copiesSql(db, content),
        [...COPY_COLUMNS.map((c) => spentBytes(c)), ...(content ? [spentBytes("text", MAX_AUDIT_RECORD_BYTES, AUDIT_CONTENT_BYTES)] : [])].join(" + "),
        "r.store, r.created_at", session,
      ).map((r) => auditCopy({ ...r, text: utf8(r.text) }, content)),
    close: async () => db.close(),
  };
}

/** A text column read with content: its first `AUDIT_CONTENT_BYTES` as bytes, none of it past `MAX_AUDIT_RECORD_BYTES`. */
function contentColumn(expr: string, as: string): string {
  // As bytes (`CAST … AS BLOB`), decoded here: Node 22's node:sqlite reads text only up to a NUL. A cut
  // inside a character decodes to U+FFFD past the characters the page shows (2,400 bytes hold 600 of them).
  return `CASE WHEN octet_length(${expr}) <= ${MAX_AUDIT_RECORD_BYTES} THEN substr(CAST(${expr} AS BLOB), 1, ${AUDIT_CONTENT_BYTES}) END AS ${as}, octet_length(${expr}) AS ${as}_bytes`;
}

/** A counter as a number: `NaN` for a value that is not one (text, or past the bound: a SQLite column holds anything). */
function counter(value: unknown): number {
  return value === null || value === undefined ? Number.NaN : Number(value);
}

/**
 * The session's copies with the holds they have now. In a file of schema version 1 or later a prune's hold is written
 * in its audit row and folded into the record's `held_folded`/`held_until` by the next rotation or release: a
 * span's latest hold among its chain's rows not yet folded (after `folded`) is the one in force, else the
 * record's. A file of version 0 (read as it is: the reader never migrates) keeps every hold in `held`.
 */
function copiesSql(db: SchemaReader, content: boolean): string {
  const text = content ? `, ${contentColumn("r.text", "text")}` : "";
  const common = `${boundedColumn("r.store", "store")}, ${boundedColumn("r.span_id", "span_id")}, ${boundedColumn("r.handle", "handle")}, ${boundedColumn("r.created_at", "created_at")}, ${boundedColumn("r.expired_at", "expired_at")}`;
  if (!(hasColumn(db, "pruneguard_audit", "hold_span") && hasColumn(db, "pruneguard_chains", "folded"))) {
    const held = hasColumn(db, "pruneguard_records", "held_folded") ? "held_folded" : "held";
    return `SELECT ${common}, ${boundedColumn(`r.${held}`, "held")}, ${boundedColumn("r.held_until", "held_until")}${text} FROM pruneguard_records r WHERE r.session = ?1`;
  }
  return `SELECT ${common},
            ${boundedColumn("CASE WHEN h.hold_span IS NULL THEN r.held_folded ELSE 1 END", "held")}, ${boundedColumn("CASE WHEN h.hold_span IS NULL THEN r.held_until ELSE h.hold_until END", "held_until")}${text}
          FROM pruneguard_records r
          LEFT JOIN (SELECT c.store, a.hold_span, a.hold_until, max(a.id) FROM pruneguard_chains c
                     JOIN pruneguard_audit a ON a.id BETWEEN (c.chain << 32) + c.folded + 1 AND (c.chain << 32) + ${SEQ_MASK}
                     WHERE c.session = ?1 AND a.hold_span IS NOT NULL GROUP BY c.store, a.hold_span) h
            ON h.store = r.store AND h.hold_span = r.span_id
          WHERE r.session = ?1`;
}
