/**
 * The fate of a kind: what the policy makes knowable in advance about every prune of it. Used by
 * `pruneguard explain` and meant for the generators (the types encode the same four cases).
 */
import { formatDuration } from "../../dsl/durations.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";

export type Fate =
  /** Every prune in an allowed mode is reversible for the whole session. */
  | { readonly fate: "always-reversible"; readonly why: string }
  /** Reversible while the copy lasts (`horizonMs` after persisting); after that, `then`. */
  | { readonly fate: "reversible-until-horizon"; readonly horizonMs: number; readonly then: "lossy-with-flag" | "rejected"; readonly why: string }
  /** No reversible prune is possible; a prune needs accept_lossy and leaves a tombstone. */
  | { readonly fate: "lossy-with-flag"; readonly why: string }
  /** No prune can ever execute. */
  | { readonly fate: "never-prunable"; readonly why: string };

export function fateOf(kind: KindIR, policy: PolicyIR): Fate {
  const store = kind.store === null ? undefined : policy.stores.find((s) => s.name === kind.store);
  const irreversible = (why: string): Fate =>
    kind.lossy === "with-flag" ? { fate: "lossy-with-flag", why } : { fate: "never-prunable", why: `${why}, and lossy is forbidden` };
  if (!store) return irreversible("no store keeps a copy");
  if (!store.distinguishesAbsent) return irreversible(`store \`${store.name}\` cannot distinguish absent`);
  if (store.retentionMs === null) return { fate: "always-reversible", why: `\`${store.name}\` keeps copies forever` };
  if (store.holds) return { fate: "always-reversible", why: `\`${store.name}\` holds copies the window references` };
  if (kind.repersist && store.writable) return { fate: "always-reversible", why: "expired copies are re-persisted from the window" };
  const session = policy.session.maxLengthMs;
  if (session !== null && store.retentionMs >= session) {
    return { fate: "always-reversible", why: `retention ${formatDuration(store.retentionMs)} outlasts the ${formatDuration(session)} session` };
  }
  return {
    fate: "reversible-until-horizon",
    horizonMs: store.retentionMs,
    then: kind.lossy === "with-flag" ? "lossy-with-flag" : "rejected",
    why: `\`${store.name}\` rotates copies after ${formatDuration(store.retentionMs)} without holds`,
  };
}

export function describeFate(f: Fate): string {
  switch (f.fate) {
    case "always-reversible":
      return "always reversible";
    case "reversible-until-horizon":
      return `reversible for ${formatDuration(f.horizonMs)}, then ${f.then === "rejected" ? "never prunable" : "lossy only with flag"}`;
    case "lossy-with-flag":
      return "lossy only with flag";
    case "never-prunable":
      return "never prunable";
  }
}
