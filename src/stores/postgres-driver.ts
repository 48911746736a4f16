/**
 * The PostgreSQL plumbing under `PostgresStore`: a literal-escaping SQL builder, one driver interface over
 * a `pg.Pool` and an in-process PGlite, error classification, and the schema migration.
 *
 * Every statement is sent over the simple query protocol as literal-escaped text. That is what lets a
 * prune send "BEGIN; lock; lock" as one message and "write; write; COMMIT" as another (the extended
 * protocol takes one statement per round trip), and it lets `SET LOCAL statement_timeout` ride in the same
 * message as the statement it limits, on a shared pool whose configuration this store does not own.
 */
import pg from "pg";
import type { Pool, PoolClient, PoolConfig } from "pg";
import { errorMessage, StoreError } from "../errors.js";

// ---------------------------------------------------------------------------------------------------
// SQL text

/** SQL that is spliced in verbatim. Only this module and the store mint it, never from input. */
export class RawSql {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export type SqlValue = string | number | boolean | null | RawSql | readonly SqlValue[];

/** One value as a SQL literal. Numbers must be safe integers: every number the store writes is one. */
export function literal(value: SqlValue): string {
  if (value instanceof RawSql) return value.text;
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new RangeError(`SQL literal: ${value} is not a safe integer`);
    return String(value);
  }
  if (typeof value === "string") {
    // PostgreSQL text cannot hold NUL, and a NUL would end the query message early.
    if (value.includes("\0")) throw new RangeError("PostgreSQL text cannot hold a NUL character");
    // escapeLiteral doubles quotes and backslashes and uses E'' when needed, so the result does not depend
    // on the server's standard_conforming_strings.
    return pg.escapeLiteral(value);
  }
  if (value.length === 0) throw new RangeError("SQL literal: empty list");
  return value.map(literal).join(", ");
}

/** A tagged template whose every interpolation becomes a literal (or raw SQL when it is a `RawSql`). */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): string {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += literal(v) + strings[i + 1]!;
  });
  return out;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Schema names are restricted so that they never need thinking about in logs, URLs or `search_path`. */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new RangeError(`PostgreSQL schema must match ${SCHEMA_NAME.source}, got ${JSON.stringify(schema)}`);
  }
  return schema;
}

/** The schema-qualified names of the store's tables. */
export interface Tables {
  readonly schema: string;
  readonly records: RawSql;
  readonly handles: RawSql;
  readonly heads: RawSql;
  readonly audit: RawSql;
  readonly version: RawSql;
}

export function tablesOf(schema: string): Tables {
  const q = pg.escapeIdentifier(checkSchemaName(schema));
  return {
    schema,
    records: new RawSql(`${q}.records`),
    handles: new RawSql(`${q}.handles`),
    heads: new RawSql(`${q}.audit_heads`),
    audit: new RawSql(`${q}.audit`),
    version: new RawSql(`${q}.schema_version`),
  };
}

// ---------------------------------------------------------------------------------------------------
// Drivers

export type Row = Record<string, unknown>;

/** What the store needs from an in-process PostgreSQL such as PGlite (`query`, `exec`, `transaction`). */
export interface PgQueryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  exec(sql: string): Promise<Array<{ rows: unknown[] }>>;
  transaction<T>(fn: (tx: { exec(sql: string): Promise<Array<{ rows: unknown[] }>> }) => Promise<T>): Promise<T>;
}

/** A transaction in progress on one connection. */
export interface TxSession {
  /** Sends the statements as one message (one round trip); the first call also opens the transaction. */
  batch(statements: readonly string[]): Promise<Row[][]>;
  /** Sends the statements and COMMIT as one message. */
  commit(statements: readonly string[]): Promise<Row[][]>;
}

/** Counters the benchmark and the tests read. */
export interface DriverStats {
  /** Messages sent to the server (each one network round trip on `pg`; one `exec` call on PGlite). */
  roundTrips: number;
  /** Transactions retried after a serialisation failure, deadlock or unique-key race. */
  retries: number;
}

export interface Driver {
  readonly stats: DriverStats;
  /** The statements as one message, in one implicit transaction (all or nothing). One round trip. */
  script(statements: readonly string[], timeoutMs: number | null): Promise<Row[][]>;
  /** Runs `fn` in an explicit transaction on one connection; rolls back and rethrows when it throws. */
  transaction<T>(timeoutMs: number | null, fn: (tx: TxSession) => Promise<T>): Promise<T>;
}

function timeoutStatement(timeoutMs: number | null): string[] {
  return timeoutMs === null ? [] : [`SET LOCAL statement_timeout = ${literal(Math.max(1, Math.floor(timeoutMs)))}`];
}

function rowsOf(result: unknown): Row[][] {
  const list = Array.isArray(result) ? result : [result];
  return list.map((r) => ((r as { rows?: unknown[] }).rows ?? []) as Row[]);
}

const wireErrors = new WeakSet<object>();

/** Marks an error as coming from the server or the connection (not from the caller's own code). */
function wire(err: unknown): unknown {
  if (err !== null && typeof err === "object") wireErrors.add(err);
  return err;
}

/** The error came from the server or the connection, so it is the store's failure, not the caller's. */
export function isWireError(err: unknown): boolean {
  return err !== null && typeof err === "object" && wireErrors.has(err);
}

/** SQLSTATEs after which the whole transaction can safely run again: nothing of it was committed. */
const RETRYABLE = new Set(["40001", "40P01", "23505"]);

export function isRetryable(err: unknown): boolean {
  const code = sqlState(err);
  return code !== null && RETRYABLE.has(code);
}

export function sqlState(err: unknown): string | null {
  const e = err instanceof StoreError ? err.cause : err;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

/** A connection that must not go back to the pool: it is gone, or in a state nobody can vouch for. */
function isConnectionError(err: unknown): boolean {
  const code = sqlState(err);
  if (code === null) return true;
  return code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03";
}

/** Wraps a driver failure so callers see a `StoreError` that says what to do, with the cause attached. */
export function storeError(store: string, what: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const code = sqlState(err);
  let message = errorMessage(err) || String((err as { code?: unknown } | null)?.code ?? "unknown error");
  if (code === "42P01" || code === "3F000") message += " (is the schema migrated? run `pruneguard migrate`)";
  else if (code === "57014") message = `statement timeout: ${message}`;
  else if (code === null && (err as { code?: unknown } | null)?.code === "ECONNREFUSED") message = `server unreachable: ${message}`;
  return new StoreError(store, `${what} failed: ${message}${code ? ` [${code}]` : ""}`, { cause: err });
}

/** A driver over a `pg.Pool`: each transaction checks out one client and gives it back (or destroys it). */
export class PoolDriver implements Driver {
  readonly stats: DriverStats = { roundTrips: 0, retries: 0 };
  readonly pool: Pool;
  constructor(pool: Pool) {
    this.pool = pool;
  }

  async script(statements: readonly string[], timeoutMs: number | null): Promise<Row[][]> {
    const head = timeoutStatement(timeoutMs);
    this.stats.roundTrips++;
    // pool.query releases the client with the error, so a broken connection is destroyed, not reused.
    const result = await this.pool.query([...head, ...statements].join(";\n")).catch((err: unknown) => {
      throw wire(err);
    });
    return rowsOf(result).slice(head.length);
  }

  async transaction<T>(timeoutMs: number | null, fn: (tx: TxSession) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect().catch((err: unknown) => {
      throw wire(err);
    });
    let broken: unknown = null;
    // A checked-out client that loses its connection between messages emits 'error'; unheard, that
    // event would crash the process.
    const onError = (err: unknown) => {
      broken = err;
    };
    client.on("error", onError);
    let opened = false;
    let finished = false;
    const send = async (statements: readonly string[], commit: boolean): Promise<Row[][]> => {
      if (finished) throw new Error("transaction already committed");
      const head = opened ? [] : ["BEGIN", ...timeoutStatement(timeoutMs)];
      opened = true;
      finished = commit;
      const all = [...head, ...statements, ...(commit ? ["COMMIT"] : [])];
      this.stats.roundTrips++;
      let result: unknown;
      try {
        result = await client.query(all.join(";\n"));
      } catch (err) {
        if (isConnectionError(err)) broken = err;
        throw wire(err);
      }
      return rowsOf(result).slice(head.length, head.length + statements.length);
    };
    try {
      const out = await fn({ batch: (s) => send(s, false), commit: (s) => send(s, true) });
      // A body that returns without committing meant nothing to be kept; never hand back an open transaction.
      if (opened && !finished) throw new Error("transaction body returned without committing");
      return out;
    } catch (err) {
      if (broken === null && opened) {
        try {
          this.stats.roundTrips++;
          await client.query("ROLLBACK");
        } catch (rollbackErr) {
          broken = rollbackErr;
        }
      }
      throw err;
    } finally {
      client.removeListener("error", onError);
      // release(err) destroys the client, so the pool opens a fresh connection for the next call.
      client.release(broken === null ? undefined : broken instanceof Error ? broken : new Error(String(broken)));
    }
  }
}

/** A driver over PGlite. Its `transaction` holds PGlite's own lock, so no other caller interleaves. */
export class QueryableDriver implements Driver {
  readonly stats: DriverStats = { roundTrips: 0, retries: 0 };
  readonly db: PgQueryable;
  constructor(db: PgQueryable) {
    this.db = db;
  }

  async script(statements: readonly string[]): Promise<Row[][]> {
    this.stats.roundTrips++;
    // One exec is one implicit transaction, like one simple-protocol message on a server.
    return rowsOf(await this.db.exec(statements.join(";\n")).catch((err: unknown) => {
      throw wire(err);
    }));
  }

  async transaction<T>(_timeoutMs: number | null, fn: (tx: TxSession) => Promise<T>): Promise<T> {
    // In-process: no statement runs longer than the caller's own await, so there is no timeout to set.
    let own: unknown = undefined;
    try {
      return await this.db.transaction(async (tx) => {
        const send = async (statements: readonly string[]) => {
          if (statements.length === 0) return [];
          this.stats.roundTrips++;
          return rowsOf(await tx.exec(statements.join(";\n")).catch((err: unknown) => {
            throw wire(err);
          }));
        };
        try {
          return await fn({ batch: send, commit: send });
        } catch (err) {
          own = err;
          throw err;
        }
      });
    } catch (err) {
      // BEGIN, COMMIT and ROLLBACK are PGlite's own; their failures are the store's too.
      throw err === own ? err : wire(err);
    }
  }
}

/** Tells a `pg.Pool` from an in-process queryable (PGlite has `exec` and no `connect`). */
export function isQueryable(x: Pool | PgQueryable): x is PgQueryable {
  return typeof (x as PgQueryable).exec === "function" && typeof (x as Partial<Pool>).connect !== "function";
}

export function driverFor(x: Pool | PgQueryable): Driver {
  return isQueryable(x) ? new QueryableDriver(x) : new PoolDriver(x);
}

/** Options of a pool the store creates for itself. */
export interface PoolOptions {
  readonly url: string;
  readonly max?: number;
  readonly statementTimeoutMs?: number | null;
  readonly connectionTimeoutMs?: number;
}

/**
 * A `pg.Pool` with the settings a store wants: a bounded connect timeout (so "server down" fails a prune
 * in seconds, not minutes), TCP keep-alive, and an `error` listener so an idle connection dropped by the
 * server is discarded instead of crashing the process. Share one pool between the stores of a process.
 */
export function createPool(options: PoolOptions): Pool {
  const config: PoolConfig = {
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
    keepAlive: true,
    application_name: "pruneguard",
  };
  if (options.statementTimeoutMs !== undefined && options.statementTimeoutMs !== null) {
    config.statement_timeout = Math.max(1, Math.floor(options.statementTimeoutMs));
  }
  const pool = new pg.Pool(config);
  pool.on("error", () => {
    // The pool has already removed the client; the next checkout opens a new connection.
  });
  return pool;
}

// ---------------------------------------------------------------------------------------------------
// Schema

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = 1;

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
