/** The stored form of a span's copy, and how every adapter reads it. */
import { StoreError } from "../errors.js";
import type { CopyCandidate, CopySearch, CopySearchRequest, LookupResult, PersistInput, RegisteredSpan, StoreCapabilities } from "./store.js";

/** A stored span record as every adapter reads it (`text` is `null` once rotated out). */
export interface StoredRecord {
  readonly handle: string;
  readonly spanId: string;
  readonly kind: string;
  readonly text: string | null;
  readonly hash: string;
  readonly createdAt: number;
  readonly expiredAt: number | null;
}

/** The record a store found for a prune, read inside its transaction. */
export type RecordState =
  | { readonly state: "live"; readonly handle: string; readonly spanId: string; readonly hash: string; readonly createdAt: number }
  | { readonly state: "expired"; readonly handle: string; readonly spanId: string }
  | { readonly state: "absent" };

export function recordState(rec: StoredRecord | undefined): RecordState {
  if (!rec) return { state: "absent" };
  if (rec.text === null) return { state: "expired", handle: rec.handle, spanId: rec.spanId };
  return { state: "live", handle: rec.handle, spanId: rec.spanId, hash: rec.hash, createdAt: rec.createdAt };
}

/** A lookup's answer for a record; a store that does not distinguish absent hides rotated records. */
export function lookupAnswer(rec: StoredRecord | undefined, capabilities: StoreCapabilities): LookupResult {
  if (!rec) return { status: "absent" };
  if (rec.text === null) {
    if (!capabilities.distinguishesAbsent) return { status: "absent" };
    return { status: "expired", handle: rec.handle, spanId: rec.spanId, hash: rec.hash, expiredAt: rec.expiredAt ?? 0 };
  }
  return { status: "found", handle: rec.handle, spanId: rec.spanId, kind: rec.kind, text: rec.text, hash: rec.hash, createdAt: rec.createdAt };
}

/** A live copy is never overwritten with other bytes: that would destroy the copy a handle vouches for. */
export function spanTaken(store: string, input: PersistInput): Error {
  return new Error(`store ${store}: ${input.spanId} of session ${input.session} already holds other bytes; refusing to overwrite a live copy`);
}

/**
 * Refuses a session id the store would keep altered: SQLite and PostgreSQL encode text as UTF-8, where a
 * lone surrogate becomes U+FFFD (so two ids would name one session, its copies, chain and budget); with
 * `nul: false` (PostgreSQL, whose text cannot hold it), a NUL too. `ContextWindow` refuses lone surrogates in
 * its options; this guards direct callers.
 */
export function checkSession(store: string, session: string, options: { readonly nul: boolean } = { nul: true }): void {
  if (!session.isWellFormed()) {
    throw new StoreError(store, `session id ${JSON.stringify(session)} is not well-formed text (a lone surrogate): refused, as the store would keep it as U+FFFD and mix it with another session`);
  }
  if (!options.nul && session.includes("\0")) {
    throw new StoreError(store, `session id ${JSON.stringify(session)} holds a NUL, which this store cannot keep: refused`);
  }
}

/** Persisting into a store that does not allow writes. */
export function readOnly(store: string): Error {
  return new Error(`store ${store} is read-only`);
}

/** A span registry row as the SQL adapters read it (`pruneguard_spans` / `spans`). */
export interface SpanRow {
  readonly ordinal: number | string;
  readonly span_id: string;
  readonly kind: string;
  readonly hash: string;
  readonly grp: string | null;
  readonly message: string | null;
  readonly backing: string | null;
  readonly replacement: string | null;
}

/** A registry row as the store interface reports it. */
export function registeredSpan(r: SpanRow): RegisteredSpan {
  return {
    spanId: String(r.span_id), ordinal: Number(r.ordinal), kind: String(r.kind), hash: String(r.hash), group: r.grp ?? null,
    message: r.message === null || r.message === undefined ? null : (JSON.parse(r.message) as RegisteredSpan["message"]),
    store: r.backing ?? null, replacement: r.replacement ?? null,
  };
}

/**
 * From this many copies asked about at once, the SQL stores read a search's copies by walking the session's
 * records (its index range; rows not asked about are ignored) instead of one handle at a time: on SQLite a
 * probe of the handle index per copy measured 3.4 µs a copy and the walk 2.5 µs, and on PostgreSQL the walk
 * spares a statement listing every handle. Below it, a session's other records would cost more than they save.
 */
export const SESSION_SCAN_COPIES = 512;

/** A record a search read for one copy asked about: `text` only when it holds the literal (a candidate). */
export interface SearchedRecord {
  readonly handle: string;
  readonly spanId: string;
  readonly kind: string;
  readonly hash: string;
  readonly rotated: boolean;
  readonly text: string | null;
}

/**
 * A search's answer from the records read for the copies asked about (by handle; `undefined` where there is
 * none): every adapter's one rule for which copies are gone and which are candidates, in the order asked.
 */
export function copySearchAnswer(request: CopySearchRequest, rows: ReadonlyArray<SearchedRecord | undefined>): CopySearch {
  const byHandle = new Map<string, SearchedRecord>();
  for (const r of rows) if (r !== undefined) byHandle.set(r.handle, r);
  const candidates: CopyCandidate[] = [];
  const gone: string[] = [];
  let more = false;
  for (const c of request.copies) {
    const r = byHandle.get(c.handle);
    if (r === undefined || r.rotated || r.hash !== c.hash) {
      gone.push(c.handle);
      continue;
    }
    if (r.text === null) continue;
    if (candidates.length >= request.limit) more = true;
    else candidates.push({ handle: r.handle, spanId: r.spanId, kind: r.kind, text: r.text, hash: r.hash });
  }
  return { candidates, more, gone };
}

/**
 * The part of a literal a store filters on: the longest run without a NUL (SQL text functions stop at one),
 * or `""` (every copy is a candidate). The window confirms every candidate on its bytes, so a shorter filter
 * only widens the candidates.
 */
export function storeLiteral(literal: string | null): string {
  if (literal === null) return "";
  return literal.split("\0").reduce((best, part) => (part.length > best.length ? part : best), "");
}
