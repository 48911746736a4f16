/**
 * The tombstone is what keeps provenance for a lossy prune, so it must name the span and stay small: the
 * reference wording is 13 tokens (o200k_base), and ours may not be larger.
 */
import { createRequire } from "node:module";
import { tombstoneLine } from "../../src/render/tombstone.js";
import { countTokensWith, o200kBase, type BaseCount } from "../../src/token-count.js";
import { diagnostic, excerpt } from "../diagnostics/diagnostic.js";
import type { Check } from "./context.js";

export const TOMBSTONE_MAX_TOKENS = 13;
/** The longest span id the budget is checked against. */
export const TOMBSTONE_SAMPLE_SPAN = "span_99999";

export const checkTombstone: Check = (policy) => {
  const t = policy.tombstone;
  if (t === null) return [];
  if (!t.text.includes("{span}")) return [diagnostic("PG2007", t.location, { placeholder: "{span}" })];
  // Filled and counted by the runtime's own functions, so the check measures the line the model will read.
  const filled = tombstoneLine(TOMBSTONE_SAMPLE_SPAN, t.text);
  const tokens = countTokensWith(o200k(), filled);
  // Quoted only as far as a reader needs to recognise it: the wording may be 64 Ki characters long.
  if (tokens > TOMBSTONE_MAX_TOKENS) return [diagnostic("PG2008", t.location, { tokens, filled: excerpt(filled), max: TOMBSTONE_MAX_TOKENS })];
  return [];
};

let base: BaseCount | undefined;

/**
 * The runtime's o200k_base count, its tokenizer loaded on the first policy that sets a tombstone: the
 * tables take ~0.3 s to load, and a compile of policies without one never needs them. The package's
 * CommonJS build, loaded synchronously, is the same tokenizer the runtime imports as ESM.
 */
function o200k(): BaseCount {
  base ??= o200kBase(createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as Parameters<typeof o200kBase>[0]);
  return base;
}
