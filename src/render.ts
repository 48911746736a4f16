import type { CheckResult } from "./stores/store.js";
import type { RejectReason } from "./decision/reasons.js";
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
