/**
 * A search query as the runtime runs it: an exact substring, or a bounded regular expression on re2js
 * (RE2 syntax, linear time in the text whatever the pattern), with the one literal every match must
 * contain, which stores use to find candidate copies in their index. Queries come from the model, so
 * they are untrusted: bounded in length, refused when they could match the empty string, and never sent
 * to a store's own regex engine.
 */
import type { RE2JS } from "re2js";
import { compilePinPattern, describePinProblem } from "../policy/pins.js";

/** Longest query accepted, in characters (substring or pattern). */
export const MAX_QUERY_CHARS = 200;

/**
 * Largest program a search pattern may compile to, in re2js instructions. Linear time is linear in the text
 * *times* the program: the NFA steps every live thread on every character, so a 175-character pattern that
 * compiles to 60,000 instructions costs seconds per 12 KB span. Real queries compile to 10–250.
 */
export const MAX_QUERY_PROGRAM = 1_000;

/**
 * The work one search may do matching a pattern, in characters × program instructions (the NFA's worst
 * case per character). Patterns dense in character classes near the program limit match at 14,000–28,000
 * units a millisecond on a 2-core machine (`(?:[\pL\pN\pM\pS\pP]{30}){30}c`: 903 instructions, 14,000), so this
 * is at most ~0.6 s of matching per search; for a 20-instruction pattern, 400,000 characters. (It was 32M,
 * from a rate of 60,000 a millisecond measured on simpler patterns: 2 s for the dense ones.) Spans that
 * would pass it are not read, and the answer says how many (`coverage.unread`). Substring queries and
 * texts without the pattern's required literal cost nothing against it.
 */
export const SEARCH_WORK_UNITS = 8_000_000;

/** Compiled queries kept (the directive's parse and the search compile the same one): each may hold an 8 MB DFA. */
const QUERY_CACHE_SIZE = 4;
const queryCache = new Map<string, { readonly ok: true; readonly query: SearchQuery } | QueryProblem>();

/** A query, checked and compiled. */
export type SearchQuery =
  | { readonly type: "substring"; readonly text: string; readonly literal: string }
  | {
      readonly type: "regex";
      readonly text: string;
      readonly matcher: RE2JS;
      /** The compiled program's size in instructions: what one character of text costs at most. */
      readonly program: number;
      /** A substring every match contains, for the store's index; `null` when none can be read off the pattern. */
      readonly literal: string | null;
    };

export type QueryProblem = { readonly ok: false; readonly message: string };

/** Compiles a query from the model; a problem is data, never a throw. */
export function compileQuery(text: string, regex: boolean, maxChars: number = MAX_QUERY_CHARS): { readonly ok: true; readonly query: SearchQuery } | QueryProblem {
  if (text.length === 0) return { ok: false, message: "query is empty" };
  if (text.length > maxChars) return { ok: false, message: `query longer than ${maxChars} characters` };
  if (!regex) return { ok: true, query: { type: "substring", text, literal: text } };
  const cached = queryCache.get(text);
  if (cached !== undefined) return cached;
  const result = compileRegex(text);
  queryCache.set(text, result);
  if (queryCache.size > QUERY_CACHE_SIZE) queryCache.delete(queryCache.keys().next().value!);
  return result;
}

function compileRegex(text: string): { readonly ok: true; readonly query: SearchQuery } | QueryProblem {
  // The pin compiler is the one place patterns are compiled: RE2 syntax on re2js, and a pattern that can
  // match the empty string is refused (every text would match it, and a snippet of nothing says nothing).
  const compiled = compilePinPattern(text, { cache: false });
  if (!compiled.ok) return { ok: false, message: `regex: ${describePinProblem(compiled.problem)}` };
  const program = compiled.matcher.programSize();
  if (program > MAX_QUERY_PROGRAM) {
    return {
      ok: false,
      message: `regex: compiles to ${program} instructions, more than ${MAX_QUERY_PROGRAM}; use fewer or smaller counted repeats (\`+\` rather than \`{999}\`), or a substring`,
    };
  }
  return { ok: true, query: { type: "regex", text, matcher: compiled.matcher, program, literal: requiredLiteral(text) } };
}

const CLASS_ESCAPE = /[A-Za-z0-9]/;

/**
 * The longest run of characters that every match of `pattern` contains, read conservatively off the top
 * level of the pattern: groups, classes, escapes such as `\d`, and anything optional end a run; a
 * top-level alternation or a flag group means there is no such run. Returns `null` for runs shorter
 * than one character. A wrong answer here would make a store miss a copy, so when in doubt it gives up.
 */
export function requiredLiteral(pattern: string): string | null {
  if (/\(\?[A-Za-z-]*\)/.test(pattern) || pattern.includes("\\Q")) return null;
  let best = "";
  let cur = "";
  const flush = (): void => {
    if ([...cur].length > [...best].length) best = cur;
    cur = "";
  };
  /** Drops the last code point of the run: a quantifier made it optional. */
  const dropLast = (): void => {
    const cps = [...cur];
    cps.pop();
    cur = cps.join("");
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === undefined || /[0-9]/.test(next)) return null;
      if (CLASS_ESCAPE.test(next)) {
        flush();
        // \p{Greek}, \x{263a}: skip the braces too.
        i += 2;
        if (pattern[i] === "{") i = skipTo(pattern, i, "}");
        else if (next === "p" || next === "P" || next === "x") i += next === "x" ? 2 : 1;
        continue;
      }
      const cp = String.fromCodePoint(pattern.codePointAt(i + 1)!);
      cur += cp;
      i += 1 + cp.length;
      i = quantified(pattern, i, dropLast, flush);
      continue;
    }
    if (c === "(") {
      flush();
      i = skipGroup(pattern, i);
      if (i < 0) return null;
      i = quantified(pattern, i, () => undefined, flush);
      continue;
    }
    if (c === "[") {
      flush();
      i = skipClass(pattern, i);
      if (i < 0) return null;
      i = quantified(pattern, i, () => undefined, flush);
      continue;
    }
    if (c === "|") return null;
    if (c === "." || c === "^" || c === "$") {
      flush();
      i++;
      i = quantified(pattern, i, () => undefined, flush);
      continue;
    }
    if (c === "*" || c === "+" || c === "?" || c === "{") {
      // A quantifier with nothing before it at this level (after a group or class it was consumed).
      flush();
      i = c === "{" ? skipTo(pattern, i, "}") : i + 1;
      continue;
    }
    const cp = String.fromCodePoint(pattern.codePointAt(i)!);
    cur += cp;
    i += cp.length;
    i = quantified(pattern, i, dropLast, flush);
  }
  flush();
  return best.length > 0 ? best : null;
}

/**
 * After an atom at `i`: a quantifier that allows zero repetitions drops the atom from the run; any
 * quantifier ends the run (what follows a repeated atom is not contiguous with what came before it).
 */
function quantified(pattern: string, i: number, dropLast: () => void, flush: () => void): number {
  const q = pattern[i];
  if (q === "*" || q === "?") {
    dropLast();
    flush();
    i++;
  } else if (q === "+") {
    flush();
    i++;
  } else if (q === "{" && /^\{\d+(?:,\d*)?\}/.test(pattern.slice(i))) {
    if (Number(/^\{(\d+)/.exec(pattern.slice(i))![1]) === 0) dropLast();
    flush();
    i = skipTo(pattern, i, "}");
  } else return i;
  // A lazy or possessive marker after the quantifier.
  if (pattern[i] === "?" || pattern[i] === "+") i++;
  return i;
}

function skipTo(pattern: string, i: number, close: string): number {
  const end = pattern.indexOf(close, i);
  return end < 0 ? pattern.length : end + 1;
}

/** The index after the class that starts at `i` (`[`), or -1 when it does not close. */
function skipClass(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === "^") j++;
  if (pattern[j] === "]") j++;
  while (j < pattern.length) {
    if (pattern[j] === "\\") j += 2;
    else if (pattern[j] === "[" && pattern[j + 1] === ":") j = skipTo(pattern, j, ":]");
    else if (pattern[j] === "]") return j + 1;
    else j++;
  }
  return -1;
}

/** The index after the group that starts at `i` (`(`), or -1 when it does not close. */
function skipGroup(pattern: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < pattern.length) {
    const c = pattern[j]!;
    if (c === "\\") j += 2;
    else if (c === "[") {
      j = skipClass(pattern, j);
      if (j < 0) return -1;
    } else {
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return j + 1;
      j++;
    }
  }
  return -1;
}

/**
 * A scanner for one search: `scan(text)` is the first match, `null` for none, or `"unread"` when matching
 * the text would pass what is left of the search's work bound (`SEARCH_WORK_UNITS`), which it then does
 * not spend. Substrings are found with `indexOf` and never unread.
 */
export function scanner(query: SearchQuery, workUnits: number = SEARCH_WORK_UNITS): (text: string) => { readonly start: number; readonly end: number } | null | "unread" {
  if (query.type === "substring") {
    return (text) => {
      const at = text.indexOf(query.text);
      return at < 0 ? null : { start: at, end: at + query.text.length };
    };
  }
  let left = workUnits;
  return (text) => {
    // Every match holds the literal: a text without it is answered without running the pattern.
    if (query.literal !== null && !text.includes(query.literal)) return null;
    const cost = text.length * query.program;
    if (cost > left) return "unread";
    left -= cost;
    const m = query.matcher.matcher(text);
    return m.find() ? { start: m.start(), end: m.end() } : null;
  };
}

export { describePinProblem };
