import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";

/**
 * Token count in o200k_base (the encoding of current OpenAI models), the unit the policy's budgets and
 * the render bounds (tombstone ≤ 13, index line ≤ 12) are stated in.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : countO200k(text);
}
