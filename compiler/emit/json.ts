/** Canonical JSON for emitted files: sorted keys at every depth. Same value, same bytes. */
import { canonicalJson as sortedJson, contentHash } from "../../src/hash.js";

/** Sorted keys, two-space indent, trailing newline. */
export function canonicalJson(value: unknown): string {
  return `${sortedJson(value, 2)}\n`;
}

/** Sorted keys, no whitespace. */
export { sortedJson };

/** SHA-256 of the UTF-8 bytes of `text`, lowercase hex: the runtime's content hash. */
export const sha256 = contentHash;
