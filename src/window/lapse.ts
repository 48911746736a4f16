/**
 * Decisions not applied: a prune is decided (checked, held, audited, answered) at once and applied to what the
 * model reads at the next compaction point (`compaction.ts`). Until then its span's bytes are still in the
 * rendering — and a copy's promise can end in between: the session's holds lapse at its horizon
 * (`limits.maxLengthMs`), the store's retention runs out, `end()` releases the holds, or a copy is found lost
 * (`checkCopies`, a recall, a range summary's check). Applying the prune then would take the only bytes left
 * out of the window with no copy promised: the irreversible loss the decision was checked against.
 *
 * So every decision that frees spans is recorded here, with what it replaced, until a compaction point applies
 * it. Whenever the window next looks (a rendering, a compaction point, a recall, a search, a map, a prune or
 * summary), a pending decision any of whose copies is no longer promised (`copyUnpromised`) is not applied:
 * its spans are put back live (`WindowState.reinstate`; a range summary's run with `unsummarize`), a `kept`
 * record per span says why (`not-applied:lapsed`, `not-applied:lost`, or `not-applied:group` for a member
 * of the same decision whose own copy is fine — a tool call and its result stay together), and the model is
 * told once: a line under the span (`notAppliedLine`, `rangeNotAppliedLine`) from the next compaction point
 * until the one after, and at the end of the window until then when the window noticed between compaction
 * points. A later decision over an entry a decision not applied had made (a range summary over a pending
 * index line, another member of its tool call group) is not applied either.
 *
 * The span stays live with its bytes, so recall answers from the window and search reads them; a prune of it
 * later is checked again from what the store says then (and re-persists where its kind's policy allows).
 * Nothing here touches a store: the `kept` records are queued (`PendingAudit.defer`) and written, in decision
 * order, with the next record.
 */
import type { NotAppliedCause } from "../decision/reasons.js";
import { notAppliedLine, rangeNotAppliedLine } from "../render/lines.js";
import type { BackingStore } from "../stores/store.js";
import { keptDraft } from "./audit-drafts.js";
import type { WindowCore } from "./core.js";
import { lapsesFound, promiseLapsed, spanIdOf, type Entry, type GoneEntry, type LiveEntry, type SummaryEntry } from "./entries.js";

/** A live span a decision replaced, and what replaced it. */
export interface Replaced {
  readonly live: LiveEntry;
  readonly gone: GoneEntry;
}

/** A decision recorded until a compaction point applies it. */
export type PendingDecision =
  /** A prune, with its tool call group: `store` holds the decision's records. */
  | { readonly type: "prune"; readonly store: BackingStore; readonly members: readonly Replaced[]; readonly freed: number }
  /**
   * A range summary: `before` is the run it replaced, as it was; `members` its live members, committed in
   * `store` (`null` when it had none).
   */
  | {
      readonly type: "summary"; readonly store: BackingStore | null; readonly summary: SummaryEntry; readonly before: readonly Entry[];
      readonly members: readonly Replaced[]; readonly freed: number;
    };

/** Why a decision is not applied: the span whose copy is no longer promised, and how. */
interface Why {
  readonly spanId: string;
  readonly copy: "lapsed" | "lost";
}

/** How a reversibly pruned entry's copy stopped being promised at `now`, or `null` while it still is. */
function unpromised(e: Entry, now: number): "lapsed" | "lost" | null {
  if (e.state !== "pruned" || e.handle === null) return null;
  if (e.copyLost) return "lost";
  return promiseLapsed(e, now) ? "lapsed" : null;
}

/** The index lines under a fold, depth first. */
function* foldLeaves(e: Entry): Generator<Entry> {
  const stack: Entry[] = [e];
  while (stack.length > 0) {
    const m = stack.pop()!;
    if (m.state === "fold") for (let i = m.members.length - 1; i >= 0; i--) stack.push(m.members[i]!);
    else yield m;
  }
}

/**
 * The first span of `d` whose copy is no longer promised: a member it pruned, or — for a range summary — a
 * member pruned before it (an index line, or one under a fold), which the summary would hide as a hole.
 */
function whyNot(d: PendingDecision, now: number): Why | null {
  for (const m of d.members) {
    const copy = unpromised(m.gone, now);
    if (copy !== null) return { spanId: m.gone.spanId, copy };
  }
  if (d.type === "summary") {
    for (const e of d.before) {
      for (const leaf of e.state === "fold" ? foldLeaves(e) : [e]) {
        const copy = unpromised(leaf, now);
        if (copy !== null) return { spanId: spanIdOf(leaf), copy };
      }
    }
  }
  return null;
}

/**
 * When `e`'s copy stops being promised, as far as the clock tells: `-Infinity` when it already has (or was
 * found lost), `Infinity` when nothing about it can lapse (a live span, a tombstone, a copy kept forever).
 */
function lapseAt(e: Entry): number {
  if (e.state === "fold") {
    let at = Infinity;
    for (const leaf of foldLeaves(e)) at = Math.min(at, lapseAt(leaf));
    return at;
  }
  if (e.state !== "pruned" || e.handle === null) return Infinity;
  if (e.copyLost || e.lapsed === true) return -Infinity;
  return e.keptUntil ?? Infinity;
}

/** The earliest time a copy `d` relies on stops being promised (what `whyNot` looks at). */
function earliestLapse(d: PendingDecision): number {
  let at = Infinity;
  for (const m of d.members) at = Math.min(at, lapseAt(m.gone));
  if (d.type === "summary") for (const e of d.before) at = Math.min(at, lapseAt(e));
  return at;
}

export class PendingDecisions {
  #list: PendingDecision[] = [];
  /**
   * The earliest lapse among the pending decisions' copies, and the state's `promiseEpoch` it was computed at:
   * until the clock reaches it, or a copy's promise changes otherwise, no decision can be found unpromised,
   * so `settle` (run at every read of the window) costs a comparison, not a walk of every pending decision.
   */
  #earliest = Infinity;
  #epoch = -1;
  /** `lapsesFound` when the decisions were last looked at. */
  #lapses = -1;

  get size(): number {
    return this.#list.length;
  }

  /** A decision made since the last compaction point, before anything applies it. */
  record(d: PendingDecision): void {
    this.#list.push(d);
    this.#earliest = Math.min(this.#earliest, earliestLapse(d));
  }

  /** A compaction point applied every decision left. */
  clear(): void {
    if (this.#list.length > 0) this.#list = [];
    this.#earliest = Infinity;
  }

  /**
   * Puts back live every pending decision one of whose copies is no longer promised at the window's clock,
   * and every later decision that depends on one (see the module's comment). `inCompaction`: called by a
   * compaction point, whose rendering shows the line under the span; otherwise the line is said at the end of
   * the window too, until the next append. Returns how many decisions were not applied.
   */
  settle(core: WindowCore, inCompaction: boolean): number {
    if (this.#list.length === 0) return 0;
    const now = core.now();
    if (this.#epoch === core.state.promiseEpoch && this.#lapses === lapsesFound && now < this.#earliest) return 0;
    const undo = new Map<PendingDecision, Why>();
    for (const d of this.#list) {
      const why = whyNot(d, now);
      if (why !== null) undo.set(d, why);
    }
    if (undo.size === 0) {
      this.#remember(core);
      return 0;
    }
    // A decision over what an undone one made (a summary over its index line), or in the same tool call group.
    for (let grew = true; grew; ) {
      grew = false;
      const madeBy = new Map<Entry, PendingDecision>();
      const groupOf = new Map<string, PendingDecision>();
      for (const d of undo.keys()) {
        for (const m of d.members) {
          madeBy.set(m.gone, d);
          if (m.live.span.group !== undefined) groupOf.set(m.live.span.group, d);
        }
        if (d.type === "summary") madeBy.set(d.summary, d);
      }
      for (const d of this.#list) {
        if (undo.has(d)) continue;
        const by = d.members.map((m) => (m.live.span.group === undefined ? undefined : groupOf.get(m.live.span.group))).find((x) => x !== undefined) ??
          (d.type === "summary" ? d.before.map((e) => madeBy.get(e)).find((x) => x !== undefined) : undefined);
        if (by === undefined) continue;
        undo.set(d, undo.get(by)!);
        grew = true;
      }
    }
    const drafts: Array<readonly [BackingStore, ReturnType<typeof keptDraft>]> = [];
    // Newest first: a summary goes before the prunes whose index lines it holds, which then stand in the window again.
    for (const d of [...this.#list].reverse()) {
      const why = undo.get(d);
      if (why === undefined) continue;
      if (!this.#undo(core, d, why, now, inCompaction, drafts)) undo.delete(d);
    }
    this.#list = this.#list.filter((d) => !undo.has(d));
    // What each decision not applied had made pending, except what a decision still pending made pending too
    // (an index line a summary not applied was over, whose own prune stands).
    const still = new Set(this.#list.flatMap(pendingIds));
    for (const d of undo.keys()) core.shown.undecided(pendingIds(d).filter((id) => !still.has(id)), d.freed);
    for (const [store, draft] of drafts) core.pendingAudit.defer(store, { ...draft, decided: core.decide(1) });
    this.#remember(core);
    return undo.size;
  }

  /**
   * After a walk: the earliest lapse among the decisions left, at the state's current epoch. A decision left
   * with a copy already unpromised (one that stays applied: `#undo` returned false) is not counted, or every
   * read would walk again for nothing.
   */
  #remember(core: WindowCore): void {
    let at = Infinity;
    for (const d of this.#list) {
      const t = earliestLapse(d);
      if (t !== -Infinity) at = Math.min(at, t);
    }
    this.#earliest = at;
    this.#epoch = core.state.promiseEpoch;
    this.#lapses = lapsesFound;
  }

  /** Undoes one decision in the state; `false` when its entries are no longer where it left them (then it stays applied). */
  #undo(core: WindowCore, d: PendingDecision, why: Why, now: number, inCompaction: boolean, drafts: Array<readonly [BackingStore, ReturnType<typeof keptDraft>]>): boolean {
    const { state } = core;
    // Only a provider's compaction moves a pending line out of the window's positions, and the provider had
    // dropped those bytes on its side already: such a decision stays applied.
    if (d.type === "prune" ? d.members.some((m) => !state.entries.includes(m.gone)) : !state.entries.includes(d.summary)) return false;
    const causeOf = (m: Replaced): NotAppliedCause => unpromised(m.gone, now) ?? "group";
    if (d.type === "summary") {
      state.unsummarize(d.summary, d.before);
      drafts.push([core.home, keptDraft({ spanId: d.summary.spanId, kind: "summary", mode: "summarize", handle: null, hash: null }, why.copy)]);
    }
    for (const m of d.members) {
      if (d.type === "prune") state.reinstate(m.live, m.gone);
      const own = unpromised(m.gone, now);
      drafts.push([d.store ?? core.home, keptDraft({ spanId: m.live.span.id, kind: m.live.span.kind, mode: m.gone.mode, handle: m.gone.handle, hash: m.live.span.hash }, causeOf(m))]);
      if (d.type === "prune") tell(core, m.live, notAppliedLine(m.live.span.id, own ?? why.copy, own === null ? why.spanId : null), inCompaction);
    }
    if (d.type === "summary") {
      const line = rangeNotAppliedLine(spanIdOf(d.before[0]!), spanIdOf(d.before.at(-1)!), d.summary.spanId, why.spanId, why.copy);
      const first = d.before.find((e): e is LiveEntry => e.state === "live");
      if (first !== undefined) tell(core, first, line, inCompaction);
      else core.notice(line);
    }
    return true;
  }
}

/** The ids a decision made pending (`WindowCore.decided`): a prune's members; a summary's id and its run. */
function pendingIds(d: PendingDecision): string[] {
  return d.type === "prune" ? d.members.map((m) => m.live.span.id) : [d.summary.spanId, ...d.before.map(spanIdOf)];
}

/** The line under a span put back live: from the next compaction point on, and at the end of the window until then. */
function tell(core: WindowCore, live: LiveEntry, line: string, inCompaction: boolean): void {
  core.noticeUnder(live, line);
  if (!inCompaction) core.notice(line);
}
