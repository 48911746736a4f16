/**
 * Range summaries, planned and shaped: one digest in the place of a contiguous run of the window — live
 * spans, spans pruned earlier (index lines) and earlier summaries — keeping the tree. This module resolves
 * the run, verifies the copies of members pruned earlier and builds the summary entry; `summarize.ts`
 * commits the live members through the prune's own commit step (checked and held in one store
 * transaction, all or nothing); a member that is already a summary or an index line has its copies held
 * already. Pins are carried at each level: the new digest carries every pinned
 * identifier of its members (their text, their replacements, the identifiers lower summaries carried).
 *
 * A run that holds a tombstone is refused: a digest over a hole would hide it.
 */
import { carryScanned, findPins } from "../pin-carry.js";
import { frameUntrusted } from "../render/framing.js";
import { contentHash } from "../hash.js";
import type { LookupResult } from "../stores/store.js";
import type { KindPolicy, PinPattern } from "../types.js";
import { goneText, kindOf, spanIdOf, type Entry, type GoneEntry, type LiveEntry, type SummaryEntry } from "./entries.js";

/** A run the window can summarize. */
export interface RangePlan {
  /** Index of the first member in the window's entries. */
  readonly start: number;
  readonly members: readonly Entry[];
  /** The live members: the ones the store checks and holds. */
  readonly live: readonly LiveEntry[];
  /** Members pruned earlier: their copies are read before the run commits (`verifyPrunedMembers`). */
  readonly pruned: readonly GoneEntry[];
  /** Every pinned identifier of the members, in order. */
  readonly ids: readonly string[];
}

/** Why a run cannot be summarized, as data. */
export interface RangeRefusal {
  readonly reason: "unknown-span" | "range" | "mode-not-allowed" | "group";
  readonly message: string;
}

export interface RangeContext {
  readonly entries: readonly Entry[];
  /** The clock: a member whose copy is no longer promised now is as lost as one found gone. */
  readonly now: number;
  policyOf(kind: string): KindPolicy;
  pinsFor(policy: KindPolicy): readonly PinPattern[];
}

/** Resolves `from`…`to` to a run of members, or says why not. */
export function planRange(ctx: RangeContext, from: string, to: string): { readonly plan: RangePlan } | { readonly refusal: RangeRefusal } {
  const start = ctx.entries.findIndex((e) => spanIdOf(e) === from);
  const end = ctx.entries.findIndex((e) => spanIdOf(e) === to);
  for (const [id, at] of [[from, start], [to, end]] as const) {
    if (at < 0) return { refusal: { reason: "unknown-span", message: `${id} is not in this window (a member of a summary is summarized already)` } };
  }
  if (end <= start) return { refusal: { reason: "range", message: `${to} does not come after ${from}; a range summary needs two or more positions in order` } };
  const members = ctx.entries.slice(start, end + 1);
  const inRange = new Set(members.map(spanIdOf));
  const live: LiveEntry[] = [];
  const pruned: GoneEntry[] = [];
  const ids: string[] = [];
  let store: string | null | undefined;
  for (const e of members) {
    if (e.state === "tombstone") {
      return { refusal: { reason: "range", message: `${e.spanId} is unrecoverable; a summary over it would hide the hole` } };
    }
    if (e.state === "summary") {
      ids.push(...e.ids);
      continue;
    }
    if (e.state === "fold") {
      // Its members stand in the run as they are: every copy verified, a hole refused.
      const refusal = planFoldMembers(e, ctx, pruned, ids);
      if (refusal !== null) return { refusal };
      continue;
    }
    if (e.state === "lost") {
      return { refusal: { reason: "range", message: `${e.spanId} was lost in a restart; a summary over it would hide the hole` } };
    }
    const policy = ctx.policyOf(kindOf(e));
    const pins = ctx.pinsFor(policy);
    if (e.state !== "live") {
      // A member whose copy is known lost, or no longer promised, is a hole a digest would hide.
      if (e.copyLost || e.handle === null || e.store === null || (e.keptUntil !== null && e.keptUntil <= ctx.now)) {
        return { refusal: { reason: "range", message: `${e.spanId}'s copy is lost; a summary over it would hide the hole` } };
      }
      if (e.replacement !== null) ids.push(...findPins(e.replacement, pins));
      pruned.push(e);
      continue;
    }
    if (!policy.modes.includes("summarize")) {
      return { refusal: { reason: "mode-not-allowed", message: `${e.span.id}: kind ${e.span.kind} does not allow summarize` } };
    }
    if (policy.store === null) {
      return { refusal: { reason: "range", message: `${e.span.id}: kind ${e.span.kind} has no store, so a range summary cannot keep its bytes` } };
    }
    if (store !== undefined && store !== policy.store) {
      return { refusal: { reason: "group", message: `the range spans stores ${store} and ${policy.store}; it cannot be summarized atomically` } };
    }
    store = policy.store;
    if (e.span.group !== undefined) {
      const outside = ctx.entries.find((o) => o.state === "live" && o.span.group === e.span.group && !inRange.has(o.span.id));
      if (outside) return { refusal: { reason: "group", message: `${e.span.id} is grouped with ${spanIdOf(outside)}, outside the range` } };
    }
    live.push(e);
    ids.push(...findPins(e.span.text, pins));
  }
  return { plan: { start, members, live, pruned, ids: [...new Set(ids)] } };
}

/** A fold in a run: its index lines are pruned members (their copies verified before the run commits), a tombstone refuses the run. */
function planFoldMembers(fold: Entry, ctx: RangeContext, pruned: GoneEntry[], ids: string[]): RangeRefusal | null {
  if (fold.state !== "fold") return null;
  for (const m of fold.members) {
    if (m.state === "fold") {
      const refusal = planFoldMembers(m, ctx, pruned, ids);
      if (refusal !== null) return refusal;
    } else if (m.state === "pruned" && m.handle !== null && m.store !== null && !m.copyLost && (m.keptUntil === null || m.keptUntil > ctx.now)) {
      pruned.push(m);
    } else {
      return { reason: "range", message: `${spanIdOf(m)} is unrecoverable; a summary over it would hide the hole` };
    }
  }
  return null;
}

/**
 * Reads the copy of every member pruned earlier, before the run commits: a copy gone or altered behind the
 * runtime refuses the run (and is marked lost, so its line stops offering a recall); a copy that is there
 * gives its pinned identifiers to the digest — a plain drop left none in the window. Returns the refusal,
 * or the identifiers to add. A store that fails throws: nothing was committed.
 */
export async function verifyPrunedMembers(
  plan: RangePlan,
  ctx: { lookup(store: string, handle: string): Promise<LookupResult>; pinsFor(kind: string): readonly PinPattern[] },
): Promise<{ readonly refusal: RangeRefusal } | { readonly ids: readonly string[] }> {
  const ids: string[] = [];
  for (const e of plan.pruned) {
    const found = await ctx.lookup(e.store!, e.handle!);
    if (found.status !== "found" || found.hash !== e.hash || contentHash(found.text) !== e.hash) {
      e.copyLost = true;
      return { refusal: { reason: "range", message: `${e.spanId}'s copy is lost; a summary over it would hide the hole` } };
    }
    ids.push(...findPins(found.text, ctx.pinsFor(e.kind)));
  }
  return { ids };
}

/** The header of a summary: which run it replaced and how to expand it. */
export function summaryHeader(spanId: string, members: readonly Entry[]): string {
  const first = spanIdOf(members[0]!);
  const last = spanIdOf(members.at(-1)!);
  return `${spanId} summary of ${first}–${last} (${members.length}), recall ${spanId}`;
}

/** The summary entry that replaces a committed run (live members already rewritten in `members`), and the ids it carried. */
export function summaryEntry(spanId: string, members: Entry[], digest: string, ids: readonly string[]): { entry: SummaryEntry; carried: readonly string[] } {
  const carried = carryScanned({ ids, capped: false }, digest);
  return {
    entry: {
      state: "summary", spanId, kind: "summary", members, digest: carried.text, ids, handle: null, store: null, replacement: null,
      // The digest is the model's text: framed, like every digest, so it can never read as a runtime line.
      text: `${summaryHeader(spanId, members)}\n${frameUntrusted(carried.text)}`,
    },
    carried: carried.carried,
  };
}

/**
 * One level of a summary: each member as the window would show it now (an index line as of `now`, or a
 * lower summary with its digest framed).
 */
export function expandLines(summary: { readonly members: readonly Entry[] }, now: number, tombstone: string): string[] {
  return summary.members.map((m) => (m.state === "live" ? `[${m.span.id} ${m.span.kind}]` : m.state === "summary" || m.state === "lost" || m.state === "fold" ? m.text : goneText(m, now, tombstone)));
}
