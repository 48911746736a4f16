import { hash } from "node:crypto";

/**
 * SHA-256 of the UTF-8 bytes of `text` (or of `text`, given as bytes), lowercase hex. Byte identity of a copy
 * is decided by this; the compiler hashes files it only compares as bytes, never decoding them.
 *
 * One-shot `crypto.hash` (Node ≥ 21.7) rather than `createHash(…).update(…).digest(…)`: the same digest
 * (a lone surrogate becomes U+FFFD in both), without a Hash object per call — this runs once per audit
 * record and once per appended span.
 */
export function contentHash(text: string | Uint8Array): string {
  return hash("sha256", text, "hex");
}

/**
 * JSON with object keys sorted at every depth, so a value hashes the same wherever it is serialised.
 * `undefined` members are omitted, as in `JSON.stringify`. Audit records hash the compact form; the
 * compiler writes IR files with `indent` 2. Either output feeds stored hashes: it must never change.
 */
export function canonicalJson(value: unknown, indent?: number): string {
  return JSON.stringify(sortKeys(value), null, indent);
}

/** `value` with object keys sorted at every depth and `undefined` members left out; `canonicalJson` stringifies it. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
