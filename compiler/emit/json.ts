/** Canonical JSON for emitted files: sorted keys, two-space indent, trailing newline. Same value, same bytes. */
import { canonicalJson as sortedJson, contentHash } from "../../src/hash.js";

export function canonicalJson(value: unknown): string {
  return `${sortedJson(value, 2)}\n`;
}

/** SHA-256 of the UTF-8 bytes of `text`, lowercase hex: the runtime's content hash. */
export const sha256 = contentHash;
