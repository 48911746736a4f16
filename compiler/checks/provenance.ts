/**
 * Condition 3 (provenance), statically: a store that cannot tell "pruned" from "never existed" makes every
 * prune to it a lossy commitment, whatever else it keeps.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import { storeOf, type Check } from "./context.js";

export const checkProvenance: Check = (policy) => {
  const out: Diagnostic[] = [];
  for (const kind of policy.kinds) {
    const store = storeOf(policy, kind.store);
    if (!store || store.distinguishesAbsent) continue;
    const at = kind.fields.store ?? kind.location;
    if (kind.lossy === "forbid") out.push(diagnostic("PG2006", at, { store: store.name, kind: kind.name }));
    else out.push(diagnostic("PG3002", at, { store: store.name, kind: kind.name }));
  }
  return out;
};
