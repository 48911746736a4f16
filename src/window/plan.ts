/**
 * Planning a prune before any store is asked: resolve the span, gather its tool call/result group, check
 * each member's mode, pick the one store the group commits in, and build each member's replacement body
 * (digest or compressed form with pins carried). A plan that cannot be made is a refusal as data.
 */
import { compress } from "../compress.js";
import type { EarlyRejectReason } from "../decision/reasons.js";
import { carryPins } from "../pin-carry.js";
import type { BackingStore } from "../stores/store.js";
import type { KindPolicy, PinPattern, PruneMode, Span } from "../types.js";
import type { Entry, LiveEntry } from "./entries.js";

/** One member of a planned prune. */
export interface PlannedMember {
  readonly entry: LiveEntry;
  readonly mode: PruneMode;
  readonly policy: KindPolicy;
  /** The digest or compressed body (with pins carried), before the header; `null` for drop. */
  readonly body: string | null;
  readonly pinsCarried: readonly string[];
}

export interface PrunePlan {
  readonly target: LiveEntry;
  readonly members: readonly PlannedMember[];
  /** Index of the target in `members`. */
  readonly lead: number;
  /** The store the whole group commits in: the members' one store, or the audit store when none names one. */
  readonly store: BackingStore;
}

/** The reasons planning refuses for; a store failure comes later. */
export type PlanRejectReason = Exclude<EarlyRejectReason, "store-error">;

/** A prune refused while planning; `entry` is the live span the refusal is shown under, if there is one. */
export interface PlanRefusal {
  readonly reason: PlanRejectReason;
  readonly kind: string | null;
  readonly message: string;
  readonly entry: LiveEntry | null;
}

/** What planning needs from the window. */
export interface PlanContext {
  find(spanId: string): Entry | undefined;
  /** Live entries of a group, in window order. */
  groupMembers(group: string): LiveEntry[];
  policyOf(kind: string): KindPolicy;
  pinsFor(policy: KindPolicy): readonly PinPattern[];
  store(name: string): BackingStore;
  readonly auditStore: BackingStore;
}

/** A tool call and its result prune together: the target in the requested mode, the rest dropped. */
export function planPrune(
  ctx: PlanContext,
  spanId: string,
  mode: PruneMode,
  digest: string | null,
): { readonly plan: PrunePlan } | { readonly refusal: PlanRefusal } {
  const target = ctx.find(spanId);
  if (!target) return { refusal: { reason: "unknown-span", kind: null, message: `${spanId} is not a span of this window`, entry: null } };
  if (target.state === "lost") {
    return { refusal: { reason: "lost", kind: target.kind, message: `${spanId} was lost in a restart; there is nothing left to prune`, entry: null } };
  }
  if (target.state !== "live") {
    return { refusal: { reason: "already-pruned", kind: target.kind, message: `${spanId} was pruned already`, entry: null } };
  }
  const kind = target.span.kind;
  const lead = ctx.policyOf(kind);
  if (!lead.modes.includes(mode)) {
    return { refusal: { reason: "mode-not-allowed", kind, message: `kind ${kind} allows ${lead.modes.join(", ")}, not ${mode}`, entry: target } };
  }
  const entries = target.span.group === undefined ? [target] : ctx.groupMembers(target.span.group);
  const members: PlannedMember[] = [];
  for (const entry of entries) {
    const m: PruneMode = entry === target ? mode : "drop";
    const policy = ctx.policyOf(entry.span.kind);
    if (!policy.modes.includes(m)) {
      const message = `${spanId} is grouped with ${entry.span.id}, whose kind ${entry.span.kind} does not allow ${m}`;
      return { refusal: { reason: "group", kind, message, entry: target } };
    }
    members.push({ entry, mode: m, policy, ...replacementBody(entry.span, m, digest, policy, ctx.pinsFor(policy)) });
  }
  const storeNames = [...new Set(members.map((p) => p.policy.store).filter((s): s is string => s !== null))];
  if (storeNames.length > 1) {
    const message = `${spanId}'s group spans stores ${storeNames.join(" and ")}; it cannot be pruned atomically`;
    return { refusal: { reason: "group", kind, message, entry: target } };
  }
  const store = storeNames.length === 1 ? ctx.store(storeNames[0]!) : ctx.auditStore;
  return { plan: { target, members, lead: members.findIndex((p) => p.entry === target), store } };
}

function replacementBody(
  span: Span,
  mode: PruneMode,
  digest: string | null,
  policy: KindPolicy,
  pins: readonly PinPattern[],
): { body: string | null; pinsCarried: readonly string[] } {
  if (mode === "drop") return { body: null, pinsCarried: [] };
  if (mode === "summarize") {
    const carried = carryPins(span.text, digest ?? "", pins);
    return { body: carried.text, pinsCarried: carried.carried };
  }
  const c = compress(span.text, { targetTokens: policy.compressTargetTokens ?? 200, pins });
  return { body: c.text, pinsCarried: c.carried };
}

/** Why members never got a copy, when persisting them on append failed: the root cause of a rejection. */
export function persistFailures(members: readonly { readonly entry: LiveEntry }[]): string {
  const failed = members.filter((p) => p.entry.persistError !== null);
  return failed.map((p) => `; persisting ${p.entry.span.id} on append failed: ${p.entry.persistError}`).join("");
}
