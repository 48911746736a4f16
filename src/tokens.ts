import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";

const NO_SPECIAL: { disallowedSpecial: Set<string> } = { disallowedSpecial: new Set() };

/**
 * Token count in o200k_base (the encoding of current OpenAI models), the unit the policy's budgets and
 * the render bounds (tombstone ≤ 13, index line ≤ 12) are stated in.
 *
 * Gotcha avoided: text that spells a special token (`<|endoftext|>`, which tool outputs and hostile
 * model output can contain) is counted as plain text; the tokenizer's default would throw.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : countO200k(text, NO_SPECIAL);
}
