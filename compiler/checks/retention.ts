/**
 * Condition 1 (existence) over time: a store that rotates copies out before the longest session ends makes
 * reversibility expire mid-session. Holds do not help here: the runtime places them when a span is pruned,
 * so a live span's copy ages like any other. Kinds that re-persist into a writable store are exempt: the
 * runtime writes the window's bytes back before it prunes.
 */
import { formatDuration } from "../../src/policy/durations.js";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { KindIR, PolicyIR, StoreIR } from "../ir/schema.js";
import type { Check } from "./context.js";

export const checkRetention: Check = (policy) => {
  const out: Diagnostic[] = [];
  const session = policy.session.maxLengthMs;
  if (session === null) return out;
  for (const store of policy.stores) {
    // A read-only store never receives a copy from the window (PG3005 says so); its retention is moot.
    if (store.retentionMs === null || store.retentionMs >= session || !store.writable) continue;
    const exposed = policy.kinds.filter((k) => k.store === store.name && !(k.repersist && store.writable));
    if (exposed.length === 0) continue;
    const rules = new Set(exposed.map((k) => k.lossy));
    const after = rules.size > 1 ? "lossy with accept_lossy or rejected, depending on the kind" : rules.has("forbid") ? "rejected" : "possible only as a lossy commitment with accept_lossy";
    out.push(
      diagnostic("PG3001", where(policy, store, exposed), {
        store: store.name,
        retention: formatDuration(store.retentionMs),
        session: formatDuration(session),
        kind: exposed.map((k) => k.name).join("` or `"),
        gap: formatDuration(session - store.retentionMs),
        after,
        holds: store.holds ? " (its holds start only when a span is pruned)" : " and cannot hold them",
      }),
    );
  }
  return out;
};

/**
 * The store's retention when this policy declares the store; for an overlay that inherits it, the overlay
 * property that exposed it here (a kind's `repersist: false` or `store:`, or a longer `session.maxLength`),
 * so the warning lands in the file that caused it.
 */
function where(policy: PolicyIR, store: StoreIR, exposed: readonly KindIR[]): StoreIR["location"] {
  if (store.location.file === policy.file) return store.fields.retention ?? store.location;
  const causes = [...exposed.flatMap((k) => [k.fields.repersist, k.fields.store, k.fields.modes]), policy.session.fields.maxLength];
  return causes.find((c) => c?.file === policy.file) ?? store.fields.retention ?? store.location;
}
