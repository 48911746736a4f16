/**
 * Condition 1 (existence) over time: a store that rotates copies out before the longest session ends, and
 * cannot hold them, makes reversibility expire mid-session. Kinds that re-persist from a writable store
 * are exempt: the runtime writes the bytes back before it prunes.
 */
import { formatDuration } from "../../dsl/durations.js";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Check } from "./context.js";

export const checkRetention: Check = (policy) => {
  const out: Diagnostic[] = [];
  const session = policy.session.maxLengthMs;
  if (session === null) return out;
  for (const store of policy.stores) {
    if (store.retentionMs === null || store.holds || store.retentionMs >= session) continue;
    const exposed = policy.kinds.filter((k) => k.store === store.name && !(k.repersist && store.writable));
    if (exposed.length === 0) continue;
    const rules = new Set(exposed.map((k) => k.lossy));
    const after = rules.size > 1 ? "lossy with accept_lossy or rejected, depending on the kind" : rules.has("forbid") ? "rejected" : "possible only as a lossy commitment with accept_lossy";
    out.push(
      diagnostic("PG3001", store.fields.retention ?? store.location, {
        store: store.name,
        retention: formatDuration(store.retentionMs),
        session: formatDuration(session),
        kind: exposed.map((k) => k.name).join("` or `"),
        gap: formatDuration(session - store.retentionMs),
        after,
      }),
    );
  }
  return out;
};
