/**
 * What a prune request of each kind must carry, decided from the policy alone: the contract the generated
 * types encode. One function, so the types, their docs and the tests cannot disagree.
 *
 * - a kind whose store can back a prune (it has a store that distinguishes absent) may be pruned in its
 *   allowed modes; `acceptLossy` is optional where the kind may be lossy, and may only be `false` where
 *   it forbids lossy (a `true` there could never be honoured);
 * - a kind that can only be lossy (no store, or a store that cannot tell absent) needs `acceptLossy: true`
 *   written as the literal;
 * - a kind that can only be lossy and forbids it (or whose session has a lossy budget of 0) cannot be
 *   pruned at all.
 *
 * What depends on the store's state at execution time (the copy is still there, the budget is not spent,
 * the span's group can go with it) stays a runtime check.
 */
import { PRUNE_MODES, type PruneMode } from "../../src/types.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";
import { fateOf, type Fate } from "./fate.js";

/** How a request treats `acceptLossy`. */
export type LossyFlag =
  /** `acceptLossy?: boolean`: the runtime may commit a loss when it cannot verify the copy. */
  | "optional"
  /** `acceptLossy?: false`: the kind forbids lossy commitment. */
  | "never"
  /** `acceptLossy: true`: nothing can back the prune, so it is a lossy commitment and must say so. */
  | "required";

export type RequestShape =
  | { readonly prunable: true; readonly modes: readonly PruneMode[]; readonly acceptLossy: LossyFlag; readonly fate: Fate }
  | { readonly prunable: false; readonly reason: string; readonly fate: Fate };

export function requestShapeOf(kind: KindIR, policy: PolicyIR): RequestShape {
  const fate = fateOf(kind, policy);
  const modes = PRUNE_MODES.filter((m) => kind.modes.includes(m));
  const noBudget = policy.session.lossyBudget === 0;
  switch (fate.fate) {
    case "always-reversible":
    case "reversible-until-retention":
    case "reversible-until-horizon":
      return { prunable: true, modes, acceptLossy: kind.lossy === "with-flag" && !noBudget ? "optional" : "never", fate };
    case "lossy-with-flag":
      if (noBudget) return { prunable: false, reason: `kind ${kind.name} can only be pruned as a lossy commitment and the session's lossy budget is 0: it cannot be pruned`, fate };
      return { prunable: true, modes, acceptLossy: "required", fate };
    case "never-prunable":
      return {
        prunable: false,
        reason:
          kind.store === null
            ? `kind ${kind.name} has no store and forbids lossy commitment: it cannot be pruned`
            : `kind ${kind.name} forbids lossy commitment and ${fate.why.replace(/, and lossy is forbidden$/, "").replaceAll("`", "")}: it cannot be pruned`,
        fate,
      };
  }
}
