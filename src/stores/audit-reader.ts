/**
 * What `pruneguard audit` reads of a durable store, after the fact and without a store object: each SQL
 * engine's folder exports a reader (`sqlite/sqlite-audit.ts`, `postgres/postgres-audit.ts`) that opens the
 * engine's tables read only, in every schema version the engine can still meet, and never migrates them.
 * The rows come back as the tables hold them; verifying the chain is the command's, the same for every
 * engine. The command finds the reader through the engine's entry in `ENGINE_ADAPTERS` (`engine-adapters.ts`).
 */

/**
 * The longest record text (bytes of its JSON, as the engine stores it) a reader reads: 1 MiB. A record the
 * runtime writes is a few hundred bytes, and stays under 10 kB whatever the model sent (its directive is cut
 * to 1,024 characters before it is stored); a longer one was planted. Each reader asks the engine for the
 * length first and leaves a longer text in the store, so a planted 200 MB record costs the audit nothing;
 * read whole, it took `pruneguard audit` over 2 GB (the text, its parse, its canonical serialisation for the
 * hash). `pruneguard audit` reports such a record as unreadable: the chain cannot be verified past it.
 */
export const MAX_AUDIT_RECORD_BYTES = 1_048_576;

/** An audit row as stored: its indexed columns beside the sealed record's exact text. */
export interface AuditRow {
  readonly seq: number;
  readonly status: string;
  readonly hash: string;
  /**
   * The JSON text that was hashed, unparsed: a record that is not its canonical serialisation is tampering.
   * `null` when it is longer than `MAX_AUDIT_RECORD_BYTES`: it was not read.
   */
  readonly record: string | null;
  /** The length of the record's text in bytes, as the engine reports it without reading the text. */
  readonly bytes: number;
}

/** How many audit records one store keeps for one session. */
export interface AuditChainCount {
  readonly store: string;
  readonly session: string;
  readonly n: number;
}

/** A session's counter row, as `--verify` cross-checks it against the chain. */
export interface SessionCounters {
  /** Where the counters live, as the operator would look them up (`pruneguard_sessions`, `<schema>.sessions`). */
  readonly table: string;
  /** `null`: the session has no counter row. */
  readonly lossyUsed: number | null;
  readonly nextSpan: number | null;
  /** The highest ordinal registered for the session, 0 for none. */
  readonly registered: number;
}

/** A span a store registered for a session (never its bytes). */
export interface AuditSpan {
  readonly ordinal: number;
  readonly spanId: string;
  readonly kind: string;
  /** The store that keeps its copy, `null` for an unbacked kind. */
  readonly backing: string | null;
  /** The digest or compressed form a prune put in its place: read only when asked for content. */
  readonly replacement?: string | null;
}

/** A copy a store keeps (its bytes only when asked for content). */
export interface AuditCopy {
  readonly store: string;
  readonly spanId: string;
  readonly handle: string;
  readonly createdAt: number;
  readonly expiredAt: number | null;
  readonly held: boolean;
  readonly heldUntil: number | null;
  readonly text?: string | null;
}

/** A durable store's records, read only. */
export interface AuditReader {
  /** How the source is named in output: a file name, or `postgres:<schema>` (never a URL: it may carry a password). */
  readonly label: string;
  /** Every (store, session) with an audit chain, with its length, ordered by store then session. */
  sessions(): Promise<AuditChainCount[]>;
  /**
   * Every store the source holds anything of (copies, handles, registered spans, counters, audit records),
   * so that a store without an audit chain is told apart from one that is not there at all.
   */
  stores(): Promise<string[]>;
  /** The session's audit rows in this store, by seq; a record's text only up to `MAX_AUDIT_RECORD_BYTES`. */
  rows(store: string, session: string): Promise<AuditRow[]>;
  /**
   * The session's counters on this store and the highest position it registered (the counters are `null`
   * when the row is missing); `null` when the store keeps no counters at all (written before they existed).
   */
  counters(store: string, session: string): Promise<SessionCounters | null>;
  /** The spans a store registered for the session (none when it keeps no registry). */
  registry(store: string, session: string, content: boolean): Promise<AuditSpan[]>;
  /** The session's copies in every store, their bytes only with `content`. */
  copies(session: string, content: boolean): Promise<AuditCopy[]>;
  close(): Promise<void>;
}

/**
 * Why a reader could not be opened. The message is the reader's whole account of it, naming the source as
 * the caller named it; `reason` lets the caller word its own part (a prefix, an exit code).
 */
export class AuditReadError extends Error {
  readonly reason: "missing" | "unopenable" | "unreadable" | "not-a-store" | "bad-schema" | "unreachable" | "newer";

  constructor(reason: AuditReadError["reason"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AuditReadError";
    this.reason = reason;
  }
}
