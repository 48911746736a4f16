/**
 * The rows the audit readers (`sqlite/sqlite-audit.ts`, `postgres/postgres-audit.ts`) read, as the engines
 * return them, and how each becomes what `AuditReader` answers: the same for both engines. Every column is
 * read with `boundedColumn` (beside its length as `<column>_bytes`); a column past its bound reads `null` and
 * is named in the answer's `oversized`, for the command to report the row instead of showing it.
 */
import { AUDIT_CONTENT_BYTES, oversizedColumns, type AuditChainCount, type AuditCopy, type AuditRow, type AuditSpan } from "./audit-reader.js";

/** A length as an engine returns it: a number, text (PostgreSQL's bigint), or `null` for a `NULL` value. */
type Bytes = number | string | null | undefined;

/** One (store, session) of the audit table, with its count. */
export interface ChainRow {
  readonly store: string;
  readonly store_bytes: Bytes;
  readonly session: string;
  readonly session_bytes: Bytes;
  readonly n: number | string;
}

/** An audit row. `seq` as the engine returns it (a legacy SQLite file may hold text there). */
export interface AuditRowRead {
  readonly seq: unknown;
  readonly seq_bytes?: Bytes;
  readonly status: string;
  readonly status_bytes: Bytes;
  readonly hash: string;
  readonly hash_bytes: Bytes;
  readonly bytes: number;
  readonly record: string | null;
}

/** The registry's columns a reader reads besides the replacement. */
export const SPAN_COLUMNS = ["ordinal", "span_id", "kind", "backing"] as const;

/** A registry row (the replacement, with content, decoded to text already). */
export interface SpanRow {
  readonly ordinal: number | string;
  readonly span_id: string;
  readonly kind: string;
  readonly backing: string | null;
  readonly replacement?: string | null;
  readonly replacement_bytes?: Bytes;
  readonly [bytes: `${string}_bytes`]: Bytes;
}

/** The copies' columns a reader reads besides the text. */
export const COPY_COLUMNS = ["store", "span_id", "handle", "created_at", "expired_at", "held", "held_until"] as const;

/** A copy's row (bigints as numbers or text; the text, with content, decoded to text already). */
export interface CopyRow {
  readonly store: string;
  readonly span_id: string;
  readonly handle: string;
  readonly created_at: number | string;
  readonly expired_at: number | string | null;
  readonly held: number | boolean;
  readonly held_until: number | string | null;
  readonly text?: string | null;
  readonly text_bytes?: Bytes;
  readonly [bytes: `${string}_bytes`]: Bytes;
}

/** `{ oversized }` when a column of `row` was past its bound, else nothing. */
function oversizedOf(row: object, columns: readonly string[]): { oversized?: Readonly<Record<string, number>> } {
  const oversized = oversizedColumns(row as Record<string, unknown>, columns);
  return oversized === undefined ? {} : { oversized };
}

/** `{ [key]: bytes }` when a content column was read in part or not at all (longer than `AUDIT_CONTENT_BYTES`). */
function cutOf<K extends string>(key: K, bytes: Bytes): { [k in K]?: number } {
  return bytes !== null && bytes !== undefined && Number(bytes) > AUDIT_CONTENT_BYTES ? ({ [key]: Number(bytes) } as { [k in K]?: number }) : {};
}

export function chainCount(r: ChainRow): AuditChainCount {
  return { store: r.store, session: r.session, n: Number(r.n), ...oversizedOf(r, ["store", "session"]) };
}

export function auditRow(r: AuditRowRead): AuditRow {
  return { seq: r.seq as number, status: r.status, hash: r.hash, bytes: r.bytes, record: r.record, ...oversizedOf(r, ["seq", "status", "hash"]) };
}

export function auditSpan(r: SpanRow, content: boolean): AuditSpan {
  return {
    ordinal: Number(r.ordinal), spanId: r.span_id, kind: r.kind, backing: r.backing,
    ...(content ? { replacement: r.replacement ?? null, ...cutOf("replacementBytes", r.replacement_bytes) } : {}), ...oversizedOf(r, SPAN_COLUMNS),
  };
}

export function auditCopy(r: CopyRow, content: boolean): AuditCopy {
  return {
    store: r.store, spanId: r.span_id, handle: r.handle, createdAt: Number(r.created_at), expiredAt: r.expired_at === null ? null : Number(r.expired_at),
    held: r.held === 1 || r.held === true, heldUntil: r.held_until === null ? null : Number(r.held_until),
    ...(content ? { text: r.text ?? null, ...cutOf("textBytes", r.text_bytes) } : {}), ...oversizedOf(r, COPY_COLUMNS),
  };
}
