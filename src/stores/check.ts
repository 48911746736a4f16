import type { BackingStore, CheckResult, LookupResult, PersistInput, PruneDecision, PruneTransaction, StoreCapabilities } from "./store.js";

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
export function spanTaken(store: string, input: PersistInput): string {
  return `store ${store}: ${input.spanId} of session ${input.session} already holds other bytes; refusing to overwrite a live copy`;
}

/** The record a store found for a prune, read inside its transaction. */
export type RecordState =
  | { readonly state: "live"; readonly handle: string; readonly spanId: string; readonly hash: string; readonly createdAt: number }
  | { readonly state: "expired"; readonly handle: string; readonly spanId: string }
  | { readonly state: "absent" };

/**
 * The three-condition check, shared by every adapter so that they cannot disagree.
 *
 * Addressability is tested first: with no handle there is nothing to look up by (the seed's sketch
 * asked the store about a null handle before testing it); the span's own record, found by span id, can
 * only confirm a handle for the same bytes.
 */
export function computeCheck(
  handle: string | null,
  spanId: string,
  windowHash: string,
  found: RecordState,
  store: Pick<BackingStore, "capabilities" | "retentionMs">,
): CheckResult {
  const provenance = store.capabilities.distinguishesAbsent;
  if (handle === null) {
    // The window lost (or never got) the handle. The store may still hold this span's record: confirm
    // its handle when the bytes match, and report a differing record rather than letting it be replaced.
    if (found.state === "absent" || found.spanId !== spanId) {
      return { conditions: { existence: false, addressability: false, provenance }, copy: "no-handle", handle: null, expiresAt: null };
    }
    if (found.state === "live" && found.hash !== windowHash) {
      return { conditions: { existence: false, addressability: false, provenance }, copy: "hash-mismatch", handle: null, expiresAt: null };
    }
    return computeCheck(found.handle, spanId, windowHash, found, store);
  }
  if (found.state === "absent" || found.spanId !== spanId) {
    return { conditions: { existence: false, addressability: true, provenance }, copy: "absent", handle, expiresAt: null };
  }
  if (found.state === "expired") {
    return { conditions: { existence: false, addressability: true, provenance }, copy: "expired", handle, expiresAt: null };
  }
  if (found.hash !== windowHash) {
    return { conditions: { existence: false, addressability: true, provenance }, copy: "hash-mismatch", handle, expiresAt: null };
  }
  const expiresAt = store.retentionMs === null ? null : found.createdAt + store.retentionMs;
  return { conditions: { existence: true, addressability: true, provenance }, copy: "ok", handle, expiresAt };
}

/** The check result for a kind that names no store: nothing backs it, nothing can be addressed. */
export function unbackedCheck(): CheckResult {
  return { conditions: { existence: false, addressability: false, provenance: false }, copy: "no-handle", handle: null, expiresAt: null };
}

/** Calls `decide` and insists on one decision per item, so an adapter never applies a partial answer. */
export function decideAll(txn: PruneTransaction, checks: readonly CheckResult[]): readonly PruneDecision[] {
  const decisions = txn.decide(checks);
  if (decisions.length !== checks.length) {
    throw new Error(`decide returned ${decisions.length} decisions for ${checks.length} items`);
  }
  return decisions;
}

export function resolveCapabilities(o: {
  distinguishesAbsent?: boolean | undefined;
  holds?: boolean | undefined;
  writable?: boolean | undefined;
}): StoreCapabilities {
  return Object.freeze({
    distinguishesAbsent: o.distinguishesAbsent ?? true,
    holds: o.holds ?? true,
    writable: o.writable ?? true,
  });
}

/** Retention must be a non-negative finite number of ms, or null for "forever". */
export function resolveRetention(name: string, retentionMs: number | null | undefined): number | null {
  if (retentionMs === undefined || retentionMs === null) return null;
  if (!Number.isFinite(retentionMs) || retentionMs < 0) {
    throw new RangeError(`store ${name}: retentionMs must be a non-negative number of milliseconds or null, got ${retentionMs}`);
  }
  return retentionMs;
}

export function formatHandle(prefix: string, n: number): string {
  return `${prefix}#${n}`;
}

export function resolveHandlePrefix(name: string, prefix: string | undefined): string {
  const p = prefix ?? "";
  if (!/^[a-z]{0,4}$/.test(p)) throw new RangeError(`store ${name}: handlePrefix must be 0-4 lowercase letters, got ${JSON.stringify(p)}`);
  return p;
}
