import type { RecordState } from "./records.js";
import type { BackingStore, CheckResult } from "./store.js";

/**
 * The three-condition check, shared by every adapter so that they cannot disagree.
 *
 * Addressability is tested first: with no handle there is nothing to look up by, and asking the store
 * about a null handle would treat "no handle" as a lookup key; the span's own record, found by
 * span id, can only confirm a handle for the same bytes.
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
  return { conditions: { existence: false, addressability: false, provenance: false }, copy: "unbacked", handle: null, expiresAt: null };
}
