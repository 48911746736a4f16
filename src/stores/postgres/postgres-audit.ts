/**
 * A PostgreSQL store's schema read the way `pruneguard audit` needs it: in one `READ ONLY` transaction on
 * one connection of its own (not a pool: the audit is one short read), in every schema version a store
 * may still be at (tables a schema before version 3 lacks are read as empty), never migrating it.
 */
import pg from "pg";
import { errorMessage } from "../../errors.js";
import { AuditReadError, MAX_AUDIT_RECORD_BYTES, type AuditChainCount, type AuditCopy, type AuditReader, type AuditRow, type AuditSpan } from "../audit-reader.js";
import { SCHEMA_VERSION } from "./schema.js";
import { tablesOf, type Tables } from "./sql.js";

/** A copy's row as PostgreSQL returns it (bigints as text). */
interface CopyRow {
  readonly store: string;
  readonly span_id: string;
  readonly handle: string;
  readonly created_at: string;
  readonly expired_at: string | null;
  readonly held: boolean;
  readonly held_until: string | null;
  readonly text?: string | null;
}

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
  return {
    label: `postgres:${schema}`,
    stores: async () => {
      const names = [t.records, t.handles, t.sessions, t.spans].map((x) => x.text);
      const present = (await client.query("SELECT t FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NOT NULL", [names])).rows.map((r: { t: string }) => r.t);
      const union = [...present, t.audit.text].map((x) => `SELECT store FROM ${x}`).join(" UNION ");
      return (await client.query(`SELECT store FROM (${union}) s ORDER BY store`)).rows.map((r: { store: string }) => r.store);
    },
    // Counts and seqs are bigints: read as text and converted here (an int4 cast fails past 2^31 − 1).
    sessions: async () =>
      ((await client.query(`SELECT store, session, count(*)::text AS n FROM ${t.audit.text} GROUP BY store, session ORDER BY store, session`)).rows as Array<{ store: string; session: string; n: string }>)
        .map((r): AuditChainCount => ({ store: r.store, session: r.session, n: Number(r.n) })),
    // PostgreSQL answers octet_length() of a text from its header (a long one's TOAST pointer), without
    // fetching the value: a record past the bound never leaves the server.
    rows: async (store, session) =>
      ((await client.query(
        `SELECT seq::text AS seq, status, hash, octet_length(record) AS bytes, CASE WHEN octet_length(record) <= $3 THEN record END AS record
           FROM ${t.audit.text} WHERE store = $1 AND session = $2 ORDER BY seq`,
        [store, session, MAX_AUDIT_RECORD_BYTES],
      )).rows as Array<Omit<AuditRow, "seq"> & { seq: string }>)
        .map((r): AuditRow => ({ ...r, seq: Number(r.seq) })),
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
      const rows = (await client.query(`SELECT ordinal::text AS ordinal, span_id, kind, backing${content ? ", replacement" : ""} FROM ${t.spans.text} WHERE store = $1 AND session = $2 ORDER BY ordinal`, [store, session])).rows as
        Array<{ ordinal: string; span_id: string; kind: string; backing: string | null; replacement?: string | null }>;
      return rows.map((r) => ({ ordinal: Number(r.ordinal), spanId: r.span_id, kind: r.kind, backing: r.backing, ...(content ? { replacement: r.replacement ?? null } : {}) }));
    },
    copies: async (session, content): Promise<AuditCopy[]> => {
      const rows = (await client.query(
        `SELECT store, span_id, handle, created_at::text AS created_at, expired_at::text AS expired_at, held, held_until::text AS held_until${content ? ", text" : ""} FROM ${t.records.text} WHERE session = $1 ORDER BY store, created_at`,
        [session],
      )).rows as CopyRow[];
      return rows.map((r) => ({
        store: r.store, spanId: r.span_id, handle: r.handle, createdAt: Number(r.created_at), expiredAt: r.expired_at === null ? null : Number(r.expired_at),
        held: r.held === true, heldUntil: r.held_until === null ? null : Number(r.held_until), ...(content ? { text: r.text ?? null } : {}),
      }));
    },
    close: async () => {
      await client.query("ROLLBACK").catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}
