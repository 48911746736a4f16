/**
 * The SQLite store: `SqliteStore` and the public methods of a `BackingStore` over one file — its write
 * transaction, the audit chains it appends to, the session's counters, and the check that the file is still
 * the one it opened. Its prepared statements are in `sqlite-statements.ts`, its tables and migrations in
 * `sqlite-schema.ts`.
 */
import { statSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { StoreError } from "../../errors.js";
import { EMPTY_CHAIN, isPruneDecision, sealChainJson, type AuditDraft, type AuditRecord, type ChainHead } from "../../audit.js";
import { commitResult, lossySpent, planCommit } from "../commit.js";
import { StoreBase, type StoreOptions } from "../store-options.js";
import { checkSession, copySearchAnswer, lookupAnswer, readOnly, registeredSpan, SESSION_SCAN_COPIES, spanTaken, storeLiteral } from "../records.js";
import type {
  BackingStore, CopyCandidate, CopySearch, CopySearchRequest, LookupKey, LookupResult, PersistInput, Persisted, PruneCommit, PruneTransaction,
  RegisteredSpan, RotateReport, SpanRegistration,
} from "../store.js";
import { createSchema, INDEX_TAIL, migrateDocs, SEQ_MASK } from "./sqlite-schema.js";
import { prepareStatements, type SqliteStatements } from "./sqlite-statements.js";
import { textReadsWhole } from "./sqlite-text.js";

export interface SqliteStoreOptions extends StoreOptions {
  /** Path of the database file (created if missing). Several stores may share one file. */
  readonly path: string;
  /** Milliseconds to wait for another connection's write lock before failing. Default 5000. */
  readonly busyTimeoutMs?: number;
}

/**
 * The embedded default: a SQLite file in WAL mode. The check, the hold and the audit record of a prune
 * commit in one `BEGIN IMMEDIATE` transaction, so another process sharing the file cannot rotate the copy
 * between the check and the hold. The hold is written in the prune's audit row (`hold_span`, `hold_until`),
 * so a prune writes the audit table alone; rotation and release fold a chain's new holds into its records
 * (`held_folded`, `held_until`) under the same write lock before they read them.
 */
export class SqliteStore extends StoreBase implements BackingStore {
  readonly engine = "sqlite";
  readonly path: string;
  readonly #db: DatabaseSync;
  #open = true;
  /** The file's device and inode when the store opened it; `null` for an in-memory database. */
  readonly #identity: { readonly dev: number; readonly ino: number } | null;
  /** When (`performance.now()`) the file was last found to be the one the store opened; reads trust it for `READ_CHECK_MS`. */
  #checkedAt = Number.NEGATIVE_INFINITY;
  /** Set once the file was found removed or replaced: every later call fails with it (the store must be reopened). */
  #lost: StoreError | null = null;
  /** The prepared statements (sqlite-statements.ts). */
  readonly #q: SqliteStatements;
  /** Runs `fn` inside `BEGIN IMMEDIATE … COMMIT` (rolled back if it throws). */
  readonly #immediate: <T>(fn: () => T) => T;
  /** Each session's chain number: assigned once, never changed, so it is cached once committed. */
  readonly #chains = new Map<string, number>();
  /**
   * The head of each chain this connection last wrote or read. Another connection may have appended since;
   * an append from a stale head then collides with the record already at that seq (the primary key) and
   * re-reads the head, so a stale entry costs one retry, never a fork or a gap.
   */
  readonly #heads = new Map<number, ChainHead>();
  /** Cache updates that hold only if the running transaction commits (`null`: no transaction is running). */
  #onCommit: Array<() => void> | null = null;

  constructor(options: SqliteStoreOptions) {
    super(options);
    this.path = options.path;
    // node:sqlite (built into Node >= 22.13) needs no native addon, and measured faster than the addon it
    // replaced. Loaded here, not imported, so that importing pruneguard does not print SQLite's
    // experimental-feature warning on Node 22 unless a SQLite store is opened.
    const { DatabaseSync: Database } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");
    this.#db = new Database(options.path);
    this.#db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    this.#db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    try {
      createSchema(this.#db);
    } catch (error) {
      this.#db.close();
      throw error;
    }
    this.#identity = fileIdentity(options.path);
    migrateDocs(this.#db);
    this.#q = prepareStatements(this.#db, textReadsWhole(Database));
    const begin = this.#db.prepare("BEGIN IMMEDIATE");
    const commit = this.#db.prepare("COMMIT");
    const rollback = this.#db.prepare("ROLLBACK");
    this.#immediate = <T>(fn: () => T): T => {
      this.#assertWritable();
      begin.run();
      this.#onCommit = [];
      let result: T;
      try {
        result = fn();
        commit.run();
      } catch (error) {
        this.#onCommit = null;
        try {
          rollback.run();
        } catch {
          // SQLite already rolled back (it does on some errors, such as a full disk); the cause is `error`.
        }
        throw error;
      }
      const committed = this.#onCommit;
      this.#onCommit = null;
      for (const apply of committed) apply();
      return result;
    };
  }

  #mint(session: string): string {
    const row = this.#q.nextHandle.get(this.name, session);
    if (!row) throw new Error(`store ${this.name}: could not mint a handle`);
    return this.handle(row.next);
  }

  /** The session's chain number; with `create`, assigns one (inside a write transaction). `null`: no records yet. */
  #chain(session: string, create: boolean): number | null {
    const cached = this.#chains.get(session);
    if (cached !== undefined) return cached;
    const chain = this.#q.chain.get(this.name, session)?.chain ?? (create ? this.#q.newChain.get(this.name, session)!.chain : null);
    if (chain !== null) this.#whenCommitted(() => this.#chains.set(session, chain));
    return chain;
  }

  /** Applies a cache update now, or, inside a transaction, once it commits (a rolled-back row must not be cached). */
  #whenCommitted(apply: () => void): void {
    if (this.#onCommit === null) apply();
    else this.#onCommit.push(apply);
  }

  /**
   * Seals drafts onto the session's chain and inserts them; runs inside the caller's write transaction.
   * `holds[i]`: the hold draft `i`'s row places (the span's copy, until when; `null` until released).
   */
  #append(session: string, drafts: readonly AuditDraft[], holds?: ReadonlyArray<{ readonly span: string; readonly until: number | null } | undefined>): AuditRecord[] {
    const chain = this.#chain(session, true)!;
    const ctx = { at: this.clock.now(), session, store: this.name };
    let head = this.#heads.get(chain);
    for (let attempt = 0; ; attempt++) {
      head ??= this.#q.lastAudit.get(chain) ?? EMPTY_CHAIN;
      const sealed = sealChainJson(head, drafts, ctx);
      // Under the write lock nothing else appends, so only the first insert can find its seq taken.
      let written = 0;
      for (const [i, { record, json }] of sealed.entries()) {
        if (record.seq > SEQ_MASK) throw new Error(`store ${this.name}: the audit chain of session ${session} is full`);
        const hold = holds?.[i];
        if (Number(this.#q.insertAudit.run(chain, record.seq, record.status, record.hash, json, hold?.span ?? null, hold === undefined ? null : hold.until).changes) === 0) break;
        written++;
      }
      if (written === sealed.length) {
        const last = sealed.at(-1)?.record;
        if (last !== undefined) this.#whenCommitted(() => this.#heads.set(chain, { seq: last.seq, hash: last.hash }));
        return sealed.map((s) => s.record);
      }
      if (written > 0 || attempt > 0) throw new Error(`store ${this.name}: audit record ${sealed[written]!.record.seq} of session ${session} already exists`);
      head = undefined;
    }
  }

  #params(session: string, input: Pick<PersistInput, "spanId" | "kind" | "text" | "hash">) {
    return { store: this.name, session, spanId: input.spanId, kind: input.kind, text: input.text, hash: input.hash, now: this.clock.now() };
  }

  async persist(input: PersistInput): Promise<Persisted> {
    checkSession(this.name, input.session);
    if (!this.capabilities.writable) throw readOnly(this.name);
    return this.#immediate((): Persisted => {
      const row = this.#q.bySpan.get(this.name, input.session, input.spanId);
      const params = this.#params(input.session, input);
      if (row) {
        if (row.text !== null && row.hash === input.hash) return { handle: row.handle, createdAt: row.createdAt };
        if (row.text !== null) throw spanTaken(this.name, input);
        this.#q.rewrite.run(params);
        return { handle: row.handle, createdAt: params.now };
      }
      const handle = this.#mint(input.session);
      this.#q.insert.run({ ...params, handle });
      return { handle, createdAt: params.now };
    });
  }

  async commitPrune(txn: PruneTransaction): Promise<PruneCommit> {
    checkSession(this.name, txn.session);
    const { session } = txn;
    // A throw anywhere inside rolls the whole transaction back.
    return this.#immediate((): PruneCommit => {
      const plan = planCommit(this, txn, {
        find: (item) =>
          item.handle === null ? this.#q.bySpan.get(this.name, session, item.spanId) : this.#q.byHandle.get(this.name, session, item.handle),
        own: (spanId) => this.#q.bySpan.get(this.name, session, spanId),
        mint: () => this.#mint(session),
      }, txn.lossyBudget === null || txn.lossyBudget === undefined ? 0 : this.#lossySpent(session));
      // The hold goes into the item's own audit row (same transaction), not onto the record's row: the
      // prune writes one B-tree; rotation and release fold it into the record first (`#fold`).
      const holds = txn.items.map((item) => {
        const w = plan.writes.find((x) => x.item === item);
        return w?.hold ? { span: item.spanId, until: txn.holdUntil } : undefined;
      });
      for (const w of plan.writes) {
        if (w.repersist === "rewrite") this.#q.rewrite.run(this.#params(session, w.item));
        else if (w.repersist === "insert") this.#q.insert.run({ ...this.#params(session, w.item), handle: w.handle });
      }
      // The counter is read only when the budget is asked for, but every lossy commitment is added to it.
      if (plan.lossy > 0) this.#updateSession(session, () => (Number(this.#q.addLossy.run(plan.lossy, this.name, session).changes) > 0 ? true : undefined));
      return commitResult(plan, this.#append(session, plan.drafts, holds));
    });
  }

  async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    checkSession(this.name, session);
    this.#assertReadable();
    const row = "handle" in key ? this.#q.byHandle.get(this.name, session, key.handle) : this.#q.bySpan.get(this.name, session, key.spanId);
    return lookupAnswer(row, this.capabilities);
  }

  /**
   * The copies asked about, read within the session — by handle (the unique (store, session, handle) index),
   * or from `SESSION_SCAN_COPIES` on by the session's index range — with the text only of those holding the
   * literal: `instr` runs in SQLite over this session's records alone, so the cost never depends on what
   * other sessions hold.
   */
  async searchCopies(session: string, request: CopySearchRequest): Promise<CopySearch> {
    checkSession(this.name, session);
    this.#assertReadable();
    if (request.copies.length === 0) return { candidates: [], more: false, gone: [] };
    const literal = storeLiteral(request.literal);
    // Many copies: one walk of the session's records (its own rows only; rows not asked about are ignored)
    // costs less than a probe of the handle index per copy. Few: the probes.
    const rows = request.copies.length >= SESSION_SCAN_COPIES
      ? this.#q.searchSession.all(literal, this.name, session)
      : this.#q.searchCopies.all(literal, this.name, session, JSON.stringify(request.copies.map((c) => c.handle)));
    return copySearchAnswer(request, rows.map((r) => ({ ...r, rotated: r.rotated === 1 })));
  }

  async appendAudit(session: string, draft: AuditDraft): Promise<AuditRecord> {
    checkSession(this.name, session);
    return this.#immediate(() => this.#append(session, [draft])[0]!);
  }

  async auditLog(session: string): Promise<AuditRecord[]> {
    checkSession(this.name, session);
    this.#assertReadable();
    const chain = this.#chain(session, false);
    return chain === null ? [] : this.#q.auditLog.all(chain).map((r) => JSON.parse(r.record) as AuditRecord);
  }

  async countLossy(session: string): Promise<number> {
    checkSession(this.name, session);
    this.#assertReadable();
    const chain = this.#chain(session, false);
    return chain === null ? 0 : (this.#q.countLossy.get(chain)?.n ?? 0);
  }

  /**
   * By index: the chain's prune decisions (committed, or `kept`) of the span `id` names (by span id, or by the handle of its
   * record here — a handle is minted in the store whose chain records the span's prunes, and its record is
   * never deleted, only emptied by rotation). The index (`pruneguard_audit_spans`) is not written by the
   * prunes, which would cost each one a second B-tree: the rows appended since it was last brought up to
   * date are read by their rowid range, and once more than `INDEX_TAIL` of them wait, this call indexes them
   * first (a write transaction; each row is indexed once). No call reads more than `INDEX_TAIL` rows of the
   * chain besides the ones naming the span, unless the write lock could not be had (then it reads the rows
   * not indexed yet, and a later call indexes them).
   */
  async prunesOf(session: string, id: string): Promise<AuditRecord[]> {
    checkSession(this.name, session);
    this.#assertReadable();
    const chain = this.#chain(session, false);
    if (chain === null) return [];
    const head = this.#q.lastAudit.get(chain)?.seq ?? 0;
    // Best effort: another connection holding the write lock past the busy timeout must not fail a read
    // (the statement below reads the rows not indexed by their rowid range: the same answer, slower).
    if (head - (this.#q.chainIndexed.get(chain)?.indexed ?? 0) > INDEX_TAIL) this.#tryIndexSpans(chain);
    const spans = new Set([id]);
    const minted = this.#q.spanOfHandle.get(this.name, session, id);
    if (minted !== undefined) spans.add(minted.spanId);
    const rows = [...spans].flatMap((spanId) => this.#q.prunesOfSpan.all(chain, spanId)).sort((a, b) => a.seq - b.seq);
    return rows
      .map((r) => JSON.parse(r.record) as AuditRecord)
      .filter((r) => isPruneDecision(r) && (r.spanId === id || (r.handle !== null && r.handle === id)));
  }

  /** Brings the chain's span index up to its last row, in a write transaction of its own, when it can. */
  #tryIndexSpans(chain: number): void {
    try {
      this.#immediate(() => {
        const indexed = this.#q.chainIndexed.get(chain)?.indexed ?? 0;
        const head = this.#q.lastAudit.get(chain)?.seq ?? 0;
        if (head <= indexed) return;
        this.#q.indexSpans.run(chain, indexed);
        this.#q.setIndexed.run(head, chain);
      });
    } catch {
      // The write lock was not had: `prunesOf` reads the rows not indexed, and a later call indexes them.
    }
  }

  /** The session's lossy counter, checked against the lossy records of its chain (inside the caller's transaction). */
  #lossySpent(session: string): number {
    const counter = this.#sessionRow(session).lossy_used;
    const chain = this.#chain(session, false);
    return lossySpent(counter, chain === null ? 0 : (this.#q.countLossy.get(chain)?.n ?? 0));
  }

  /** The session's counters, created (inside the caller's transaction) when missing. */
  #sessionRow(session: string): { next_span: number; lossy_used: number } {
    const row = this.#q.sessionRow.get(this.name, session);
    if (row !== undefined) return row;
    // Only a session's first call pays for counting what the store already holds of it.
    this.#q.ensureSession.run({ store: this.name, session });
    return this.#q.sessionRow.get(this.name, session)!;
  }

  /**
   * Runs an update of the session's counter row (inside the caller's transaction); when it touches nothing,
   * the row is missing: it is created, then the update runs again. Every call after a session's first is one
   * statement, where reading the row first was two.
   */
  #updateSession<T>(session: string, update: () => T | undefined): T {
    const done = update();
    if (done !== undefined) return done;
    this.#q.ensureSession.run({ store: this.name, session });
    return update()!;
  }

  async registerSpan(session: string, span: SpanRegistration): Promise<RegisteredSpan> {
    checkSession(this.name, session);
    return this.#immediate((): RegisteredSpan => {
      const ordinal = this.#updateSession(session, () => this.#q.nextSpan.get(this.name, session)).next_span;
      const spanId = `span_${ordinal}`;
      this.#q.insertSpan.run({
        store: this.name, session, ordinal, spanId, kind: span.kind, hash: span.hash, grp: span.group,
        message: span.message === null ? null : JSON.stringify(span.message), backing: span.store,
      });
      return { ...span, spanId, ordinal, replacement: null };
    });
  }

  async sessionSpans(session: string): Promise<RegisteredSpan[]> {
    checkSession(this.name, session);
    this.#assertReadable();
    return this.#q.sessionSpans.all(this.name, session).map(registeredSpan);
  }

  async sessionSpanCount(session: string): Promise<number> {
    checkSession(this.name, session);
    this.#assertReadable();
    return this.#q.sessionRow.get(this.name, session)?.next_span ?? 0;
  }

  async lookupSpan(session: string, spanId: string): Promise<RegisteredSpan | null> {
    checkSession(this.name, session);
    this.#assertReadable();
    const row = this.#q.lookupSpan.get(this.name, session, spanId);
    return row === undefined ? null : registeredSpan(row);
  }

  async sessionStart(session: string, start: number): Promise<number> {
    checkSession(this.name, session);
    return this.#immediate((): number => Number(this.#updateSession(session, () => this.#q.sessionStart.get(start, this.name, session)).started_at));
  }

  async noteReplacement(session: string, spanId: string, body: string): Promise<void> {
    checkSession(this.name, session);
    this.#immediate(() => this.#q.noteReplacement.run(body, this.name, session, spanId));
  }

  async reserveLossy(session: string, budget: number, want: number): Promise<number> {
    checkSession(this.name, session);
    return this.#immediate((): number => {
      const granted = Math.max(0, Math.min(want, budget - this.#lossySpent(session)));
      if (granted > 0) this.#q.addLossy.run(granted, this.name, session);
      return granted;
    });
  }

  async lossySpent(session: string): Promise<number> {
    checkSession(this.name, session);
    return this.#immediate(() => this.#lossySpent(session));
  }

  async releaseLossy(session: string, units: number): Promise<void> {
    checkSession(this.name, session);
    if (units <= 0) return;
    this.#immediate(() => this.#q.addLossy.run(-units, this.name, session));
  }

  /**
   * Applies the holds the chain's audit rows placed since it was last folded to the records (`held_folded`,
   * `held_until`), then marks it folded through its last row; inside the caller's write transaction. Each
   * audit row is read by one fold only: its cost is the rows appended since the last one (a rowid range).
   */
  #fold(chain: number, session: string, folded: number): void {
    const head = this.#q.lastAudit.get(chain)?.seq ?? 0;
    if (head <= folded) return;
    this.#q.foldHolds.run({ chain, folded, store: this.name, session });
    this.#q.setFolded.run(head, chain);
  }

  async releaseHolds(session: string): Promise<number> {
    checkSession(this.name, session);
    return this.#immediate((): number => {
      // Every hold placed so far is on the records before they are released; one placed later is not released.
      const c = this.#q.chainFolded.get(this.name, session);
      if (c !== undefined) this.#fold(c.chain, session, c.folded);
      return Number(this.#q.releaseHolds.run(this.name, session).changes);
    });
  }

  async rotate(): Promise<RotateReport> {
    if (this.retentionMs === null) return { rotated: 0, keptByHold: 0 };
    const now = this.clock.now();
    const cutoff = now - this.retentionMs;
    return this.#immediate((): RotateReport => {
        // Only a copy past retention can be emptied: the chains of its sessions are folded first, so every
        // hold placed on it is on its record when the rotation below reads `held_folded`.
        for (const c of this.#q.chainsToFold.all(this.name, cutoff)) this.#fold(c.chain, c.session, c.folded);
        const keptByHold = this.#q.heldPastRetention.get(this.name, cutoff, now)?.n ?? 0;
        const rotated = Number(this.#q.rotate.run({ store: this.name, now, cutoff }).changes);
        return { rotated, keptByHold };
      });
  }

  /**
   * Fails closed when the file this store opened is no longer the file at its path: removed (prunes would
   * go on "reversibly" into an unlinked inode that no other process and no restart can read) or replaced
   * (another database now answers for the path). Every write checks, with one `stat`, before its
   * transaction begins: a write is what would put a copy, a hold or an audit record where nobody will find
   * them, so no write ever skips it. Once the file is found gone, every later call fails (`#lost`).
   * The check cannot see a file edited in place, which is what the audit chain and content hashes are for.
   */
  #assertWritable(): void {
    if (!this.#open) throw new StoreError(this.name, "store is closed");
    if (this.#lost !== null) throw this.#lost;
    this.#checkIdentity();
  }

  /**
   * Reads check the file at most once every `READ_CHECK_MS`, so `map()` and `checkCopies()`, which read
   * once per span, do not pay a `stat` each. This stays safe because a read cannot lose anything: until the
   * store next checks, it reads the file it opened, which still holds every copy and record this store
   * wrote (an unlinked inode stays readable while it is open), and a copy it returns is checked against the
   * content hash the window recorded, as always. What a read never does is vouch for a write to come: the
   * prune, hold or re-persist it may lead to is a write, and checks the file again. A read-only user of the
   * store (one that never writes) learns of a removed or replaced file within `READ_CHECK_MS`.
   */
  #assertReadable(): void {
    if (!this.#open) throw new StoreError(this.name, "store is closed");
    if (this.#lost !== null) throw this.#lost;
    if (this.#identity === null || performance.now() - this.#checkedAt < READ_CHECK_MS) return;
    this.#checkIdentity();
  }

  #checkIdentity(): void {
    if (this.#identity === null) return;
    let now: { dev: number; ino: number } | undefined;
    try {
      now = statSync(this.path, { throwIfNoEntry: false });
    } catch (err) {
      // Not a finding about the file (a permission or I/O error): this call fails, a later one checks again.
      throw new StoreError(this.name, `cannot stat database file ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    if (now === undefined) {
      this.#lost = new StoreError(this.name, `database file ${this.path} was removed while the store had it open; refusing to write to a deleted file (reopen the store)`);
      throw this.#lost;
    }
    if (now.dev !== this.#identity.dev || now.ino !== this.#identity.ino) {
      this.#lost = new StoreError(this.name, `database file ${this.path} was replaced by another file while the store had it open; refusing to continue (reopen the store)`);
      throw this.#lost;
    }
    this.#checkedAt = performance.now();
  }

  /** Runs SQLite's own integrity check; `"ok"` when the file is sound. */
  integrityCheck(): string {
    const rows = this.#db.prepare("PRAGMA integrity_check").all() as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check).join("; ");
  }

  async close(): Promise<void> {
    if (this.#open) {
      this.#open = false;
      this.#db.close();
    }
  }
}

/**
 * How long a read trusts the last check that the file is the one the store opened (see `#assertReadable`);
 * writes always check.
 */
export const READ_CHECK_MS = 1000;

/** A database file's device and inode, or `null` for an in-memory or temporary database. */
function fileIdentity(path: string): { readonly dev: number; readonly ino: number } | null {
  if (path === ":memory:" || path === "" || path.startsWith("file::memory:")) return null;
  const st = statSync(path);
  return { dev: st.dev, ino: st.ino };
}

