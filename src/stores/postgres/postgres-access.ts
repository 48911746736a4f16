/**
 * How a `PostgresStore` talks to its server: one `PostgresAccess` per store holds the driver, the tables,
 * the statement timeout and the retry limit, and runs every call — once (`run`), again after a lost race
 * (`retrying`), once more after a lost reply when the write is idempotent (`onceMore`), or by reading back
 * what committed (`readBack`). It also builds the statements the public methods and the commit transaction
 * share: the session's counter row, the chain head's lock, and the sealing of audit records onto it.
 */
import { EMPTY_CHAIN, sealChainJson, type AuditDraft, type AuditRecord, type ChainHead } from "../../audit.js";
import { errorMessage, OutcomeUnknownError, StoreError } from "../../errors.js";
import type { StoredRecord } from "../records.js";
import { isCommitUnknown, isRetryable, isWireError, storeError, type Driver, type Row } from "./driver.js";
import { RawSql, sql, type Tables } from "./sql.js";

export class PostgresAccess {
  /** The store's name (every row is keyed by it). */
  readonly name: string;
  readonly driver: Driver;
  readonly t: Tables;
  readonly timeoutMs: number | null;
  readonly maxAttempts: number;
  /** The store's clock, in whole milliseconds. */
  readonly now: () => number;
  closed = false;

  constructor(options: {
    readonly name: string;
    readonly driver: Driver;
    readonly t: Tables;
    readonly timeoutMs: number | null;
    readonly maxAttempts: number;
    readonly now: () => number;
  }) {
    this.name = options.name;
    this.driver = options.driver;
    this.t = options.t;
    this.timeoutMs = options.timeoutMs;
    this.maxAttempts = options.maxAttempts;
    this.now = options.now;
  }

  /**
   * After a transaction failed: when the connection broke while its COMMIT was out, reads back whether
   * `last` (the last audit record it wrote) is in the chain — after taking the chain head's lock, so a
   * transaction the server is still finishing is seen finished — and answers `committed()` when it is, or
   * rethrows `err` when it is not (nothing committed; running it again is safe). When reading back fails
   * too it throws `OutcomeUnknownError`, whose `resolve` asks again later. Any other failure is rethrown.
   */
  async readBack<T>(err: unknown, session: string, last: AuditRecord | undefined, what: string, committed: () => T): Promise<T> {
    if (last === undefined || !isCommitUnknown(err)) throw err;
    return this.settleLost(
      err,
      async () => ((await this.#inChain(session, last)) ? committed() : null),
      (readErr) => `${what}: COMMIT was sent and the answer lost (${errorMessage(err)}); reading back what committed failed too (${errorMessage(readErr)})`,
    );
  }

  /**
   * A write whose reply was lost (`err`): once the server session that had it has ended (`Driver.fence`),
   * `read` reads back what it did — its answer, or `null` when it did nothing (then `err` is rethrown: running
   * it again is safe). When fencing or reading back fails too, throws `OutcomeUnknownError` (message from
   * `lost`), whose `resolve` fences and asks again later.
   */
  async settleLost<T>(err: unknown, read: () => Promise<T | null>, lost: (readErr: unknown) => string): Promise<T> {
    // The server session that had the message ends first, so nothing it was sent can run after the read.
    const resolve = async (): Promise<T | null> => {
      await this.driver.fence?.(err);
      return read();
    };
    let answer: T | null;
    try {
      answer = await resolve();
    } catch (readErr) {
      throw new OutcomeUnknownError<T>(this.name, lost(readErr), resolve, { cause: err });
    }
    if (answer === null) throw err;
    return answer;
  }

  /** Whether `record` is in the session's chain (read after the chain head's lock). */
  async #inChain(session: string, record: AuditRecord): Promise<boolean> {
    const own = new RawSql(sql`store = ${this.name} AND session = ${session}`);
    const [, rows] = await this.run("read back", () =>
      this.driver.script([
        sql`SELECT seq FROM ${this.t.heads} WHERE ${own} FOR UPDATE`,
        sql`SELECT hash FROM ${this.t.audit} WHERE ${own} AND seq = ${record.seq}`,
      ], this.timeoutMs),
    );
    return rows?.[0]?.["hash"] === record.hash;
  }

  /**
   * Runs an idempotent write, and once more when the connection broke with its message out: the second run
   * answers what the lost reply would have. A write that is not idempotent must not use this.
   */
  async onceMore<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (!isCommitUnknown(err)) throw err;
      return write();
    }
  }

  assertOpen(): void {
    if (this.closed) throw new StoreError(this.name, "store is closed");
  }

  /**
   * Creates the session's counter row when missing. A session begun before the counters existed starts
   * after the highest span id the store has a record or a committed prune of, with its lossy records counted;
   * the `NOT EXISTS` guard keeps those counting subqueries from running once the row exists.
   */
  ensureSession(session: string): string {
    const { sessions: S, records: R, audit: A } = this.t;
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
  lockSession(session: string): string[] {
    return [
      this.ensureSession(session),
      sql`SELECT next_span, lossy_used FROM ${this.t.sessions} WHERE store = ${this.name} AND session = ${session} FOR UPDATE`,
    ];
  }

  /** The lossy records of the session's chain (by the `audit_lossy` index). */
  chainLossy(session: string): string {
    return sql`SELECT count(*) AS n FROM ${this.t.audit} WHERE store = ${this.name} AND session = ${session} AND status = 'lossy'`;
  }

  /** Ensures the session's chain head exists, then locks it; the last statement's row is the head. */
  lockHead(session: string): string[] {
    const H = this.t.heads;
    return [
      sql`INSERT INTO ${H} (store, session, seq, hash) VALUES (${this.name}, ${session}, ${EMPTY_CHAIN.seq}, ${EMPTY_CHAIN.hash}) ON CONFLICT DO NOTHING`,
      sql`SELECT seq, hash FROM ${H} WHERE store = ${this.name} AND session = ${session} FOR UPDATE`,
    ];
  }

  /** Seals drafts onto the locked head and returns the records with the statements that write them. */
  seal(session: string, head: ChainHead, drafts: readonly AuditDraft[]): { records: AuditRecord[]; statements: string[] } {
    const sealed = sealChainJson(head, drafts, { at: this.now(), session, store: this.name });
    const records = sealed.map((s) => s.record);
    const last = records.at(-1);
    if (last === undefined) return { records, statements: [] };
    const rows = sealed.map(({ record: r, json }) =>
      sql`(${this.name}, ${session}, ${r.seq}, ${r.at}, ${r.op}, ${r.status}, ${r.spanId}, ${r.hash}, ${r.prevHash}, ${json})`,
    );
    return {
      records,
      statements: [
        `INSERT INTO ${this.t.audit.text} (store, session, seq, at, op, status, span_id, hash, prev_hash, record) VALUES ${rows.join(", ")}`,
        sql`UPDATE ${this.t.heads} SET seq = ${last.seq}, hash = ${last.hash} WHERE store = ${this.name} AND session = ${session}`,
      ],
    };
  }

  /** Runs one attempt; driver failures become `StoreError`, errors from `decide` and validation pass through. */
  async run<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await attempt();
    } catch (err) {
      if (isWireError(err)) throw storeError(this.name, what, err);
      throw err;
    }
  }

  /** Like `run`, but runs a transaction again when it lost a race that left nothing committed. */
  async retrying<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await this.run(what, attempt);
      } catch (err) {
        if (n >= this.maxAttempts || !isRetryable(err)) throw err;
        this.driver.stats.retries++;
        await new Promise((r) => setTimeout(r, Math.random() * 10 * n));
      }
    }
  }
}

export function recordOf(row: Row): StoredRecord {
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

export function headOf(rows: Row[]): ChainHead {
  const row = rows[0];
  if (!row) throw new Error("audit chain head was not locked");
  return { seq: Number(row["seq"]), hash: String(row["hash"]) };
}
