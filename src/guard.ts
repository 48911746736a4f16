import type { AuditDraft } from "./audit.js";
import type { RejectReason } from "./outcome.js";
import type { CheckResult, PruneDecision, StoreCapabilities } from "./stores/store.js";
import { conditionsHold, type KindPolicy, type PruneMode } from "./types.js";

/** Everything the decision depends on, known before the store transaction starts. */
export interface DecisionInput {
  readonly spanId: string;
  readonly kind: string;
  /** Content hash of the bytes the window holds for the span. */
  readonly hash: string;
  readonly policy: KindPolicy;
  readonly mode: PruneMode;
  /** The directive carried `accept_lossy: true` (exactly the JSON value). */
  readonly acceptLossy: boolean;
  /** The session's lossy budget still allows one more lossy commitment. */
  readonly budgetLeft: boolean;
  /** Capabilities of the kind's store, or `null` when the kind has none. */
  readonly store: StoreCapabilities | null;
  readonly pinsCarried: number;
  readonly directive: string | null;
}

/**
 * The decision boundary of the reference document, as one pure function of the check result.
 *
 * - all three conditions hold → reversible, with a hold;
 * - otherwise, if the kind re-persists and the store can take the window's bytes back → reversible
 *   after writing them (the audit record says so);
 * - otherwise, `accept_lossy: true` on a kind that allows it, within budget → lossy (tombstone);
 * - otherwise → rejected, naming what failed.
 *
 * No model assertion enters here except the explicit flag: confidence, wording or claims that a span
 * "is logged" cannot upgrade a lossy commitment to a reversible one.
 */
export function decidePrune(input: DecisionInput, check: CheckResult): PruneDecision {
  const base = (status: AuditDraft["status"], reason: string | null, repersisted = false): AuditDraft => ({
    // A refused prune carried nothing: the span stays as it was.
    op: "prune",
    status,
    spanId: input.spanId,
    kind: input.kind,
    mode: input.mode,
    conditions: check.conditions,
    handle: check.handle,
    repersisted,
    acceptLossy: input.acceptLossy,
    reason,
    pinsCarried: status === "rejected" ? 0 : input.pinsCarried,
    spanHash: input.hash,
    directive: input.directive,
  });
  if (conditionsHold(check.conditions)) {
    return { status: "reversible", repersist: false, hold: true, audit: base("reversible", null) };
  }
  if (canRepersist(input, check)) {
    return { status: "reversible", repersist: true, hold: true, audit: base("reversible", `repersisted:${check.copy}`, true) };
  }
  const reason = lossyRefusal(input);
  if (reason === null) return { status: "lossy", audit: base("lossy", copyReason(check)) };
  return { status: "rejected", audit: base("rejected", `${reason}:${copyReason(check)}`) };
}

/** The reason a lossy commitment is refused, or `null` when it may go ahead. */
export function lossyRefusal(input: Pick<DecisionInput, "acceptLossy" | "policy" | "budgetLeft">): RejectReason | null {
  if (!input.acceptLossy) return "not-reversible";
  if (input.policy.lossy === "forbid") return "lossy-forbidden";
  if (!input.budgetLeft) return "lossy-budget";
  return null;
}

function canRepersist(input: DecisionInput, check: CheckResult): boolean {
  const s = input.store;
  return (
    input.policy.repersist === true &&
    s !== null &&
    s.writable &&
    // Writing the bytes back cannot fix a store that answers "absent" for rotated records.
    s.distinguishesAbsent &&
    // A stored copy that differs from the window's bytes is not overwritten: it may be another writer's
    // record or evidence of tampering, and either way the difference must stay visible.
    (check.copy === "absent" || check.copy === "expired" || check.copy === "no-handle")
  );
}

function copyReason(check: CheckResult): string {
  if (check.copy !== "ok") return check.copy;
  return check.conditions.provenance ? "ok" : "no-provenance";
}
