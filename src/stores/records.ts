/** The stored form of a span's copy, and how every adapter reads it. */
import type { LookupResult, PersistInput, RegisteredSpan, StoreCapabilities } from "./store.js";

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
