import type { CheckResult } from "./stores/store.js";
import type { RejectReason } from "./decision/reasons.js";
import { countTokens } from "./tokens.js";
import { hintSuffixTokens } from "./hint.js";
import type { PruneMode } from "./types.js";

/**
 * The lines the model reads in place of what it pruned. Each is short by design and pinned by tests:
 * a tombstone costs at most 13 o200k tokens and an index line at most 12, for ids up to `span_99999`
 * and handles up to `#9999` — plus its hint, which costs at most the window's `indexHintTokens` and one
 * token for the `: ` before it.
 */

export const DEFAULT_TOMBSTONE = "{span} pruned, unrecoverable, contents unknown";

export function tombstoneLine(spanId: string, template: string = DEFAULT_TOMBSTONE): string {
  return template.split("{span}").join(spanId);
}

/** The line of a span that only a process now gone had: never pruned, never copied, nothing to recall. */
export function lostLine(spanId: string): string {
  return `${spanId} lost in a restart, contents unknown`;
}

/**
 * The index line of a reversible drop: the span id, the handle that recalls it, and a hint of what it
 * held (`hint.ts`: one line of plain words, token-capped) when there is one.
 */
export function indexLine(spanId: string, handle: string, hint: string | null = null): string {
  return hint === null ? `${spanId} pruned, recall ${handle}` : `${spanId} pruned, recall ${handle}: ${hint}`;
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
export function indexLineTokens(spanId: string, handle: string, hint: string | null = null): number {
  const span = SPAN_DIGITS.exec(spanId);
  const h = HANDLE_PARTS.exec(handle);
  if (span === null || h === null) return countTokens(indexLine(spanId, handle, hint));
  if (indexLineFixed < 0) indexLineFixed = countTokens(indexLine("span_1", "#1")) - 2;
  const prefix = h[1]!;
  let extra = hint === null ? 0 : hintSuffixTokens(hint);
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
export function replacementHeader(spanId: string, mode: Exclude<PruneMode, "drop">, handle: string | null): string {
  const what = mode === "summarize" ? "summary" : "compressed";
  return handle === null ? `${spanId} ${what}, original unrecoverable` : `${spanId} ${what}, recall ${handle}`;
}

const COPY_PROBLEM: Record<CheckResult["copy"], string> = {
  ok: "copy ok",
  absent: "no durable copy",
  expired: "copy expired",
  "hash-mismatch": "stored copy differs",
  "no-handle": "no handle",
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
  }
}

/** The line rendered under a span whose prune was refused. */
export function rejectionLine(spanId: string, why: string, lossyPossible: boolean): string {
  return lossyPossible
    ? `${spanId} kept: prune rejected (${why}); accept_lossy to force`
    : `${spanId} kept: prune rejected (${why})`;
}

export function invalidLine(message: string): string {
  return `directive ignored: ${message}`;
}
