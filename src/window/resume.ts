/**
 * Resume: the positions of a session as a window in a new process rebuilds them from its stores. The home
 * store's registry says which spans the session had, in order (ids, kinds, hashes, groups — never bytes);
 * the audit chains say which were pruned, how, under which handle and with which content hash; the backing
 * stores hold the bytes of backed spans. What only a process now gone had comes back as an explicit lost
 * line, never as silence.
 *
 * The registry is not sealed, the chains are: where a chain recorded a span's hash (`spanHash`, on every
 * checked prune), a copy is checked against that, so a registry hash edited together with the copy does not
 * bring forged bytes back. And the session's horizon is the one it began with (its start, kept by the home
 * store), so every restored line says what the window that pruned it would say at the same clock.
 */
import type { AuditRecord } from "../audit.js";
import { contentHash } from "../hash.js";
import { keepOf } from "../decision/keep.js";
import { chooseHint, type Hint } from "../hint.js";
import { lostLine } from "../render/lines.js";
import type { BackingStore, LookupKey, LookupResult, RegisteredSpan } from "../stores/store.js";
import { countTokens } from "../tokens.js";
import type { KindPolicy, PruneMode, Span } from "../types.js";
import type { Entry, GoneEntry, LiveEntry, LostEntry } from "./entries.js";
import { hintFields } from "./entries.js";
import { PROVIDER_COMPACTION_KIND, providerSummaryText, restoredSummary } from "./provider-compaction.js";
import { splitForProvider } from "./state.js";
import { foldIndex } from "./fold.js";
import { restoredRange } from "./range.js";

/**
 * The kind a range summary's id is registered under: not an identifier, so no policy kind can be named
 * so (kind names are identifiers, `window-options-schema.ts`). An applied summary notes its digest and its
 * run under its id (`rangeNote`), and a resumed window draws it again in the run's place, so the window is no
 * larger than before the restart. A summary without a note (applied before summaries were noted, or whose note
 * the store failed to write) comes back as its members, each with its index line.
 */
export const SUMMARY_KIND = "(range summary)";

/** What resuming needs from the window being built. */
export interface ResumeContext {
  readonly session: string;
  /** The session's home store: the registry of its spans. */
  readonly home: BackingStore;
  /** Every distinct store of the window (their audit chains say what was pruned). */
  readonly stores: readonly BackingStore[];
  store(name: string): BackingStore | undefined;
  policyOf(kind: string): KindPolicy | undefined;
  readonly tombstone: string;
  /** The window's `indexHintTokens`: a drop's index line is rebuilt with the hint its copy gives. */
  readonly hintTokens: number;
  /** The clock's reading: the start of a session whose store has none recorded and that decided nothing yet. */
  readonly now: number;
  /** `limits.maxLengthMs`: the session's holds last this long after its start (`null`: until `end()`). */
  readonly maxLengthMs: number | null;
}

/** What was restored, counted: the window's positions and a summary for logs. */
export interface Restored {
  readonly entries: Entry[];
  readonly counts: { readonly live: number; readonly pruned: number; readonly tombstones: number; readonly lost: number };
  /** The latest decision-clock value in the session's records, so new decisions sort after them. */
  readonly lastDecided: number;
  /** The session's start as its home store keeps it: the horizon counts from it, not from the resume. */
  readonly startedAt: number;
  /** Ids minted for a provider's compaction that stands for nothing (it covered no span pruneguard may free). */
  readonly unused: readonly string[];
  /** Range summaries' ids from before the restart not drawn again (no note, or not applied): their members come back on their own. */
  readonly summaries: readonly string[];
  /** The policy the session's latest window wrote under (`op: "start"` records), `null` when none named one. */
  readonly policy: string | null;
}

/** The policy a `start` record names, from its directive (`{"op":"start","policy":…}`). */
function startedPolicy(r: AuditRecord): string | null {
  try {
    const d = JSON.parse(r.directive ?? "null") as { policy?: unknown } | null;
    return typeof d?.policy === "string" ? d.policy : null;
  } catch {
    return null;
  }
}

/**
 * Rebuilds the session's entries, in position order. Throws (a `StoreError` from the store) when a store
 * cannot be read: a resume that guessed would answer "never in this session" for something it could not
 * see, which is the failure this exists to prevent.
 */
export async function restoreEntries(ctx: ResumeContext): Promise<Restored> {
  const registered = await ctx.home.sessionSpans(ctx.session);
  const committed = new Map<string, AuditRecord>();
  /** The content hash the chains last recorded for each span (a refused prune's check records it too). */
  const sealed = new Map<string, string>();
  let lastDecided = 0;
  let firstDecided = Number.POSITIVE_INFINITY;
  /** When the session was last ended (`end()` released its holds then), in decision time; `-∞`: never. */
  let ended = Number.NEGATIVE_INFINITY;
  /** The seq of the session's last end in the home store's chain (0: never ended). */
  let endSeq = 0;
  /** The policy the session's latest window began writing under, if it named one. */
  let policy: string | null = null;
  let policySeq = 0;
  /** Range summaries decided and then not applied (`kept`): never drawn again, whatever their run looks like now. */
  const keptSummaries = new Set<string>();
  for (const store of ctx.stores) {
    for (const r of await store.auditLog(ctx.session)) {
      const decided = decidedOf(r);
      lastDecided = Math.max(lastDecided, decided);
      firstDecided = Math.min(firstDecided, decided);
      // A span is pruned once; keep the first committed record (a second could only come from a retry the
      // window did not know had committed, and the first is the one that freed the span).
      if (r.op === "prune" && (r.status === "reversible" || r.status === "lossy") && r.spanId !== null && !committed.has(r.spanId)) {
        committed.set(r.spanId, r);
      }
      // A prune decided and not applied (its copy stopped being promised before its compaction point): the span
      // stayed live. The record follows the prune's in the same chain; a later prune of the span is a new decision.
      if (r.op === "prune" && r.status === "kept" && r.spanId !== null && committed.get(r.spanId)?.store === r.store) committed.delete(r.spanId);
      if (r.op === "prune" && r.spanId !== null && typeof r.spanHash === "string") sealed.set(r.spanId, r.spanHash);
      if (r.op === "prune" && r.status === "kept" && r.spanId !== null && r.kind === "summary") keptSummaries.add(r.spanId);
      // The session's ends and starts are in the home store's chain: its order (seq) says which came last,
      // and what a hold released by an end was placed before it, whatever two windows' clocks said.
      if (r.op === "end" && r.store === ctx.home.name) endSeq = Math.max(endSeq, r.seq);
      if (r.op === "end") ended = Math.max(ended, decided);
      if (r.op === "start" && r.store === ctx.home.name && r.seq > policySeq) {
        const named = startedPolicy(r);
        if (named !== null) [policy, policySeq] = [named, r.seq];
      }
    }
  }
  const read = await prefetchCopies(registered, committed, ctx);
  const entries: Entry[] = [];
  /** Pruned entries kept for the session: when that ends depends on the session's horizon, known below. */
  const held: Array<{ readonly entry: GoneEntry; readonly store: BackingStore; readonly createdAt: number }> = [];
  /** The earliest time the stores know of the session (a decision, a copy written). */
  let earliest = Math.floor(firstDecided / 1000);
  const counts = { live: 0, pruned: 0, tombstones: 0, lost: 0 };
  const unused: string[] = [];
  const summaries: string[] = [];
  for (const reg of registered) {
    if (reg.kind === SUMMARY_KIND) {
      // Its run is every span registered before it, as each ends up (lower summaries drawn already): the summary
      // takes the run's place again, as it did in the window that made it.
      const drawn = keptSummaries.has(reg.spanId) ? null : restoredRange(reg.spanId, reg.replacement, reg.hash, entries, ctx.now);
      if (drawn === null) summaries.push(reg.spanId);
      else {
        entries.splice(drawn.start, drawn.count, drawn.summary, ...drawn.after);
        renumber(entries);
      }
      continue;
    }
    if (reg.kind === PROVIDER_COMPACTION_KIND) {
      // The provider's compaction is drawn again as it was: what it covered that is no longer live is its
      // members, what is still live is said again after it (`WindowState.compactByProvider`). A note gone or
      // altered draws nothing: the spans it covered keep their own lines, and its block is not sent back.
      const summary = restoredSummary(reg.spanId, reg.replacement, reg.hash);
      if (summary === null) continue;
      // Its own record (the summary's, audited after every span it pruned) orders it among the decisions.
      // Without one, the window refused it (it covered nothing it could free) and never drew it.
      const own = committed.get(reg.spanId);
      if (own === undefined) {
        unused.push(reg.spanId);
        continue;
      }
      const at = decidedOf(own);
      const { members, kept } = splitForProvider(entries, (e) => {
        if (e.state !== "pruned" && e.state !== "tombstone") return false;
        const record = committed.get(e.spanId);
        return record !== undefined && (record.store === own.store ? record.seq > own.seq : decidedOf(record) > at);
      });
      // A compaction that stood for nothing was never drawn (`coversNothing`), and is not now.
      if (members.length === 0) {
        unused.push(reg.spanId);
        continue;
      }
      summary.members = foldIndex(members, null, ctx.now, () => undefined)?.entries ?? members;
      summary.text = providerSummaryText(summary, ctx.now);
      entries.splice(0, entries.length, summary, ...kept);
      renumber(entries);
      continue;
    }
    if (ctx.policyOf(reg.kind) === undefined) {
      throw new TypeError(`ContextWindow.resume: ${reg.spanId} of session ${ctx.session} has kind ${reg.kind}, which this window's policy does not name`);
    }
    const pruned = committed.get(reg.spanId);
    // The chain's hash is the authority: the prune's own record first, then any other that sealed one.
    const hash = (pruned !== undefined && typeof pruned.spanHash === "string" ? pruned.spanHash : sealed.get(reg.spanId)) ?? reg.hash;
    let entry: Entry;
    if (pruned !== undefined) {
      const gone = await goneEntry(reg, pruned, hash, ctx, read);
      entry = gone.entry;
      if (gone.copy !== null) {
        earliest = Math.min(earliest, gone.copy.found.createdAt);
        if (gone.entry.until === null) held.push({ entry: gone.entry, store: gone.copy.store, createdAt: gone.copy.found.createdAt });
        // Kept only until a time already: what its retention keeps it for is known too, so `end()` keeps saying so.
        else if (gone.entry.state === "pruned") gone.entry.retainedUntil = gone.copy.store.retentionMs === null ? null : gone.copy.found.createdAt + gone.copy.store.retentionMs;
      }
      if (entry.state === "pruned") counts.pruned++;
      else counts.tombstones++;
    } else {
      entry = (await liveEntry(reg, hash, entries.length, ctx, read)) ?? lostEntry(reg, hash);
      if (entry.state === "live") {
        counts.live++;
        if (entry.copiedAt !== null) earliest = Math.min(earliest, entry.copiedAt);
      } else counts.lost++;
    }
    entries.push(entry);
  }
  // The session's start is the home store's. A session begun before stores kept it counts from the earliest
  // time its stores know of (never later than now), and that is recorded so every later window agrees.
  const startedAt = await ctx.home.sessionStart(ctx.session, Number.isFinite(earliest) ? Math.min(ctx.now, earliest) : ctx.now);
  const horizon = ctx.maxLengthMs === null ? null : startedAt + ctx.maxLengthMs;
  for (const h of held) {
    h.entry.retainedUntil = h.store.retentionMs === null ? null : h.createdAt + h.store.retentionMs;
    // Pruned before the session was ended: `end()` released its hold, so retention alone keeps its copy
    // (as the window that ended it showed: `releaseKeeps`).
    const pruned = committed.get(h.entry.spanId);
    const before = pruned !== undefined && (pruned.store === ctx.home.name ? pruned.seq < endSeq : decidedOf(pruned) < ended);
    const released = h.store.capabilities.holds && before;
    h.entry.keptUntil = released ? h.entry.retainedUntil : keptUntilOf(h.store, h.createdAt, horizon);
    if (released && h.entry.keptUntil !== null) h.entry.until = h.entry.keptUntil;
  }
  return { entries, counts, lastDecided, startedAt, unused, summaries, policy };
}

/** A record's place in decision order: the decision clock (µs), else when its store wrote it. */
function decidedOf(r: AuditRecord): number {
  return r.decided ?? r.at * 1000;
}

/** Reads one copy: from what was read ahead when it was, else from its store. */
type ReadCopy = (store: BackingStore, key: LookupKey) => Promise<LookupResult>;

/** The copy `restoreEntries` reads for a registered span: the handle of a reversible prune, else the span id. */
function copyKey(reg: RegisteredSpan, pruned: AuditRecord | undefined): LookupKey | null {
  if (pruned === undefined) return { spanId: reg.spanId };
  return pruned.status === "reversible" && pruned.handle !== null ? { handle: pruned.handle } : null;
}

function keyText(key: LookupKey): string {
  return "handle" in key ? `h\u0000${key.handle}` : `s\u0000${key.spanId}`;
}

/**
 * Reads ahead every copy the rebuild will look up, one `lookupMany` per store that has it (on PostgreSQL,
 * one round trip per store instead of one per span: a resume's cost no longer grows with the session in
 * round trips, each of which waits for a pooled connection on a busy server). Stores without it are read
 * span by span, as before.
 */
async function prefetchCopies(registered: readonly RegisteredSpan[], committed: ReadonlyMap<string, AuditRecord>, ctx: ResumeContext): Promise<ReadCopy> {
  const wanted = new Map<BackingStore, LookupKey[]>();
  for (const reg of registered) {
    if (reg.store === null || reg.kind === SUMMARY_KIND || reg.kind === PROVIDER_COMPACTION_KIND) continue;
    const store = ctx.store(reg.store);
    const key = copyKey(reg, committed.get(reg.spanId));
    if (store === undefined || key === null || store.lookupMany === undefined) continue;
    let keys = wanted.get(store);
    if (keys === undefined) wanted.set(store, (keys = []));
    keys.push(key);
  }
  const read = new Map<BackingStore, Map<string, LookupResult>>();
  for (const [store, keys] of wanted) {
    const answers = await store.lookupMany!(ctx.session, keys);
    read.set(store, new Map(keys.map((k, i) => [keyText(k), answers[i]!])));
  }
  return (store, key) => {
    const found = read.get(store)?.get(keyText(key));
    return found !== undefined ? Promise.resolve(found) : store.lookup(ctx.session, key);
  };
}

interface VerifiedCopy {
  readonly store: BackingStore;
  readonly found: Extract<LookupResult, { status: "found" }>;
}

/** The copy a store holds of a span, when its bytes are the ones `hash` names (`null`: gone, altered or unreachable by policy). */
async function verifiedCopy(reg: RegisteredSpan, key: LookupKey, hash: string, ctx: ResumeContext, read: ReadCopy): Promise<VerifiedCopy | null> {
  if (reg.store === null) return null;
  const store = ctx.store(reg.store);
  if (store === undefined) return null;
  const found = await read(store, key);
  if (found.status !== "found" || found.hash !== hash || contentHash(found.text) !== hash) return null;
  return { store, found };
}

/**
 * A pruned span as the window that pruned it showed it. Its copy is read back and checked against the
 * chain's hash: one that is gone or altered is restored as lost (`copy lost, contents unknown`), never
 * offered. A prune reversible only until a time carries it in its record (`until`); one kept for the
 * session stops being kept when its hold (to the session's horizon) and the copy's retention both end.
 */
async function goneEntry(
  reg: RegisteredSpan, rec: AuditRecord, hash: string, ctx: ResumeContext, read: ReadCopy,
): Promise<{ readonly entry: GoneEntry; readonly copy: VerifiedCopy | null }> {
  const mode: PruneMode = rec.mode ?? "drop";
  const handle = rec.status === "reversible" ? rec.handle : null;
  // The body was noted before the prune committed; without it the header still says what happened. A range
  // summary's member never had a body of its own (the digest stood for the run): its index line, as it showed.
  const bodyless = mode === "drop" || rangeMember(rec);
  const replacement = bodyless ? null : (reg.replacement ?? "(its text was not recorded before a restart)");
  const base = { spanId: reg.spanId, kind: reg.kind, group: reg.group, message: reg.message, hash, mode, store: reg.store, replacement };
  if (handle === null) {
    return { entry: { ...base, state: "tombstone", handle: null, until: null, keptUntil: null, copyLost: false, ...hintFields(null) }, copy: null };
  }
  const copy = await verifiedCopy(reg, { handle }, hash, ctx, read);
  // `until` is the record's; a copy kept for the session has its `keptUntil` set once the horizon is known.
  const until = rec.until ?? null;
  // An index line names what its span held, as the live window's did (a range summary's member's too).
  const hint: Hint | null = copy !== null && bodyless
    ? chooseHint({ text: copy.found.text, ...(reg.message !== null ? { message: reg.message } : {}) }, ctx.hintTokens)
    : null;
  return { entry: { ...base, state: "pruned", handle, until, keptUntil: until, copyLost: copy === null, ...hintFields(hint) }, copy };
}

/**
 * Whether a committed prune record is a range summary's member (`summarize.ts`): the run's first member carries
 * the `summarize_range` directive and the rest none, while every other summarize-mode prune carries its own.
 */
function rangeMember(rec: AuditRecord): boolean {
  if (rec.mode !== "summarize") return false;
  if (rec.directive === null) return true;
  try {
    return (JSON.parse(rec.directive) as { op?: unknown } | null)?.op === "summarize_range";
  } catch {
    return false;
  }
}

/**
 * When nothing promises a copy kept for the session any longer, as the prune decided it (`keepOf`): its
 * hold lasts to the session's horizon, its retention from when the store wrote it; `null` when never.
 */
function keptUntilOf(store: BackingStore, createdAt: number, horizon: number | null): number | null {
  const expiresAt = store.retentionMs === null ? null : createdAt + store.retentionMs;
  return keepOf({ now: createdAt, holdUntil: horizon }, { holds: store.capabilities.holds, retentionMs: store.retentionMs }, { expiresAt }, false).keptUntil;
}

/** A span never pruned whose backing store still holds the bytes the chain (or the registry) names: live again. */
async function liveEntry(reg: RegisteredSpan, hash: string, pos: number, ctx: ResumeContext, read: ReadCopy): Promise<LiveEntry | null> {
  const copy = await verifiedCopy(reg, { spanId: reg.spanId }, hash, ctx, read);
  if (copy === null) return null;
  const { found } = copy;
  const span: Span = {
    id: reg.spanId, kind: reg.kind, text: found.text, tokens: countTokens(found.text), hash,
    ...(reg.group !== null ? { group: reg.group } : {}),
    ...(reg.message !== null ? { message: reg.message } : {}),
  };
  return { state: "live", pos, span, handle: found.handle, store: reg.store, persistError: null, copiedAt: found.createdAt, notice: null };
}

function lostEntry(reg: RegisteredSpan, hash: string): LostEntry {
  return {
    state: "lost", spanId: reg.spanId, kind: reg.kind, group: reg.group, message: reg.message, hash, handle: null,
    store: reg.store, text: lostLine(reg.spanId),
  };
}

/** Live entries carry their position: set again after a summary took a run's place. */
function renumber(entries: readonly Entry[]): void {
  for (const [i, e] of entries.entries()) if (e.state === "live") e.pos = i;
}
