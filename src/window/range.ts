/**
 * Range summaries, planned and shaped: one digest in the place of a contiguous run of the window — live
 * spans, spans pruned earlier (index lines) and earlier summaries — keeping the tree. This module resolves
 * the run, verifies the copies of members pruned earlier and builds the summary entry; `summarize.ts`
 * commits the live members through the prune's own commit step (checked and held in one store
 * transaction, all or nothing); a member that is already a summary or an index line has its copies held
 * already. Pins are carried at each level: the new digest carries the pinned identifiers of its members
 * (their text, their replacements, the identifiers lower summaries carried), at most `MAX_SUMMARY_IDS` of
 * them; past that the first and last halves, in window order, and the ids line says there are more, which
 * search finds in the members' copies and digests.
 *
 * A run that holds a tombstone is refused: a digest over a hole would hide it.
 *
 * A summary's header says what its members' copies are promised, as an index line does, worked out at every
 * rendering from the members at any depth: until when the first of them is kept (`recall span_21 until
 * 17:05Z`) when that is before the session's horizon, and that copies may be lost once a promise lapsed or
 * a copy was found lost.
 */
import { FOLD_KEY, SPAN_ID } from "../directive.js";
import { CARRIED_PINS_PREFIX, carryScanned, findPins } from "../pin-carry.js";
import { formatUntil } from "../render/lines.js";
import { frameUntrusted } from "../render/framing.js";
import { contentHash } from "../hash.js";
import type { LookupResult } from "../stores/store.js";
import type { KindPolicy, PinPattern } from "../types.js";
import { copyUnpromised, goneText, kindOf, registeredNote, spanIdOf, type Entry, type FoldEntry, type GoneEntry, type LiveEntry, type SummaryEntry } from "./entries.js";
import { firstLeaf, foldLeaves, foldText, lastLeaf } from "./fold.js";

/**
 * Most pinned identifiers one range summary carries (and hands up to the summary above it): two spans'
 * worth at the per-span cap (`DEFAULT_MAX_MATCHES_PER_PATTERN`). Past it, the first and the last half in
 * window order, and the ids line ends with `MORE_IDS`.
 */
export const MAX_SUMMARY_IDS = 100;

/** What ends the ids line of a summary that carries only some of its members' ids. */
export const MORE_IDS = "…; more in its members (search)";

/** Summaries that carry only some of their members' ids (the marker climbs with them). */
const partial = new WeakSet<SummaryEntry>();

/** A run the window can summarize. */
export interface RangePlan {
  /** The run, in window order (its members are found again by identity when it is applied: `summarize.ts`). */
  readonly members: readonly Entry[];
  /** The live members: the ones the store checks and holds. */
  readonly live: readonly LiveEntry[];
  /** Members pruned earlier: their copies are read before the run commits (`verifyPrunedMembers`). */
  readonly pruned: readonly GoneEntry[];
  /** Every pinned identifier of the members, in order (lower summaries give the ones they carry). */
  readonly ids: readonly string[];
  /** Whether a lower summary carried only some of its members' ids. */
  readonly partial: boolean;
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

/**
 * The position that stands for `id` in the window: the entry with that id, or the fold or range summary it
 * is a member of (at any depth) — the model reads a folded run by its members' ids, and a run may start or end
 * in one: the whole fold or summary is then a position of the run (its members nest under the new summary,
 * as lower summaries do). `-1` when no position holds it.
 */
function positionOf(entries: readonly Entry[], id: string, providers = false): number {
  const top = entries.findIndex((e) => spanIdOf(e) === id);
  if (top >= 0) return top;
  // A fold or a range summary opens; a provider's compaction only when asked (`providers`): the spans it covered
  // are named by its own id (its block goes back to the provider while it stands).
  const opens = (e: Entry): e is FoldEntry | SummaryEntry => e.state === "fold" || (e.state === "summary" && (providers || e.provider === undefined));
  // An explicit stack: summaries nest as deep as a session keeps rolling them up.
  for (const [i, e] of entries.entries()) {
    if (!opens(e)) continue;
    const stack: Entry[] = [...e.members];
    while (stack.length > 0) {
      const m = stack.pop()!;
      if (spanIdOf(m) === id) return i;
      if (opens(m)) for (const below of m.members) stack.push(below);
    }
  }
  return -1;
}

/** Resolves `from`…`to` to a run of members, or says why not. */
export function planRange(ctx: RangeContext, from: string, to: string): { readonly plan: RangePlan } | { readonly refusal: RangeRefusal } {
  const start = positionOf(ctx.entries, from);
  const end = positionOf(ctx.entries, to);
  for (const [id, at] of [[from, start], [to, end]] as const) {
    if (at >= 0) continue;
    const under = positionOf(ctx.entries, id, true);
    const message = under < 0 ? `${id} is not in this window` : `${id} is under ${spanIdOf(ctx.entries[under]!)}, a provider's compaction, not a position of its own`;
    return { refusal: { reason: "unknown-span", message } };
  }
  if (end === start && from !== to) {
    return { refusal: { reason: "range", message: `${from} and ${to} both stand in ${spanIdOf(ctx.entries[start]!)}, one position; a range summary needs two or more positions in order` } };
  }
  if (end <= start) return { refusal: { reason: "range", message: `${to} does not come after ${from}; a range summary needs two or more positions in order` } };
  const members = ctx.entries.slice(start, end + 1);
  const inRange = new Set(members.map(spanIdOf));
  const live: LiveEntry[] = [];
  const pruned: GoneEntry[] = [];
  const ids: string[] = [];
  let partialIds = false;
  let store: string | null | undefined;
  for (const e of members) {
    if (e.state === "tombstone") {
      return { refusal: { reason: "range", message: `${e.spanId} is unrecoverable; a summary over it would hide the hole` } };
    }
    if (e.state === "summary" && e.provider !== undefined) {
      // Its block goes back to the provider while it stands; under a range summary it would not be sent again.
      return { refusal: { reason: "range", message: `${e.spanId} is a provider's compaction; a range summary over it would stop sending its block back` } };
    }
    if (e.state === "summary") {
      for (const id of e.ids) ids.push(id);
      if (partial.has(e)) partialIds = true;
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
      if (e.handle === null || e.store === null || copyUnpromised(e, ctx.now)) {
        return { refusal: { reason: "range", message: `${e.spanId}'s copy is lost; a summary over it would hide the hole` } };
      }
      if (e.replacement !== null) for (const id of findPins(e.replacement, pins)) ids.push(id);
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
    for (const id of findPins(e.span.text, pins)) ids.push(id);
  }
  return { plan: { members, live, pruned, ids: [...new Set(ids)], partial: partialIds } };
}

/** A fold in a run: its index lines are pruned members (their copies verified before the run commits), a tombstone refuses the run. */
function planFoldMembers(fold: Entry, ctx: RangeContext, pruned: GoneEntry[], ids: string[]): RangeRefusal | null {
  if (fold.state !== "fold") return null;
  for (const m of fold.members) {
    if (m.state === "fold") {
      const refusal = planFoldMembers(m, ctx, pruned, ids);
      if (refusal !== null) return refusal;
    } else if (m.state === "pruned" && m.handle !== null && m.store !== null && !copyUnpromised(m, ctx.now)) {
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
  ctx: { lookup(store: string, handle: string): Promise<LookupResult>; pinsFor(kind: string): readonly PinPattern[]; lost(e: GoneEntry): void },
): Promise<{ readonly refusal: RangeRefusal } | { readonly ids: readonly string[] }> {
  const ids: string[] = [];
  for (const e of plan.pruned) {
    const found = await ctx.lookup(e.store!, e.handle!);
    if (found.status !== "found" || found.hash !== e.hash || contentHash(found.text) !== e.hash) {
      ctx.lost(e);
      return { refusal: { reason: "range", message: `${e.spanId}'s copy is lost; a summary over it would hide the hole` } };
    }
    for (const id of findPins(found.text, ctx.pinsFor(e.kind))) ids.push(id);
  }
  return { ids };
}

/** What a summary's members' copies are promised at a time: the earliest `until`, and whether any may be lost. */
export interface SummaryPromise {
  /** The earliest time a member's copy is kept until, when that is before the session's horizon; `null` when none is. */
  readonly until: number | null;
  /** A member's promise lapsed (`promiseLapsed`), or its copy was found lost. */
  readonly mayBeLost: boolean;
}

/**
 * The promise of `members` at `now`, over every index line under them (lower summaries and folds opened, at
 * any depth, with an explicit stack: a chain of summaries of summaries may be thousands deep). The rule is
 * the index line's (`goneLine`): a copy found lost, or whose promise lapsed (`promiseLapsed`), may be lost; otherwise its
 * `until`, when it has one, is what the line says. Tombstones say so on their own lines.
 */
export function summaryPromise(members: readonly Entry[], now: number): SummaryPromise {
  let until: number | null = null;
  let mayBeLost = false;
  const stack: Entry[] = [...members];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (e.state === "summary" || e.state === "fold") {
      for (const m of e.members) stack.push(m);
      continue;
    }
    if (e.state !== "pruned" || e.handle === null) continue;
    if (copyUnpromised(e, now)) mayBeLost = true;
    else if (e.until !== null && (until === null || e.until < until)) until = e.until;
  }
  return { until, mayBeLost };
}

/**
 * The header of a summary: which run it replaced and how to expand it — with, at `now`, until when its
 * members' copies are kept (the earliest), or that copies may be lost (`summaryPromise`). Without `now`, the
 * plain form.
 */
export function summaryHeader(spanId: string, members: readonly Entry[], now?: number): string {
  // A fold at either end is named by its first or last span (its key, `span_1-span_16`, is no span id).
  const first = firstLeaf(members[0]!);
  const last = lastLeaf(members.at(-1)!);
  const head = `${spanId} summary of ${first}–${last} (${members.length})`;
  if (now === undefined) return `${head}, recall ${spanId}`;
  const promise = summaryPromise(members, now);
  if (promise.mayBeLost) return `${head}, copies may be lost, recall ${spanId}`;
  return promise.until === null ? `${head}, recall ${spanId}` : `${head}, recall ${spanId} until ${formatUntil(promise.until, now)}`;
}

/** A summary as the model reads it at `now`: its header as of then (`summaryHeader`, or `header` when worked out already), then what was under it. */
export function summaryText(e: SummaryEntry, now: number, header = summaryHeader(e.spanId, e.members, now)): string {
  const nl = e.text.indexOf("\n");
  return `${header}${nl < 0 ? "" : e.text.slice(nl)}`;
}

/**
 * The ids a summary carries up: all of them up to `MAX_SUMMARY_IDS`, else the first and the last half (the
 * oldest and the newest: a tool output puts its errors last, and a rolling summary's newest span is its
 * last), and whether any were left out.
 */
export function boundIds(ids: readonly string[]): { readonly ids: readonly string[]; readonly partial: boolean } {
  if (ids.length <= MAX_SUMMARY_IDS) return { ids, partial: false };
  const half = MAX_SUMMARY_IDS / 2;
  return { ids: [...ids.slice(0, half), ...ids.slice(ids.length - half)], partial: true };
}

/**
 * A summary's digest as it stands under its header: `digest` with the pinned ids it carries (at most
 * `MAX_SUMMARY_IDS`, `boundIds`) and, when some were left out here or below, `MORE_IDS`.
 */
function carriedDigest(digest: string, all: readonly string[], partialBelow: boolean) {
  const bounded = boundIds(all);
  const more = bounded.partial || partialBelow;
  const carried = carryScanned({ ids: bounded.ids, capped: more }, digest);
  let text = carried.text;
  if (more) {
    const lead = carried.carried.length > 0 ? ", " : `${text.length === 0 || text.endsWith("\n") ? "" : text.includes("\r\n") ? "\r\n" : "\n"}${CARRIED_PINS_PREFIX}`;
    text = `${text}${lead}${MORE_IDS}`;
  }
  return { text, ids: bounded.ids, more, carried: carried.carried };
}

/** A summary entry over `members`, its digest as it stands (carried ids included), drawn at `now`. */
function drawnSummary(spanId: string, members: Entry[], digest: string, ids: readonly string[], more: boolean, now: number): SummaryEntry {
  const entry: SummaryEntry = {
    state: "summary", spanId, kind: "summary", members, digest, ids, handle: null, store: null, replacement: null,
    // The digest is the model's text: framed, like every digest, so it can never read as a runtime line.
    text: `${summaryHeader(spanId, members, now)}\n${frameUntrusted(digest)}`,
  };
  if (more) partial.add(entry);
  return entry;
}

/**
 * The summary entry that replaces a committed run (live members already rewritten in `members`), and the ids
 * it carried: at most `MAX_SUMMARY_IDS` (`boundIds`); when some were left out here or below, the ids line
 * says so (`MORE_IDS`).
 */
export function summaryEntry(
  spanId: string, members: Entry[], digest: string, all: readonly string[], now: number, partialBelow = false,
): { entry: SummaryEntry; carried: readonly string[] } {
  const d = carriedDigest(digest, all, partialBelow);
  return { entry: drawnSummary(spanId, members, d.text, d.ids, d.more, now), carried: d.carried };
}

/** The first (or last) index line under a position, through summaries and folds: the span id a run starts (ends) with. */
function leafId(e: Entry, end: "first" | "last"): string {
  let at = e;
  while ((at.state === "summary" || at.state === "fold") && at.members.length > 0) at = end === "first" ? at.members[0]! : at.members.at(-1)!;
  return spanIdOf(at);
}

/** What an applied range summary notes in the home store under its id, so a resumed window draws it again. */
interface RangeNote {
  /** The span ids its run starts and ends with (its first and last index line, under lower summaries and folds). */
  readonly first: string;
  readonly last: string;
  /** The digest as it stands under the header (carried ids included), the ids it carries up, and whether only some. */
  readonly digest: string;
  readonly ids: readonly string[];
  readonly partial: boolean;
  /**
   * The keys of the folds among its positions (`span_1-span_16`), when it has any: a resumed window, which
   * reads the run as index lines, folds those lines again, so the summary lists what it listed before.
   */
  readonly folds?: readonly string[];
  /**
   * Spans registered inside its run that were no longer in the window when it was made: directive calls and
   * their answers folded away at a compaction point. A resumed window has them in place until it folds them
   * again, and puts them after the summary.
   */
  readonly out?: readonly string[];
}

/**
 * The note of a range summary over `members` (as planned) with the model's `digest` and the pinned `all`:
 * the same digest text, ids and marker `summaryEntry` gives the summary. The summary's id is registered under
 * its hash, and the note written once the summary is applied (`summarize.ts`).
 */
export function rangeNote(
  members: readonly Entry[], digest: string, all: readonly string[], partialBelow: boolean, foldedAway: ReadonlySet<string> = new Set(),
): string {
  const d = carriedDigest(digest, all, partialBelow);
  const folds = members.filter((e) => e.state === "fold").map(spanIdOf);
  const first = leafId(members[0]!, "first");
  const last = leafId(members.at(-1)!, "last");
  // Span ids are minted in order: what was folded away between the run's first and last span was inside it.
  const [lo, hi] = [idNumber(first), idNumber(last)];
  const out = [...foldedAway].filter((id) => idNumber(id) > lo && idNumber(id) < hi).sort((a, b) => idNumber(a) - idNumber(b));
  const note: RangeNote = {
    first, last, digest: d.text, ids: d.ids, partial: d.more, ...(folds.length > 0 ? { folds } : {}), ...(out.length > 0 ? { out } : {}),
  };
  return JSON.stringify(note);
}

/** The number in a span id (`span_12` → 12), `NaN` for anything else. */
function idNumber(id: string): number {
  return SPAN_ID.test(id) ? Number(id.slice(5)) : Number.NaN;
}

/**
 * A range summary drawn again by a resumed window (`resume.ts`) from its note, over the positions `entries`
 * holds when its id comes up in the registry (every span registered before it, as it ends up: the run it
 * replaced, lower summaries already drawn): the run from the position its first index line is under to the
 * one its last is under. `null` when the note is missing or does not match the registry's hash (a summary
 * applied before summaries were noted, or one never applied), or the run is not there as it was: a live, lost
 * or unrecoverable position in it (the summary was not applied after all). Returns the summary, where its
 * run starts and how long it is, and what of it goes after the summary (directive traffic folded away before
 * the summary was made: `RangeNote.out`).
 */
export function restoredRange(
  spanId: string, note: string | null, hash: string, entries: readonly Entry[], now: number,
): { readonly summary: SummaryEntry; readonly start: number; readonly count: number; readonly after: readonly Entry[] } | null {
  const n = registeredNote<RangeNote>(note, hash);
  if (n === null) return null;
  if (typeof n.first !== "string" || typeof n.last !== "string" || typeof n.digest !== "string" || typeof n.partial !== "boolean") return null;
  if (!Array.isArray(n.ids) || !n.ids.every((id) => typeof id === "string")) return null;
  const start = entries.findIndex((e) => leafId(e, "first") === n.first);
  const end = entries.findIndex((e) => leafId(e, "last") === n.last);
  if (start < 0 || end <= start) return null;
  const slice = entries.slice(start, end + 1);
  // What the live window had folded away from inside the run is not in it: it goes after the summary, live, and
  // folds again as it did.
  const out = new Set(Array.isArray(n.out) ? n.out.filter((id) => typeof id === "string") : []);
  const away = (e: Entry) => e.state === "live" && out.has(e.span.id);
  const run = slice.filter((e) => !away(e));
  if (run.length < 2 || !run.every((e) => e.state === "pruned" || e.state === "summary" || e.state === "fold")) return null;
  const members = Array.isArray(n.folds) ? refolded(run, n.folds, now) : run;
  return { summary: drawnSummary(spanId, members, n.digest, n.ids, n.partial, now), start, count: slice.length, after: slice.filter(away) };
}

/**
 * The run with the folds its summary listed made again (`span_1-span_16`: the index lines from span_1 to
 * span_16, folded as the live window folds a run's lines). A key that does not name a run of index lines in
 * it (an altered note) is skipped: those lines stay as they are.
 */
function refolded(run: readonly Entry[], keys: readonly unknown[], now: number): Entry[] {
  const out = [...run];
  for (const key of keys) {
    if (typeof key !== "string" || !FOLD_KEY.test(key)) continue;
    const [first, last] = key.split("-") as [string, string];
    const from = out.findIndex((e) => e.state !== "fold" && spanIdOf(e) === first);
    const to = out.findIndex((e) => e.state !== "fold" && spanIdOf(e) === last);
    if (from < 0 || to <= from) continue;
    const lines = out.slice(from, to + 1);
    if (!lines.every((e) => e.state === "pruned" || e.state === "tombstone")) continue;
    out.splice(from, lines.length, foldLeaves(lines, () => undefined, now));
  }
  return out;
}

/**
 * One level of a summary: each member as the window would show it now (an index line as of `now`, a lower
 * summary with its header as of `now` and its digest framed, a fold's line as of `now`).
 */
export function expandLines(summary: { readonly members: readonly Entry[] }, now: number, tombstone: string): string[] {
  return summary.members.map((m) =>
    m.state === "live" ? `[${m.span.id} ${m.span.kind}]`
    : m.state === "summary" ? summaryText(m, now)
    : m.state === "fold" ? foldText(m, now)
    : m.state === "lost" ? m.text
    : goneText(m, now, tombstone));
}
