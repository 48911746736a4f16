/**
 * The decision for a whole prune: the span the directive named and the other members of its tool
 * call/result group, under the session's lossy budget. A group is pruned all or nothing, so no provider
 * ever sees an orphaned tool message.
 */
import type { CheckResult } from "../stores/store.js";
import { rejectReasonOf, type DecisionReason, type RejectReason } from "./reasons.js";
import { checkAsDecided, decideRead, type SpanDecision, type SpanDecisionInput } from "./span.js";

/** One member of a prune, as the decision sees it. */
export type MemberInput = Pick<SpanDecisionInput, "policy" | "store" | "retentionMs">;

export interface GroupDecisionInput {
  /** The members, in window order; `lead` is the index of the span the directive named. */
  readonly members: readonly MemberInput[];
  readonly lead: number;
  readonly acceptLossy: boolean;
  /** Lossy commitments the session may still make (`Infinity` when unlimited or not asked for). */
  readonly lossyLeft: number;
  /** The clock and the session's horizon, for how long a reversible prune stays reversible. */
  readonly keep?: SpanDecisionInput["keep"];
}

/** Every member's decision, and when the prune was refused, which member refused and why. */
export interface GroupDecision {
  readonly decisions: readonly SpanDecision[];
  /** `null` when the prune goes ahead. */
  readonly refusal: { readonly member: number; readonly reason: RejectReason; readonly byLead: boolean } | null;
  /** Each member's check as the decision read it (`checkAsDecided`): what outcomes and audit records report. */
  readonly checks: readonly CheckResult[];
}

/** Decides every member from its check result (same order as `members`). Pure. */
export function decideGroup(input: GroupDecisionInput, checks: readonly CheckResult[]): GroupDecision {
  if (checks.length !== input.members.length) {
    throw new RangeError(`decideGroup: ${checks.length} check results for ${input.members.length} members`);
  }
  let left = input.lossyLeft;
  const read: CheckResult[] = [];
  const own = input.members.map((m, i) => {
    const member: SpanDecisionInput = {
      policy: m.policy, store: m.store, acceptLossy: input.acceptLossy, budgetLeft: left > 0,
      ...(m.retentionMs !== undefined ? { retentionMs: m.retentionMs } : {}), ...(input.keep !== undefined ? { keep: input.keep } : {}),
    };
    const check = checkAsDecided(member, checks[i]!);
    read.push(check);
    const d = decideRead(member, check);
    if (d.status === "lossy") left--;
    return d;
  });
  const member = own.findIndex((d) => d.status === "rejected");
  const refused = own[member];
  if (refused === undefined || refused.status !== "rejected") return { decisions: own, refusal: null, checks: read };
  const decisions = own.map((d, i): SpanDecision => {
    if (d.status === "rejected") return d;
    const reason: DecisionReason & { code: "group-refused" } = { code: "group-refused", refusedBy: i === input.lead ? "member" : "lead" };
    return { status: "rejected", reason };
  });
  // The first member that refused on its own account names the reason for the whole group.
  return { decisions, refusal: { member, reason: rejectReasonOf(refused.reason), byLead: member === input.lead }, checks: read };
}
