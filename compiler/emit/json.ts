/** Canonical JSON for emitted files: keys sorted at every depth (`sortKeys`, then `JSON.stringify`). Same value, same bytes. */
export { contentHash as sha256, sortKeys } from "../../src/hash.js";
