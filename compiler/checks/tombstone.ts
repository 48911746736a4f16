/**
 * The tombstone is what keeps provenance for a lossy prune, so it must name the span and stay small: the
 * reference wording is 13 tokens (o200k_base), and ours may not be larger.
 */
import { createRequire } from "node:module";
import { diagnostic } from "../diagnostics/diagnostic.js";
import type { Check } from "./context.js";

export const TOMBSTONE_MAX_TOKENS = 13;
/** The longest span id the budget is checked against. */
export const TOMBSTONE_SAMPLE_SPAN = "span_99999";

/**
 * The tokenizer is loaded here, on the first policy that sets a tombstone, and never otherwise: its
 * o200k tables cost a compile ~0.3 s to load. `require` rather than `import()` keeps the checks
 * synchronous (they are pure functions of the IR).
 */
let countTokens: ((text: string) => number) | undefined;
const tokenCount = (text: string): number => {
  countTokens ??= (createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as { countTokens: (text: string) => number }).countTokens;
  return countTokens(text);
};

export const checkTombstone: Check = (policy) => {
  const t = policy.tombstone;
  if (t === null) return [];
  if (!t.text.includes("{span}")) return [diagnostic("PG2007", t.location, { placeholder: "{span}" })];
  const filled = t.text.replaceAll("{span}", TOMBSTONE_SAMPLE_SPAN);
  const tokens = tokenCount(filled);
  if (tokens > TOMBSTONE_MAX_TOKENS) return [diagnostic("PG2008", t.location, { tokens, filled, max: TOMBSTONE_MAX_TOKENS })];
  return [];
};
