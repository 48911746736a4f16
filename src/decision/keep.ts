/**
 * How long a reversible prune's copy is kept, and whether that is long enough to call the prune
 * reversible. A copy is kept while a hold covers it or its retention has not run out, whichever is
 * later; the prune is `reversible` only when that reaches the session's horizon (the hold placed at
 * prune time lasts until then, or the store keeps copies forever, or retention outlasts the horizon).
 * Otherwise it is reversible only until a time, which the outcome, the index line and the audit record
 * carry. Pure: the window passes the clock's reading.
 */
import type { CheckResult } from "../stores/store.js";

/** What the window knows, at decision time, about the session's horizon. */
export interface KeepContext {
  readonly now: number;
  /**
   * When the session's holds lapse (`limits.maxLengthMs` after the window was created); `null` when
   * they last until the session ends (`end()` releases them).
   */
  readonly holdUntil: number | null;
}

/** A reversible prune's copy: `keptUntil` when nothing promises it any longer, `until` when that is before the horizon. */
export interface Keep {
  /** `null`: kept for the whole session (held until released, or retained forever). */
  readonly keptUntil: number | null;
  /** `null`: reversible for the session; a time: reversible only until then. */
  readonly until: number | null;
  /**
   * When the store's retention alone lets the copy go (its holds aside), `null` when it keeps copies
   * forever; absent when not known. `end()` releases the holds: from then on this is all that keeps it.
   */
  readonly retainedUntil?: number | null;
}

export const KEPT_FOR_SESSION: Keep = Object.freeze({ keptUntil: null, until: null, retainedUntil: null });

/**
 * The copy's keep after a reversible prune of a span whose check is `check`, in a store with `holds` and
 * `retentionMs`, re-persisted (its retention restarting now) or not.
 */
export function keepOf(
  ctx: KeepContext,
  store: { readonly holds: boolean; readonly retentionMs: number | null },
  check: Pick<CheckResult, "expiresAt">,
  repersist: boolean,
): Keep {
  const INF = Number.POSITIVE_INFINITY;
  const held = !store.holds ? Number.NEGATIVE_INFINITY : ctx.holdUntil === null ? INF : ctx.holdUntil;
  const retained = store.retentionMs === null ? INF : repersist ? ctx.now + store.retentionMs : (check.expiresAt ?? INF);
  const kept = Math.max(held, retained);
  const retainedUntil = retained === INF ? null : retained;
  if (kept === INF) return retainedUntil === null ? KEPT_FOR_SESSION : { ...KEPT_FOR_SESSION, retainedUntil };
  // The horizon is the holds' end; once the session has run past it, nothing finite is "for the session".
  const forSession = ctx.holdUntil !== null && ctx.now < ctx.holdUntil && kept >= ctx.holdUntil;
  return { keptUntil: kept, until: forSession ? null : kept, retainedUntil };
}
