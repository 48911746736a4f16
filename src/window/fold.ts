/**
 * Index folding: at a compaction point, a run of index lines and tombstones becomes one line —
 * `span_3-span_90: 44 pruned (20 read_file, 12 grep, 12 turn), 2 unrecoverable; recall span_3-span_90 to
 * list them` — so a session that prunes for a day does not fill its window with the record of what it
 * pruned. The members stay as they were: recall of a member's id or handle gives its bytes, search reads
 * its copy, and recall of the fold's key lists its members' lines (one level; a fold of folds keeps the
 * tree).
 *
 * The bound: every maximal run of foldable positions is at most one line, so the index takes at most one
 * line per gap between the positions that stay (live spans, digests, summaries), whatever the session's
 * length. A fold is a balanced tree over
 * its run's index lines: they are chunked by `FANOUT` from the run's start, the chunks again, and so on, so
 * a fold lists at most `FANOUT` members and its depth is logarithmic (4 levels for 65,536 lines). When a
 * run grows, it is folded again from its lines: the full chunks are the same (same members, same keys, the
 * same objects), only the last chunk and the levels above it are new.
 *
 * Cache: only runs a pending decision touched are folded (the compaction point rewrites from there
 * anyway), and a fold merges with the fold just before it, so the rewrite starts at most one line earlier.
 * A resumed window folds every run (its first rendering is new in any case).
 *
 * What stays unfolded: a digest or compressed form (text the model reads), and a member of a tool call group
 * whose other members are not in the same run (a call and its result fold together, or the call alone when
 * every result came after the run and is gone: a renderer gives such a result an emptied call of its own, as
 * it does a result that came after its call had folded). A line
 * kept only until a time, or whose copy lapsed or was found lost, folds: the fold line says so (below).
 *
 * A member's promise can change after it folded: the session's horizon passes (its hold lapses with its
 * retention), `end()` releases its hold (it is kept until a time from then on), or a recall finds its copy
 * lost. The fold line follows the index line's rule (`goneLine`) for each member: it counts the copies
 * that may be lost (a promise lapsed) and those found lost or never kept (unrecoverable) apart from the
 * recoverable ones, and says until when the first recoverable one is kept when that is before the horizon.
 * It is drawn at a time and redrawn when read past the first moment it would change (`foldText`), so the
 * live window says what a resumed one does.
 */
import type { Entry, FoldEntry, GoneEntry } from "./entries.js";
import { promiseLapsed, spanIdOf } from "./entries.js";
import { formatUntil } from "../render/lines.js";

/** Most members one fold lists. */
export const FANOUT = 16;

/**
 * How many items (a tool call and its result count once, a lower fold as one) a run needs before it folds:
 * below it, the index lines stay, each with its hint of what the span held; from it on, one line is worth
 * more than the hints, and the bound holds (at most `2 × MIN_RUN - 1` index lines in a run).
 */
export const MIN_RUN = 16;

/** A label the fold line may print: a kind name or a tool name of the same shape (never untrusted text). */
const LABEL = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * Whether a position may fold: an index line, a tombstone, or a fold — whatever its member's promise says.
 * The fold line says it for each member as its own line would (`drawFold`: until when the first one is kept,
 * the copies that may be lost, the unrecoverable), so a line kept only until a time, or whose copy lapsed or
 * was found lost, folds too: otherwise a store that keeps copies for less than the session (no holds, short
 * retention) or a session past its horizon or `end()` would leave every such line standing, the index would
 * grow with the session, and a resumed window would not fold what the live one had. A digest or compressed
 * form (text the model reads) stays.
 */
function foldable(e: Entry): e is GoneEntry | FoldEntry {
  if (e.state === "fold") return true;
  if (e.state === "tombstone") return e.replacement === null;
  return e.state === "pruned" && e.replacement === null;
}

/** The leaves of a fold (index lines and tombstones), depth first. */
function* leaves(e: Entry): Generator<GoneEntry> {
  if (e.state === "fold") for (const m of e.members) yield* leaves(m);
  else if (e.state === "pruned" || e.state === "tombstone") yield e;
}

/**
 * The role a summary or fold renders in: its members', when they agree on one speaker; tool traffic is the
 * model's. A lower summary's members count as its own (the same answer as asking it first, without
 * recursion: a chain of summaries may be thousands deep); a fold's role was worked out when it was made.
 */
export function summaryRole(members: readonly Entry[]): "system" | "user" | "assistant" {
  let only: "system" | "user" | "assistant" | null = null;
  const stack: Entry[] = [...members];
  while (stack.length > 0) {
    const m = stack.pop()!;
    if (m.state === "summary" && m.members.length > 0) {
      for (const n of m.members) stack.push(n);
      continue;
    }
    const message = m.state === "live" ? m.span.message : m.state === "fold" ? { role: m.role } : m.state === "summary" ? undefined : (m.message ?? undefined);
    const raw = message?.role ?? "user";
    const role = raw === "tool-call" || raw === "tool-result" ? "assistant" : raw;
    if (only === null) only = role;
    else if (only !== role) return "user";
  }
  return only ?? "user";
}

/** The first span id under a position, through folds (a fold's key is not one). */
export function firstLeaf(e: Entry): string {
  return e.state === "fold" ? firstLeaf(e.members[0]!) : spanIdOf(e);
}

/** The last span id under a position, through folds. */
export function lastLeaf(e: Entry): string {
  return e.state === "fold" ? lastLeaf(e.members.at(-1)!) : spanIdOf(e);
}

/** What a member is called on the fold line: its tool's name when it is tool traffic, else its kind. */
function labelOf(e: GoneEntry): string {
  const m = e.message;
  const name = m !== null && "toolName" in m ? m.toolName : e.kind;
  // A name that reads as a span id (`span_900`, `span_1-span_9`) would read as one on the fold's line: not printed.
  return LABEL.test(name) && !SPAN_LIKE.test(name) ? name : "tool";
}

/** A span id anywhere in a label. */
const SPAN_LIKE = /span_[0-9]/;

const DAY_MS = 86_400_000;

/** A fold line as drawn at a time, and the first time after it that the line would read otherwise. */
interface Drawn {
  readonly text: string;
  readonly redrawAt: number;
}

/**
 * The fold line of `members` at `now`: `span_3-span_90: 44 pruned (20 read_file, 12 grep, 12 turn) until
 * 17:05Z, 3 copies may be lost, 2 unrecoverable; recall span_3-span_90 to list them`. Each member counts as
 * its index line reads at `now` (`goneLine`): found lost or a tombstone is unrecoverable, a promise that
 * lapsed (`promiseLapsed`) may be lost, and the rest are pruned, with the earliest `until` among them when
 * one is kept only until a time.
 */
export function foldLine(key: string, members: readonly Entry[], now: number): string {
  return drawFold(key, members, now).text;
}

function drawFold(key: string, members: readonly Entry[], now: number): Drawn {
  const counts = new Map<string, number>();
  const groups = new Set<string>();
  let pruned = 0;
  let mayBeLost = 0;
  let holes = 0;
  let until: number | null = null;
  let redrawAt = Number.POSITIVE_INFINITY;
  for (const m of members) {
    for (const leaf of leaves(m)) {
      if (leaf.state === "tombstone" || leaf.copyLost || leaf.handle === null) {
        holes++;
        continue;
      }
      // A tool call and its result are one item: counted once, by the tool's name.
      if (leaf.group !== null) {
        if (groups.has(leaf.group)) continue;
        groups.add(leaf.group);
      }
      if (promiseLapsed(leaf, now)) {
        mayBeLost++;
        continue;
      }
      if (leaf.keptUntil !== null && leaf.keptUntil < redrawAt) redrawAt = leaf.keptUntil;
      if (leaf.until !== null && (until === null || leaf.until < until)) until = leaf.until;
      pruned++;
      const label = labelOf(leaf);
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
  }
  // `formatUntil` names the day until the time is less than a day away: the line changes then too.
  if (until !== null && until - DAY_MS >= now) redrawAt = Math.min(redrawAt, until - DAY_MS + 1);
  const parts: string[] = [];
  if (pruned > 0) {
    const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const shown = ranked.slice(0, 3).map(([label, n]) => `${n} ${label}`);
    const rest = ranked.slice(3).reduce((n, [, k]) => n + k, 0);
    const kept = until === null ? "" : ` until ${formatUntil(until, now)}`;
    parts.push(`${pruned} pruned (${[...shown, ...(rest > 0 ? [`${rest} other`] : [])].join(", ")})${kept}`);
  }
  if (mayBeLost > 0) parts.push(`${mayBeLost} ${mayBeLost === 1 ? "copy" : "copies"} may be lost`);
  if (holes > 0) parts.push(`${holes} unrecoverable`);
  return { text: `${key}: ${parts.join(", ")}; recall ${key} to list them`, redrawAt };
}

/** When each fold's line was drawn to change next (absent: redraw at the next read). */
const redrawAt = new WeakMap<FoldEntry, number>();

/**
 * A fold's line as of `now`: the one drawn, or — once `now` reaches the first moment a member's promise
 * lapses, or after `staleFold` — drawn again from its members. Lower folds are redrawn when they are read.
 */
export function foldText(e: FoldEntry, now: number): string {
  const at = redrawAt.get(e);
  if (at === undefined || now >= at) {
    const drawn = drawFold(e.spanId, e.members, now);
    e.text = drawn.text;
    redrawAt.set(e, drawn.redrawAt);
  }
  return e.text;
}

/** A member of `e` changed in a way time does not tell (a copy found lost, a hold released): its line is drawn again when next read. */
export function staleFold(e: FoldEntry): void {
  redrawAt.delete(e);
}

/** Folds made before, by key: a chunk with the same key and as many members is the same chunk. */
export type KnownFolds = (key: string) => Entry | undefined;

/** A fold of `members` under `key`, its line drawn at `now`. */
export function newFold(key: string, members: Entry[], now: number, role: FoldEntry["role"] = summaryRole(members)): FoldEntry {
  const drawn = drawFold(key, members, now);
  const fold: FoldEntry = { state: "fold", spanId: key, kind: "fold", members, text: drawn.text, role, handle: null, store: null, replacement: null, group: null };
  redrawAt.set(fold, drawn.redrawAt);
  return fold;
}

function makeFold(members: Entry[], known: KnownFolds, now: number): FoldEntry {
  const key = `${firstLeaf(members[0]!)}-${lastLeaf(members.at(-1)!)}`;
  const before = known(key);
  if (before?.state === "fold" && before.members.length === members.length && before.members.every((m, i) => m === members[i])) return before;
  return newFold(key, members, now);
}

/** A run's index lines and tombstones as one balanced fold: chunked by `FANOUT` from the start, level by level. */
export function foldLeaves(lines: readonly Entry[], known: KnownFolds, now: number): FoldEntry {
  let level: Entry[] = [...lines];
  while (level.length > FANOUT) {
    const next: Entry[] = [];
    for (let i = 0; i < level.length; i += FANOUT) {
      const chunk = level.slice(i, i + FANOUT);
      next.push(chunk.length === 1 ? chunk[0]! : makeFold(chunk, known, now));
    }
    level = next;
  }
  return makeFold(level, known, now);
}

/** One fold of a run: the balanced tree over every index line and tombstone in it (earlier folds opened up). */
function foldRun(run: readonly Entry[], known: KnownFolds, now: number): FoldEntry {
  return foldLeaves(run.flatMap((e) => [...leaves(e)]), known, now);
}

/**
 * Where each tool call group's members stand among `entries` (a fold's leaves at the fold's position), and
 * whether each is gone (an index line or a tombstone).
 */
function groupPlaces(entries: readonly Entry[]): Map<string, Array<{ readonly at: number; readonly gone: boolean }>> {
  const places = new Map<string, Array<{ at: number; gone: boolean }>>();
  const add = (e: Entry, at: number) => {
    const g = e.state === "live" ? e.span.group : e.state === "pruned" || e.state === "tombstone" ? e.group : null;
    if (g === null || g === undefined) return;
    const list = places.get(g) ?? [];
    list.push({ at, gone: e.state !== "live" });
    places.set(g, list);
  };
  entries.forEach((e, at) => {
    if (e.state === "fold") for (const leaf of leaves(e)) add(leaf, at);
    else add(e, at);
  });
  return places;
}

/**
 * Folds the runs of `entries` that `touched` says a pending decision changed (every run when `touched` is
 * `null`). Returns the new positions and the folds made, or `null` when nothing folds.
 */
export function foldIndex(
  entries: readonly Entry[], touched: ((e: Entry) => boolean) | null, now: number, known: KnownFolds,
): { readonly entries: Entry[]; readonly folds: FoldEntry[] } | null {
  const places = groupPlaces(entries);
  // A call may fold without the results that came after it, all gone: the window folds a call whose result had
  // not come yet, and the result, pruned with it, renders after an emptied call of its own (as a resumed window
  // reading the same positions must fold too).
  const whole: WholeGroup = (g, start, end, call) => {
    const members = places.get(g) ?? [];
    return members.every((m) => (m.at >= start && m.at <= end) || (call && m.at > end && m.gone));
  };
  const out: Entry[] = [];
  const folds: FoldEntry[] = [];
  let i = 0;
  while (i < entries.length) {
    if (!foldable(entries[i]!)) {
      out.push(entries[i++]!);
      continue;
    }
    let j = i;
    while (j < entries.length && foldable(entries[j]!)) j++;
    for (const run of wholeGroups(entries.slice(i, j), whole, i)) {
      // A decision since the last compaction point is about a position of its own, never one inside a fold
      // (folds are made at compaction points, of lines already decided): the run's own positions say it all.
      const worth = items(run) >= MIN_RUN && (touched === null || run.some(touched));
      if (!worth) {
        out.push(...run);
        continue;
      }
      const fold = foldRun(run, known, now);
      folds.push(fold);
      out.push(fold);
    }
    i = j;
  }
  return folds.length === 0 ? null : { entries: out, folds };
}

/** The items of a run: each tool call group once, every other position (a lower fold too) once. */
function items(run: readonly Entry[]): number {
  const groups = new Set<string>();
  let n = 0;
  for (const e of run) {
    const g = e.state === "pruned" || e.state === "tombstone" ? e.group : null;
    if (g !== null) {
      if (groups.has(g)) continue;
      groups.add(g);
    }
    n++;
  }
  return n;
}

/**
 * Whether tool call group `g` is whole in the positions `start`…`end` for a member that is a call (`call`) or
 * not: all its members are there, or (for a call) the others come after, gone.
 */
type WholeGroup = (g: string, start: number, end: number, call: boolean) => boolean;

/**
 * Splits a run where a tool call group is not whole inside it: a member whose group has positions outside
 * the run stays unfolded, and each piece around it is split again the same way (a group whole in the run
 * may not be whole in a piece). `start` is the run's position among the window's entries. Returns the pieces
 * in order; a member that stays unfolded is a piece of one.
 */
function wholeGroups(run: Entry[], isWhole: WholeGroup, start: number): Entry[][] {
  const end = start + run.length - 1;
  const whole = (e: Entry): boolean => {
    for (const leaf of e.state === "fold" ? leaves(e) : [e]) {
      if (leaf.state !== "pruned" && leaf.state !== "tombstone") continue;
      if (leaf.group !== null && !isWhole(leaf.group, start, end, leaf.message?.role === "tool-call")) return false;
    }
    return true;
  };
  if (run.every(whole)) return [run];
  const pieces: Entry[][] = [];
  let current: Entry[] = [];
  let from = start;
  const close = () => {
    if (current.length > 1) pieces.push(...wholeGroups(current, isWhole, from));
    else if (current.length === 1) pieces.push(current);
    current = [];
  };
  for (const [k, e] of run.entries()) {
    if (whole(e)) {
      if (current.length === 0) from = start + k;
      current.push(e);
    } else {
      close();
      pieces.push([e]);
    }
  }
  close();
  return pieces;
}
