/**
 * Decide: the step a store runs inside its prune transaction, once per attempt, for every operation that
 * frees spans — a prune with its group, and a range summary over its live members. It runs the decision
 * boundary (`decideGroup`) over the checks the store just computed and returns one decision per member
 * with its audit draft; what the attempt that committed decided is kept in `last`, for the window to apply.
 */
import { decideGroup, type GroupDecision, type GroupDecisionInput } from "../decision/group.js";
import type { Keep } from "../decision/keep.js";
import type { CheckResult, PruneDecision } from "../stores/store.js";
import { checkedPruneDraft, type PruneSubject } from "./audit-drafts.js";

export interface DecideInput extends Omit<GroupDecisionInput, "lossyLeft"> {
  /** Each member as its audit record names it. */
  readonly subjects: readonly PruneSubject[];
  /** The decision number of the first member (`decided` on its record); the others follow in order. */
  readonly decided: number;
  /** The lossy units this decision may spend, from what the store counted left in the session. */
  lossyLeft(counted: number): number;
}

/** What the attempt that committed decided: the group's refusal, if any, and how long each copy is kept. */
export interface Decided {
  refusal: GroupDecision["refusal"];
  keeps: (Keep | null)[];
  /** Each member's check as the decision read it (a copy nothing keeps any longer reads as expired). */
  checks: readonly CheckResult[];
}

/** The `decide` a store's `commitPrune` calls, and where the last attempt's result is kept. */
export function decider(input: DecideInput): { readonly decide: (checks: readonly CheckResult[], lossyLeft: number) => PruneDecision[]; readonly last: Decided } {
  const last: Decided = { refusal: null, keeps: [], checks: [] };
  const decide = (checks: readonly CheckResult[], lossyLeft: number): PruneDecision[] => {
    const group = decideGroup({ ...input, lossyLeft: input.lossyLeft(lossyLeft) }, checks);
    last.refusal = group.refusal;
    last.keeps = group.decisions.map((d) => (d.status === "reversible" ? d.keep : null));
    last.checks = group.checks;
    return group.decisions.map((d, i) => {
      const audit = { ...checkedPruneDraft(input.subjects[i]!, d, group.checks[i]!), decided: input.decided + i };
      return d.status === "reversible" ? { status: d.status, repersist: d.repersist, hold: true, audit } : { status: d.status, audit };
    });
  };
  return { decide, last };
}
