/**
 * The tombstone is what keeps provenance for a lossy prune, so it must name the span and stay small: the
 * reference wording is 13 tokens (o200k_base), and ours may not be larger.
 */
import { tombstoneLine } from "../../src/render.js";
import { countTokens } from "../../src/tokens.js";
import { diagnostic } from "../diagnostics/diagnostic.js";
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
  const tokens = countTokens(filled);
  if (tokens > TOMBSTONE_MAX_TOKENS) return [diagnostic("PG2008", t.location, { tokens, filled, max: TOMBSTONE_MAX_TOKENS })];
  return [];
};
