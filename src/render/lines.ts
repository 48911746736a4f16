import type { CheckResult } from "../stores/store.js";
import type { RejectReason } from "../decision/reasons.js";
import { oneLine } from "./framing.js";
import { countTokens } from "../tokens.js";
import { hintSuffixTokens } from "../hint.js";
import type { PruneMode } from "../types.js";

/**
 * The lines the model reads in place of what it pruned. Each is short by design and pinned by tests:
 * a tombstone costs at most 13 o200k tokens and an index line at most 12 (17 when it says for how long its
 * copy is kept: `span_7 pruned, recall #3 for 59m`), for ids up to `span_99999` and handles up to `#9999`
 * — plus its hint, which costs at most the window's `indexHintTokens` and one token for the `: ` before it.
 * Every line here is a runtime line: it is never framed, and `render/grammar.ts` parses each form back;
 * untrusted text only ever appears framed, or as a hint of the hint alphabet (`hint.ts`).
 */

export { DEFAULT_TOMBSTONE, tombstoneLine } from "./tombstone.js";

/** The line of a span that only a process now gone had: never pruned, never copied, nothing to recall. */
export function lostLine(spanId: string): string {
  return `${spanId} lost in a restart, contents unknown`;
}

/**
 * How long a copy is still kept, in the index line: `<1m`, `59m`, `3h05m`. Rounded down, so the line
 * never promises a minute the store does not.
 */
export function formatRemaining(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes < 1) return "<1m";
  if (minutes < 60) return `${minutes}m`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/**
 * When a copy stops being kept, as a clock time that does not tick: `17:05Z` (UTC, rounded down to the
 * minute, so never later than the truth), with the day when it is a day or more after `now`
 * (`Dec 4 17:05Z`). A countdown (`for 59m`) would change the line — and every cached token after it —
 * every few minutes with nothing pruned; this changes only when the line is rewritten at a compaction point.
 */
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const;

export function formatUntil(untilMs: number, nowMs: number): string {
  const d = new Date(Math.max(0, untilMs));
  const two = (n: number) => String(n).padStart(2, "0");
  const hm = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}Z`;
  return untilMs - nowMs < 86_400_000 ? hm : `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()} ${hm}`;
}

/** ` until 17:05Z` when the copy is kept only until then (`formatUntil`); empty when it outlasts the session. */
function expiry(until: string | null): string {
  return until === null ? "" : ` until ${until}`;
}

/**
 * The index line of a reversible drop: the span id and the handle that recalls it; when the copy is kept
 * for less than the session's horizon, until when (`formatUntil`); and a hint of what it held (`hint.ts`: one
 * line of plain words, token-capped) when there is one.
 */
export function indexLine(spanId: string, handle: string, hint: string | null = null, until: string | null = null): string {
  return `${spanId} pruned, recall ${handle}${expiry(until)}${hintTail(hint)}`;
}

function hintTail(hint: string | null): string {
  return hint === null ? "" : `: ${hint}`;
}

const SPAN_DIGITS = /^span_([0-9]+)$/;
const HANDLE_PARTS = /^([a-z]{0,4})#([0-9]+)$/;
/** The tokens of `indexLine` besides the digits of the span id and the handle and the handle's prefix (set on first use). */
let indexLineFixed = -1;
/** `countTokens(" " + prefix)` per handle prefix: a store mints one prefix, a window uses a few stores. */
const prefixTokens = new Map<string, number>();

/**
 * `countTokens(indexLine(spanId, handle, hint))`, from the line's shape: a reversible drop counts its index
 * line, and the tokenizer's own count of it costs more than the rest of the window's rewrite.
 *
 * Why the shape is exact in o200k_base: its pre-tokenizer cuts digits into runs of at most three from the
 * left, every 1–3-digit string is one token, and the line's `span_`, ` pruned, recall `, a prefix's letters,
 * `#` and the hint's `: ` each end where a digit run starts or ends, so the count is the fixed text's plus
 * one per run plus the prefix's (` t` in `recall t#3`) plus the hint's with its `: ` (counted by the
 * tokenizer: it is short). A property test proves equality with the tokenizer; an id or handle of another
 * shape is counted by the tokenizer.
 */
export function indexLineTokens(spanId: string, handle: string, hint: string | null = null, hintTokens?: number): number {
  const span = SPAN_DIGITS.exec(spanId);
  const h = HANDLE_PARTS.exec(handle);
  if (span === null || h === null) return countTokens(indexLine(spanId, handle, hint));
  if (indexLineFixed < 0) indexLineFixed = countTokens(indexLine("span_1", "#1")) - 2;
  const prefix = h[1]!;
  let extra = hint === null ? 0 : (hintTokens ?? hintSuffixTokens(hint));
  if (prefix !== "") {
    let p = prefixTokens.get(prefix);
    if (p === undefined) {
      p = countTokens(` ${prefix}`);
      prefixTokens.set(prefix, p);
    }
    extra += p;
  }
  return indexLineFixed + Math.ceil(span[1]!.length / 3) + Math.ceil(h[2]!.length / 3) + extra;
}

/** Header of a digest or compressed form that replaced a span. */
export function replacementHeader(
  spanId: string,
  mode: Exclude<PruneMode, "drop">,
  handle: string | null,
  until: string | null = null,
): string {
  const what = replacementWord(mode);
  return handle === null ? `${spanId} ${what}, original unrecoverable` : `${spanId} ${what}, recall ${handle}${expiry(until)}`;
}

function replacementWord(mode: Exclude<PruneMode, "drop">): string {
  return mode === "summarize" ? "summary" : "compressed";
}

/**
 * The line of a reversible prune whose copy is no longer promised: its hold lapsed and retention may
 * have rotated it (`may be lost`), or a recall found it gone or altered (`lost`). Neither offers a recall.
 */
export function uncertainCopyLine(spanId: string, mode: PruneMode, copy: "may be lost" | "lost", hint: string | null = null): string {
  const what = mode === "drop" ? "pruned" : replacementWord(mode);
  return mode === "drop" && copy === "lost" ? `${spanId} pruned, copy lost, contents unknown${hintTail(hint)}` : `${spanId} ${what}, copy ${copy}${hintTail(hint)}`;
}

/** The line under a prune whose replacement costs more tokens than the span it replaced. */
export function grewLine(spanId: string, tokens: number): string {
  return `${spanId} pruned, but its replacement costs ${tokens} more tokens`;
}

const COPY_PROBLEM: Record<CheckResult["copy"], string> = {
  ok: "copy ok",
  absent: "no durable copy",
  expired: "copy expired",
  "hash-mismatch": "stored copy differs",
  "no-handle": "no handle",
  unbacked: "no backing store",
};

/** Why, in a few words a model can act on. */
export function rejectionWhy(reason: RejectReason, check: CheckResult | null, mode: PruneMode): string {
  switch (reason) {
    case "not-reversible":
    case "lossy-forbidden":
    case "lossy-budget": {
      const problem = check === null
        ? "no backing store"
        : check.copy !== "ok"
          ? COPY_PROBLEM[check.copy]
          : check.conditions.provenance
            ? "copy expires before the session ends"
            : "store cannot tell pruned from absent";
      const tail = reason === "not-reversible" ? "" : reason === "lossy-forbidden" ? ", lossy forbidden" : ", lossy budget spent";
      return `${problem}${tail}`;
    }
    case "mode-not-allowed":
      return `${mode} not allowed`;
    case "unknown-span":
      return "no such span";
    case "already-pruned":
      return "already pruned";
    case "group":
      return "tool call group";
    case "lost":
      return "lost in a restart";
    case "outcome-unknown":
      return "earlier prune's outcome unknown";
    case "store-error":
      return "store unavailable";
    case "range":
      return "not a run that can be summarized";
    case "foreign-ref":
      return "not a ref of this window";
  }
}

/**
 * The line rendered for a refused prune: under the span when it is live (`kept`), or on its own when the
 * span was never in the window or is pruned already.
 */
export function rejectionLine(spanId: string, why: string, lossyPossible: boolean, live = true): string {
  const head = live ? `${spanId} kept: prune rejected (${why})` : `${oneLine(spanId, 24)}: prune rejected (${why})`;
  return lossyPossible ? `${head}; accept_lossy to force` : head;
}

/**
 * The line under a span whose prune was decided but not applied: before the compaction point that would have
 * applied it, its copy's promise lapsed (`copy lapsed`) or its copy was found lost (`copy lost`) — or that of
 * `cause`, another member of the same decision (its tool call group). The span stays live.
 */
export function notAppliedLine(spanId: string, copy: "lapsed" | "lost", cause: string | null = null): string {
  return `${spanId} kept: prune not applied (${cause === null ? "" : `${cause}'s `}copy ${copy})`;
}

/** A range summary decided but not applied, for the same reason (`member`'s copy): its run stays as it was. */
export function rangeNotAppliedLine(from: string, to: string, summaryId: string, member: string, copy: "lapsed" | "lost"): string {
  return `${from}–${to} kept: summary ${summaryId} not applied (${member}'s copy ${copy})`;
}

/** A range summary refused: the run stays as it was; the message is cut to one line (it may quote a store's error). */
export function rangeRejectionLine(from: string, to: string, message: string): string {
  return `${oneLine(from, 24)}–${oneLine(to, 24)} kept: summary rejected (${oneLine(message, 180)})`;
}

export function invalidLine(message: string): string {
  return `directive ignored: ${oneLine(message, 180)}`;
}
