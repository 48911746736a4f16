/**
 * The PostgreSQL store: its options, `migrate`, and `PostgresStore` with the public methods of a
 * `BackingStore`. How each call is run, retried and read back, and the statements several of them share,
 * are in `postgres-access.ts`; the two round trips of a prune are in `postgres-prune.ts`; the span registry
 * and the session's counters (`registerSpan`, `sessionSpans`, …) are in `postgres-registry.ts`.
 */
import pg from "pg";
import type { Pool } from "pg";
import { isPruneDecision, type AuditDraft, type AuditRecord } from "../../audit.js";
import { StoreError } from "../../errors.js";
import { commitResult, lossySpent } from "../commit.js";
import { StoreBase, type StoreOptions } from "../store-options.js";
import { createPool, driverFor, MAX_STATEMENT_TIMEOUT_MS, storeError, type Driver, type DriverStats, type PgQueryable, type Row } from "./driver.js";
import { headOf, PostgresAccess, recordOf } from "./postgres-access.js";
import { prune, type Sent } from "./postgres-prune.js";
import * as registry from "./postgres-registry.js";
import { migrateWith, SCHEMA_VERSION, schemaVersion } from "./schema.js";
import { RawSql, sql, tablesOf, type Tables } from "./sql.js";
import { checkSession, copySearchAnswer, lookupAnswer, readOnly, SESSION_SCAN_COPIES, spanTaken, storeLiteral } from "../records.js";
import { PG_URL_ENV } from "./env.js";
import type {
  BackingStore, CopySearch, CopySearchRequest, LookupKey, LookupResult, PersistInput, Persisted, PruneCommit, PruneTransaction, RegisteredSpan,
  RotateReport, SpanRegistration,
} from "../store.js";

export { createPool } from "./driver.js";
export { SCHEMA_VERSION } from "./schema.js";
export type { DriverStats as PostgresStoreStats, PgQueryable, PoolOptions } from "./driver.js";

/** The environment variable a store and `pruneguard migrate` read the server URL from. */
export { PG_URL_ENV };

/** The schema the tables live in unless told otherwise. */
export const DEFAULT_SCHEMA = "pruneguard";

export interface PostgresStoreOptions extends StoreOptions {
  /**
   * A pool (or PGlite) to share with other stores and windows; the store never ends it. When absent,
   * the store creates its own pool from `url` and ends it on `close()`.
   */
  readonly pool?: Pool | PgQueryable;
  /** Server URL for a pool of the store's own. Default: `PRUNEGUARD_PG_URL`. */
  readonly url?: string;
  /** Default `"pruneguard"`. Several stores (by `name`) share one schema without seeing each other's rows. */
  readonly schema?: string;
  /**
   * Limit on each statement, set with `SET LOCAL` in the same message, so it holds on a shared pool
   * too. A prune whose locks cannot be had within it fails closed. Default: none.
   */
  readonly statementTimeoutMs?: number | null;
  /** How many times a transaction that lost a serialisation race runs again. Default 3. */
  readonly maxAttempts?: number;
}

/** Where to migrate: a pool, PGlite, or a URL (a pool is opened for the run and closed after). */
export type MigrateTarget = Pool | PgQueryable | string;

/**
 * Creates or upgrades the store's tables in `schema` (default `"pruneguard"`). Idempotent and safe to run
 * from several machines at once. Stores never migrate on their own: schema changes in a shared database
 * are an operator's decision (`pruneguard migrate`, or this function from a deploy step).
 */
export async function migrate(target: MigrateTarget, options: { readonly schema?: string } = {}): Promise<{ from: number; to: number }> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const pool = typeof target === "string" ? createPool({ url: target, max: 1 }) : target;
  try {
    return await migrateWith(driverFor(pool), schema);
  } catch (err) {
    throw storeError(`migrate:${schema}`, "migration", err);
  } finally {
    if (typeof target === "string") await (pool as Pool).end();
  }
}

/**
 * A store in a PostgreSQL database shared by many agent processes on many machines.
 *
 * Records are keyed (store, session, span id), handles are unique per (store, session), and every query
 * names the session, so one session can never read another's bytes.
 *
 * Concurrency: row locks, not SERIALIZABLE. A prune locks the records it checks (`SELECT … FOR UPDATE`,
 * in span-id order), the session's handle counter when it may mint, and the session's audit chain head,
 * in that order, then decides and writes. Two workers of one session always contend on the chain head:
 * under SERIALIZABLE that contention is a serialisation failure and a full retry (both round trips again)
 * for every loser; with locks the loser simply waits one commit. A concurrent `rotate()` waits on the
 * locked records and re-reads them after the prune commits, so it sees the hold and keeps the copy.
 * Deadlock (40P01) cannot arise from these lock orders, but is retried anyway, as is a unique-key race
 * (23505) between two writers persisting the same span id.
 *
 * Round trips: a prune is two messages — BEGIN + locks + reads, then writes + audit + COMMIT — because the
 * guard's `decide` runs in this process between them. `stats.roundTrips` counts them.
 */
/** PostgreSQL text cannot hold NUL: a session id with one is refused before any SQL is built. */
const NO_NUL = { nul: false } as const;

export class PostgresStore extends StoreBase implements BackingStore {
  readonly engine = "postgres";
  readonly schema: string;
  readonly #driver: Driver;
  readonly #t: Tables;
  readonly #timeoutMs: number | null;
  /** Runs the store's calls (retries, read-back) and builds the statements they share (postgres-access.ts). */
  readonly #access: PostgresAccess;
  /** The pool this store created and must end; `null` when it was given one. */
  readonly #ownPool: Pool | null;

  constructor(options: PostgresStoreOptions) {
    super(options);
    this.schema = options.schema ?? DEFAULT_SCHEMA;
    this.#t = tablesOf(this.schema);
    const timeout = options.statementTimeoutMs ?? null;
    if (timeout !== null && !(Number.isFinite(timeout) && timeout > 0 && timeout <= MAX_STATEMENT_TIMEOUT_MS)) {
      throw new RangeError(
        `store ${options.name}: statementTimeoutMs must be a positive number of milliseconds up to ${MAX_STATEMENT_TIMEOUT_MS} (PostgreSQL's limit, ~24.8 days; null for none), got ${timeout}`,
      );
    }
    this.#timeoutMs = timeout;
    const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
    if (options.pool !== undefined) {
      this.#ownPool = null;
      this.#driver = driverFor(options.pool);
    } else {
      const url = options.url ?? process.env[PG_URL_ENV];
      if (url === undefined || url === "") {
        throw new TypeError(`store ${options.name}: give a pool or a url, or set ${PG_URL_ENV}`);
      }
      this.#ownPool = createPool({ url, statementTimeoutMs: timeout });
      this.#driver = driverFor(this.#ownPool);
    }
    this.#access = new PostgresAccess({
      name: this.name, driver: this.#driver, t: this.#t, timeoutMs: timeout, maxAttempts, now: () => Math.floor(this.clock.now()),
    });
  }

  /**
   * Creates a store and checks, in one round trip, that the server answers and the schema is migrated to
   * this code's version — so a misconfigured worker fails at start-up, not on its first prune.
   */
  static async connect(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    try {
      const version = await schemaVersion(store.#driver, store.schema);
      if (version !== SCHEMA_VERSION) {
        throw new StoreError(
          store.name,
          version === 0
            ? `schema ${store.schema} is not migrated; run \`pruneguard migrate --schema ${store.schema}\``
            : `schema ${store.schema} is at version ${version}, this pruneguard expects ${SCHEMA_VERSION}`,
        );
      }
    } catch (err) {
      await store.close();
      throw storeError(store.name, "connect", err);
    }
    return store;
  }

  /** Round trips and retries so far (the benchmark reads these). */
  get stats(): Readonly<DriverStats> {
    return this.#driver.stats;
  }

  async persist(input: PersistInput): Promise<Persisted> {
    checkSession(this.name, input.session, NO_NUL);
    if (!this.capabilities.writable) throw readOnly(this.name);
    const { records: R, handles: H } = this.#t;
    const now = this.#access.now();
    const key = sql`store = ${this.name} AND session = ${input.session} AND span_id = ${input.spanId}`;
    const k = new RawSql(key);
    // One statement, so one round trip and atomic on its own: keep an identical live copy, refuse other
    // bytes over a live copy, revive a rotated one under its handle, or mint a handle and insert.
    const statement = sql`WITH cur AS (
        SELECT handle, created_at, text IS NULL AS gone, hash = ${input.hash} AS same FROM ${R} WHERE ${k} FOR UPDATE
      ), upd AS (
        UPDATE ${R} SET text = ${input.text}, hash = ${input.hash}, kind = ${input.kind}, created_at = ${now}, expired_at = NULL
        WHERE ${k} AND EXISTS (SELECT 1 FROM cur WHERE gone)
        RETURNING handle, created_at
      ), mint AS (
        INSERT INTO ${H} AS h (store, session, next) SELECT ${this.name}, ${input.session}, 1 WHERE NOT EXISTS (SELECT 1 FROM cur)
        ON CONFLICT (store, session) DO UPDATE SET next = h.next + 1
        RETURNING next
      ), ins AS (
        INSERT INTO ${R} (store, session, span_id, handle, kind, text, hash, created_at)
        SELECT ${this.name}, ${input.session}, ${input.spanId}, ${this.handlePrefix + "#"} || next, ${input.kind}, ${input.text}, ${input.hash}, ${now} FROM mint
        RETURNING handle, created_at
      )
      SELECT handle, created_at, same AS kept FROM cur WHERE NOT gone
      UNION ALL SELECT handle, created_at, TRUE FROM upd
      UNION ALL SELECT handle, created_at, TRUE FROM ins`;
    // Idempotent per (session, span id, hash): when the reply was lost, running it again answers what the
    // lost reply would have (the identical copy it wrote, under its handle), and never writes a second one.
    const [rows] = await this.#access.onceMore(() => this.#access.retrying("persist", () => this.#driver.script([statement], this.#timeoutMs)));
    const row = rows?.[0];
    if (!row) throw new StoreError(this.name, `persist of ${input.spanId} returned no handle`);
    if (row["kept"] !== true) throw spanTaken(this.name, input);
    return { handle: String(row["handle"]), createdAt: Number(row["created_at"]) };
  }

  /**
   * When the connection breaks while COMMIT is out, the outcome is unknown: the store reads back whether
   * its last audit record is in the chain (waiting on the chain head's lock, so a transaction the server
   * is still finishing is seen finished) and answers with the commit, or throws the original error when
   * nothing committed. If it cannot read back either, it throws `OutcomeUnknownError`, whose `resolve`
   * asks again later; it never runs the transaction a second time.
   */
  async commitPrune(txn: PruneTransaction): Promise<PruneCommit> {
    checkSession(this.name, txn.session, NO_NUL);
    const sent: { value: Sent | null } = { value: null };
    try {
      return await this.#access.retrying("prune", () => {
        sent.value = null;
        return this.#driver.transaction(this.#timeoutMs, (tx) => prune(this.#access, this, (n) => this.handle(n), tx, txn, sent));
      });
    } catch (err) {
      const s = sent.value;
      return this.#access.readBack(err, txn.session, s?.records.at(-1), `prune of session ${txn.session}`, () => commitResult(s!.plan, s!.records));
    }
  }

  async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    checkSession(this.name, session, NO_NUL);
    const match = "handle" in key ? sql`handle = ${key.handle}` : sql`span_id = ${key.spanId}`;
    const [rows] = await this.#access.run("lookup", () =>
      this.#driver.script([sql`SELECT handle, span_id, kind, text, hash, created_at, expired_at FROM ${this.#t.records}
        WHERE store = ${this.name} AND session = ${session} AND ${new RawSql(match)}`], this.#timeoutMs),
    );
    return lookupAnswer(rows?.[0] === undefined ? undefined : recordOf(rows[0]), this.capabilities);
  }

  /**
   * One round trip for any number of keys: by handle and span id within the session (the two unique
   * indexes), or from `SESSION_SCAN_COPIES` keys on the session's records by its index range.
   */
  async lookupMany(session: string, keys: readonly LookupKey[]): Promise<LookupResult[]> {
    checkSession(this.name, session, NO_NUL);
    if (keys.length === 0) return [];
    const handles = keys.flatMap((k) => ("handle" in k ? [k.handle] : []));
    const spanIds = keys.flatMap((k) => ("spanId" in k ? [k.spanId] : []));
    const asked = keys.length >= SESSION_SCAN_COPIES
      ? "TRUE"
      : [handles.length > 0 ? sql`handle IN (${handles})` : null, spanIds.length > 0 ? sql`span_id IN (${spanIds})` : null]
        .filter((x) => x !== null).join(" OR ");
    const [rows] = await this.#access.run("lookup", () =>
      this.#driver.script([sql`SELECT handle, span_id, kind, text, hash, created_at, expired_at FROM ${this.#t.records}
        WHERE store = ${this.name} AND session = ${session} AND (${new RawSql(asked)})`], this.#timeoutMs),
    );
    const byHandle = new Map<string, Row>();
    const bySpan = new Map<string, Row>();
    for (const r of rows ?? []) {
      byHandle.set(String(r["handle"]), r);
      bySpan.set(String(r["span_id"]), r);
    }
    return keys.map((k) => {
      const row = "handle" in k ? byHandle.get(k.handle) : bySpan.get(k.spanId);
      return lookupAnswer(row === undefined ? undefined : recordOf(row), this.capabilities);
    });
  }

  /**
   * The copies asked about, read by handle within the session (the unique (store, session, handle) index),
   * with the text only of those holding the literal (`LIKE`), so the cost never depends on other sessions'
   * data. The model's regex is never sent to the server: PostgreSQL's regex engine backtracks, and the
   * window confirms every candidate on re2js anyway.
   */
  async searchCopies(session: string, request: CopySearchRequest): Promise<CopySearch> {
    checkSession(this.name, session, NO_NUL);
    if (request.copies.length === 0) return { candidates: [], more: false, gone: [] };
    const R = this.#t.records;
    // PostgreSQL text cannot hold NUL, so no copy here contains one: filter on the longest NUL-free run.
    const literal = storeLiteral(request.literal);
    const holds = new RawSql(literal === "" ? "TRUE" : sql`text LIKE ${`%${literal.replace(/[\\%_]/g, "\\$&")}%`}`);
    // Many copies: the session's records by its index (rows not asked about are ignored), rather than a list
    // of every handle to send, parse and plan. Few: by handle.
    const asked = request.copies.length >= SESSION_SCAN_COPIES
      ? new RawSql("TRUE")
      : new RawSql(sql`handle IN (${request.copies.map((c) => c.handle)})`);
    const [rows] = await this.#access.run("search", () =>
      this.#driver.script([
        sql`SELECT handle, span_id, kind, hash, text IS NULL AS rotated, CASE WHEN text IS NOT NULL AND ${holds} THEN text END AS text
            FROM ${R} WHERE store = ${this.name} AND session = ${session} AND ${asked}`,
      ], this.#timeoutMs),
    );
    return copySearchAnswer(
      request,
      (rows ?? []).map((r) => ({
        handle: String(r["handle"]), spanId: String(r["span_id"]), kind: String(r["kind"]), hash: String(r["hash"]),
        rotated: r["rotated"] === true, text: r["text"] === null || r["text"] === undefined ? null : String(r["text"]),
      })),
    );
  }

  /**
   * Idempotent across a lost reply: when the connection breaks while COMMIT is out, the record is read back
   * (`PostgresAccess.readBack`) before anything is retried, so one decision never gets two records. When
   * even that fails, the `OutcomeUnknownError` it throws carries a `resolve` that the caller asks before
   * appending again.
   */
  async appendAudit(session: string, draft: AuditDraft): Promise<AuditRecord> {
    checkSession(this.name, session, NO_NUL);
    let sent: AuditRecord | undefined;
    try {
      return await this.#access.retrying("audit", () =>
        this.#driver.transaction(this.#timeoutMs, async (tx) => {
          sent = undefined;
          const results = await tx.batch(this.#access.lockHead(session));
          const { records, statements } = this.#access.seal(session, headOf(results[results.length - 1]!), [draft]);
          sent = records[0]!;
          await tx.commit(statements);
          return records[0]!;
        }),
      );
    } catch (err) {
      const record = sent;
      return this.#access.readBack(err, session, record, `audit record of session ${session}`, () => record!);
    }
  }

  async auditLog(session: string): Promise<AuditRecord[]> {
    checkSession(this.name, session, NO_NUL);
    const [rows] = await this.#access.run("audit log", () =>
      this.#driver.script([sql`SELECT record FROM ${this.#t.audit} WHERE store = ${this.name} AND session = ${session} ORDER BY seq`], this.#timeoutMs),
    );
    return (rows ?? []).map((r) => JSON.parse(String(r["record"])) as AuditRecord);
  }

  async countLossy(session: string): Promise<number> {
    checkSession(this.name, session, NO_NUL);
    const [rows] = await this.#access.run("count", () =>
      this.#driver.script([sql`SELECT count(*) AS n FROM ${this.#t.audit} WHERE store = ${this.name} AND session = ${session} AND status = 'lossy'`], this.#timeoutMs),
    );
    return Number(rows?.[0]?.["n"] ?? 0);
  }

  /**
   * One round trip. The registration carries a fresh token, so when the connection breaks with the message
   * out, the store reads back (after the session counter's lock, so a registration the server is still
   * finishing is seen finished) whether a span of the session has it: then the span is registered and this
   * answers as the lost reply would have; if none has it, nothing was registered and the original error is
   * thrown. When even that read fails it throws `OutcomeUnknownError`: the span may be registered, under an id
   * no window holds.
   */
  async registerSpan(session: string, span: SpanRegistration): Promise<RegisteredSpan> {
    checkSession(this.name, session, NO_NUL);
    return registry.registerSpan(this.#access, session, span);
  }

  async sessionSpans(session: string): Promise<RegisteredSpan[]> {
    checkSession(this.name, session, NO_NUL);
    return registry.sessionSpans(this.#access, session);
  }

  async sessionSpanCount(session: string): Promise<number> {
    checkSession(this.name, session, NO_NUL);
    return registry.sessionSpanCount(this.#access, session);
  }

  async lookupSpan(session: string, spanId: string): Promise<RegisteredSpan | null> {
    checkSession(this.name, session, NO_NUL);
    return registry.lookupSpan(this.#access, session, spanId);
  }

  /**
   * By index (`audit_decisions`), in one statement: the chain's prune decisions of the span `id` names —
   * committed (`reversible`, `lossy`) or not applied after all (`kept`) — by span id, or by the handle of
   * its record here (a handle is minted in the store whose chain records the span's prunes, and its record is
   * never deleted, only emptied by rotation).
   */
  async prunesOf(session: string, id: string): Promise<AuditRecord[]> {
    checkSession(this.name, session, NO_NUL);
    if (id.includes("\0")) return [];
    const { audit: A, records: R } = this.#t;
    const own = new RawSql(sql`store = ${this.name} AND session = ${session}`);
    const [rows] = await this.#access.run("prunes", () =>
      this.#driver.script([sql`SELECT seq, record FROM ${A} WHERE ${own} AND status IN ('reversible', 'lossy', 'kept')
        AND span_id IN (${id}, (SELECT span_id FROM ${R} WHERE ${own} AND handle = ${id})) ORDER BY seq`], this.#timeoutMs),
    );
    return (rows ?? [])
      .map((r) => JSON.parse(String(r["record"])) as AuditRecord)
      .filter((r) => isPruneDecision(r) && (r.spanId === id || (r.handle !== null && r.handle === id)));
  }

  async sessionStart(session: string, start: number): Promise<number> {
    checkSession(this.name, session, NO_NUL);
    return registry.sessionStart(this.#access, session, start);
  }

  async noteReplacement(session: string, spanId: string, body: string): Promise<void> {
    checkSession(this.name, session, NO_NUL);
    return registry.noteReplacement(this.#access, session, spanId, body);
  }

  async reserveLossy(session: string, budget: number, want: number): Promise<number> {
    checkSession(this.name, session, NO_NUL);
    return this.#access.retrying("reserve", () =>
      this.#driver.transaction(this.#timeoutMs, async (tx) => {
        // The chain's lossy records are counted after the counter's lock, so a counter reset below them
        // grants nothing instead of refilling the budget.
        const results = await tx.batch([...this.#access.lockSession(session), this.#access.chainLossy(session)]);
        const used = lossySpent(Number(results[1]![0]?.["lossy_used"] ?? 0), Number(results[2]![0]?.["n"] ?? 0));
        const granted = Math.max(0, Math.min(want, budget - used));
        await tx.commit(granted > 0 ? [sql`UPDATE ${this.#t.sessions} SET lossy_used = lossy_used + ${granted} WHERE store = ${this.name} AND session = ${session}`] : []);
        return granted;
      }),
    );
  }

  async lossySpent(session: string): Promise<number> {
    checkSession(this.name, session, NO_NUL);
    const [counter, chain] = await this.#access.run("lossy", () =>
      this.#driver.script([sql`SELECT lossy_used FROM ${this.#t.sessions} WHERE store = ${this.name} AND session = ${session}`, this.#access.chainLossy(session)], this.#timeoutMs),
    );
    return lossySpent(Number(counter?.[0]?.["lossy_used"] ?? 0), Number(chain?.[0]?.["n"] ?? 0));
  }

  async releaseLossy(session: string, units: number): Promise<void> {
    checkSession(this.name, session, NO_NUL);
    if (units <= 0) return;
    await this.#access.run("release", () =>
      this.#driver.script([sql`UPDATE ${this.#t.sessions} SET lossy_used = GREATEST(0, lossy_used - ${units})
        WHERE store = ${this.name} AND session = ${session}`], this.#timeoutMs),
    );
  }

  async releaseHolds(session: string): Promise<number> {
    checkSession(this.name, session, NO_NUL);
    const [rows] = await this.#access.run("release", () =>
      this.#driver.script([sql`WITH released AS (
          UPDATE ${this.#t.records} SET held = FALSE, held_until = NULL WHERE store = ${this.name} AND session = ${session} AND held RETURNING 1
        ) SELECT count(*) AS n FROM released`], this.#timeoutMs),
    );
    return Number(rows?.[0]?.["n"] ?? 0);
  }

  async rotate(): Promise<RotateReport> {
    this.#access.assertOpen();
    if (this.retentionMs === null) return { rotated: 0, keptByHold: 0 };
    const R = this.#t.records;
    const now = this.#access.now();
    const cutoff = now - Math.floor(this.retentionMs);
    // One statement: lock what is due (waiting for any prune holding one of those rows, then re-reading it,
    // so a hold that prune placed is seen), blank the unheld ones, and count both from the same rows.
    const [rows] = await this.#access.run("rotate", () =>
      this.#driver.script([sql`WITH due AS (
          SELECT session, span_id, (held AND (held_until IS NULL OR held_until > ${now})) AS kept FROM ${R}
          WHERE store = ${this.name} AND text IS NOT NULL AND created_at <= ${cutoff}
          ORDER BY session, span_id FOR UPDATE
        ), gone AS (
          UPDATE ${R} r SET text = NULL, expired_at = ${now}, held = FALSE, held_until = NULL
          FROM due WHERE NOT due.kept AND r.store = ${this.name} AND r.session = due.session AND r.span_id = due.span_id
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM gone) AS rotated, (SELECT count(*) FROM due WHERE kept) AS kept`], this.#timeoutMs),
    );
    return { rotated: Number(rows?.[0]?.["rotated"] ?? 0), keptByHold: Number(rows?.[0]?.["kept"] ?? 0) };
  }

  /** Ends the pool if this store created it; a shared pool stays open for its other users. */
  async close(): Promise<void> {
    if (this.#access.closed) return;
    this.#access.closed = true;
    if (this.#ownPool !== null) await this.#ownPool.end();
  }


}

