/**
 * Condition 3 (provenance), statically: a store that cannot tell "pruned" from "never existed" makes every
 * prune to it a lossy commitment, whatever else it keeps. Condition 1 likewise for a read-only store: the
 * window persists spans at append only into writable stores, so a read-only one never has the copy.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import { preferOwn, storeOf, type Check } from "./context.js";

export const checkProvenance: Check = (policy) => {
  const out: Diagnostic[] = [];
  for (const kind of policy.kinds) {
    const store = storeOf(policy, kind.store);
    if (!store) continue;
    if (store.distinguishesAbsent) {
      if (!store.writable) out.push(diagnostic("PG3005", preferOwn(policy, [kind.fields.store, store.fields.writable], kind.location), { store: store.name, kind: kind.name, after: kind.lossy === "forbid" ? "rejected: the kind can never be pruned" : "a lossy commitment that needs accept_lossy" }));
      continue;
    }
    const at = preferOwn(policy, [kind.fields.store, store.fields.distinguishesAbsent], kind.location);
    if (kind.lossy === "forbid") out.push(diagnostic("PG2006", at, { store: store.name, kind: kind.name }));
    else out.push(diagnostic("PG3002", at, { store: store.name, kind: kind.name }));
  }
  return out;
};
