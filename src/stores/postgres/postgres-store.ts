import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Pool } from "pg";
import { EMPTY_CHAIN, sealChainJson, type AuditDraft, type AuditRecord, type ChainHead } from "../../audit.js";
import { errorMessage, OutcomeUnknownError, StoreError } from "../../errors.js";
import { commitResult, lossySpent, planCommit, type CommitPlan } from "../commit.js";
import { StoreBase, type StoreOptions } from "../store-options.js";
import { createPool, driverFor, isCommitUnknown, isRetryable, isWireError, storeError, type Driver, type DriverStats, type PgQueryable, type Row, type TxSession } from "./driver.js";
import { migrateWith, SCHEMA_VERSION, schemaVersion } from "./schema.js";
import { RawSql, sql, tablesOf, type Tables } from "./sql.js";
import { copySearchAnswer, lookupAnswer, readOnly, registeredSpan, SESSION_SCAN_COPIES, spanTaken, storeLiteral, type SpanRow, type StoredRecord } from "../records.js";
import type {
  BackingStore, CopySearch, CopySearchRequest, LookupKey, LookupResult, PersistInput, Persisted, PruneCommit, PruneTransaction, RegisteredSpan,
  RotateReport, SpanRegistration,
} from "../store.js";

export { createPool } from "./driver.js";
export { SCHEMA_VERSION } from "./schema.js";
export type { DriverStats as PostgresStoreStats, PgQueryable, PoolOptions } from "./driver.js";

/** The environment variable a store and `pruneguard migrate` read the server URL from. */
export const PG_URL_ENV = "PRUNEGUARD_PG_URL";

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
export class PostgresStore extends StoreBase implements BackingStore {
  readonly engine = "postgres";
  readonly schema: string;
  readonly #driver: Driver;
  readonly #t: Tables;
  readonly #timeoutMs: number | null;
  readonly #maxAttempts: number;
  /** The pool this store created and must end; `null` when it was given one. */
  readonly #ownPool: Pool | null;
  #closed = false;

  constructor(options: PostgresStoreOptions) {
    super(options);
    this.schema = options.schema ?? DEFAULT_SCHEMA;
    this.#t = tablesOf(this.schema);
    const timeout = options.statementTimeoutMs ?? null;
    if (timeout !== null && !(Number.isFinite(timeout) && timeout > 0)) {
      throw new RangeError(`store ${options.name}: statementTimeoutMs must be a positive number of milliseconds, got ${timeout}`);
    }
    this.#timeoutMs = timeout;
    this.#maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
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
    if (!this.capabilities.writable) throw readOnly(this.name);
    const { records: R, handles: H } = this.#t;
    const now = this.#now();
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
    const [rows] = await this.#onceMore(() => this.#retrying("persist", () => this.#driver.script([statement], this.#timeoutMs)));
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
    const sent: { value: Sent | null } = { value: null };
    try {
      return await this.#retrying("prune", () => {
        sent.value = null;
        return this.#driver.transaction(this.#timeoutMs, (tx) => this.#prune(tx, txn, sent));
      });
    } catch (err) {
      const s = sent.value;
      return this.#readBack(err, txn.session, s?.records.at(-1), `prune of session ${txn.session}`, () => commitResult(s!.plan, s!.records));
    }
  }

  /**
   * After a transaction failed: when the connection broke while its COMMIT was out, reads back whether
   * `last` (the last audit record it wrote) is in the chain — after taking the chain head's lock, so a
   * transaction the server is still finishing is seen finished — and answers `committed()` when it is, or
   * rethrows `err` when it is not (nothing committed; running it again is safe). When reading back fails
   * too it throws `OutcomeUnknownError`, whose `resolve` asks again later. Any other failure is rethrown.
   */
  async #readBack<T>(err: unknown, session: string, last: AuditRecord | undefined, what: string, committed: () => T): Promise<T> {
    if (last === undefined || !isCommitUnknown(err)) throw err;
    const resolve = async (): Promise<T | null> => ((await this.#inChain(session, last)) ? committed() : null);
    let answer: T | null;
    try {
      answer = await resolve();
    } catch (readErr) {
      throw new OutcomeUnknownError<T>(
        this.name,
        `${what}: COMMIT was sent and the answer lost (${errorMessage(err)}); reading back what committed failed too (${errorMessage(readErr)})`,
        resolve,
        { cause: err },
      );
    }
    if (answer === null) throw err;
    return answer;
  }

  /** Whether `record` is in the session's chain (read after the chain head's lock). */
  async #inChain(session: string, record: AuditRecord): Promise<boolean> {
    const own = new RawSql(sql`store = ${this.name} AND session = ${session}`);
    const [, rows] = await this.#run("read back", () =>
      this.#driver.script([
        sql`SELECT seq FROM ${this.#t.heads} WHERE ${own} FOR UPDATE`,
        sql`SELECT hash FROM ${this.#t.audit} WHERE ${own} AND seq = ${record.seq}`,
      ], this.#timeoutMs),
    );
    return rows?.[0]?.["hash"] === record.hash;
  }

  /**
   * Runs an idempotent write, and once more when the connection broke with its message out: the second run
   * answers what the lost reply would have. A write that is not idempotent must not use this.
   */
  async #onceMore<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (!isCommitUnknown(err)) throw err;
      return write();
    }
  }

  async #prune(tx: TxSession, txn: PruneTransaction, sent: { value: Sent | null }): Promise<PruneCommit> {
    const { records: R, handles: H } = this.#t;
    const session = txn.session;
    const backed = txn.items.filter((i) => i.backed);
    const spanIds = [...new Set(backed.map((i) => i.spanId))];
    const handles = [...new Set(backed.flatMap((i) => (i.handle === null ? [] : [i.handle])))];
    const own = new RawSql(sql`store = ${this.name} AND session = ${session}`);
    const lockRecords = spanIds.length > 0;
    // The counter is locked only when some span has no record yet, i.e. a re-persist would mint.
    const mayMint = lockRecords && this.capabilities.writable;

    // Round trip 1: BEGIN (added by the driver), lock and read the records, the counter and the chain head.
    const statements: string[] = [];
    if (lockRecords) {
      const match = handles.length > 0 ? sql`(span_id IN (${spanIds}) OR handle IN (${handles}))` : sql`span_id IN (${spanIds})`;
      statements.push(sql`SELECT handle, span_id, kind, text, hash, created_at, expired_at FROM ${R}
        WHERE ${own} AND ${new RawSql(match)} ORDER BY span_id FOR UPDATE`);
    }
    if (mayMint) {
      const missing = new RawSql(sql`(SELECT count(*) FROM ${R} WHERE ${own} AND span_id IN (${spanIds})) < ${spanIds.length}`);
      statements.push(
        sql`INSERT INTO ${H} (store, session, next) SELECT ${this.name}, ${session}, 0 WHERE ${missing} ON CONFLICT DO NOTHING`,
        sql`SELECT next FROM ${H} WHERE ${own} AND ${missing} FOR UPDATE`,
      );
    }
    // The session's counters, then the chain head: the lock order is records, handles, session, head.
    // With the budget asked for, the chain's lossy records are counted too (after the head's lock: every
    // commit of the chain is finished), so a counter reset below them spends the budget instead of refilling it.
    const counted = txn.lossyBudget !== null && txn.lossyBudget !== undefined;
    statements.push(...this.#lockSession(session), ...this.#lockHead(session), ...(counted ? [this.#chainLossy(session)] : []));
    const results = await tx.batch(statements);
    const recordRows = lockRecords ? results[0]!.map(recordOf) : [];
    const counterRows = mayMint ? results[lockRecords ? 2 : 1]! : [];
    const last = results.length - (counted ? 2 : 1);
    const counter = Number(results[last - 2]![0]?.["lossy_used"] ?? 0);
    const lossyUsed = counted ? lossySpent(counter, Number(results[last + 1]![0]?.["n"] ?? 0)) : counter;
    const head = headOf(results[last]!);

    const bySpan = new Map(recordRows.map((r) => [r.spanId, r]));
    const byHandle = new Map(recordRows.map((r) => [r.handle, r]));
    let next = counterRows[0] === undefined ? null : Number(counterRows[0]["next"]);
    const firstNext = next;
    const plan = planCommit(this, txn, {
      find: (item) => (item.handle === null ? bySpan.get(item.spanId) : byHandle.get(item.handle)),
      own: (spanId) => bySpan.get(spanId),
      mint: () => {
        // Only reachable when round trip 1 found a span without a record, so the counter was locked and read.
        if (next === null) throw new Error(`store ${this.name}: handle counter not locked`);
        return this.handle(++next);
      },
    }, lossyUsed);

    // Round trip 2: re-persists, holds, audit records, the new chain head and COMMIT.
    const now = this.#now();
    const writes: string[] = [];
    for (const { item, repersist, hold, handle } of plan.writes) {
      const key = new RawSql(sql`${own} AND span_id = ${item.spanId}`);
      if (repersist === "rewrite") {
        writes.push(sql`UPDATE ${R} SET text = ${item.text}, hash = ${item.hash}, kind = ${item.kind}, created_at = ${now}, expired_at = NULL WHERE ${key}`);
      } else if (repersist === "insert") {
        writes.push(sql`INSERT INTO ${R} (store, session, span_id, handle, kind, text, hash, created_at)
          VALUES (${this.name}, ${session}, ${item.spanId}, ${handle}, ${item.kind}, ${item.text}, ${item.hash}, ${now})`);
      }
      if (hold) writes.push(sql`UPDATE ${R} SET held = TRUE, held_until = ${txn.holdUntil} WHERE ${key}`);
    }
    if (next !== null && next !== firstNext) writes.push(sql`UPDATE ${H} SET next = ${next} WHERE ${own}`);
    if (plan.lossy > 0) writes.push(sql`UPDATE ${this.#t.sessions} SET lossy_used = lossy_used + ${plan.lossy} WHERE ${own}`);
    const { records, statements: auditWrites } = this.#seal(session, head, plan.drafts);
    sent.value = { plan, records };
    await tx.commit([...writes, ...auditWrites]);
    return commitResult(plan, records);
  }

  async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    const match = "handle" in key ? sql`handle = ${key.handle}` : sql`span_id = ${key.spanId}`;
    const [rows] = await this.#run("lookup", () =>
      this.#driver.script([sql`SELECT handle, span_id, kind, text, hash, created_at, expired_at FROM ${this.#t.records}
        WHERE store = ${this.name} AND session = ${session} AND ${new RawSql(match)}`], this.#timeoutMs),
    );
    return lookupAnswer(rows?.[0] === undefined ? undefined : recordOf(rows[0]), this.capabilities);
  }

  /**
   * The copies asked about, read by handle within the session (the unique (store, session, handle) index),
   * with the text only of those holding the literal (`LIKE`), so the cost never depends on other sessions'
   * data. The model's regex is never sent to the server: PostgreSQL's regex engine backtracks, and the
   * window confirms every candidate on re2js anyway.
   */
  async searchCopies(session: string, request: CopySearchRequest): Promise<CopySearch> {
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
    const [rows] = await this.#run("search", () =>
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
   * (`#readBack`) before anything is retried, so one decision never gets two records. When even that fails,
   * the `OutcomeUnknownError` it throws carries a `resolve` that the caller asks before appending again.
   */
  async appendAudit(session: string, draft: AuditDraft): Promise<AuditRecord> {
    let sent: AuditRecord | undefined;
    try {
      return await this.#retrying("audit", () =>
        this.#driver.transaction(this.#timeoutMs, async (tx) => {
          sent = undefined;
          const results = await tx.batch(this.#lockHead(session));
          const { records, statements } = this.#seal(session, headOf(results[results.length - 1]!), [draft]);
          sent = records[0]!;
          await tx.commit(statements);
          return records[0]!;
        }),
      );
    } catch (err) {
      const record = sent;
      return this.#readBack(err, session, record, `audit record of session ${session}`, () => record!);
    }
  }

  async auditLog(session: string): Promise<AuditRecord[]> {
    const [rows] = await this.#run("audit log", () =>
      this.#driver.script([sql`SELECT record FROM ${this.#t.audit} WHERE store = ${this.name} AND session = ${session} ORDER BY seq`], this.#timeoutMs),
    );
    return (rows ?? []).map((r) => JSON.parse(String(r["record"])) as AuditRecord);
  }

  async countLossy(session: string): Promise<number> {
    const [rows] = await this.#run("count", () =>
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
    const { sessions: S, spans: P } = this.#t;
    const own = new RawSql(sql`store = ${this.name} AND session = ${session}`);
    const token = randomUUID();
    // One message, one implicit transaction: the counter row's lock orders concurrent appenders.
    const statements = [
      this.#ensureSession(session),
      sql`WITH n AS (UPDATE ${S} SET next_span = next_span + 1 WHERE ${own} RETURNING next_span)
        INSERT INTO ${P} (store, session, ordinal, span_id, kind, hash, grp, message, backing, token)
        SELECT ${this.name}, ${session}, next_span, 'span_' || next_span, ${span.kind}, ${span.hash}, ${span.group},
          ${span.message === null ? null : JSON.stringify(span.message)}, ${span.store}, ${token} FROM n
        RETURNING ordinal, span_id`,
    ];
    let rows: Row[] | undefined;
    try {
      [, rows] = await this.#retrying("register", () => this.#driver.script(statements, this.#timeoutMs));
    } catch (err) {
      if (!isCommitUnknown(err)) throw err;
      const resolve = async (): Promise<RegisteredSpan | null> => {
        const [, found] = await this.#run("read back", () =>
          this.#driver.script([
            sql`SELECT next_span FROM ${S} WHERE ${own} FOR UPDATE`,
            sql`SELECT ordinal, span_id FROM ${P} WHERE ${own} AND token = ${token}`,
          ], this.#timeoutMs),
        );
        const row = found?.[0];
        return row === undefined ? null : { ...span, spanId: String(row["span_id"]), ordinal: Number(row["ordinal"]), replacement: null };
      };
      let registered: RegisteredSpan | null;
      try {
        registered = await resolve();
      } catch (readErr) {
        throw new OutcomeUnknownError<RegisteredSpan>(
          this.name,
          `registering a span in session ${session}: the message was sent and its answer lost (${errorMessage(err)}); reading back whether it registered failed too (${errorMessage(readErr)}), so the session may hold a registered span no window has`,
          resolve,
          { cause: err },
        );
      }
      if (registered === null) throw err;
      return registered;
    }
    const row = rows?.[0];
    if (!row) throw new StoreError(this.name, `could not register a span in session ${session}`);
    return { ...span, spanId: String(row["span_id"]), ordinal: Number(row["ordinal"]), replacement: null };
  }

  async sessionSpans(session: string): Promise<RegisteredSpan[]> {
    const [rows] = await this.#run("session spans", () =>
      this.#driver.script([sql`SELECT ordinal, span_id, kind, hash, grp, message, backing, replacement FROM ${this.#t.spans}
        WHERE store = ${this.name} AND session = ${session} ORDER BY ordinal`], this.#timeoutMs),
    );
    return (rows ?? []).map((r) => registeredSpan(r as unknown as SpanRow));
  }

  async sessionSpanCount(session: string): Promise<number> {
    const [rows] = await this.#run("span count", () =>
      this.#driver.script([sql`SELECT next_span FROM ${this.#t.sessions} WHERE store = ${this.name} AND session = ${session}`], this.#timeoutMs),
    );
    const row = rows?.[0];
    return row === undefined ? 0 : Number(row["next_span"]);
  }

  async lookupSpan(session: string, spanId: string): Promise<RegisteredSpan | null> {
    // PostgreSQL text cannot hold NUL: no span id has one.
    if (spanId.includes("\0")) return null;
    const [rows] = await this.#run("session span", () =>
      this.#driver.script([sql`SELECT ordinal, span_id, kind, hash, grp, message, backing, replacement FROM ${this.#t.spans}
        WHERE store = ${this.name} AND session = ${session} AND span_id = ${spanId}`], this.#timeoutMs),
    );
    const row = rows?.[0];
    return row === undefined ? null : registeredSpan(row as unknown as SpanRow);
  }

  /**
   * By index (`audit_span`): the chain's committed prunes of the span `id` names — by span id, or by the
   * handle of its record here (a handle is minted in the store whose chain records the span's prunes, and
   * its record is never deleted, only emptied by rotation).
   */
  async prunesOf(session: string, id: string): Promise<AuditRecord[]> {
    if (id.includes("\0")) return [];
    const { audit: A, records: R } = this.#t;
    const own = new RawSql(sql`store = ${this.name} AND session = ${session}`);
    const [rows] = await this.#run("prunes", () =>
      this.#driver.script([sql`SELECT record FROM ${A} WHERE ${own} AND status IN ('reversible', 'lossy')
        AND span_id IN (${id}, (SELECT span_id FROM ${R} WHERE ${own} AND handle = ${id})) ORDER BY seq`], this.#timeoutMs),
    );
    return (rows ?? [])
      .map((r) => JSON.parse(String(r["record"])) as AuditRecord)
      .filter((r) => r.op === "prune" && (r.status === "reversible" || r.status === "lossy") && (r.spanId === id || (r.handle !== null && r.handle === id)));
  }

  async sessionStart(session: string, start: number): Promise<number> {
    const [, rows] = await this.#retrying("session start", () =>
      this.#driver.script([
        this.#ensureSession(session),
        sql`UPDATE ${this.#t.sessions} SET started_at = coalesce(started_at, ${start}) WHERE store = ${this.name} AND session = ${session}
          RETURNING started_at`,
      ], this.#timeoutMs),
    );
    const row = rows?.[0];
    if (!row) throw new StoreError(this.name, `could not read the start of session ${session}`);
    return Number(row["started_at"]);
  }

  async noteReplacement(session: string, spanId: string, body: string): Promise<void> {
    // Idempotent: a lost reply is answered by writing the same note again.
    await this.#onceMore(() => this.#run("note replacement", () =>
      this.#driver.script([sql`UPDATE ${this.#t.spans} SET replacement = ${body}
        WHERE store = ${this.name} AND session = ${session} AND span_id = ${spanId}`], this.#timeoutMs),
    ));
  }

  async reserveLossy(session: string, budget: number, want: number): Promise<number> {
    return this.#retrying("reserve", () =>
      this.#driver.transaction(this.#timeoutMs, async (tx) => {
        // The chain's lossy records are counted after the counter's lock, so a counter reset below them
        // grants nothing instead of refilling the budget.
        const results = await tx.batch([...this.#lockSession(session), this.#chainLossy(session)]);
        const used = lossySpent(Number(results[1]![0]?.["lossy_used"] ?? 0), Number(results[2]![0]?.["n"] ?? 0));
        const granted = Math.max(0, Math.min(want, budget - used));
        await tx.commit(granted > 0 ? [sql`UPDATE ${this.#t.sessions} SET lossy_used = lossy_used + ${granted} WHERE store = ${this.name} AND session = ${session}`] : []);
        return granted;
      }),
    );
  }

  async lossySpent(session: string): Promise<number> {
    const [counter, chain] = await this.#run("lossy", () =>
      this.#driver.script([sql`SELECT lossy_used FROM ${this.#t.sessions} WHERE store = ${this.name} AND session = ${session}`, this.#chainLossy(session)], this.#timeoutMs),
    );
    return lossySpent(Number(counter?.[0]?.["lossy_used"] ?? 0), Number(chain?.[0]?.["n"] ?? 0));
  }

  async releaseLossy(session: string, units: number): Promise<void> {
    if (units <= 0) return;
    await this.#run("release", () =>
      this.#driver.script([sql`UPDATE ${this.#t.sessions} SET lossy_used = GREATEST(0, lossy_used - ${units})
        WHERE store = ${this.name} AND session = ${session}`], this.#timeoutMs),
    );
  }

  async releaseHolds(session: string): Promise<number> {
    const [rows] = await this.#run("release", () =>
      this.#driver.script([sql`WITH released AS (
          UPDATE ${this.#t.records} SET held = FALSE, held_until = NULL WHERE store = ${this.name} AND session = ${session} AND held RETURNING 1
        ) SELECT count(*) AS n FROM released`], this.#timeoutMs),
    );
    return Number(rows?.[0]?.["n"] ?? 0);
  }

  async rotate(): Promise<RotateReport> {
    this.#assertOpen();
    if (this.retentionMs === null) return { rotated: 0, keptByHold: 0 };
    const R = this.#t.records;
    const now = this.#now();
    const cutoff = now - Math.floor(this.retentionMs);
    // One statement: lock what is due (waiting for any prune holding one of those rows, then re-reading it,
    // so a hold that prune placed is seen), blank the unheld ones, and count both from the same rows.
    const [rows] = await this.#run("rotate", () =>
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
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownPool !== null) await this.#ownPool.end();
  }

  // ---------------------------------------------------------------------------------------------------

  #now(): number {
    return Math.floor(this.clock.now());
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError(this.name, "store is closed");
  }

  /**
   * Creates the session's counter row when missing. A session begun before the counters existed starts
   * after the highest span id the store has a record or a committed prune of, with its lossy records counted;
   * the `NOT EXISTS` guard keeps those counting subqueries from running once the row exists.
   */
  #ensureSession(session: string): string {
    const { sessions: S, records: R, audit: A } = this.#t;
    const own = new RawSql(sql`store = ${this.name} AND session = ${session}`);
    const spanNo = new RawSql(`span_id ~ '^span_[1-9][0-9]{0,8}$'`);
    return sql`INSERT INTO ${S} (store, session, next_span, lossy_used) SELECT ${this.name}, ${session},
        GREATEST(
          (SELECT coalesce(max(substring(span_id from 6)::bigint), 0) FROM ${R} WHERE ${own} AND ${spanNo}),
          (SELECT coalesce(max(substring(span_id from 6)::bigint), 0) FROM ${A} WHERE ${own} AND status IN ('reversible', 'lossy') AND ${spanNo})),
        (SELECT count(*) FROM ${A} WHERE ${own} AND status = 'lossy')
      WHERE NOT EXISTS (SELECT 1 FROM ${S} WHERE ${own})
      ON CONFLICT DO NOTHING`;
  }

  /** Ensures the session's counter row exists, then locks it; the last statement's row has `lossy_used`. */
  #lockSession(session: string): string[] {
    return [
      this.#ensureSession(session),
      sql`SELECT next_span, lossy_used FROM ${this.#t.sessions} WHERE store = ${this.name} AND session = ${session} FOR UPDATE`,
    ];
  }

  /** The lossy records of the session's chain (by the `audit_lossy` index). */
  #chainLossy(session: string): string {
    return sql`SELECT count(*) AS n FROM ${this.#t.audit} WHERE store = ${this.name} AND session = ${session} AND status = 'lossy'`;
  }

  /** Ensures the session's chain head exists, then locks it; the last statement's row is the head. */
  #lockHead(session: string): string[] {
    const H = this.#t.heads;
    return [
      sql`INSERT INTO ${H} (store, session, seq, hash) VALUES (${this.name}, ${session}, ${EMPTY_CHAIN.seq}, ${EMPTY_CHAIN.hash}) ON CONFLICT DO NOTHING`,
      sql`SELECT seq, hash FROM ${H} WHERE store = ${this.name} AND session = ${session} FOR UPDATE`,
    ];
  }

  /** Seals drafts onto the locked head and returns the records with the statements that write them. */
  #seal(session: string, head: ChainHead, drafts: readonly AuditDraft[]): { records: AuditRecord[]; statements: string[] } {
    const sealed = sealChainJson(head, drafts, { at: this.#now(), session, store: this.name });
    const records = sealed.map((s) => s.record);
    const last = records.at(-1);
    if (last === undefined) return { records, statements: [] };
    const rows = sealed.map(({ record: r, json }) =>
      sql`(${this.name}, ${session}, ${r.seq}, ${r.at}, ${r.op}, ${r.status}, ${r.spanId}, ${r.hash}, ${r.prevHash}, ${json})`,
    );
    return {
      records,
      statements: [
        `INSERT INTO ${this.#t.audit.text} (store, session, seq, at, op, status, span_id, hash, prev_hash, record) VALUES ${rows.join(", ")}`,
        sql`UPDATE ${this.#t.heads} SET seq = ${last.seq}, hash = ${last.hash} WHERE store = ${this.name} AND session = ${session}`,
      ],
    };
  }

  /** Runs one attempt; driver failures become `StoreError`, errors from `decide` and validation pass through. */
  async #run<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    try {
      return await attempt();
    } catch (err) {
      if (isWireError(err)) throw storeError(this.name, what, err);
      throw err;
    }
  }

  /** Like `#run`, but runs a transaction again when it lost a race that left nothing committed. */
  async #retrying<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await this.#run(what, attempt);
      } catch (err) {
        if (n >= this.#maxAttempts || !isRetryable(err)) throw err;
        this.#driver.stats.retries++;
        await new Promise((r) => setTimeout(r, Math.random() * 10 * n));
      }
    }
  }
}

/** What a prune sent with its COMMIT: enough to recognise it in the chain and answer as if the reply had come. */
interface Sent {
  readonly plan: CommitPlan;
  readonly records: readonly AuditRecord[];
}

function recordOf(row: Row): StoredRecord {
  return {
    handle: String(row["handle"]),
    spanId: String(row["span_id"]),
    kind: String(row["kind"]),
    text: row["text"] === null || row["text"] === undefined ? null : String(row["text"]),
    hash: String(row["hash"]),
    createdAt: Number(row["created_at"]),
    expiredAt: row["expired_at"] === null || row["expired_at"] === undefined ? null : Number(row["expired_at"]),
  };
}

function headOf(rows: Row[]): ChainHead {
  const row = rows[0];
  if (!row) throw new Error("audit chain head was not locked");
  return { seq: Number(row["seq"]), hash: String(row["hash"]) };
}

