/** Canonical JSON for emitted files: keys sorted at every depth (`sortKeys`, then `JSON.stringify`). Same value, same bytes. */

// `node:crypto` through `process.getBuiltinModule`, as compiler/emit/files.ts takes `node:fs`: the
// incremental build hashes with this on the path of a `check` with nothing to do.
const { hash } = process.getBuiltinModule("node:crypto");

/**
 * SHA-256 of the UTF-8 bytes of `text` (or of `text`, given as bytes), lowercase hex: the runtime's
 * `contentHash` (src/hash.ts), the digest the manifest and generated headers record.
 */
export function sha256(text: string | Uint8Array): string {
  return hash("sha256", text, "hex");
}

/**
 * `value` with object keys sorted at every depth and `undefined` members left out: the same value as the
 * runtime's `sortKeys` (src/hash.ts), so `JSON.stringify` of either gives the same bytes. The compiler
 * copies every IR of a build with it, some 600 objects a policy, so the keys are put in order in the array
 * `Object.keys` returns (an insertion sort, by UTF-16 code units as `Array.prototype.sort` compares them)
 * rather than by `sort`, which allocates a working copy on each call (BENCHMARKS.md, figure 4).
 */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    for (let i = 1; i < keys.length; i++) {
      const key = keys[i]!;
      let j = i - 1;
      for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
      keys[j + 1] = key;
    }
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
