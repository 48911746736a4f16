/**
 * The runtime's own shortening for `compress` prunes: head and tail of a long tool output, plus the
 * lines that look like errors or hold pinned identifiers, with every lost pin carried.
 *
 * Deterministic by construction: no clocks, no randomness, ties broken by line position.
 */
import { carryScanned, containsPin, scanPins, type PinScanOptions } from "./pin-carry.js";
import { countTokens } from "./tokens.js";
import type { PinPattern } from "./types.js";

export interface CompressOptions {
  /** The policy's token target (`KindPolicy.compressTargetTokens`); a positive integer. */
  readonly targetTokens: number;
  /** Pins to carry (the kind's merged with the policy-wide ones). */
  readonly pins?: readonly PinPattern[];
  /** Bounds on the pin scan. */
  readonly scan?: PinScanOptions;
}

export interface CompressResult {
  /** The compressed body, followed by the carried-pins line when any pin was lost. */
  readonly text: string;
  /**
   * Tokens of the whole `text` (body and carried pins). At most `targetTokens` unless the carried-pins
   * line alone exceeds it: identifiers win over the target, and the body then shrinks to its marker
   * (or to nothing, when only that lets the pins fit).
   */
  readonly tokens: number;
  /** Tokens of the body alone; always at most `targetTokens`. */
  readonly bodyTokens: number;
  /**
   * Tokens of the carried-pins line counted alone (0 when nothing was carried). Token counts are not
   * additive across the join, so `tokens` can differ from `bodyTokens + pinTokens` by a token or two.
   */
  readonly pinTokens: number;
  readonly carried: readonly string[];
  /** Whole lines removed (a clipped line counts as kept). */
  readonly omittedLines: number;
}

/**
 * Shortens `text` to at most `targetTokens` (o200k_base) and carries its pins.
 *
 * Details: keeps the last and first lines, then lines with error-ish words or pinned identifiers
 * (favouring later ones, where tool outputs report failure) within half the target, then grows head
 * and tail evenly. Pins the body could not keep are carried on one `ids:` line; to make room for it
 * the body gives up head and tail context before the error and pinned lines, so pinning never costs
 * the span the lines compress without pins would keep. Each run of removed lines becomes one marker
 * line `… 312 lines omitted …`; a line too long for its share (a minified JSON body, a text with no
 * newlines) is clipped in the middle with `… 4096 chars omitted …`. Kept lines are byte-identical,
 * line endings included (CRLF stays CRLF). The original is scanned for pins once.
 *
 * Gotchas: text that already fits is returned unchanged (same string, nothing carried). Throws a
 * `RangeError` when `targetTokens` is not a positive integer — it comes from policy, not from a model.
 */
export function compress(text: string, opts: CompressOptions): CompressResult {
  const target = opts.targetTokens;
  if (!Number.isInteger(target) || target < 1) {
    throw new RangeError(`compress: targetTokens must be a positive integer, got ${String(target)}`);
  }
  const pins = opts.pins ?? [];
  const scanOpts = opts.scan ?? {};
  const whole = countTokens(text);
  if (whole <= target) {
    return { text, tokens: whole, bodyTokens: whole, pinTokens: 0, carried: [], omittedLines: 0 };
  }
  const lines = splitLines(text);
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const found = scanPins(text, pins, scanOpts);
  const scores = lines.map((line) => score(line, found.ids));
  const costs = lines.map(countTokens);
  // Each pinned identifier's first line, in order: the line a later question about it is most likely about.
  const firsts = [...new Set(found.ids.map((id) => lines.findIndex((line) => containsPin(line, id))).filter((i) => i >= 0))].sort((a, b) => a - b);

  // Shrink the body's budget until body and carried pins fit together; each step is deterministic.
  let budget = target;
  let best: { body: Body; bodyTokens: number } | null = null;
  let fits = false;
  for (let attempt = 0; attempt < 24 && budget >= 0; attempt++) {
    const body = buildBody(lines, costs, scores, firsts, budget, target, eol);
    const bodyTokens = countTokens(body.text);
    if (bodyTokens > target) {
      budget -= Math.max(1, bodyTokens - target);
      continue;
    }
    best = { body, bodyTokens };
    const total = countTokens(carryScanned(found, body.text).text);
    fits = total <= target;
    if (fits || budget === 0) break;
    budget = Math.max(0, budget - Math.max(1, total - target));
  }
  if (!fits) {
    // Too many pins for a real body: keep the most informative minimal body that still fits with them.
    const minimal = minimalBodies(lines.length, target);
    const fitting = minimal.find((b) => countTokens(carryScanned(found, b.text).text) <= target);
    const chosen = fitting ?? minimal[0] ?? { text: "", omittedLines: lines.length };
    best = { body: chosen, bodyTokens: countTokens(chosen.text) };
  }
  const chosen = best ?? { body: { text: "", omittedLines: lines.length }, bodyTokens: 0 };
  const carry = carryScanned(found, chosen.body.text);
  return {
    text: carry.text,
    tokens: countTokens(carry.text),
    bodyTokens: chosen.bodyTokens,
    pinTokens: carry.tokens,
    carried: carry.carried,
    omittedLines: chosen.body.omittedLines,
  };
}

interface Body {
  readonly text: string;
  readonly omittedLines: number;
}

/** Lines with their own terminators, so kept lines stay byte-identical. */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/gu) ?? [];
}

/** Error-ish words, and exception class names (`JSONDecodeError`, `NullPointerException`). */
const ERRORISH =
  /(?:error|exception)\b|\b(?:errors|err|fatal|panic|traceback|caused by|failed|failure|fail|denied|refused|timeout|timed out|critical|unhandled|aborted|killed|oomkilled|exit code|exit status|backoff)\b/iu;

function score(line: string, pinned: readonly string[]): number {
  const errorish = ERRORISH.test(line) ? 2 : 0;
  return errorish + (pinned.some((id) => containsPin(line, id)) ? 1 : 0);
}

function marker(count: number, unit: "line" | "char"): string {
  return `… ${count} ${unit}${count === 1 ? "" : "s"} omitted …`;
}

/** Cost of one marker line, used to estimate gaps before the exact count. */
const MARKER_COST = countTokens(`${marker(1000, "line")}\n`);

/** Bodies for when almost nothing fits, most informative first; each at most `target` tokens. */
function minimalBodies(lineCount: number, target: number): Body[] {
  return [marker(lineCount, "line"), "…", ""]
    .filter((text) => countTokens(text) <= target)
    .map((text) => ({ text, omittedLines: lineCount }));
}

/** Clips one line in the middle to at most `maxTokens`, keeping its terminator; null if nothing fits. */
function clipLine(line: string, maxTokens: number): string | null {
  const terminator = line.endsWith("\r\n") ? "\r\n" : line.endsWith("\n") ? "\n" : "";
  const chars = Array.from(line.slice(0, line.length - terminator.length));
  const render = (k: number): string =>
    `${chars.slice(0, k).join("")} ${marker(chars.length - 2 * k, "char")} ${chars.slice(chars.length - k).join("")}${terminator}`;
  let lo = 0;
  let hi = Math.floor(chars.length / 2);
  if (countTokens(render(0)) > maxTokens) return null;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(render(mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return render(lo);
}

/**
 * The body within `budget` tokens. The first and last lines may take a third of `target` each, and
 * error-ish and pinned lines half of what `target` leaves after them, however far `budget` has shrunk
 * to make room for carried pins: shrinking gives up head and tail context first, so a carried-pins
 * line never displaces the lines that explain the failure or hold the identifiers themselves.
 */
function buildBody(
  lines: readonly string[],
  costs: readonly number[],
  scores: readonly number[],
  firsts: readonly number[],
  budget: number,
  target: number,
  eol: string,
): Body {
  const n = lines.length;
  const selected = new Uint8Array(n);
  const override = new Map<number, string>(); // clipped lines
  let used = 0;
  let gaps = n > 0 ? 1 : 0; // before anything is kept, everything is one omitted run

  const gapDelta = (i: number): number =>
    (i > 0 && !selected[i - 1] ? 1 : 0) + (i < n - 1 && !selected[i + 1] ? 1 : 0) - 1;
  const costWith = (i: number, cost: number): number => cost + gapDelta(i) * MARKER_COST;
  const take = (i: number, cost: number): void => {
    gaps += gapDelta(i);
    selected[i] = 1;
    used += cost;
  };
  const tryTake = (i: number, limit: number): boolean => {
    if (selected[i]) return true;
    const cost = costs[i] as number;
    const delta = costWith(i, cost);
    if (used + delta > limit) return false;
    take(i, delta);
    return true;
  };

  // Last and first lines (the last first: tool outputs end with their verdict), clipped when one
  // would take more than a third of the target.
  const edgeShare = n === 1 ? budget : Math.min(budget, Math.floor(target / 3));
  for (const i of n === 1 ? [0] : [n - 1, 0]) {
    if ((costs[i] as number) <= edgeShare) tryTake(i, budget);
    else {
      const clipped = clipLine(lines[i] as string, edgeShare);
      if (clipped !== null) {
        const delta = costWith(i, countTokens(clipped));
        if (used + delta <= budget) {
          override.set(i, clipped);
          take(i, delta);
        }
      }
    }
  }

  // The last error-ish line (a tool output's verdict), each pinned identifier's first line in order, then
  // error-ish and other pinned lines, the strongest and latest first, within half of what is left.
  const priorityLimit = Math.min(budget, used + Math.floor((target - used) / 2));
  for (let i = n - 2; i >= 1; i--) {
    if ((scores[i] as number) >= 2) {
      tryTake(i, priorityLimit);
      break;
    }
  }
  for (const i of firsts) tryTake(i, priorityLimit);
  const candidates = [];
  for (let i = 1; i < n - 1; i++) if ((scores[i] as number) > 0) candidates.push(i);
  candidates.sort((a, b) => (scores[b] as number) - (scores[a] as number) || b - a);
  for (const i of candidates) tryTake(i, priorityLimit);

  // Grow head and tail evenly, tail first on ties.
  let head = 1;
  let tail = n - 2;
  let headUsed = 0;
  let tailUsed = 0;
  let headOpen = true;
  let tailOpen = true;
  while ((headOpen || tailOpen) && head <= tail) {
    const fromTail = tailOpen && (!headOpen || tailUsed <= headUsed);
    const i = fromTail ? tail : head;
    const before = used;
    if (!tryTake(i, budget)) {
      if (fromTail) tailOpen = false;
      else headOpen = false;
      continue;
    }
    if (fromTail) {
      tailUsed += used - before;
      tail--;
    } else {
      headUsed += used - before;
      head++;
    }
  }

  let out = "";
  let omitted = 0;
  let run = 0;
  const flush = (): void => {
    if (run > 0) out += marker(run, "line") + eol;
    omitted += run;
    run = 0;
  };
  for (let i = 0; i < n; i++) {
    if (selected[i]) {
      flush();
      out += override.get(i) ?? (lines[i] as string);
    } else run++;
  }
  if (run > 0) {
    // A trailing marker follows a kept line that may lack a terminator.
    if (out.length > 0 && !out.endsWith("\n")) out += eol;
    out += marker(run, "line");
    omitted += run;
  }
  return { text: out, omittedLines: omitted };
}
