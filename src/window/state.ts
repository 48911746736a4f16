/**
 * The window's state, in one place: its positions, the index by span id, the tool call groups and what
 * was folded. Every decision that frees spans — a prune with its group, a range summary, a decision that
 * was in doubt and turned out to have committed — reaches the state through `applyCommitted`, so the rules
 * of a committed member (replaced in place, indexed, its group's fate, the lossy count) are written once.
 */
import type { Keep } from "../decision/keep.js";
import type { PruneCommitItem } from "../stores/store.js";
import type { PruneMode } from "../types.js";
import { CallGroups, goneTokens, prunedEntry, spanIdOf, type Entry, type FoldEntry, type GoneEntry, type LiveEntry, type SummaryEntry } from "./entries.js";
import { foldIndex, foldLeaves, newFold, staleFold } from "./fold.js";

/** A live span as a commit replaces it: its mode and the body that stands in its place (`null`: an index line). */
export interface CommittedMember {
  readonly entry: LiveEntry;
  readonly mode: PruneMode;
  readonly body: string | null;
}

/** Directive operations whose calls fold away once answered: their effect is in the window's own lines. */
export const FOLDED_OPS: ReadonlySet<string> = new Set(["prune", "map", "compact"]);

/** A directive call's key among the calls that fold: its operation (no colon in one) and its call id. */
function foldKey(op: string, callId: string): string {
  return `${op}:${callId}`;
}

/** A committed copy's keep when the decision gave none (a lossy member, or a keep lost with the reply). */
const KEPT_UNKNOWN: Keep = Object.freeze({ until: null, keptUntil: null });

export class WindowState {
  /** The positions the model's rendering is made from, in order. */
  readonly entries: Entry[] = [];
  /** Every span the window holds or held, by id, including members of summaries. */
  readonly #byId = new Map<string, Entry>();
  /** Spans folded out of the window (runtime traffic): recall still answers for them; search does not name them. */
  readonly folded = new Set<string>();
  /**
   * Span ids the session minted for this window that may stand for nothing the model was shown: every range
   * summary's (one applied is found in the window first, so it is never read as unused), a provider's
   * compaction that covered nothing. Known, so a search does not count them as another window's spans, and a
   * refused one is recalled as never in the session.
   */
  readonly unused = new Set<string>();
  /**
   * Range summaries' ids from before a restart (`restore`) not drawn again: no note of their text (applied before
   * summaries were noted, or the note failed), or not applied after all. Their members are drawn, each in its place.
   * A recall says so; a search does not count them as another window's.
   */
  readonly summariesBefore = new Set<string>();
  /**
   * Directive tool calls acted on (prune, map, compact), by operation and call id (`foldKey`): folded out at the
   * next compaction point. A recall or search that shares a call id with one of them does not fold with it.
   */
  readonly foldable = new Set<string>();
  /** The directive tools' names the window was handed, with their operations: their calls and answers are not searched. */
  readonly directiveNames = new Map<string, string>();
  /**
   * Tool results a resume brought back, by tool name and call id (a provider may reuse a call id for another
   * tool: a recall after a prune), not yet known to be directive traffic: when the window learns the directive
   * tools' names (`learnTools`), the answered prune, map and compact calls among them fold at the next
   * compaction point, as they did (or would have) before the restart.
   */
  readonly resumedResults = new Map<string, { readonly callId: string; readonly toolName: string; readonly isError: boolean }>();
  readonly calls = new CallGroups();
  /** Groups with a pruned member, and whether any went lossy: a late member joins that fate. */
  readonly prunedGroups = new Map<string, "reversible" | "lossy">();
  /** Lossy commitments of this session as last counted (for the map's forecasts only); `null`: not counted yet. */
  lossyUsed: number | null = null;

  get size(): number {
    return this.#byId.size;
  }

  get(spanId: string): Entry | undefined {
    return this.#byId.get(spanId);
  }

  has(spanId: string): boolean {
    return this.#byId.has(spanId);
  }

  /** An entry at the end of the window (an append, or one restored by a resume). */
  push(entry: Entry): void {
    this.entries.push(entry);
    this.#byId.set(spanIdOf(entry), entry);
    // A provider's compaction a resume drew again holds its members: each stays recallable by its id.
    if (entry.state === "summary") for (const m of this.#nested(entry)) if (!this.#byId.has(spanIdOf(m))) this.#byId.set(spanIdOf(m), m);
  }

  /** The members of a summary or fold, depth first (an explicit stack: summaries of summaries may be thousands deep). */
  *#nested(e: Entry): Generator<Entry> {
    if (e.state !== "summary" && e.state !== "fold") return;
    const stack: Entry[] = [...e.members].reverse();
    while (stack.length > 0) {
      const m = stack.pop()!;
      yield m;
      if (m.state === "summary" || m.state === "fold") for (let i = m.members.length - 1; i >= 0; i--) stack.push(m.members[i]!);
    }
  }

  /** Live entries of a tool call group, in window order. */
  groupMembers(group: string): LiveEntry[] {
    return this.entries.filter((e): e is LiveEntry => e.state === "live" && e.span.group === group);
  }

  /** A span's group's fate, once one of its members was pruned (a lossy member makes it lossy for good). */
  groupPruned(group: string | null, lossy: boolean): void {
    if (group === null || this.prunedGroups.get(group) === "lossy") return;
    this.prunedGroups.set(group, lossy ? "lossy" : "reversible");
  }

  /**
   * A member the store committed: its line (index line, body or tombstone) takes its place, from its commit
   * item and the keep the decision computed. Returns the new entry and the tokens it frees at `now`.
   */
  applyCommitted(
    member: CommittedMember, committed: PruneCommitItem, keep: Keep | null, now: number, tombstone: string, hintTokens: number,
  ): { readonly gone: GoneEntry; readonly freed: number } {
    const gone = prunedEntry(member, committed, keep ?? KEPT_UNKNOWN, hintTokens);
    const at = member.entry.pos;
    // A member of a run being summarized is still at its position; the summary replaces the run afterwards.
    if (this.entries[at] === member.entry) this.entries[at] = gone;
    this.#byId.set(gone.spanId, gone);
    this.groupPruned(gone.group, gone.state === "tombstone");
    if (gone.state === "tombstone" && this.lossyUsed !== null) this.lossyUsed++;
    return { gone, freed: member.entry.span.tokens - goneTokens(gone, now, tombstone) };
  }

  /**
   * A span whose prune was decided and is not applied after all (`lapse.ts`): `live`, the entry the prune
   * replaced, takes the place of `gone` again, and recall, search and the map read it as live. Its group's fate
   * is forgotten when no member of the group is pruned any more. Returns whether `gone` was in the window (a
   * member of a range summary is put back by `unsummarize` first).
   */
  reinstate(live: LiveEntry, gone: GoneEntry): boolean {
    const at = this.entries.indexOf(gone);
    if (at < 0) return false;
    this.entries[at] = live;
    live.pos = at;
    this.#byId.set(live.span.id, live);
    this.#groupLiveAgain(live.span.group);
    return true;
  }

  /** A group's fate is forgotten once none of its members is pruned: a member that arrives later stays live. */
  #groupLiveAgain(group: string | undefined): void {
    if (group === undefined || !this.prunedGroups.has(group)) return;
    for (const e of this.all()) if ((e.state === "pruned" || e.state === "tombstone") && e.group === group) return;
    this.prunedGroups.delete(group);
  }

  /**
   * A range summary decided and not applied after all (`lapse.ts`): the run it replaced, `before` (as it was
   * when the summary was decided: live entries, index lines, lower summaries, folds), takes its place again.
   * The summary stays known by its id, with `before` as its members: a recall of it lists them as they stand.
   * Returns whether the summary was in the window.
   */
  unsummarize(summary: SummaryEntry, before: readonly Entry[]): boolean {
    const at = this.entries.indexOf(summary);
    if (at < 0) return false;
    this.entries.splice(at, 1, ...before);
    for (const e of before) this.#byId.set(spanIdOf(e), e);
    summary.members = [...before];
    this.#renumber();
    for (const e of before) if (e.state === "live") this.#groupLiveAgain(e.span.group);
    return true;
  }

  /** A summary in the place of the run of `count` positions from `start` (its members already committed). */
  replaceRun(start: number, count: number, summary: SummaryEntry): void {
    this.entries.splice(start, count, summary);
    this.#byId.set(summary.spanId, summary);
    this.#renumber();
  }

  /**
   * A provider's compaction (`provider-compaction.ts`), once its spans were pruned: every position that is no
   * longer live (index lines, tombstones, digests, folds, summaries) becomes a member of `summary`, folded as
   * a compaction point folds runs, and the positions still live — spans the policy kept, and system spans,
   * which no provider compacts — are said again after it, in order, so the provider reads them after its
   * block. Lost lines stay in view too. Resume applies the same rule (`resume.ts`), so a restarted window
   * draws the same positions.
   */
  compactByProvider(summary: SummaryEntry, now: number): void {
    const { members, kept } = splitForProvider(this.entries);
    const folded = foldIndex(members, null, now, (key) => this.#byId.get(key));
    summary.members = folded === null ? members : folded.entries;
    if (folded !== null) for (const f of folded.folds) this.#registerFold(f);
    this.entries.splice(0, this.entries.length, summary, ...kept);
    this.#byId.set(summary.spanId, summary);
    this.#renumber();
  }

  /**
   * Removes the directive tool calls acted on since the last compaction point, with their results: the index
   * lines say what they did, and each would otherwise be re-sent in every later request. A call whose result
   * has not arrived stays, and so does its result's pair: nothing is left orphaned. Returns the calls folded.
   */
  foldDirectiveCalls(): number {
    if (this.foldable.size === 0) return 0;
    // The call or answer's own operation, by its tool's name, with its id: a provider may reuse an id for one of
    // the agent's own tools, which never folds, or for a recall or search of the same response, which stays.
    const foldsWith = (e: Entry): { readonly key: string; readonly call: boolean } | null => {
      // A resumed call or answer whose bytes had no copy (its kind has no store, or the copy was rotated out)
      // is `lost`; it was folded all the same before the restart, and folds again.
      const m = e.state === "live" ? e.span.message : e.state === "lost" ? e.message ?? undefined : undefined;
      if (m === undefined || !("callId" in m)) return null;
      const op = this.directiveNames.get(m.toolName);
      const key = op === undefined ? null : foldKey(op, m.callId);
      return key !== null && this.foldable.has(key) ? { key, call: m.role === "tool-call" } : null;
    };
    const sides = new Map<string, number>();
    for (const e of this.entries) {
      const f = foldsWith(e);
      if (f !== null) sides.set(f.key, (sides.get(f.key) ?? 0) | (f.call ? 1 : 2));
    }
    const complete = new Set([...sides].filter(([, bits]) => bits === 3).map(([key]) => key));
    let removed = 0;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      const f = foldsWith(e);
      if (f === null || !complete.has(f.key)) continue;
      this.entries.splice(i, 1);
      this.folded.add(spanIdOf(e));
      removed++;
    }
    for (const key of complete) this.foldable.delete(key);
    if (removed > 0) this.#renumber();
    return complete.size;
  }

  /** Directive tool names learned: resumed answers of prune, map and compact calls become foldable. */
  learnedTools(): void {
    for (const [key, r] of this.resumedResults) {
      const op = this.directiveNames.get(r.toolName);
      if (op === undefined) continue;
      this.resumedResults.delete(key);
      if (!r.isError) this.actedOn(op, r.callId);
    }
  }

  /** A directive tool call of `op` the window acted on: folded at the next compaction point when `op` folds (`FOLDED_OPS`). */
  actedOn(op: string, callId: string): void {
    if (FOLDED_OPS.has(op)) this.foldable.add(foldKey(op, callId));
  }

  /**
   * Folds runs of index lines and tombstones (`fold.ts`) that `touched` says a pending decision changed
   * (all of them when `null`). Returns how many folds it made.
   */
  foldIndex(touched: ((e: Entry) => boolean) | null, now: number): number {
    const folded = foldIndex(this.entries, touched, now, (key) => this.#byId.get(key));
    if (folded === null) return 0;
    this.entries.splice(0, this.entries.length, ...folded.entries);
    for (const f of folded.folds) this.#registerFold(f);
    this.#renumber();
    return folded.folds.length;
  }

  /**
   * A copy found lost (by a recall, `checkCopies`, a range summary's check): its line says so, and a fold that
   * holds it counts it as unrecoverable from the next compaction point on.
   */
  markCopyLost(e: GoneEntry): void {
    e.copyLost = true;
    this.promiseChanged();
  }

  /**
   * A copy's promise changed in a way the clock does not tell (a copy found lost, holds released by `end()`):
   * the fold lines are redrawn at the next compaction point, and the pending decisions look at their copies again.
   */
  promiseChanged(): void {
    this.foldsStale = true;
    this.promiseEpoch++;
  }

  /**
   * Counts `promiseChanged`: the pending decisions (`lapse.ts`) look at their copies again after one, and
   * otherwise only once the clock passes the earliest promise among them.
   */
  promiseEpoch = 0;

  /**
   * Set when a folded member changed in a way the clock does not tell (a copy found lost, a hold released by
   * `end()`): the fold lines are redrawn at the next compaction point. A promise that lapses with time needs
   * no flag: each fold line is redrawn when read past its first member's lapse (`foldText`).
   */
  foldsStale = false;

  /** Has every fold line drawn again from its members when it is next read (`foldText`, at the rendering that follows). */
  refreshFolds(): void {
    this.foldsStale = false;
    for (const e of this.all()) if (e.state === "fold") staleFold(e);
  }

  /**
   * The fold a recall of `key` (`span_3-span_90`) lists: the one the window made, or — for a range no fold
   * covers now (a key shown before a restart, whose fold the resumed window drew differently) — a fold drawn
   * now over every index line and tombstone in that range, so the answer is the truth, never "never had it".
   * `undefined` when the range holds none.
   */
  foldFor(key: string, now: number): FoldEntry | undefined {
    const made = this.#byId.get(key);
    if (made?.state === "fold") return made;
    const m = /^span_([0-9]+)-span_([0-9]+)$/.exec(key);
    if (m === null) return undefined;
    const [from, to] = [Number(m[1]), Number(m[2])];
    const lines: Entry[] = [];
    const seen = new Set<string>();
    for (const e of this.all()) {
      if ((e.state !== "pruned" && e.state !== "tombstone") || seen.has(e.spanId)) continue;
      const n = Number(e.spanId.slice(5));
      if (n < from || n > to) continue;
      seen.add(e.spanId);
      lines.push(e);
    }
    if (lines.length === 0) return undefined;
    lines.sort((a, b) => Number(spanIdOf(a).slice(5)) - Number(spanIdOf(b).slice(5)));
    if (lines.length === 1) return newFold(key, lines, now, "user");
    const fold = foldLeaves(lines, (k) => this.#byId.get(k), now);
    this.#registerFold(fold);
    return { ...fold, spanId: key };
  }

  #registerFold(f: FoldEntry): void {
    // A fold's key stays readable after a later fold took its members: recall of it still lists them.
    this.#byId.set(f.spanId, f);
    for (const m of f.members) if (m.state === "fold" && !this.#byId.has(m.spanId)) this.#registerFold(m);
  }

  /** A pruned span by its handle, wherever it stands (in a summary or a fold too). */
  byHandle(handle: string): Entry | undefined {
    for (const e of this.all()) if (e.handle === handle) return e;
    return undefined;
  }

  /** Whether `e` is one of the directive tools' own calls or answers (runtime traffic, not searched). */
  isDirectiveTraffic(e: Entry): boolean {
    const m = e.state === "live" ? e.span.message : undefined;
    // By the tool's name, not the call id: a provider may reuse an id for one of the agent's own tools.
    return m !== undefined && "callId" in m && this.directiveNames.has(m.toolName);
  }

  /** Every entry, members of range summaries included (an expansion shows their lines), depth first. */
  *all(): Generator<Entry> {
    const stack: (readonly Entry[])[] = [this.entries];
    const at: number[] = [0];
    while (stack.length > 0) {
      const list = stack.at(-1)!;
      const i = at[at.length - 1]!;
      if (i >= list.length) {
        stack.pop();
        at.pop();
        continue;
      }
      at[at.length - 1] = i + 1;
      const e = list[i]!;
      yield e;
      if (e.state === "summary" || e.state === "fold") {
        stack.push(e.members);
        at.push(0);
      }
    }
  }

  /** Whether the window holds every one of `span_1` … `span_<n>`. */
  knowsSpans(n: number): boolean {
    if (n > this.#byId.size + this.unused.size) return false;
    for (let k = 1; k <= n; k++) if (!this.#byId.has(`span_${k}`) && !this.unused.has(`span_${k}`)) return false;
    return true;
  }

  #renumber(): void {
    for (const [i, e] of this.entries.entries()) if (e.state === "live") e.pos = i;
  }
}

/**
 * The positions a provider's compaction covers (no longer live) and the ones said again after its block.
 * `laterPruned`: a resume redraws a compaction from entries in their final state, so a span it kept and
 * that was pruned after it reads as "no longer live"; the resume says which those are (by decision order),
 * and they stay after the block, where the window showed them.
 */
export function splitForProvider(entries: readonly Entry[], laterPruned?: (e: Entry) => boolean): { members: Entry[]; kept: Entry[] } {
  const members: Entry[] = [];
  const kept: Entry[] = [];
  for (const e of entries) (e.state === "live" || e.state === "lost" || laterPruned?.(e) === true ? kept : members).push(e);
  return { members, kept };
}
