/**
 * The framing rule: text that came from outside the runtime — span text, digests, compressed bodies,
 * anything a tool or a model wrote — is rendered only inside a frame, and a runtime line is never inside
 * one. So no span can print a line the model would take for the runtime's word.
 *
 * - Every line of untrusted text that starts at the margin is rendered after the gutter `│ ` (U+2502 and a
 *   space); a line indented by a tab or two spaces is rendered as it is, because no runtime line starts with
 *   whitespace (and a line indented by one space, which a reader might not see as indented, takes the
 *   gutter). So every line that could begin like a runtime line carries the gutter, and the reader's rule is
 *   one test: a line that starts with the gutter or with whitespace is span text. The gutter costs one o200k
 *   token a line; indented lines — most of code — cost nothing: framing adds about 3 % to a tool output
 *   where a gutter on every line added 8 % (figure 11 measures a session against a plain rendering).
 * - "Line" means whatever any common reader splits on: LF, CR, CRLF, VT, FF, the file/group/record
 *   separators U+001C–U+001E, NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029),
 *   the set Python's `str.splitlines` uses. Each becomes a line break plus a gutter, so a CR or U+2028
 *   inside a tool output cannot start a line of its own.
 * - Untrusted fragments a runtime line must quote (a directive's unknown key in an error message) are cut
 *   to one line with `oneLine` first: line breaks and other control characters become visible escapes.
 *
 * Zero-width and look-alike characters need no special case: they can change what a framed line looks
 * like, never whether it is framed, because the gutter is written by the runtime before the text starts.
 * The model-facing grammar of runtime lines is `render/grammar.ts`; the property test in
 * `test/window/framing.test.ts` renders generated hostile text and parses every line back.
 */

/** The gutter before every line of untrusted text. */
export const GUTTER = "│ ";

/** Every line break a reader may honour: CRLF first, then each single-character terminator. */
export const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
const LINE_BREAKS = new RegExp(LINE_BREAK.source, "g");

/** Splits text into lines on every terminator in `LINE_BREAK`. */
export function splitLines(text: string): string[] {
  return text.split(LINE_BREAKS);
}

/** A line indented so that it can never read as a runtime line: a tab, or two spaces. */
const INDENTED = /^(?:\t| {2})/;

/** The gutter's mark, without its space: what a framed line at the margin starts with. */
export const GUTTER_MARK = GUTTER.trimEnd();

/** Whether a rendered line is span text by the framing rule: it starts with the gutter or with whitespace. */
export function isFramed(line: string): boolean {
  return line.startsWith(GUTTER_MARK) || line.startsWith(" ") || line.startsWith("\t");
}

/**
 * Untrusted text in its frame: every line at the margin (and every empty line) after the gutter, every
 * indented line as it is, joined with LF. Linear in the text.
 */
export function frameUntrusted(text: string): string {
  const lines = text.split(LINE_BREAKS);
  for (let i = 0; i < lines.length; i++) if (!INDENTED.test(lines[i]!)) lines[i] = GUTTER + lines[i]!;
  return lines.join("\n");
}

// C0 and C1 controls (tab aside), the line and paragraph separators, and bidi controls that reorder a line.
const UNSAFE_IN_LINE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

// A surrogate that is not half of a pair (the `u` flag matches whole pairs as one code point, never this class).
const LONE_SURROGATE = /[\ud800-\udfff]/gu;

const escapeUnit = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * An untrusted fragment fit to sit inside one runtime line: control characters, line breaks, bidi
 * overrides and lone surrogates (which JSON text can carry, `"\\ud800"`) become `\uXXXX` escapes, and it
 * is cut to `max` characters on a code-point boundary — so the line is always well-formed UTF-16.
 */
export function oneLine(fragment: string, max = 120): string {
  // Escaped before it is cut, so the bound holds for the line as written; only the first `max` characters
  // are escaped, so a megabyte fragment costs no more than a short one.
  const escaped = cutUnits(fragment, max).replace(UNSAFE_IN_LINE, escapeUnit).replace(LONE_SURROGATE, escapeUnit);
  return escaped.length > max || fragment.length > max ? `${cutUnits(escaped, max - 3)}...` : escaped;
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair: a lone
 * surrogate is not valid UTF-8, and a provider refuses a request that holds one.
 */
export function cutUnits(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
