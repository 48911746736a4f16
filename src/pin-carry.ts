/**
 * Pin carrying.
 *
 * A `summarize` or `compress` replacement may keep the gist and lose the one identifier needed later.
 * `carryPins` finds every pinned identifier of the original that the replacement lacks and appends
 * them in one compact line, so the identifier stays in the window whether the prune was reversible or
 * a lossy commitment (where it matters most: nothing else will bring it back).
 */
import { countTokens } from "./tokens.js";
import { compilePinPattern, describePinProblem } from "./policy/pins.js";
import type { PinPattern } from "./types.js";
import type { RE2JS } from "re2js";

/** Bounds on a scan, so a pathological tool output cannot make pinning slow or the suffix huge. */
export interface PinScanOptions {
  /**
   * Distinct matches kept per pattern; later ones are not pinned. Default 50 — a digest carrying more
   * than that many ids of one kind is no longer compact, and the span's handle (when reversible) still
   * reaches the rest.
   */
  readonly maxMatchesPerPattern?: number;
  /**
   * Characters scanned. A longer text is scanned in its first and last `maxScanChars / 2` characters,
   * because tool outputs put their errors at the end. Default 1,000,000.
   */
  readonly maxScanChars?: number;
}

export const DEFAULT_MAX_MATCHES_PER_PATTERN = 50;
export const DEFAULT_MAX_SCAN_CHARS = 1_000_000;

/** The prefix of the carried-pins line: `ids: req_8f3a, E1042`. */
export const CARRIED_PINS_PREFIX = "ids: ";
const SEPARATOR = ", ";

/** What `carryPins` did. */
export interface CarryResult {
  /** The replacement, followed by the carried-pins line when anything was carried. */
  readonly text: string;
  /** The identifiers appended, in the order they first appear in the original. */
  readonly carried: readonly string[];
  /** Token cost (o200k_base) of the appended suffix, newline included; 0 when nothing was carried. */
  readonly tokens: number;
  /** True when a pattern hit `maxMatchesPerPattern` or the original exceeded `maxScanChars`. */
  readonly capped: boolean;
}

/**
 * The compiled matcher for a pin. Throws a `TypeError` for a pattern the engine refuses: the compiler
 * reports those as diagnostics, so reaching here means a policy bypassed it, and a silently skipped
 * pin is exactly the failure pins exist to prevent.
 */
function compile(pattern: PinPattern): { readonly matcher: RE2JS; readonly groups: number } {
  const compiled = compilePinPattern(pattern.pattern);
  if (!compiled.ok) {
    throw new TypeError(`pin ${JSON.stringify(pattern.name)} cannot run: ${describePinProblem(compiled.problem)}`);
  }
  return compiled;
}

/** One pinned identifier: its text and where it starts in the scanned chunk. */
interface Hit {
  readonly id: string;
  readonly at: number;
}

/**
 * Every non-empty identifier the matcher pins in `chunk`, in order, line by line (without its `\n` or
 * `\r\n`, so `^` and `$` match at its ends): an identifier never spans lines, and each line is first tested with the engine's boolean search, which runs on its lazy
 * DFA, so only a line that matches is searched for positions and groups on the slower NFA (most lines
 * of a tool output hold no identifier; measured, this makes a scan three to ten times faster). With
 * capture groups, the first group that took part is the identifier and a match where none did pins
 * nothing; the next search starts at the end of the identifier but never more than one character
 * before the end of the match, so consecutive searches overlap by at most one character and the whole
 * scan stays linear.
 */
function* matchesOf(matcher: RE2JS, groups: number, chunk: string): Generator<Hit> {
  let lineStart = 0;
  do {
    const newline = chunk.indexOf("\n", lineStart);
    const contentEnd = newline < 0 ? chunk.length : newline;
    const end = contentEnd > lineStart && chunk.charCodeAt(contentEnd - 1) === 13 ? contentEnd - 1 : contentEnd;
    const line = chunk.slice(lineStart, end);
    if (matcher.test(line)) yield* lineMatches(matcher, groups, line, lineStart);
    lineStart = contentEnd + 1;
  } while (lineStart < chunk.length);
}

function* lineMatches(matcher: RE2JS, groups: number, line: string, offset: number): Generator<Hit> {
  const m = matcher.matcher(line);
  let from = 0;
  while (from <= line.length && m.find(from)) {
    const start = m.start();
    const end = m.end();
    let id: string | null = null;
    let idStart = start;
    let idEnd = start;
    if (groups === 0) id = m.group();
    else {
      for (let g = 1; g <= groups; g++) {
        if (m.start(g) >= 0) {
          idStart = m.start(g);
          idEnd = m.end(g);
          id = m.group(g);
          break;
        }
      }
    }
    if (id !== null && id.length > 0) yield { id, at: offset + idStart };
    // Without groups the whole match is the identifier; with them, a one-character trailing boundary
    // may also be the next identifier's leading one.
    from = groups === 0 ? Math.max(end, start + 1) : Math.max(id === null ? start : idEnd, end - 1, start + 1);
  }
}

/** What a scan of one text found: see `scanPins`. */
export interface PinScan {
  /** The distinct identifiers, in the order they first appear. */
  readonly ids: readonly string[];
  /** True when a pattern hit `maxMatchesPerPattern` or the text exceeded `maxScanChars`. */
  readonly capped: boolean;
}

/**
 * Scans `text` once for every pin. Use it with `carryScanned` when one original is checked against
 * several candidate replacements (as `compress` does while it fits a body to its target), so the
 * text is not scanned again for each.
 */
export function scanPins(text: string, patterns: readonly PinPattern[], options: PinScanOptions = {}): PinScan {
  const maxPer = options.maxMatchesPerPattern ?? DEFAULT_MAX_MATCHES_PER_PATTERN;
  const maxChars = options.maxScanChars ?? DEFAULT_MAX_SCAN_CHARS;
  let capped = false;
  // Windows of the text to scan, with the offset each starts at (ids are ordered by offset).
  const windows: Array<readonly [number, string]> = [];
  if (text.length <= maxChars) windows.push([0, text]);
  else {
    capped = true;
    const half = Math.floor(maxChars / 2);
    windows.push([0, text.slice(0, half)], [text.length - half, text.slice(text.length - half)]);
  }
  const hits: Array<{ at: number; order: number; id: string }> = [];
  patterns.forEach((pattern, order) => {
    const { matcher, groups } = compile(pattern);
    const seen = new Set<string>();
    for (const [offset, chunk] of windows) {
      if (seen.size >= maxPer) break;
      for (const { id, at } of matchesOf(matcher, groups, chunk)) {
        if (seen.has(id)) continue;
        if (seen.size >= maxPer) {
          capped = true;
          break;
        }
        seen.add(id);
        hits.push({ at: offset + at, order, id });
      }
    }
  });
  hits.sort((a, b) => a.at - b.at || a.order - b.order || b.id.length - a.id.length);
  const ids: string[] = [];
  const distinct = new Set<string>();
  for (const { id } of hits) {
    if (!distinct.has(id)) {
      distinct.add(id);
      ids.push(id);
    }
  }
  return { ids, capped };
}

/**
 * The distinct pinned identifiers in `text`, in the order they first appear.
 *
 * Gotchas: bounded by `options` (see `PinScanOptions`); an identifier two patterns both match is
 * listed once. Throws a `TypeError` for a pattern `compilePinPattern` refuses.
 */
export function findPins(text: string, patterns: readonly PinPattern[], options: PinScanOptions = {}): string[] {
  return [...scanPins(text, patterns, options).ids];
}

const WORDISH = /[\p{L}\p{N}_]/u;

function codePointBefore(s: string, i: number): string {
  if (i <= 0) return "";
  const low = s.charCodeAt(i - 1);
  const start = low >= 0xdc00 && low <= 0xdfff && i >= 2 ? i - 2 : i - 1;
  return s.slice(start, i);
}

/**
 * Whether `id` occurs in `hay` as a whole token: `E104` is not present in `E1042`. Only edges that are
 * letters, digits or `_` need a boundary, so `HTTP 503` and `/app/x.js` are found inside prose.
 */
export function containsPin(hay: string, id: string): boolean {
  if (id.length === 0) return true;
  const needsBefore = WORDISH.test(String.fromCodePoint(id.codePointAt(0) as number));
  const needsAfter = WORDISH.test(codePointBefore(id, id.length));
  for (let at = hay.indexOf(id); at >= 0; at = hay.indexOf(id, at + 1)) {
    const end = at + id.length;
    if (needsBefore && WORDISH.test(codePointBefore(hay, at))) continue;
    if (needsAfter && end < hay.length && WORDISH.test(String.fromCodePoint(hay.codePointAt(end) as number))) continue;
    return true;
  }
  return false;
}

/**
 * Appends to `replacement` every pinned identifier found in `original` and missing from it, as one
 * line: `\nids: req_8f3a, E1042` (no leading newline when the replacement is empty or already ends
 * with one; `\r\n` when the replacement uses CRLF). Use it on every `summarize` digest and `compress` output, reversible or lossy.
 *
 * Details: deterministic, and idempotent — running it again on its own output adds nothing. An
 * identifier contained in another carried one (`E1042` inside `src/E1042.ts`) is not repeated. When
 * nothing is missing, `text` is `replacement` itself. `tokens` is the suffix's cost, for the audit.
 *
 * Gotchas: presence is a whole-token substring test (`containsPin`), not a pattern match, so a digest
 * that rewrites `X-Request-Id: 7f9c0e3a91b2` as `request 7f9c0e3a91b2` keeps it without a suffix.
 */
export function carryPins(
  original: string,
  replacement: string,
  patterns: readonly PinPattern[],
  options: PinScanOptions = {},
): CarryResult {
  return carryScanned(scanPins(original, patterns, options), replacement);
}

/**
 * `carryPins` for an original already scanned with `scanPins`. Linear in the identifiers: each is looked
 * for once in the replacement, and whether it is contained in another missing one is a set lookup of the
 * whole-token pieces of the others (`containedInOthers`), not a comparison of every pair (a range summary
 * over 10,000 pinned ids took 11.6 s that way).
 */
export function carryScanned(found: PinScan, replacement: string): CarryResult {
  const missing = found.ids.filter((id) => !containsPin(replacement, id));
  const inside = containedInOthers(missing);
  const carried = inside.size === 0 ? missing : missing.filter((id) => !inside.has(id));
  if (carried.length === 0) return { text: replacement, carried, tokens: 0, capped: found.capped };
  const lead =
    replacement.length === 0 || replacement.endsWith("\n") ? "" : replacement.includes("\r\n") ? "\r\n" : "\n";
  const suffix = `${lead}${CARRIED_PINS_PREFIX}${carried.join(SEPARATOR)}`;
  return { text: replacement + suffix, carried, tokens: countTokens(suffix), capped: found.capped };
}

function isSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdfff;
}

function wordAt(s: string, i: number): boolean {
  return i < s.length && WORDISH.test(String.fromCodePoint(s.codePointAt(i) as number));
}

/**
 * The identifiers of `ids` that `containsPin` finds inside another of them (`E1042` in `src/E1042.ts`). An
 * occurrence of a shorter identifier starts where the longer one may start a token (its first character or
 * the one before it is not a word character, or at its start) and ends where it may end one, so only those
 * pieces of each identifier, of the lengths the identifiers have, are looked up in a set — every candidate
 * confirmed by `containsPin` itself, so the answer is exactly the pairwise one. An identifier of word
 * characters only (`req_8f3a2c`) has no piece but itself: nothing to look up.
 */
function containedInOthers(ids: readonly string[]): Set<string> {
  const inside = new Set<string>();
  if (ids.length < 2) return inside;
  const known = new Set(ids);
  const lengths = [...new Set(ids.map((id) => id.length))].sort((a, b) => a - b);
  for (const other of ids) {
    const n = other.length;
    if (n <= lengths[0]!) continue;
    // Superset of the boundaries `containsPin` accepts (a surrogate half is always a candidate; the check decides).
    const mayEnd: boolean[] = [];
    for (let e = 0; e <= n; e++) {
      mayEnd.push(e === n || !wordAt(other, e) || !WORDISH.test(codePointBefore(other, e)) || (e > 0 && isSurrogate(other.charCodeAt(e - 1))));
    }
    for (let s = 0; s < n; s++) {
      if (s > 0 && wordAt(other, s) && WORDISH.test(codePointBefore(other, s)) && !isSurrogate(other.charCodeAt(s))) continue;
      for (const len of lengths) {
        const e = s + len;
        if (len >= n || e > n) break;
        if (!mayEnd[e]) continue;
        const piece = other.slice(s, e);
        if (!inside.has(piece) && known.has(piece) && containsPin(other, piece)) inside.add(piece);
      }
    }
  }
  return inside;
}
