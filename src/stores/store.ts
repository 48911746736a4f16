import type { AuditDraft, AuditRecord } from "../audit.js";
import type { Engine } from "../policy/stores.js";
import type { Conditions, SpanMessage } from "../types.js";

/**
 * What a store can promise. The guard reads these at execution time; a policy cannot talk a store into
 * a promise it does not make.
 */
export interface StoreCapabilities {
  /** Lookups tell "this record was rotated out or lost" apart from "no such record" (condition 3). */
  readonly distinguishesAbsent: boolean;
  /** Retention holds keep a record past its retention until released. */
  readonly holds: boolean;
  /** The runtime may write records (persist on append, re-persist on prune). */
  readonly writable: boolean;
}

/** A span's bytes to persist. */
export interface PersistInput {
  readonly session: string;
  readonly spanId: string;
  readonly kind: string;
  readonly text: string;
  readonly hash: string;
}

export interface Persisted {
  /** Store-minted, session-scoped handle (`#12`); resolves only within the session that minted it. */
  readonly handle: string;
  readonly createdAt: number;
}

/** How a lookup addresses a record: by handle, or by the span id it was persisted for. */
export type LookupKey = { readonly handle: string } | { readonly spanId: string };

/** A lookup's answer. Stores that do not distinguish absent answer `absent` for rotated records too. */
export type LookupResult =
  | {
      readonly status: "found";
      readonly handle: string;
      readonly spanId: string;
      readonly kind: string;
      readonly text: string;
      readonly hash: string;
      readonly createdAt: number;
    }
  | { readonly status: "expired"; readonly handle: string; readonly spanId: string; readonly hash: string; readonly expiredAt: number }
  | { readonly status: "absent" };

/** What the store found for a span at the moment of the check, inside the prune transaction. */
export interface CheckResult {
  readonly conditions: Conditions;
  /** Why existence failed, when it did. */
  readonly copy: "ok" | "absent" | "expired" | "hash-mismatch" | "no-handle" | "unbacked";
  readonly handle: string | null;
  /** When the copy would expire without a hold (`null`: never). */
  readonly expiresAt: number | null;
}

/** The guard's disposition of a checked prune; the store applies it in the same transaction. */
export type PruneDecision =
  | { readonly status: "reversible"; readonly repersist: boolean; readonly hold: boolean; readonly audit: AuditDraft }
  | { readonly status: "lossy"; readonly audit: AuditDraft }
  | { readonly status: "rejected"; readonly audit: AuditDraft };

/** One span of a prune: a lone span, or one member of a tool call/result group. */
export interface PruneItem {
  readonly spanId: string;
  readonly kind: string;
  /**
   * `false` for a kind that names no store: the store checks nothing for it (its check fails all three
   * conditions) but writes its audit record in the same transaction as the group's other members.
   */
  readonly backed: boolean;
  /** The handle the window recorded when it persisted the span, or `null` if it never got one. */
  readonly handle: string | null;
  /** The hash and bytes the window holds now (the bytes are written only on re-persist). */
  readonly hash: string;
  readonly text: string;
}

/** Input of the atomic check-and-commit step. */
export interface PruneTransaction {
  readonly session: string;
  readonly items: readonly PruneItem[];
  /** Hold expiry for a reversible prune (`null`: until released). */
  readonly holdUntil: number | null;
  /**
   * The session's lossy budget, when this store keeps the session's counter (it is the window's home
   * store) and the directive asked for a lossy commitment: the store reads the counter inside the
   * transaction, under the same lock as the audit chain, passes what is left to `decide`, and adds the
   * lossy decisions to it before commit. Absent or `null`: `decide` is told `Infinity`.
   */
  readonly lossyBudget?: number | null;
  /**
   * Decides from the check results (one per item, same order) and the lossy commitments the session may
   * still make. Called exactly once per attempt, synchronously, inside the transaction; it must be pure,
   * because a store may retry the whole transaction on a serialisation failure. Returns one decision per
   * item.
   */
  readonly decide: (checks: readonly CheckResult[], lossyLeft: number) => readonly PruneDecision[];
}

export interface PruneCommitItem {
  readonly check: CheckResult;
  readonly decision: PruneDecision;
  /** The final handle (a re-persist may mint one); `null` unless reversible. */
  readonly handle: string | null;
  readonly audit: AuditRecord;
}

export interface PruneCommit {
  readonly items: readonly PruneCommitItem[];
}

/**
 * A span as the session's home store registers it when it is appended: everything a window restarted
 * in another process needs to put it back in its place — but never its bytes (a kind with no store has
 * no durable copy, and a backed kind's copy lives in its own store).
 */
export interface SpanRegistration {
  readonly kind: string;
  readonly hash: string;
  /** Tool call/result group, if any. */
  readonly group: string | null;
  readonly message: SpanMessage | null;
  /** The store that backs the span's kind, or `null`. */
  readonly store: string | null;
}

/** A registered span: its id, minted by the home store, and its position in the session. */
export interface RegisteredSpan extends SpanRegistration {
  readonly spanId: string;
  /** 1-based position in the session (`span_<ordinal>`), across every process that appended to it. */
  readonly ordinal: number;
  /** The digest or compressed body noted before its prune committed, if any. */
  readonly replacement: string | null;
}

/** What a search asks a store for: candidates among the copies one window pruned, found in this session only. */
export interface CopySearchRequest {
  /**
   * The copies asked about: the window's reversibly pruned spans in this store, by handle, with the content
   * hash the window recorded at the prune. Only these are read, so a search costs what this window pruned,
   * whatever other sessions (or this session's live copies) hold.
   */
  readonly copies: ReadonlyArray<{ readonly handle: string; readonly hash: string }>;
  /**
   * Candidates contain this substring (case-sensitive, exact code units); `null`: every copy asked about is a
   * candidate. A candidate is not a match: the window confirms each on its bytes.
   */
  readonly literal: string | null;
  /** At most this many candidates; `more` says when there were others. */
  readonly limit: number;
}

/** A live copy whose text may hold a match. */
export interface CopyCandidate {
  readonly handle: string;
  readonly spanId: string;
  readonly kind: string;
  readonly text: string;
  readonly hash: string;
}

/** A store's answer to a search. */
export interface CopySearch {
  readonly candidates: readonly CopyCandidate[];
  /** More copies held the literal than `limit`: those were not returned. */
  readonly more: boolean;
  /**
   * Copies asked about whose bytes are not here as pruned: no record (deleted behind the runtime), rotated
   * out, or a record whose hash is not the one asked about (altered): they cannot be searched.
   */
  readonly gone: readonly string[];
}

export interface RotateReport {
  /** Records whose retention passed and that were removed (their bytes are gone). */
  readonly rotated: number;
  /** Records past retention kept because a hold covers them. */
  readonly keptByHold: number;
}

/**
 * A durable place for span copies and the audit log. Async because PostgreSQL is; SQLite adapters
 * resolve immediately.
 *
 * Every method that takes a `session` must confine itself to that session's records: a handle or span id
 * of another session is `absent`, never another tenant's bytes.
 */
export interface BackingStore {
  readonly name: string;
  /** The engine a policy declaration would name for this store (absent for other adapters). */
  readonly engine?: Engine;
  readonly capabilities: StoreCapabilities;
  /** Retention of unheld records in ms; `null` keeps them forever. */
  readonly retentionMs: number | null;
  /** Prefix of the handles this store mints (`""` → `#12`, `"t"` → `t#12`). */
  readonly handlePrefix: string;

  /** Persists a span's bytes and mints its handle. Idempotent per (session, spanId, hash). */
  persist(input: PersistInput): Promise<Persisted>;
  /**
   * The atomic step: for every item, check existence + hash + handle + provenance, apply the decisions
   * (re-persist, hold) and append one audit record per item, all in one transaction. If it throws,
   * nothing was committed — except `OutcomeUnknownError`: the store sent COMMIT, lost the answer, and could
   * not read back what committed; its `resolve` asks again (and never commits a second time).
   */
  commitPrune(txn: PruneTransaction): Promise<PruneCommit>;
  lookup(session: string, key: LookupKey): Promise<LookupResult>;
  /**
   * Many lookups at once: one answer per key, in the keys' order, each what `lookup` would answer. Optional:
   * the PostgreSQL adapter answers them in one round trip, which is what a resume reads its copies with;
   * without it the window calls `lookup` once per key.
   */
  lookupMany?(session: string, keys: readonly LookupKey[]): Promise<LookupResult[]>;
  /**
   * Candidates for a search among the copies asked about (those holding the literal), and which of them are
   * gone: read within the session (by handle, or for many copies by the session's own records), so the cost
   * never depends on other sessions' data.
   */
  searchCopies(session: string, request: CopySearchRequest): Promise<CopySearch>;
  /** Appends a decision that needed no record change (invalid directives, recalls, unbacked kinds). */
  appendAudit(session: string, draft: AuditDraft): Promise<AuditRecord>;
  auditLog(session: string): Promise<AuditRecord[]>;
  /**
   * The session's prune decisions in this store's chain (`op: "prune"`, status `reversible` or `lossy`, or
   * `kept` for one not applied after all: `isPruneDecision`) whose span id or handle is `id`, in chain order:
   * what recall reads for a span the window does not hold. Optional: the SQL adapters answer it by index;
   * without it the window reads the whole `auditLog`.
   */
  prunesOf?(session: string, id: string): Promise<AuditRecord[]>;
  /** Number of lossy commitments already logged for the session (the lossy budget counts these). */
  countLossy(session: string): Promise<number>;
  /**
   * Mints the session's next span id (`span_<n>`) and records the span, atomically: two processes
   * appending to one session never get the same id. Called on the window's home store.
   */
  registerSpan(session: string, span: SpanRegistration): Promise<RegisteredSpan>;
  /** Every span registered in the session, in position order. */
  sessionSpans(session: string): Promise<RegisteredSpan[]>;
  /**
   * How many span ids the session has minted: its spans are `span_1` … `span_<n>` (none minted: 0). Optional:
   * one counter read that lets a search skip reading the whole registry when its window knows every span;
   * without it the window reads `sessionSpans`.
   */
  sessionSpanCount?(session: string): Promise<number>;
  /**
   * One span registered in the session, by its id, or `null`. Optional: the SQL adapters answer it by key;
   * without it the window reads the whole registry (`sessionSpans`).
   */
  lookupSpan?(session: string, spanId: string): Promise<RegisteredSpan | null>;
  /**
   * The session's start (ms on the windows' clock), kept with its counters on the home store: records
   * `start` when the session has none yet (atomically: the first window to ask wins) and returns the one it
   * has. `limits.maxLengthMs` counts from it, so a window resumed later, or opened in another process, keeps
   * the session's horizon instead of starting a new one.
   */
  sessionStart(session: string, start: number): Promise<number>;
  /**
   * Notes the body (digest or compressed form) a prune of `spanId` is about to put in its place, before
   * the prune commits, so a restarted window can render it. A prune that does not commit leaves a note
   * that nothing reads: only a committed prune record makes it visible.
   */
  noteReplacement(session: string, spanId: string, body: string): Promise<void>;
  /**
   * Reserves up to `want` units of the session's lossy budget on the session's counter (for a lossy
   * commitment made in another store); returns how many were granted (0 when it is spent).
   */
  reserveLossy(session: string, budget: number, want: number): Promise<number>;
  /**
   * The session's lossy budget spent, as its counter on this (home) store keeps it — the one count the
   * budget is decided by: committed lossy prunes and units reserved for other stores. Never below the
   * lossy commitments this store's chain records (a counter lowered behind the runtime reads as spent).
   */
  lossySpent(session: string): Promise<number>;
  /** Gives back reserved units that no lossy commitment used. */
  releaseLossy(session: string, units: number): Promise<void>;
  /** Releases the session's holds (for example when the session ends); their records age normally again. */
  releaseHolds(session: string): Promise<number>;
  /** Removes records past retention that no hold covers; keeps a marker so provenance survives. */
  rotate(): Promise<RotateReport>;
  close(): Promise<void>;
}
