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

/**
 * The longest value of any other column a reader reads (a store or session name, a span id, a kind, a
 * handle, a status, a hash, a number a SQLite file may hold as text): 1 KiB. pruneguard writes none over a
 * few dozen bytes but the session id, which the application chooses; a longer value was planted. The
 * readers ask the engine for its length first, as for a record, and read `NULL` in its place; the column's
 * length comes back in `oversized`, and `pruneguard audit` reports the row as unreadable instead of showing
 * it (a 100 MB span id once made a 105 MB page, and a 200 MB kind exhausted the heap).
 */
export const MAX_AUDIT_FIELD_BYTES = 1024;

/**
 * How much of a span's text or replacement a reader reads when asked for content (`--content`): its first
 * 2,400 bytes on SQLite, 600 characters on PostgreSQL (at most 2,400 bytes), which is what the page shows
 * of it (600 characters), with the whole text's length beside it. A text longer than
 * `MAX_AUDIT_RECORD_BYTES` is not read at all (`null`, its length given).
 */
export const AUDIT_CONTENT_CHARS = 600;
export const AUDIT_CONTENT_BYTES = 4 * AUDIT_CONTENT_CHARS;

/**
 * The most rows (`MAX_AUDIT_ROWS`) and bytes of text (`MAX_AUDIT_TEXT_BYTES`: records, names, content as
 * read) one reader reads, over every call, so one run of `pruneguard audit`, whatever the store holds: 200,000
 * rows and 64 MiB. A session pruneguard writes stays far below both (a record is a few hundred bytes); a
 * planted registry of 10 million rows would not. Before each read the reader asks the engine for the number
 * of rows and their bytes (lengths only, as for a record), and refuses a read past what is left with
 * `AuditReadError` (`too-large`): the command stops with exit 2 naming what was too large, having loaded none of it.
 */
export const MAX_AUDIT_ROWS = 200_000;
export const MAX_AUDIT_TEXT_BYTES = 64 * 1024 * 1024;

/**
 * Columns a reader left in the store because each was longer than `MAX_AUDIT_FIELD_BYTES`: each column's
 * length in bytes, by its name in the table. Present on a row only when it has one; each such column reads
 * `null`, whatever the row's type says (as a SQLite column may hold any value), and the row is to be
 * reported as unreadable, never shown.
 */
export type OversizedColumns = Readonly<Record<string, number>>;

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
  /** `seq`, `status` or `hash` past `MAX_AUDIT_FIELD_BYTES` (each read as `null`). */
  readonly oversized?: OversizedColumns;
}

/** How many audit records one store keeps for one session. */
export interface AuditChainCount {
  readonly store: string;
  readonly session: string;
  readonly n: number;
  /**
   * `store` or `session` past `MAX_AUDIT_FIELD_BYTES`: each reads `null` (whatever the type says), and the
   * chain is to be reported, not shown. Chains whose names are past the bound are counted by their names'
   * lengths: two such chains whose names have the same lengths are one entry.
   */
  readonly oversized?: OversizedColumns;
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
  /**
   * The digest or compressed form a prune put in its place: read only when asked for content, and then only
   * its start (`AUDIT_CONTENT_BYTES`; `null` past `MAX_AUDIT_RECORD_BYTES`).
   */
  readonly replacement?: string | null;
  /** The replacement's whole length in bytes, when `replacement` is not all of it (cut, or not read). */
  readonly replacementBytes?: number;
  /** `ordinal`, `span_id`, `kind` or `backing` past `MAX_AUDIT_FIELD_BYTES` (each read as `null`). */
  readonly oversized?: OversizedColumns;
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
  /** The copy's text, with content only, and then only its start (as a span's `replacement`). */
  readonly text?: string | null;
  /** The text's whole length in bytes, when `text` is not all of it (cut, or not read). */
  readonly textBytes?: number;
  /** A column past `MAX_AUDIT_FIELD_BYTES` (`store`, `span_id`, `handle`, a time or the hold; each read as `null`). */
  readonly oversized?: OversizedColumns;
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
  readonly reason: "missing" | "unopenable" | "unreadable" | "not-a-store" | "bad-schema" | "unreachable" | "newer" | "too-large";

  constructor(reason: AuditReadError["reason"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AuditReadError";
    this.reason = reason;
  }
}

/**
 * SQL for reading `expr` as `as` only up to `limit` bytes, both engines: the value, or `NULL` when it is
 * longer, beside its length as `<as>_bytes`. Both engines answer `octet_length` of a stored value from its
 * header, so a longer value is never fetched. (PostgreSQL: for a text column; its typed columns are bounded
 * by their type.)
 */
export function boundedColumn(expr: string, as: string, limit: number = MAX_AUDIT_FIELD_BYTES): string {
  return `CASE WHEN octet_length(${expr}) <= ${limit} THEN ${expr} END AS ${as}, octet_length(${expr}) AS ${as}_bytes`;
}

/**
 * SQL for the bytes a read of the column `as` (a `boundedColumn` of a query aliased `q`) takes: its length
 * up to `limit`, at most `read` (a content column read in part), and 0 past `limit` or for `NULL` (not read).
 */
export function spentBytes(as: string, limit: number = MAX_AUDIT_FIELD_BYTES, read: number = limit): string {
  const bytes = `q.${as}_bytes`;
  return `(CASE WHEN ${bytes} > ${limit} THEN 0 WHEN ${bytes} > ${read} THEN ${read} ELSE coalesce(${bytes}, 0) END)`;
}

/**
 * The columns of `row` (read with `boundedColumn`) whose `<column>_bytes` is past `limit`, by name; `undefined`
 * when none is. Lengths come back as numbers, or as text (PostgreSQL's bigints).
 */
export function oversizedColumns(row: Readonly<Record<string, unknown>>, columns: readonly string[], limit: number = MAX_AUDIT_FIELD_BYTES): OversizedColumns | undefined {
  let found: Record<string, number> | undefined;
  for (const column of columns) {
    const bytes = Number(row[`${column}_bytes`] ?? 0);
    if (bytes > limit) (found ??= {})[column] = bytes;
  }
  return found;
}

/**
 * What one reader has read so far, against `MAX_AUDIT_ROWS` and `MAX_AUDIT_TEXT_BYTES`. `spend` is called
 * with what the engine says a read will take, before it is made; it throws `AuditReadError` (`too-large`)
 * when that is past what is left, naming `what` ("the registry of session s in store log"). It returns how
 * many rows the read may return (a `LIMIT`: rows written since the count are not read).
 */
export class AuditReadBudget {
  #rows = 0;
  #bytes = 0;

  spend(what: string, rows: number, bytes: number): number {
    if (this.#rows + rows > MAX_AUDIT_ROWS || this.#bytes + bytes > MAX_AUDIT_TEXT_BYTES) {
      const before = this.#rows > 0 ? `, after the ${this.#rows} rows (${this.#bytes} bytes) read before it,` : "";
      throw new AuditReadError(
        "too-large",
        `${what} holds ${rows} rows (${bytes} bytes of text)${before} past what pruneguard audit reads in one run (${MAX_AUDIT_ROWS} rows, ${MAX_AUDIT_TEXT_BYTES} bytes of text; pruneguard writes a few hundred bytes a decision): not read`,
      );
    }
    this.#rows += rows;
    this.#bytes += bytes;
    return rows;
  }
}
