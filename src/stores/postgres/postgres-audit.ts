/**
 * A PostgreSQL store's schema read the way `pruneguard audit` needs it: in one `READ ONLY` transaction on
 * one connection of its own (not a pool: the audit is one short read), in every schema version a store
 * may still be at (tables a schema before version 3 lacks are read as empty), never migrating it.
 */
import pg from "pg";
import { errorMessage } from "../../errors.js";
import {
  AUDIT_CONTENT_BYTES, AUDIT_CONTENT_CHARS, AuditReadBudget, AuditReadError, boundedColumn, MAX_AUDIT_FIELD_BYTES, MAX_AUDIT_RECORD_BYTES, spentBytes, type AuditCopy,
  type AuditReader, type AuditSpan,
} from "../audit-reader.js";
import { auditCopy, auditRow, auditSpan, chainCount, type AuditRowRead, type ChainRow, type CopyRow, type SpanRow } from "../audit-rows.js";
import { SCHEMA_VERSION } from "./schema.js";
import { tablesOf, type Tables } from "./sql.js";

/**
 * Opens the store tables of `schema` at `url` for reading their audit records. Throws `AuditReadError`
 * when the schema name is not one a store can have, the server cannot be reached or read, or the schema
 * holds no store (never migrated). Messages never carry the URL: it may carry a password.
 */
export async function openPostgresAuditReader(url: string, schema: string): Promise<AuditReader> {
  let t: Tables;
  try {
    t = tablesOf(schema);
  } catch (err) {
    throw new AuditReadError("bad-schema", errorMessage(err), { cause: err });
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, application_name: "pruneguard audit" });
  // A connection lost between queries fails the query that meets it; unhandled, the event would end the process.
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("BEGIN READ ONLY");
    const present = await client.query("SELECT to_regclass($1) AS t", [t.audit.text]);
    if (present.rows[0]?.t === null) {
      throw new AuditReadError("not-a-store", `schema ${schema} holds no pruneguard store (no audit table; run \`pruneguard migrate\`?)`);
    }
    // A later schema may keep records where this reader does not look: refused, as `PostgresStore.connect` refuses it.
    const versioned = await client.query("SELECT to_regclass($1) AS t", [t.version.text]);
    if (versioned.rows[0]?.t !== null) {
      const version = Number((await client.query(`SELECT coalesce(max(version), 0)::text AS v FROM ${t.version.text}`)).rows[0]?.v ?? 0);
      if (version > SCHEMA_VERSION) {
        throw new AuditReadError("newer", `schema ${schema} is at store schema version ${version}, newer than this pruneguard reads (${SCHEMA_VERSION}); upgrade pruneguard`);
      }
    }
  } catch (err) {
    await client.end().catch(() => undefined);
    if (err instanceof AuditReadError) throw err;
    throw new AuditReadError("unreachable", `cannot read the PostgreSQL store: ${errorMessage(err)}`, { cause: err });
  }
  /** Whether each table exists (schemas before version 3 have no `sessions` or `spans`). */
  const exists = async (...tables: ReadonlyArray<{ text: string }>): Promise<boolean[]> => {
    const row = (await client.query(`SELECT ${tables.map((_, i) => `to_regclass($${i + 1}) IS NOT NULL AS p${i}`).join(", ")}`, tables.map((x) => x.text))).rows[0] as
      | Record<string, unknown>
      | undefined;
    return tables.map((_, i) => row?.[`p${i}`] === true);
  };
  const budget = new AuditReadBudget();
  /**
   * The rows of `select` (its text columns bounded with `boundedColumn`; typed columns are bounded by their
   * type) in `order`: first counted, with the bytes `spent` says they take (over the query as `q`), against
   * the reader's budget, then read.
   */
  const read = async <R>(what: string, select: string, spent: string, order: string, params: unknown[]): Promise<R[]> => {
    const total = (await client.query(`SELECT count(*)::text AS n, coalesce(sum(${spent}), 0)::text AS b FROM (${select}) q`, params)).rows[0] as { n: string; b: string };
    const limit = budget.spend(what, Number(total.n), Number(total.b));
    return (await client.query(`${select} ORDER BY ${order} LIMIT ${limit}`, params)).rows as R[];
  };
  return {
    label: `postgres:${schema}`,
    // A store name past the bound is left out: nothing of it can be asked for by name.
    stores: async () => {
      const names = [t.records, t.handles, t.sessions, t.spans].map((x) => x.text);
      const present = (await client.query("SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NOT NULL", [names])).rows.map((r: { t: string }) => r.t);
      const union = [...present, t.audit.text].map((x) => `SELECT CASE WHEN octet_length(store) <= ${MAX_AUDIT_FIELD_BYTES} THEN store END AS store FROM ${x}`).join(" UNION ");
      return (await read<{ store: string }>("the list of stores", `SELECT u.store AS store FROM (${union}) u WHERE u.store IS NOT NULL`, "octet_length(q.store)", "u.store", []))
        .map((r) => r.store);
    },
    // Counts and seqs are bigints: read as text and converted here (an int4 cast fails past 2^31 − 1).
    // Grouped by the bounded names and their lengths: a name past the bound is never read, even to group it.
    sessions: async () =>
      (await read<ChainRow>(
        "the list of audit chains",
        `SELECT * FROM (SELECT ${boundedColumn("store", "store")}, ${boundedColumn("session", "session")}, count(*)::text AS n FROM ${t.audit.text} GROUP BY 1, 2, 3, 4) g`,
        `${spentBytes("store")} + ${spentBytes("session")}`, "(g.store IS NULL), g.store, (g.session IS NULL), g.session, g.store_bytes, g.session_bytes", [],
      )).map(chainCount),
    // PostgreSQL answers octet_length() of a text from its header (a long one's TOAST pointer), without
    // fetching the value: a record past the bound never leaves the server, nor does any other text past its own.
    rows: async (store, session) =>
      (await read<AuditRowRead & { seq: string }>(
        `the audit chain of session ${session} in store ${store}`,
        `SELECT seq::text AS seq, ${boundedColumn("status", "status")}, ${boundedColumn("hash", "hash")}, octet_length(record) AS bytes,
                CASE WHEN octet_length(record) <= ${MAX_AUDIT_RECORD_BYTES} THEN record END AS record
           FROM ${t.audit.text} a WHERE store = $1 AND session = $2`,
        `${spentBytes("status")} + ${spentBytes("hash")} + (CASE WHEN q.bytes > ${MAX_AUDIT_RECORD_BYTES} THEN 0 ELSE coalesce(q.bytes, 0) END)`,
        "a.seq", [store, session],
      )).map((r) => auditRow({ ...r, seq: Number(r.seq) })),
    counters: async (store, session) => {
      const [sessions, spans] = await exists(t.sessions, t.spans);
      if (sessions !== true) return null;
      const row = (await client.query(`SELECT next_span::bigint::text AS next_span, lossy_used::bigint::text AS lossy_used FROM ${t.sessions.text} WHERE store = $1 AND session = $2`, [store, session])).rows[0] as
        | { next_span: string; lossy_used: string }
        | undefined;
      const max = spans === true
        ? Number((await client.query(`SELECT coalesce(max(ordinal), 0)::text AS n FROM ${t.spans.text} WHERE store = $1 AND session = $2`, [store, session])).rows[0]?.n ?? 0)
        : 0;
      return {
        table: `${schema}.sessions`, lossyUsed: row === undefined ? null : Number(row.lossy_used),
        nextSpan: row === undefined ? null : Number(row.next_span), registered: max,
      };
    },
    registry: async (store, session, content): Promise<AuditSpan[]> => {
      const [spans] = await exists(t.spans);
      if (spans !== true) return [];
      const text = ["span_id", "kind", "backing"];
      return (await read<SpanRow>(
        `the span registry of session ${session} in store ${store}`,
        `SELECT s.ordinal::text AS ordinal, ${text.map((c) => boundedColumn(`s.${c}`, c)).join(", ")}${content ? `, ${contentColumn("s.replacement", "replacement")}` : ""}
           FROM ${t.spans.text} s WHERE s.store = $1 AND s.session = $2`,
        [...text.map((c) => spentBytes(c)), ...(content ? [spentBytes("replacement", MAX_AUDIT_RECORD_BYTES, AUDIT_CONTENT_BYTES)] : [])].join(" + "),
        "s.ordinal", [store, session],
      )).map((r) => auditSpan(r, content));
    },
    copies: async (session, content): Promise<AuditCopy[]> => {
      const text = ["store", "span_id", "handle"];
      return (await read<CopyRow>(
        `the copies of session ${session}`,
        `SELECT ${text.map((c) => boundedColumn(`r.${c}`, c)).join(", ")}, r.created_at::text AS created_at, r.expired_at::text AS expired_at, r.held,
                r.held_until::text AS held_until${content ? `, ${contentColumn("r.text", "text")}` : ""}
           FROM ${t.records.text} r WHERE r.session = $1`,
        [...text.map((c) => spentBytes(c)), ...(content ? [spentBytes("text", MAX_AUDIT_RECORD_BYTES, AUDIT_CONTENT_BYTES)] : [])].join(" + "),
        "r.store, r.created_at", [session],
      )).map((r) => auditCopy(r, content));
    },
    close: async () => {
      await client.query("ROLLBACK").catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

/**
 * A text column read with content: the whole when it is at most `AUDIT_CONTENT_BYTES`, else its first
 * `AUDIT_CONTENT_CHARS` characters (at most as many bytes: a character is at most four), none of it past
 * `MAX_AUDIT_RECORD_BYTES`; its length beside it.
 */
function contentColumn(expr: string, as: string): string {
  return `CASE WHEN octet_length(${expr}) <= ${AUDIT_CONTENT_BYTES} THEN ${expr} WHEN octet_length(${expr}) <= ${MAX_AUDIT_RECORD_BYTES} THEN left(${expr}, ${AUDIT_CONTENT_CHARS}) END AS ${as},
          octet_length(${expr}) AS ${as}_bytes`;
}
