/**
 * Reversibility after the prune: a store that cannot hold copies keeps a pruned span's copy only for its
 * retention (from when the copy was written, or re-written by re-persist). When that is shorter than a
 * session, the runtime answers such a prune `reversible` with an `until` — the index line says when the
 * copy expires and stops offering a recall then — and refuses it for a kind that forbids lossy commitment,
 * because the copy would be lost mid-session. PG3001 is about the copy before the prune; this is about
 * the copy after it, which holds would have kept.
 */
import { formatDuration } from "../../dsl/durations.js";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Check } from "./context.js";

export const checkHolds: Check = (policy) => {
  const out: Diagnostic[] = [];
  const session = policy.session.maxLengthMs;
  for (const store of policy.stores) {
    // Read-only or provenance-less stores never back a reversible prune at all (PG3005, PG3002).
    if (store.holds || store.retentionMs === null || !store.writable || !store.distinguishesAbsent) continue;
    if (session !== null && store.retentionMs >= session) continue;
    const kinds = policy.kinds.filter((k) => k.store === store.name);
    if (kinds.length === 0) continue;
    const rules = new Set(kinds.map((k) => k.lossy));
    const then = rules.size > 1
      ? "reversible only until then for `with-flag` kinds, and refused for kinds that forbid lossy commitment"
      : rules.has("forbid") ? "refused, because the kind forbids lossy commitment" : "reversible only until then, and the index line says when";
    out.push(
      diagnostic("PG3006", store.fields.holds ?? store.fields.retention ?? store.location, {
        store: store.name,
        retention: formatDuration(store.retentionMs),
        session: session === null ? "sessions have no maximum length" : `sessions last up to ${formatDuration(session)}`,
        kind: kinds.map((k) => k.name).join("` or `"),
        then,
      }),
    );
  }
  return out;
};
