/**
 * Resume: the positions of a session as a window in a new process rebuilds them from its stores. The home
 * store's registry says which spans the session had, in order (ids, kinds, hashes, groups — never bytes);
 * the audit chains say which were pruned, how, and under which handle; the backing stores hold the bytes
 * of backed spans. What only a process now gone had comes back as an explicit lost line, never as silence.
 */
import type { AuditRecord } from "../audit.js";
import { contentHash } from "../hash.js";
import { chooseHint, type Hint } from "../hint.js";
import { lostLine } from "../render.js";
import type { BackingStore, RegisteredSpan } from "../stores/store.js";
import { countTokens } from "../tokens.js";
import type { KindPolicy, PruneMode, Span } from "../types.js";
import type { Entry, GoneEntry, LiveEntry, LostEntry } from "./entries.js";
import { hintFields } from "./entries.js";

/**
 * The kind a range summary's id is registered under: not an identifier, so no policy kind can be named
 * so (kind names are identifiers, `options-schema.ts`). A resumed window shows the summary's members as
 * the pruned spans they are (each with its index line), not the summary itself.
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
}

/** What was restored, counted: the window's positions and a summary for logs. */
export interface Restored {
  readonly entries: Entry[];
  readonly counts: { readonly live: number; readonly pruned: number; readonly tombstones: number; readonly lost: number };
  /** The latest decision-clock value in the session's records, so new decisions sort after them. */
  readonly lastDecided: number;
}

/**
 * Rebuilds the session's entries, in position order. Throws (a `StoreError` from the store) when a store
 * cannot be read: a resume that guessed would answer "never in this session" for something it could not
 * see, which is the failure this exists to prevent.
 */
export async function restoreEntries(ctx: ResumeContext): Promise<Restored> {
  const registered = await ctx.home.sessionSpans(ctx.session);
  const committed = new Map<string, AuditRecord>();
  let lastDecided = 0;
  for (const store of ctx.stores) {
    for (const r of await store.auditLog(ctx.session)) {
      lastDecided = Math.max(lastDecided, r.decided ?? r.at * 1000);
      // A span is pruned once; keep the first committed record (a second could only come from a retry the
      // window did not know had committed, and the first is the one that freed the span).
      if (r.op === "prune" && (r.status === "reversible" || r.status === "lossy") && r.spanId !== null && !committed.has(r.spanId)) {
        committed.set(r.spanId, r);
      }
    }
  }
  const entries: Entry[] = [];
  const counts = { live: 0, pruned: 0, tombstones: 0, lost: 0 };
  for (const reg of registered) {
    if (reg.kind === SUMMARY_KIND) continue;
    if (ctx.policyOf(reg.kind) === undefined) {
      throw new TypeError(`ContextWindow.resume: ${reg.spanId} of session ${ctx.session} has kind ${reg.kind}, which this window's policy does not name`);
    }
    const pruned = committed.get(reg.spanId);
    let entry: Entry;
    if (pruned !== undefined) {
      entry = goneEntry(reg, pruned, ctx.tombstone, await hintFor(reg, pruned, ctx));
      if (entry.state === "pruned") counts.pruned++;
      else counts.tombstones++;
    } else {
      entry = (await liveEntry(reg, entries.length, ctx)) ?? lostEntry(reg);
      if (entry.state === "live") counts.live++;
      else counts.lost++;
    }
    entries.push(entry);
  }
  return { entries, counts, lastDecided };
}

/** The hint a reversible drop's index line carried, recomputed from the copy its handle names (null when none). */
async function hintFor(reg: RegisteredSpan, rec: AuditRecord, ctx: ResumeContext): Promise<Hint | null> {
  if (ctx.hintTokens === 0 || rec.status !== "reversible" || (rec.mode ?? "drop") !== "drop" || rec.handle === null || reg.store === null) return null;
  const store = ctx.store(reg.store);
  if (store === undefined) return null;
  const found = await store.lookup(ctx.session, { handle: rec.handle });
  if (found.status !== "found" || contentHash(found.text) !== reg.hash) return null;
  return chooseHint({ text: found.text, ...(reg.message !== null ? { message: reg.message } : {}) }, ctx.hintTokens);
}

function goneEntry(reg: RegisteredSpan, rec: AuditRecord, tombstone: string, hint: Hint | null): GoneEntry {
  void tombstone; // the line is rendered at each read, from the clock (`goneLine`)
  const mode: PruneMode = rec.mode ?? "drop";
  const handle = rec.status === "reversible" ? rec.handle : null;
  // The body was noted before the prune committed; without it the header still says what happened.
  const replacement = mode === "drop" ? null : (reg.replacement ?? "(its text was not recorded before a restart)");
  // A prune reversible only until a time says so after a restart too: its record carries `until`.
  const until = handle !== null && rec.until !== undefined ? rec.until : null;
  return {
    state: handle !== null ? "pruned" : "tombstone", spanId: reg.spanId, kind: reg.kind, group: reg.group, message: reg.message, hash: reg.hash,
    mode, handle, store: reg.store, until, keptUntil: until, copyLost: false, ...hintFields(mode === "drop" && handle !== null ? hint : null), replacement,
  };
}

/** A span never pruned whose backing store still holds the same bytes: live again, with its handle. */
async function liveEntry(reg: RegisteredSpan, pos: number, ctx: ResumeContext): Promise<LiveEntry | null> {
  if (reg.store === null) return null;
  const store = ctx.store(reg.store);
  if (store === undefined) return null;
  const found = await store.lookup(ctx.session, { spanId: reg.spanId });
  if (found.status !== "found" || found.hash !== reg.hash || contentHash(found.text) !== reg.hash) return null;
  const span: Span = {
    id: reg.spanId, kind: reg.kind, text: found.text, tokens: countTokens(found.text), hash: reg.hash,
    ...(reg.group !== null ? { group: reg.group } : {}),
    ...(reg.message !== null ? { message: reg.message } : {}),
  };
  return { state: "live", pos, span, handle: found.handle, store: reg.store, persistError: null, copiedAt: null, notice: null };
}

function lostEntry(reg: RegisteredSpan): LostEntry {
  return {
    state: "lost", spanId: reg.spanId, kind: reg.kind, group: reg.group, message: reg.message, hash: reg.hash, handle: null,
    store: reg.store, text: lostLine(reg.spanId),
  };
}
