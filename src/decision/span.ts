/**
 * The decision for one span, as one pure function of the check result. No model assertion enters here
 * except the explicit `accept_lossy` flag: confidence, wording or claims that a span "is logged" cannot
 * upgrade a lossy commitment to a reversible one.
 */
import type { CheckResult, StoreCapabilities } from "../stores/store.js";
import { conditionsHold, type KindPolicy } from "../types.js";
import { KEPT_FOR_SESSION, keepOf, type Keep, type KeepContext } from "./keep.js";
import type { CopyFinding, DecisionReason, LossyRefusal, RepersistableCopy } from "./reasons.js";

/** Everything one span's decision depends on besides the check, known before the store transaction starts. */
export interface SpanDecisionInput {
  readonly policy: KindPolicy;
  /** The directive carried `accept_lossy: true` (exactly the JSON value). */
  readonly acceptLossy: boolean;
  /** The session's lossy budget still allows one more lossy commitment. */
  readonly budgetLeft: boolean;
  /** Capabilities of the kind's store, or `null` when the kind has none. */
  readonly store: StoreCapabilities | null;
  /** The store's retention (`null`: forever); with `keep`, decides how long a reversible prune stays reversible. */
  readonly retentionMs?: number | null;
  /** The clock and the session's horizon; without it a verified copy counts as kept for the session. */
  readonly keep?: KeepContext;
}

/** One span's disposition. */
export type SpanDecision =
  | {
      readonly status: "reversible";
      /** Write the window's bytes back first (the copy had expired, was lost or never written). */
      readonly repersist: boolean;
      readonly reason: Extract<DecisionReason, { code: "repersisted" }> | null;
      /** How long the copy is kept: `until` is set when the prune is reversible only until then. */
      readonly keep: Keep;
    }
  | { readonly status: "lossy"; readonly reason: Extract<DecisionReason, { code: "lossy-committed" }> }
  | { readonly status: "rejected"; readonly reason: Extract<DecisionReason, { code: LossyRefusal | "group-refused" }> };

/**
 * - all three conditions hold → reversible, with a hold (a copy the store still has but that nothing keeps
 *   any longer, its retention run out and no hold outlasting now, counts as expired);
 * - otherwise, if the kind re-persists and the store can take the window's bytes back → reversible after
 *   writing them;
 * - a reversible prune whose copy is kept for less than the session's horizon is reversible only until
 *   then (`keep.until`); a kind that forbids lossy commitment refuses it (the copy would be lost mid-session),
 *   a `with-flag` kind takes it, and the model is told when recall stops working;
 * - otherwise, `accept_lossy: true` on a kind that allows it, within budget → lossy (tombstone);
 * - otherwise → rejected, naming what failed.
 */
export function decideSpan(input: SpanDecisionInput, found: CheckResult): SpanDecision {
  return decideRead(input, checkAsDecided(input, found));
}

/** `decideSpan` over a check already read as the decision reads it (`checkAsDecided`). */
export function decideRead(input: SpanDecisionInput, check: CheckResult): SpanDecision {
  const repair = conditionsHold(check.conditions) ? null : repairable(input, check);
  if (conditionsHold(check.conditions) || repair !== null) {
    const repersist = repair !== null;
    const keep = input.keep === undefined || input.store === null
      ? KEPT_FOR_SESSION
      : keepOf(input.keep, { holds: input.store.holds, retentionMs: input.retentionMs ?? null }, check, repersist);
    if (keep.until === null || input.policy.lossy !== "forbid") {
      return { status: "reversible", repersist, reason: repair === null ? null : { code: "repersisted", copy: repair }, keep };
    }
    // A forbid kind's copy would run out mid-session: that is a deferred loss the policy does not allow.
    const refusal = lossyRefusal(input) ?? "lossy-forbidden";
    return { status: "rejected", reason: { code: refusal, copy: "expires" } };
  }
  const copy = copyFinding(check);
  const refusal = lossyRefusal(input);
  if (refusal === null) return { status: "lossy", reason: { code: "lossy-committed", copy } };
  return { status: "rejected", reason: { code: refusal, copy } };
}

/**
 * The store found the copy, but nothing keeps it any longer: its retention ran out (the store rotates it
 * away whenever it next rotates) and no hold outlasts now (the store places none, or the session is past
 * its horizon). Such a copy is expired for the decision, as it will be for recall: a prune may write the
 * bytes back where the kind re-persists, and is otherwise not reversible, never "reversible until" a time
 * already past. The check as the decision reads it: outcomes and audit records report this one.
 */
export function checkAsDecided(input: Pick<SpanDecisionInput, "keep" | "store" | "retentionMs">, check: CheckResult): CheckResult {
  if (input.keep === undefined || input.store === null || !conditionsHold(check.conditions)) return check;
  const keep = keepOf(input.keep, { holds: input.store.holds, retentionMs: input.retentionMs ?? null }, check, false);
  if (keep.keptUntil === null || keep.keptUntil > input.keep.now) return check;
  return { ...check, conditions: { ...check.conditions, existence: false }, copy: "expired", expiresAt: null };
}

/** Why a lossy commitment is refused, or `null` when it may go ahead. */
export function lossyRefusal(input: Pick<SpanDecisionInput, "acceptLossy" | "policy" | "budgetLeft">): LossyRefusal | null {
  if (!input.acceptLossy) return "not-reversible";
  if (input.policy.lossy === "forbid") return "lossy-forbidden";
  if (!input.budgetLeft) return "lossy-budget";
  return null;
}

/** The copy state a re-persist would repair, or `null` when re-persisting is not allowed or cannot help. */
function repairable(input: SpanDecisionInput, check: CheckResult): RepersistableCopy | null {
  const s = input.store;
  if (input.policy.repersist !== true || s === null || !s.writable) return null;
  // Writing the bytes back cannot fix a store that answers "absent" for rotated records.
  if (!s.distinguishesAbsent) return null;
  // A stored copy that differs from the window's bytes is not overwritten: it may be another writer's
  // record or evidence of tampering, and either way the difference must stay visible.
  return check.copy === "absent" || check.copy === "expired" || check.copy === "no-handle" ? check.copy : null;
}

function copyFinding(check: CheckResult): CopyFinding {
  if (check.copy !== "ok") return check.copy;
  return check.conditions.provenance ? "ok" : "no-provenance";
}
