/**
 * The fate of a kind: what the policy makes knowable in advance about every prune of it. Used by
 * `pruneguard explain`, by the PG3001 warning's reasoning and by the type emitter (`requests.ts`).
 *
 * Holds are placed when a span is pruned (a reversible prune holds its copy for the session), not when
 * it is appended: while a span is live the window has its bytes, and nothing holds the store's copy. So a
 * store that rotates sooner than the session makes a live span's copy expire, holds or not; only
 * re-persist (writing the window's bytes back into a writable store that distinguishes absent) or a
 * retention at least as long as the session keeps every prune reversible.
 */
import { formatDuration } from "../../src/policy/durations.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";

export type Fate =
  /** Every prune in an allowed mode is reversible for the whole session (while the store keeps its promises). */
  | { readonly fate: "always-reversible"; readonly why: string }
  /**
   * The store cannot hold copies and its retention is shorter than a session: a prune is reversible only
   * until the copy's retention ends (the runtime says when, and refuses it for a kind that forbids lossy).
   */
  | { readonly fate: "reversible-until-retention"; readonly retentionMs: number; readonly forbid: boolean; readonly repersist: boolean; readonly why: string }
  /** Reversible within `horizonMs` of the span's append (while its copy lasts); after that, `then`. */
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
  // The window persists a span at append only into a writable store; a read-only one never holds a copy
  // this window can verify.
  if (!store.writable) return irreversible(`store \`${store.name}\` is read-only, so the window never persists a copy to it`);
  if (store.retentionMs === null) return { fate: "always-reversible", why: `\`${store.name}\` keeps copies forever` };
  const session = policy.session.maxLengthMs;
  // Without holds nothing keeps a pruned span's copy past its retention, re-persisted or not (PG3006).
  if (!store.holds && (session === null || store.retentionMs < session)) {
    const retention = formatDuration(store.retentionMs);
    return {
      fate: "reversible-until-retention",
      retentionMs: store.retentionMs,
      forbid: kind.lossy === "forbid",
      repersist: kind.repersist === true,
      why: `\`${store.name}\` cannot hold copies and keeps them ${retention} after they are written, ${session === null ? "and sessions have no maximum length" : `less than the ${formatDuration(session)} session`}`,
    };
  }
  if (kind.repersist && store.writable) return { fate: "always-reversible", why: "expired copies are re-persisted from the window" };
  if (session !== null && store.retentionMs >= session) {
    return { fate: "always-reversible", why: `retention ${formatDuration(store.retentionMs)} outlasts the ${formatDuration(session)} session` };
  }
  const retention = formatDuration(store.retentionMs);
  return {
    fate: "reversible-until-horizon",
    horizonMs: store.retentionMs,
    then: kind.lossy === "with-flag" ? "lossy-with-flag" : "rejected",
    why: store.holds
      ? `\`${store.name}\` rotates copies ${retention} after append; holds start only at prune, and the kind does not re-persist`
      : `\`${store.name}\` rotates copies ${retention} after append and cannot hold them`,
  };
}

export function describeFate(f: Fate): string {
  switch (f.fate) {
    case "always-reversible":
      return "always reversible";
    case "reversible-until-retention":
      return f.forbid
        ? `reversible only when its copy outlasts the session (a copy lasts ${formatDuration(f.retentionMs)} after it is written), else refused`
        : `reversible only while its copy lasts, ${formatDuration(f.retentionMs)} after it is written (the index line says until when)`;
    case "reversible-until-horizon":
      return `reversible for ${formatDuration(f.horizonMs)} after append, then ${f.then === "rejected" ? "never prunable" : "lossy only with flag"}`;
    case "lossy-with-flag":
      return "lossy only with flag";
    case "never-prunable":
      return "never prunable";
  }
}

/** What a prune in an allowed mode becomes: executed reversibly, executed only as a lossy commitment, or never executed. */
export type Outcome = "reversible" | "lossy" | "rejected";

/** The outcome of a prune of a kind with this fate, `ageMs` after the span was appended. */
export function outcomeAt(f: Fate, ageMs: number): Outcome {
  switch (f.fate) {
    case "always-reversible":
      return "reversible";
    // Executed reversibly (until its copy's retention ends) while the copy lasts or can be written back;
    // a kind that forbids lossy is refused, since its copy would end before the session.
    case "reversible-until-retention":
      return f.forbid ? "rejected" : ageMs < f.retentionMs || f.repersist ? "reversible" : "lossy";
    case "reversible-until-horizon":
      return ageMs < f.horizonMs ? "reversible" : f.then === "rejected" ? "rejected" : "lossy";
    case "lossy-with-flag":
      return "lossy";
    case "never-prunable":
      return "rejected";
  }
}

/** The span ages after 0 at which `outcomeAt` can change for this fate (a horizon, or a copy's retention). */
export function changeAges(f: Fate): number[] {
  return f.fate === "reversible-until-horizon" ? [f.horizonMs] : f.fate === "reversible-until-retention" ? [f.retentionMs] : [];
}

/**
 * The overlay rule on one prune: going from `was` to `now` loosens when a prune that was executed reversibly,
 * or never, becomes a lossy commitment. A reversible prune that becomes rejected is tighter.
 */
export function loosens(was: Outcome, now: Outcome): boolean {
  return was !== "lossy" && now === "lossy";
}

/**
 * The earliest span age (0, or a horizon where an outcome changes) at which `looser` turns a prune that
 * `tighter` executes reversibly, or never, into a lossy one; `undefined` when there is none before
 * `untilMs` (the longest session `looser` allows; `null` is unlimited).
 */
export function firstLoosening(tighter: Fate, looser: Fate, untilMs: number | null): { readonly ageMs: number; readonly was: Outcome } | undefined {
  const ages = [0, ...changeAges(tighter), ...changeAges(looser)].sort((a, b) => a - b);
  for (const ageMs of ages) {
    if (untilMs !== null && ageMs >= untilMs) break;
    const was = outcomeAt(tighter, ageMs);
    if (loosens(was, outcomeAt(looser, ageMs))) return { ageMs, was };
  }
  return undefined;
}
