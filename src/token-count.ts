/**
 * The linear-cost token count, without a tokenizer: `tokens.ts` binds it to o200k_base for the runtime,
 * and the compiler binds it to the same tokenizer loaded only when a policy sets a tombstone. This module
 * imports nothing, so importing it loads no tokenizer tables.
 */
/** A tokenizer's count of one piece of text; {@link countTokensWith} keeps its cost linear. */
export type BaseCount = (text: string) => number;

/**
 * The base count from an o200k_base module (`gpt-tokenizer/encoding/o200k_base`, its ESM or CommonJS
 * build): text that spells a special token (`<|endoftext|>`, which tool outputs and hostile model output
 * can contain) is counted as plain text, where the tokenizer's default would throw.
 */
export function o200kBase(tokenizer: { countTokens(text: string, options: { disallowedSpecial: Set<string> }): number }): BaseCount {
  const options = { disallowedSpecial: new Set<string>() };
  return (text) => tokenizer.countTokens(text, options);
}

/** Text up to this length is counted in one call: its cost is bounded by its size. */
const SEGMENT = 4096;
/** The longest run of one character class counted whole; longer runs are counted in pieces this long. */
export const LONGEST_EXACT_RUN = 256;

const enum CharClass {
  Space,
  Letter,
  Digit,
  Other,
}

const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
const NUMBER = /\p{N}/u;
const SPACE = /\s/u;

function classOf(code: number, text: string, i: number): CharClass {
  if (code < 128) {
    if (code === 32 || (code >= 9 && code <= 13)) return CharClass.Space;
    if ((code | 32) >= 97 && (code | 32) <= 122) return CharClass.Letter;
    if (code >= 48 && code <= 57) return CharClass.Digit;
    return CharClass.Other;
  }
  const ch = String.fromCodePoint(text.codePointAt(i)!);
  if (LETTER_OR_MARK.test(ch)) return CharClass.Letter;
  if (NUMBER.test(ch)) return CharClass.Digit;
  if (SPACE.test(ch)) return CharClass.Space;
  return CharClass.Other;
}

/**
 * `base`'s count of `text` (o200k_base, from {@link o200kBase}, everywhere in pruneguard).
 *
 * Cost is linear in the text, whatever it contains. A BPE tokenizer's work grows with the square of its
 * longest pre-token, and text made of one long run of a character class (`aaaa…`, 100 KB of spaces or
 * `=`, a minified blob of one letter) is a single pre-token: counted whole, 200 KB took about a minute.
 * So the text is counted in segments cut just before a space that follows a non-space — where o200k's
 * pre-tokenizer always starts a new pre-token, so the count is exact — and any run of one class longer
 * than {@link LONGEST_EXACT_RUN} characters is counted in pieces of that length. Only such runs are
 * approximated (each extra cut can change the count by about one token); all other text counts exactly.
 */
export function countTokensWith(base: BaseCount, text: string): number {
  if (text.length <= LONGEST_EXACT_RUN) return text.length === 0 ? 0 : base(text);
  let total = 0;
  let start = 0; // start of the segment not yet counted
  let cut = -1; // the segment's last exact cut: a space right after a non-space
  let runStart = 0;
  let runClass = classOf(text.charCodeAt(0), text, 0);
  for (let i = 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xdc00 && code <= 0xdfff) continue; // the second half of a surrogate pair: never cut here
    const cls = classOf(code, text, i);
    if (cls !== runClass) {
      if (code === 32 && runClass !== CharClass.Space) cut = i;
      runClass = cls;
      runStart = i;
    } else if (i - runStart >= LONGEST_EXACT_RUN) {
      total += base(text.slice(start, i));
      start = runStart = i;
      cut = -1;
      continue;
    }
    if (i - start >= SEGMENT && cut > start) {
      total += base(text.slice(start, cut));
      start = cut;
      cut = -1;
    }
  }
  return total + base(text.slice(start));
}
