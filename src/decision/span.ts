/**
 * The decision for one span, as one pure function of the check result. No model assertion enters here
 * except the explicit `accept_lossy` flag: confidence, wording or claims that a span "is logged" cannot
 * upgrade a lossy commitment to a reversible one.
 */
import type { CheckResult, StoreCapabilities } from "../stores/store.js";
import { conditionsHold, type KindPolicy } from "../types.js";
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
}

/** One span's disposition. */
export type SpanDecision =
  | {
      readonly status: "reversible";
      /** Write the window's bytes back first (the copy had expired, was lost or never written). */
      readonly repersist: boolean;
      readonly reason: Extract<DecisionReason, { code: "repersisted" }> | null;
    }
  | { readonly status: "lossy"; readonly reason: Extract<DecisionReason, { code: "lossy-committed" }> }
  | { readonly status: "rejected"; readonly reason: Extract<DecisionReason, { code: LossyRefusal | "group-refused" }> };

/**
 * - all three conditions hold → reversible, with a hold;
 * - otherwise, if the kind re-persists and the store can take the window's bytes back → reversible after
 *   writing them;
 * - otherwise, `accept_lossy: true` on a kind that allows it, within budget → lossy (tombstone);
 * - otherwise → rejected, naming what failed.
 */
export function decideSpan(input: SpanDecisionInput, check: CheckResult): SpanDecision {
  if (conditionsHold(check.conditions)) return { status: "reversible", repersist: false, reason: null };
  const repair = repairable(input, check);
  if (repair !== null) return { status: "reversible", repersist: true, reason: { code: "repersisted", copy: repair } };
  const copy = copyFinding(check);
  const refusal = lossyRefusal(input);
  if (refusal === null) return { status: "lossy", reason: { code: "lossy-committed", copy } };
  return { status: "rejected", reason: { code: refusal, copy } };
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
