/**
 * One driver interface over a `pg.Pool` and an in-process PGlite, with error classification: which
 * failures are the store's (the server or the connection), which can be retried, and what to tell the
 * operator.
 */
import pg from "pg";
import type { Pool, PoolClient, PoolConfig } from "pg";
import { errorMessage, StoreError } from "../../errors.js";
import { literal } from "./sql.js";

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
  /**
   * Before reading back what a write whose answer was lost (`err`, commit-unknown) did: makes sure the
   * server session that got its message can do nothing more (`PoolDriver.fence`). Absent: nothing to fence.
   */
  fence?(err: unknown): Promise<void>;
}

/**
 * How long `fence` waits for the server session of a lost answer to end once told to. Past it, reading
 * back could not be trusted: the caller's `OutcomeUnknownError` asks again later.
 */
export const FENCE_MS = 10_000;

/** The largest `statement_timeout` PostgreSQL accepts, in milliseconds (an int4: ~24.8 days). */
export const MAX_STATEMENT_TIMEOUT_MS = 2_147_483_647;

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

const commitUnknown = new WeakSet<object>();
/** The server process (backend) whose connection a commit-unknown error broke, where the client knew it. */
const backendOf = new WeakMap<object, number>();

/** Marks `err` commit-unknown, remembering which backend had the message. */
function markCommitUnknown(err: unknown, client: PoolClient): void {
  if (err === null || typeof err !== "object") return;
  commitUnknown.add(err);
  const pid = (client as { processID?: unknown }).processID;
  if (typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0) backendOf.set(err, pid);
}

/**
 * The connection broke while the message carrying COMMIT was out — an explicit transaction's last message,
 * or a script, which is one implicit transaction: the server may or may not have committed, and only
 * reading back can tell.
 */
export function isCommitUnknown(err: unknown): boolean {
  const e = err instanceof StoreError ? err.cause : err;
  return e !== null && typeof e === "object" && commitUnknown.has(e);
}

/** SQLSTATEs after which the whole transaction can safely run again: nothing of it was committed. */
const RETRYABLE = new Set(["40001", "40P01", "23505"]);

export function isRetryable(err: unknown): boolean {
  const code = sqlState(err);
  return code !== null && RETRYABLE.has(code);
}

export function sqlState(err: unknown): string | null {
  const e = (err instanceof StoreError ? err.cause : err) as { code?: unknown; syscall?: unknown; errno?: unknown } | null | undefined;
  // Node's system errors have five-letter codes too (EPIPE, EBADF, EPERM): a socket's failure, not the server's.
  if (e === null || e === undefined || typeof e.syscall === "string" || typeof e.errno === "number") return null;
  return typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : null;
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

/** Pools whose new connections already carry the listener `hearClientErrors` adds. */
const heard = new WeakSet<Pool>();

/**
 * Gives every connection the pool opens an `error` listener of its own, once per pool. pg-pool hands a new
 * connection over by removing its idle listener and settling the checkout's promise; the caller can only
 * listen a microtask later. A backend terminated as it started sends its FATAL in the same read as the
 * ReadyForQuery that finished the connect, so the client emits `error` in between with nobody listening,
 * and an unheard `error` event ends the process (figure 13's fault run found it). The client is then not
 * queryable: the query that follows fails, and the failed connection is destroyed on release.
 */
export function hearClientErrors(pool: Pool): void {
  if (heard.has(pool)) return;
  heard.add(pool);
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
}

/** A driver over a `pg.Pool`: each transaction checks out one client and gives it back (or destroys it). */
export class PoolDriver implements Driver {
  readonly stats: DriverStats = { roundTrips: 0, retries: 0 };
  readonly pool: Pool;
  constructor(pool: Pool) {
    this.pool = pool;
    hearClientErrors(pool);
  }

  async script(statements: readonly string[], timeoutMs: number | null): Promise<Row[][]> {
    const head = timeoutStatement(timeoutMs);
    this.stats.roundTrips++;
    // What pool.query does, with one difference: a connection that breaks once the message is out marks
    // the error commit-unknown (the message is one implicit transaction, and it may have run).
    const client: PoolClient = await this.pool.connect().catch((err: unknown) => {
      throw wire(err);
    });
    let failed: unknown = null;
    const onError = (err: unknown) => {
      failed ??= err;
    };
    client.on("error", onError);
    try {
      return rowsOf(await client.query([...head, ...statements].join(";\n"))).slice(head.length);
    } catch (err) {
      failed ??= err;
      if (isConnectionError(err)) markCommitUnknown(err, client);
      throw wire(err);
    } finally {
      client.removeListener("error", onError);
      // Released with the error, as pool.query does, so a connection that failed is destroyed, not reused.
      client.release(failed === null ? undefined : failed instanceof Error ? failed : new Error(String(failed)));
    }
  }

  fence(err: unknown): Promise<void> {
    return fenceBackend(this.pool, this.stats, err);
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
        if (isConnectionError(err)) {
          broken = err;
          if (commit) markCommitUnknown(err, client);
        }
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

/**
 * The fence a read-back needs: a message whose answer was lost may not have reached the server yet (still in
 * a socket buffer, or in flight on a slow network), so a read-back that finds nothing could be overtaken by it.
 * The backend that had the connection is told to end (`pg_terminate_backend`, allowed for a role's own
 * sessions) and the fence waits until the server lists it no more (`pg_stat_activity`): from then on nothing
 * it was sent can run, and a read-back is the truth. Where the role may not end it, the wait alone fences (the
 * server ends the session once it reads the broken connection). No backend known: nothing to fence.
 */
async function fenceBackend(pool: Pool, stats: DriverStats, err: unknown): Promise<void> {
  const e = err instanceof StoreError ? err.cause : err;
  const pid = e !== null && typeof e === "object" ? backendOf.get(e) : undefined;
  if (pid === undefined) return;
  const deadline = performance.now() + FENCE_MS;
  stats.roundTrips++;
  try {
    // The session asking is the one named: a server that serves every connection from one backend (PGlite's
    // socket server) has no other session to end, and one that reused the number ended the old one long ago.
    const r = await pool.query("SELECT pg_backend_pid() = $1 AS self, CASE WHEN pg_backend_pid() <> $1 THEN pg_terminate_backend($1) END AS ended", [pid]);
    if ((r.rows[0] as { self?: unknown } | undefined)?.self === true) return;
  } catch (termErr) {
    if (sqlState(termErr) !== "42501") throw wire(termErr);
  }
  for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
    stats.roundTrips++;
    const r = await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND pid <> pg_backend_pid()", [pid]).catch((qErr: unknown) => {
      throw wire(qErr);
    });
    if (r.rowCount === 0) return;
    if (performance.now() > deadline) throw new Error(`the server session that had the message (backend ${pid}) is still running after ${FENCE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait));
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
    const ms = options.statementTimeoutMs;
    if (!(Number.isFinite(ms) && ms > 0 && ms <= MAX_STATEMENT_TIMEOUT_MS)) {
      throw new RangeError(`statementTimeoutMs must be a positive number of milliseconds up to ${MAX_STATEMENT_TIMEOUT_MS} (PostgreSQL's limit), got ${ms}`);
    }
    config.statement_timeout = Math.max(1, Math.floor(ms));
  }
  const pool = new pg.Pool(config);
  pool.on("error", () => {
    // The pool has already removed the client; the next checkout opens a new connection.
  });
  hearClientErrors(pool);
  return pool;
}
