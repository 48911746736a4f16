/**
 * A kind with no store and `lossy: "forbid"` can never be pruned: no copy can make a prune reversible,
 * and the kind refuses the only other kind of prune. That may be meant (a notice that must stay in the
 * window) or a slip (a `store:` forgotten, or an overlay that moved the kind to `null`), and it was said
 * only by `explain` ("never prunable"), so it is a warning that says what would make the kind prunable.
 * The other ways a forbid kind becomes unprunable have their own codes: a store that cannot tell absent
 * (PG2006) and a read-only one (PG3005).
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";
import { preferOwn, type Check, type CheckContext } from "./context.js";

export const checkUnprunable: Check = (policy, ctx) => {
  const out: Diagnostic[] = [];
  for (const kind of policy.kinds) {
    if (unprunable(kind)) out.push(diagnostic("PG3007", where(policy, kind, ctx), { kind: kind.name }));
  }
  return out;
};

const unprunable = (kind: KindIR): boolean => kind.store === null && kind.lossy === "forbid";

/**
 * At the kind's name where it is declared. An overlay that makes an inherited kind unprunable gets the
 * warning at its own `store: null` or `lossy: "forbid"`; one that inherits an unprunable kind gets the
 * base's warning, at the base's location, so the two are reported once.
 */
function where(policy: PolicyIR, kind: KindIR, ctx: CheckContext): Location {
  const base = policy.extends === null ? undefined : ctx.policyByFile(policy.extends.file);
  const inherited = base?.kinds.find((k) => k.name === kind.name);
  if (base === undefined || inherited === undefined) return kind.location;
  if (unprunable(inherited)) return where(base, inherited, ctx);
  return preferOwn(policy, [kind.fields.store, kind.fields.lossy], kind.location);
}
