/** The PostgreSQL store's schema: its migrations, and how to read which version a database is at. */
import pg from "pg";
import type { Driver } from "./driver.js";
import { sql, tablesOf, type Tables } from "./sql.js";

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = 7;

function migrations(t: Tables): ReadonlyArray<{ version: number; statements: readonly string[] }> {
  return [
    {
      version: 1,
      statements: [
        // Times are the store clock's milliseconds (injectable, as in the other adapters), not server time.
        `CREATE TABLE IF NOT EXISTS ${t.records.text} (
          store      text    NOT NULL,
          session    text    NOT NULL,
          span_id    text    NOT NULL,
          handle     text    NOT NULL,
          kind       text    NOT NULL,
          text       text,
          hash       text    NOT NULL,
          created_at bigint  NOT NULL,
          expired_at bigint,
          held       boolean NOT NULL DEFAULT false,
          held_until bigint,
          PRIMARY KEY (store, session, span_id),
          UNIQUE (store, session, handle)
        )`,
        `CREATE INDEX IF NOT EXISTS records_age ON ${t.records.text} (store, created_at) WHERE text IS NOT NULL`,
        // next is the last handle number minted for the session.
        `CREATE TABLE IF NOT EXISTS ${t.handles.text} (
          store   text   NOT NULL,
          session text   NOT NULL,
          next    bigint NOT NULL,
          PRIMARY KEY (store, session)
        )`,
        // The chain head is the row every writer of a session's audit chain locks, so two writers can
        // never both append record N, even when the chain is still empty.
        `CREATE TABLE IF NOT EXISTS ${t.heads.text} (
          store   text   NOT NULL,
          session text   NOT NULL,
          seq     bigint NOT NULL,
          hash    text   NOT NULL,
          PRIMARY KEY (store, session)
        )`,
        // The record is kept as the exact JSON text that was hashed; jsonb would refuse some untrusted
        // directive text (lone surrogate escapes) that the audit log must still accept.
        `CREATE TABLE IF NOT EXISTS ${t.audit.text} (
          store     text   NOT NULL,
          session   text   NOT NULL,
          seq       bigint NOT NULL,
          at        bigint NOT NULL,
          op        text,
          status    text   NOT NULL,
          span_id   text,
          hash      text   NOT NULL,
          prev_hash text   NOT NULL,
          record    text   NOT NULL,
          PRIMARY KEY (store, session, seq)
        )`,
        `CREATE INDEX IF NOT EXISTS audit_lossy ON ${t.audit.text} (store, session) WHERE status = 'lossy'`,
      ],
    },
    {
      version: 2,
      statements: [
        // A search lists the session's rotated-out copies (possible holders it cannot read) without a scan.
        `CREATE INDEX IF NOT EXISTS records_gone ON ${t.records.text} (store, session) WHERE text IS NULL`,
        // Search: a trigram index over the live copies, so `text LIKE '%literal%'` is an index lookup.
        // pg_trgm ships with PostgreSQL's contrib and is a trusted extension (a database owner may create
        // it); where it is missing or may not be created, no index is made and search scans, which is
        // slower and equally correct. An exception block keeps a refused CREATE EXTENSION from aborting
        // the migration.
        `DO $pruneguard$
        DECLARE ext_schema text;
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')
             AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
            BEGIN
              CREATE EXTENSION IF NOT EXISTS pg_trgm;
            EXCEPTION WHEN OTHERS THEN
              NULL;
            END;
          END IF;
          SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
          IF ext_schema IS NOT NULL THEN
            EXECUTE format('CREATE INDEX IF NOT EXISTS records_text_trgm ON %s USING gin (text %I.gin_trgm_ops) WHERE text IS NOT NULL',
              ${pg.escapeLiteral(t.records.text)}, ext_schema);
          END IF;
        END
        $pruneguard$`,
      ],
    },
    {
      version: 3,
      statements: [
        // A session's counters, kept by its home store: the last span id minted (so processes sharing or
        // resuming a session never reuse one) and the lossy budget spent (commitments plus reservations).
        `CREATE TABLE IF NOT EXISTS ${t.sessions.text} (
          store      text   NOT NULL,
          session    text   NOT NULL,
          next_span  bigint NOT NULL,
          lossy_used bigint NOT NULL,
          PRIMARY KEY (store, session)
        )`,
        // Every span appended to a session, in position order, without its bytes: what a restarted
        // process needs to put each back in its place or say it was lost.
        `CREATE TABLE IF NOT EXISTS ${t.spans.text} (
          store       text   NOT NULL,
          session     text   NOT NULL,
          ordinal     bigint NOT NULL,
          span_id     text   NOT NULL,
          kind        text   NOT NULL,
          hash        text   NOT NULL,
          grp         text,
          message     text,
          backing     text,
          replacement text,
          PRIMARY KEY (store, session, ordinal),
          UNIQUE (store, session, span_id)
        )`,
      ],
    },
    {
      version: 4,
      statements: [
        // The session's start, recorded by its first window: the horizon (`limits.maxLengthMs`) counts from
        // it in every window of the session, resumed or not. Sessions begun before stay empty until asked.
        `ALTER TABLE ${t.sessions.text} ADD COLUMN IF NOT EXISTS started_at bigint`,
      ],
    },
    {
      version: 5,
      statements: [
        // A token each registration writes with its span, so a registration whose reply was lost (the
        // connection dropped after the message was sent) can be read back exactly: it committed if, and
        // only if, a span of the session carries its token. Rows registered before stay NULL.
        `ALTER TABLE ${t.spans.text} ADD COLUMN IF NOT EXISTS token text`,
        // Recall of a span the window does not hold (an unknown id above all) looks up the session's
        // committed prunes of that span id by index instead of reading the session's whole chain.
        `CREATE INDEX IF NOT EXISTS audit_span ON ${t.audit.text} (store, session, span_id) WHERE status IN ('reversible', 'lossy')`,
      ],
    },
    {
      version: 6,
      statements: [
        // Search reads the copies a window pruned by handle (the unique (store, session, handle) index), so
        // neither of version 2's search indexes is read by any query any more; the trigram index was most
        // of what a copy's write cost the server (figure 13: ~80 % of the records table's bytes, most of
        // the pages an append dirtied). Dropped; `pg_trgm` itself is left to the database's owner.
        `DROP INDEX IF EXISTS ${pg.escapeIdentifier(t.schema)}.records_text_trgm`,
        `DROP INDEX IF EXISTS ${pg.escapeIdentifier(t.schema)}.records_gone`,
      ],
    },
    {
      version: 7,
      statements: [
        // Recall of a span the window does not hold reads every prune decision of that span: the committed
        // ones and the `kept` records of those not applied after all (`lapse.ts`). Version 5's index left the
        // `kept` records out, so they were read in a second, unindexed statement over the session's chain.
        // One partial index of all three, in one statement; the index a prune writes is the same size.
        `CREATE INDEX IF NOT EXISTS audit_decisions ON ${t.audit.text} (store, session, span_id) WHERE status IN ('reversible', 'lossy', 'kept')`,
        `DROP INDEX IF EXISTS ${pg.escapeIdentifier(t.schema)}.audit_span`,
      ],
    },
  ];
}

/**
 * Creates or upgrades the store's schema: idempotent, safe to run from several machines at once (an
 * advisory lock serialises concurrent runs), and refuses a schema newer than this code.
 */
export async function migrateWith(driver: Driver, schema: string): Promise<{ from: number; to: number }> {
  const t = tablesOf(schema);
  return driver.transaction(null, async (tx) => {
    const [, , , current] = await tx.batch([
      sql`SELECT pg_advisory_xact_lock(hashtext(${`pruneguard:migrate:${schema}`}))`,
      `CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`,
      `CREATE TABLE IF NOT EXISTS ${t.version.text} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      `SELECT coalesce(max(version), 0) AS v FROM ${t.version.text}`,
    ]);
    const from = Number(current?.[0]?.["v"] ?? 0);
    if (from > SCHEMA_VERSION) {
      throw new Error(`schema ${schema} is at version ${from}, newer than this pruneguard (${SCHEMA_VERSION}); upgrade pruneguard`);
    }
    const pending = migrations(t).filter((m) => m.version > from);
    await tx.commit(pending.flatMap((m) => [...m.statements, sql`INSERT INTO ${t.version} (version) VALUES (${m.version}) ON CONFLICT DO NOTHING`]));
    return { from, to: Math.max(from, ...pending.map((m) => m.version)) };
  });
}

/** The schema's version, or 0 when it was never migrated. */
export async function schemaVersion(driver: Driver, schema: string): Promise<number> {
  const t = tablesOf(schema);
  const [rows] = await driver.script([
    sql`SELECT CASE WHEN to_regclass(${`${pg.escapeIdentifier(schema)}.schema_version`}) IS NULL THEN 0 ELSE 1 END AS present`,
  ], null);
  if (Number(rows?.[0]?.["present"] ?? 0) === 0) return 0;
  const [v] = await driver.script([`SELECT coalesce(max(version), 0) AS v FROM ${t.version.text}`], null);
  return Number(v?.[0]?.["v"] ?? 0);
}
