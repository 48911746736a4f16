/**
 * Outcomes of a prune as the caller and the model see them, built from the decision's data: one builder
 * per status, so every path that ends in a status says it the same way.
 */
import { lossyRefusal } from "../decision/span.js";
import type { RejectReason } from "../decision/reasons.js";
import type { LossyOutcome, RejectedOutcome, ReversibleOutcome } from "../outcome.js";
import { rejectionLine, tombstoneLine } from "../render/lines.js";
import type { PruneCommitItem } from "../stores/store.js";
import { failedConditions, type Conditions, type KindPolicy, type PruneMode } from "../types.js";

/** A refusal to report: what was refused and why, with the short reason the model reads (`why`). */
export interface Refusal {
  readonly spanId: string;
  readonly kind: string | null;
  readonly mode: PruneMode;
  readonly reason: RejectReason;
  readonly conditions: Conditions | null;
  readonly why: string;
  readonly message: string;
  readonly auditSeq: number | null;
  /**
   * The kind's policy when a lossy commitment could have been asked for instead: the line then tells the
   * model that `accept_lossy` would force it. `null` when that hint must not be given.
   */
  readonly lossyHintPolicy: KindPolicy | null;
  /** The span is live, so the line says it was kept; `false` for an unknown or already-pruned span. Default `true`. */
  readonly live?: boolean;
}

/** The rejected outcome, with the line rendered under the span (or as a notice when there is no span). */
export function rejectedOutcome(r: Refusal): RejectedOutcome {
  const lossyPossible =
    r.lossyHintPolicy !== null &&
    r.reason === "not-reversible" &&
    lossyRefusal({ acceptLossy: true, policy: r.lossyHintPolicy, budgetLeft: true }) === null;
  return {
    op: "prune", status: "rejected", spanId: r.spanId, kind: r.kind, mode: r.mode, reason: r.reason, conditions: r.conditions,
    failed: r.conditions ? failedConditions(r.conditions) : [], message: r.message, line: rejectionLine(r.spanId, r.why, lossyPossible, r.live ?? true),
    auditSeq: r.auditSeq,
  };
}

/** What a committed prune did to the window: the fields both committed outcomes share. */
export type Applied = Pick<ReversibleOutcome, "spanId" | "kind" | "mode" | "line" | "tokensFreed" | "grew" | "pinsCarried" | "groupPruned" | "group" | "applies">;

/** The outcome of a committed prune, from the lead span's commit item. */
export function committedOutcome(applied: Applied, lead: PruneCommitItem, tombstone: string, until: number | null): ReversibleOutcome | LossyOutcome {
  const { conditions } = lead.check;
  const common = { op: "prune", ...applied, auditSeq: lead.audit.seq } as const;
  if (lead.decision.status === "reversible") {
    return { ...common, status: "reversible", handle: lead.handle!, conditions, repersisted: lead.decision.repersist, until };
  }
  return { ...common, status: "lossy", conditions, failed: failedConditions(conditions), tombstone: tombstoneLine(applied.spanId, tombstone) };
}
