import * as o200k from "gpt-tokenizer/encoding/o200k_base";
import { countTokensWith, o200kBase } from "./token-count.js";

export { LONGEST_EXACT_RUN } from "./token-count.js";

const base = o200kBase(o200k);

/**
 * Token count in o200k_base (the encoding of current OpenAI models), the unit the policy's budgets and
 * the render bounds (tombstone ≤ 13, index line ≤ 12) are stated in; linear in the text whatever it
 * contains (see {@link countTokensWith}).
 */
export function countTokens(text: string): number {
  return countTokensWith(base, text);
}
