/**
 * What a search answer looks like to the model: the matches with short snippets, then one line of
 * coverage — how many spans were searched, and which pruned spans could not be and so may have held a
 * match. The whole answer fits the policy's token budget; when it must give, matches go before the
 * coverage line, and the coverage line names holes as ranges (`span_3–span_9`) before it counts the rest.
 */
import type { SearchCoverage, SearchHole, SearchMatch } from "../outcome.js";
import { frameUntrusted, oneLine } from "../render/framing.js";
import { countTokens } from "../tokens.js";

/** Characters of context each side of a match in a snippet. */
export const SNIPPET_CONTEXT = 40;
/** The longest part of a match a snippet shows. */
export const SNIPPET_MATCH = 80;

/** A match with a little context, on one line: whitespace and control characters collapse to one space. */
export function snippetOf(text: string, start: number, end: number): string {
  const from = Math.max(0, start - SNIPPET_CONTEXT);
  const matchEnd = Math.min(end, start + SNIPPET_MATCH);
  const to = Math.min(text.length, matchEnd + SNIPPET_CONTEXT);
  const body = (text.slice(from, matchEnd) + (matchEnd < end ? "…" : "") + text.slice(matchEnd, to))
    .toWellFormed()
    .replace(/[\s\p{Cc}]+/gu, " ")
    .trim();
  return `${from > 0 ? "…" : ""}${body}${to < text.length ? "…" : ""}`;
}

export interface RenderInput {
  readonly query: string;
  readonly regex: boolean;
  /** Every matching span, in window order. */
  readonly matches: readonly SearchMatch[];
  readonly coverage: SearchCoverage;
  /** Candidate copies one store returns at most (named when `coverage.truncated`). */
  readonly candidateLimit: number;
  readonly budgetTokens: number;
}

export interface Rendered {
  readonly text: string;
  readonly tokens: number;
  /** How many of `matches`, from the first, the text shows. */
  readonly shown: number;
}

/**
 * The answer's text within the budget, whatever the counts, the query and the budget (at least
 * `MIN_SEARCH_TOKENS`): the coverage line first, in its full wording and then, when that cannot fit even
 * with every hole counted rather than named, in a terse one; then as many matches as the rest allows.
 */
export function renderSearch(input: RenderInput): Rendered {
  const { matches, budgetTokens } = input;
  const ranges = holeRanges(input.coverage.holes);
  const what = matches.length === 0 ? "no match" : `${matches.length} span${matches.length === 1 ? "" : "s"} match`;
  // The query is quoted as long as the budget allows (a query of emoji costs several tokens a character),
  // down to none.
  const headerFor = (chars: number) => (chars === 0 ? `search: ${what}` : `search ${quoteQuery(input.query, input.regex, chars)}: ${what}`);
  const fits = (lines: readonly string[]) => countTokens(lines.join("\n")) <= budgetTokens;
  for (const terse of [false, true]) {
    // When no match fits, a line says so; it is reserved before any hole is named, so it always fits.
    const notShown = matches.length === 0 ? [] : [terse ? "none shown: narrow the query" : `${matches.length} not shown: the search budget is spent on coverage; narrow the query`];
    for (const chars of [QUOTED_QUERY_CHARS, 30, 15, 7, 0]) {
      const header = headerFor(chars);
      const base = (named: number) => [header, ...notShown, coverageLine(input, ranges, named, terse)];
      if (!fits(base(0))) continue;
      // The coverage line names as many hole ranges as fit (the rest counted); `lo` always fits.
      let lo = 0;
      let hi = ranges.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (fits(base(mid))) lo = mid;
        else hi = mid - 1;
      }
      const tail = coverageLine(input, ranges, lo, terse);
      let shown = 0;
      let text = base(lo).join("\n");
      for (let n = 1; n <= matches.length; n++) {
        const rest = matches.length - n;
        const lines = [header, ...matches.slice(0, n).map(matchLine), ...(rest > 0 ? [`+${rest} more span${rest === 1 ? "" : "s"} match; narrow the query to see them`] : []), tail];
        if (!fits(lines)) break;
        shown = n;
        text = lines.join("\n");
      }
      return { text, tokens: countTokens(text), shown };
    }
  }
  // Past what the terse line fits (counts no session reaches at the smallest budget a policy may set): the
  // least that is still true, never "nothing there".
  const unsearched = input.coverage.holes.length + input.coverage.unread;
  const text = `search: ${what}; ${unsearched} span${unsearched === 1 ? "" : "s"} not searched (coverage exceeds the budget)`;
  return { text, tokens: countTokens(text), shown: 0 };
}

/** The most of the query an answer quotes, in code points. */
const QUOTED_QUERY_CHARS = 60;

/**
 * The query as the answer quotes it: at most `chars` code points (cut on code points, never inside a
 * surrogate pair), on one line, like every untrusted fragment a runtime line quotes.
 */
function quoteQuery(query: string, regex: boolean, chars: number): string {
  const cps = [...query];
  const shown = cps.length > chars ? `${cps.slice(0, Math.max(1, chars - 3)).join("")}…` : query;
  return regex ? `/${oneLine(shown, chars + 4)}/` : JSON.stringify(oneLine(shown, chars + 4));
}

/**
 * A match: the runtime's line naming the span and how to get it back, then the snippet (span text, so
 * untrusted) framed on a line of its own (`render/framing.ts`): a snippet can never read as a runtime line.
 */
function matchLine(m: SearchMatch): string {
  const where = m.source === "live" ? "live" : m.source === "copy" ? `pruned, recall ${m.handle}` : "in its replacement";
  return `- ${m.spanId} ${m.kind} (${where}):\n${frameUntrusted(m.snippet)}`;
}

/** One run of holes with consecutive span numbers and the same reason. */
interface HoleRange {
  readonly first: string;
  readonly last: string;
  readonly count: number;
  readonly why: SearchHole["why"];
}

function holeRanges(holes: readonly SearchHole[]): HoleRange[] {
  const out: HoleRange[] = [];
  const num = (id: string) => Number(id.slice(id.indexOf("_") + 1));
  for (const h of holes) {
    const prev = out.at(-1);
    const kindOf = (w: SearchHole["why"]) => (w === "unavailable" || w === "elsewhere" ? w : "gone");
    if (prev && kindOf(prev.why) === kindOf(h.why) && num(h.spanId) === num(prev.last) + 1) {
      out[out.length - 1] = { ...prev, last: h.spanId, count: prev.count + 1 };
    } else out.push({ first: h.spanId, last: h.spanId, count: 1, why: h.why });
  }
  return out;
}

function rangeText(r: HoleRange): string {
  return r.count === 1 ? r.first : `${r.first}–${r.last}`;
}

/**
 * The coverage line, naming the first `named` hole ranges and counting the spans of the others. `terse`
 * says the same in fewer tokens, for budgets the full wording cannot fit.
 */
function coverageLine(input: RenderInput, ranges: readonly HoleRange[], named: number, terse = false): string {
  const { coverage, matches } = input;
  const searched = terse
    ? `${coverage.live} live, ${coverage.pruned} pruned`
    : `${coverage.live} live and ${coverage.pruned} recoverable pruned span${coverage.pruned === 1 ? "" : "s"}`;
  const parts: string[] = [matches.length === 0 ? `no match in ${searched}` : `searched ${searched}`];
  const gone = ranges.filter((r) => r.why !== "unavailable" && r.why !== "elsewhere");
  const down = ranges.filter((r) => r.why === "unavailable");
  const away = ranges.filter((r) => r.why === "elsewhere");
  let budget = named;
  const name = (list: readonly HoleRange[]): string => {
    const shown = list.slice(0, Math.max(0, Math.min(budget, list.length)));
    budget -= shown.length;
    const rest = list.slice(shown.length).reduce((n, r) => n + r.count, 0);
    const names = shown.map(rangeText);
    if (rest > 0) names.push(`${shown.length === 0 ? "" : "and "}${rest} more`);
    return names.join(", ");
  };
  const goneCount = gone.reduce((n, r) => n + r.count, 0);
  const downCount = down.reduce((n, r) => n + r.count, 0);
  const awayCount = away.reduce((n, r) => n + r.count, 0);
  if (terse) {
    if (goneCount > 0) parts.push(`${name(gone)} unrecoverable (may hold ${matches.length === 0 ? "it" : "more"})`);
    if (downCount > 0) parts.push(`${name(down)} unreadable (retry)`);
    if (awayCount > 0) parts.push(`${name(away)} in another window`);
    if (coverage.truncated) parts.push("candidates capped (narrow the query)");
    if (coverage.unread > 0) parts.push(`${coverage.unread} unread (costly pattern)`);
  } else {
    if (goneCount > 0) {
      const verb = goneCount === 1 ? "is" : "are";
      parts.push(`${name(gone)} ${verb} unrecoverable and may have held ${matches.length === 0 ? "it" : "more"}`);
    }
    if (downCount > 0) parts.push(`${name(down)} could not be read now (store unreachable; retry)`);
    if (awayCount > 0) parts.push(`${name(away)} ${awayCount === 1 ? "is" : "are"} another window's of this session, not searched here`);
    if (coverage.truncated) parts.push(`a store had more than ${input.candidateLimit} candidate copies; narrow the query to search the rest`);
    if (coverage.unread > 0) {
      parts.push(`${coverage.unread} span${coverage.unread === 1 ? " was" : "s were"} not read: the pattern costs too much for ${coverage.unread === 1 ? "its" : "their"} length; use a substring or a simpler pattern`);
    }
  }
  if (goneCount === 0 && downCount === 0 && awayCount === 0 && !coverage.truncated && coverage.unread === 0 && matches.length === 0) parts.push("nothing pruned is unrecoverable");
  return parts.join("; ");
}
