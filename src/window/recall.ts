/**
 * Recall: the answer a model gets when it asks for a span again. Three answers never collapse —
 * `found` (bytes identical to what the window held, verified by content hash), `pruned-unrecoverable`
 * (a tombstone, or a copy that vanished despite its handle) and `unknown` (this session never had it) —
 * plus `unavailable` when the store failed and the copy may still exist.
 */
import { isPruneDecision, type AuditDraft, type AuditRecord } from "../audit.js";
import type { DecisionReason } from "../decision/reasons.js";
import { FOLD_KEY, HANDLE, SPAN_ID } from "../directive.js";
import { errorMessage } from "../errors.js";
import { contentHash } from "../hash.js";
import type { RecallOutcome } from "../outcome.js";
import { lostLine, tombstoneLine, uncertainCopyLine } from "../render/lines.js";
import { oneLine } from "../render/framing.js";
import type { BackingStore, RegisteredSpan } from "../stores/store.js";
import { recallDraft } from "./audit-drafts.js";
import { spanIdOf, type Entry, type GoneEntry } from "./entries.js";
import { expandLines } from "./range.js";

/** What recall needs from the window (internal). */
export interface RecallContext {
  readonly session: string;
  readonly tombstone: string;
  /** The window's clock: a summary's expansion shows its members' lines as of now. */
  now(): number;
  /** The window's entry for a span id or handle. */
  find(query: string): Entry | undefined;
  /** The store that backs an entry's kind (the audit store for unbacked kinds). */
  storeOf(entry: Entry): BackingStore;
  /** Every distinct store of the window. */
  stores(): BackingStore[];
  readonly auditStore: BackingStore;
  /** Whether `query` is an id the session minted for this window that stands for nothing shown (a refused summary). */
  unused(query: string): boolean;
  /** Whether `query` is a range summary's id from before a restart (its text was never recorded). */
  summaryBefore(query: string): boolean;
  /** Appends an audit record (kept for retry when the store fails); the record's seq, if written. */
  audit(store: BackingStore, draft: AuditDraft): Promise<number | null>;
  /** Tells the window a reversibly pruned span's copy is gone or altered, so its line stops offering a recall. */
  copyLost(entry: GoneEntry): void;
}

type RecallStatus = Exclude<RecallOutcome["status"], "expanded">;

/** Answers a recall by span id or handle, and audits the answer. */
export async function recall(query: string, raw: string, ctx: RecallContext): Promise<RecallOutcome> {
  const entry = ctx.find(query);
  const draft = (status: RecallStatus, reason: DecisionReason | null, e?: Entry): AuditDraft => recallDraft(query, raw, status, reason, e);
  if (!entry) return recallFromStores(query, ctx, draft);
  if (entry.state === "live") {
    const seq = await ctx.audit(ctx.storeOf(entry), draft("found", { code: "recall-live" }, entry));
    return { op: "recall", status: "found", spanId: entry.span.id, handle: entry.handle, text: entry.span.text, source: "window", auditSeq: seq };
  }
  if (entry.state === "lost") {
    const seq = await ctx.audit(ctx.storeOf(entry), draft("lost", { code: "recall-lost" }, entry));
    return { op: "recall", status: "lost", spanId: entry.spanId, kind: entry.kind, line: entry.text, auditSeq: seq };
  }
  if (entry.state === "fold") {
    // One level of the fold: each member's line; a member's own recall gives its bytes.
    const seq = await ctx.audit(ctx.auditStore, draft("found", { code: "recall-summary" }, entry));
    return { op: "recall", status: "expanded", spanId: entry.spanId, members: entry.members.map(spanIdOf), text: expandLines(entry, ctx.now(), ctx.tombstone).join("\n"), auditSeq: seq };
  }
  if (entry.state === "summary") {
    // One level of the tree: each member as the window showed it; a member's own recall gives its bytes.
    const seq = await ctx.audit(ctx.auditStore, draft("found", { code: "recall-summary" }, entry));
    return { op: "recall", status: "expanded", spanId: entry.spanId, members: entry.members.map(spanIdOf), text: expandLines(entry, ctx.now(), ctx.tombstone).join("\n"), auditSeq: seq };
  }
  if (entry.state === "tombstone") {
    const seq = await ctx.audit(ctx.storeOf(entry), draft("pruned-unrecoverable", { code: "recall-lossy" }, entry));
    return {
      op: "recall", status: "pruned-unrecoverable", spanId: entry.spanId, handle: null, reason: "lossy",
      replacement: entry.replacement, line: tombstoneLine(entry.spanId, ctx.tombstone), auditSeq: seq,
    };
  }
  const store = ctx.storeOf(entry);
  let found;
  try {
    found = await store.lookup(ctx.session, { handle: entry.handle! });
  } catch (err) {
    const seq = await ctx.audit(ctx.auditStore, draft("unavailable", { code: "store-error" }, entry));
    return {
      op: "recall", status: "unavailable", spanId: entry.spanId, handle: entry.handle,
      message: `store ${store.name} failed: ${errorMessage(err)}`, line: `${entry.spanId} pruned, copy unreachable now; retry`,
      auditSeq: seq,
    };
  }
  // The window remembers the hash of what it pruned: a copy that changed since is as lost as a deleted one.
  if (found.status === "found" && found.hash === entry.hash && contentHash(found.text) === entry.hash) {
    const seq = await ctx.audit(store, draft("found", null, entry));
    return { op: "recall", status: "found", spanId: entry.spanId, handle: entry.handle, text: found.text, source: "store", auditSeq: seq };
  }
  ctx.copyLost(entry);
  // A prune still pending is not applied once its copy is found lost: the span is live again, its bytes the window's.
  const again = ctx.find(query);
  if (again?.state === "live") {
    const seq = await ctx.audit(ctx.storeOf(again), draft("found", { code: "recall-live" }, again));
    return { op: "recall", status: "found", spanId: again.span.id, handle: again.handle, text: again.span.text, source: "window", auditSeq: seq };
  }
  const seq = await ctx.audit(store, draft("pruned-unrecoverable", { code: "copy-lost", loss: found.status === "found" ? "altered" : found.status }, entry));
  return {
    op: "recall", status: "pruned-unrecoverable", spanId: entry.spanId, handle: entry.handle, reason: "copy-lost",
    replacement: entry.replacement, line: uncertainCopyLine(entry.spanId, entry.mode, "lost"), auditSeq: seq,
  };
}

/** Not in this window's memory: a store may still know it (a window rebuilt after a restart). */
async function recallFromStores(
  query: string,
  ctx: RecallContext,
  draft: (s: RecallStatus, r: DecisionReason | null) => AuditDraft,
): Promise<RecallOutcome> {
  const key = SPAN_ID.test(query) ? { spanId: query } : HANDLE.test(query) ? { handle: query } : null;
  let failed: BackingStore | null = null;
  const prunes = askedOnce();
  // Minted and never shown (a range summary refused after its id was taken): nothing of it was in the session.
  if (ctx.unused(query)) {
    const seq = await ctx.audit(ctx.auditStore, draft("unknown", null));
    return { op: "recall", status: "unknown", query, line: `${quotedQuery(query)}: never in this session`, auditSeq: seq };
  }
  // A range summary of the session before a restart: the digest was the model's own text, never recorded; what
  // it stood for is each member's, in its place, recalled by its own id. Neither "never existed" nor a lossy prune.
  if (ctx.summaryBefore(query)) {
    const seq = await ctx.audit(ctx.auditStore, draft("lost", { code: "recall-lost" }));
    return {
      op: "recall", status: "lost", spanId: query, kind: "summary",
      line: `${query} was a range summary before a restart: its digest was not recorded; its members are in the window, each recalled by its own id`,
      auditSeq: seq,
    };
  }
  if (key !== null) {
    for (const store of ctx.stores()) {
      let r;
      try {
        r = await store.lookup(ctx.session, key);
      } catch {
        failed = store;
        continue;
      }
      if (r.status === "found" && contentHash(r.text) === r.hash) {
        // No window memory of this span: the audit chain's record of its prune says which bytes it had.
        const decided = await prunedHash(prunes, store, ctx.session, r.spanId);
        if (decided !== null && decided !== r.hash) {
          const seq = await ctx.audit(store, draft("pruned-unrecoverable", { code: "copy-lost", loss: "altered" }));
          return {
            op: "recall", status: "pruned-unrecoverable", spanId: r.spanId, handle: r.handle, reason: "copy-lost", replacement: null,
            line: `${r.spanId} pruned, copy lost, contents unknown`, auditSeq: seq,
          };
        }
        const seq = await ctx.audit(store, draft("found", { code: "recall-store-only" }));
        return { op: "recall", status: "found", spanId: r.spanId, handle: r.handle, text: r.text, source: "store", auditSeq: seq };
      }
      // A span whose prune was not applied (`kept`) was never pruned: its copy rotated out like any live span's,
      // and it is lost (below), not pruned.
      if (r.status === "expired" && !(await keptLast(prunes, store, ctx.session, r.spanId))) {
        const seq = await ctx.audit(store, draft("pruned-unrecoverable", { code: "copy-lost", loss: "expired" }));
        return {
          op: "recall", status: "pruned-unrecoverable", spanId: r.spanId, handle: r.handle, reason: "copy-lost", replacement: null,
          line: `${r.spanId} pruned, copy lost, contents unknown`, auditSeq: seq,
        };
      }
    }
  }
  // Unbacked spans die with the process, but their prune records do not: a tombstone stays a tombstone.
  for (const store of ctx.stores()) {
    let pruned;
    try {
      pruned = (await prunes(store, ctx.session, query)).at(-1);
    } catch {
      failed = store;
      continue;
    }
    if (pruned?.status === "kept") break; // not applied: the span stayed live where it was
    if (pruned) {
      const seq = await ctx.audit(store, draft("pruned-unrecoverable", pruned.status === "lossy" ? { code: "recall-lossy" } : { code: "copy-lost", loss: "absent" }));
      return {
        op: "recall", status: "pruned-unrecoverable", spanId: pruned.spanId ?? query, handle: pruned.handle,
        reason: pruned.status === "lossy" ? "lossy" : "copy-lost", replacement: null,
        line: tombstoneLine(pruned.spanId ?? query, ctx.tombstone), auditSeq: seq,
      };
    }
  }
  // Registered in the session by a window this one is not (another process, or one before a restart), never
  // pruned, its bytes nowhere: it existed, so the answer is `lost`, not "never in this session".
  if (key !== null && "spanId" in key) {
    let registered: RegisteredSpan | undefined;
    try {
      const home = ctx.auditStore;
      registered = home.lookupSpan !== undefined
        ? ((await home.lookupSpan(ctx.session, query)) ?? undefined)
        : (await home.sessionSpans(ctx.session)).find((r) => r.spanId === query);
    } catch {
      failed = ctx.auditStore;
    }
    if (registered !== undefined) {
      const seq = await ctx.audit(ctx.auditStore, draft("lost", { code: "recall-lost" }));
      return { op: "recall", status: "lost", spanId: registered.spanId, kind: registered.kind, line: lostLine(registered.spanId), auditSeq: seq };
    }
  }
  if (failed !== null) {
    // A store that could not answer may hold it: "unknown" would be a guess, and a wrong one is the bug.
    const seq = await ctx.audit(ctx.auditStore, draft("unavailable", { code: "store-error" }));
    return {
      op: "recall", status: "unavailable", spanId: query, handle: null, message: `store ${failed.name} could not be asked`,
      line: `${quotedQuery(query)}: store unreachable now; retry`, auditSeq: seq,
    };
  }
  const seq = await ctx.audit(ctx.auditStore, draft("unknown", null));
  // A folded run's name the window does not show (never drawn, or drawn again since with other bounds) names
  // spans that may well exist: "never in this session" would say they did not.
  const line = FOLD_KEY.test(query)
    ? `${query}: no folded run by that name now; recall each span by its own id (${query.slice(0, query.indexOf("-"))}, …)`
    : `${quotedQuery(query)}: never in this session`;
  return { op: "recall", status: "unknown", query, line, auditSeq: seq };
}

/**
 * A recall's query as a runtime line quotes it: on one line (`oneLine`), and with leading whitespace
 * escaped — a line that starts with whitespace reads as span text by the framing rule.
 */
function quotedQuery(query: string): string {
  return oneLine(query, 40).replace(/^[ \t]+/, (ws) => ws.replace(/ /g, "\\u0020").replace(/\t/g, "\\u0009"));
}

/** The content hash the last reversible prune of a span recorded in a store's chain, if any. */
async function prunedHash(prunes: PrunesOf, store: BackingStore, session: string, spanId: string): Promise<string | null> {
  let pruned;
  try {
    pruned = await prunes(store, session, spanId);
  } catch {
    return null;
  }
  return pruned.findLast((r) => r.status === "reversible" && r.spanId === spanId)?.spanHash ?? null;
}

/** Whether the last prune decision a store's chain holds for `spanId` was not applied (`kept`); a store that fails says no. */
async function keptLast(prunes: PrunesOf, store: BackingStore, session: string, spanId: string): Promise<boolean> {
  try {
    return (await prunes(store, session, spanId)).at(-1)?.status === "kept";
  } catch {
    return false;
  }
}

/**
 * A store's prune decisions that committed (reversible or lossy) or were not applied after all (`kept`),
 * naming `id` as their span id or handle, in chain order: by the store's index when it has one (`prunesOf`),
 * else by reading its whole chain. Either way the same records, so the answer does not depend on which.
 */
type PrunesOf = (store: BackingStore, session: string, id: string) => Promise<AuditRecord[]>;

/**
 * `prunesOf`, asked at most once per store and id within one recall: the store-only path reads a span's
 * prunes to check its copy's hash or whether its prune was applied, then again to answer; one read serves both
 * (a failure too: the same store is reported failed either way).
 */
function askedOnce(): PrunesOf {
  const asked = new Map<BackingStore, Map<string, Promise<AuditRecord[]>>>();
  return (store, session, id) => {
    let byId = asked.get(store);
    if (byId === undefined) asked.set(store, (byId = new Map()));
    let p = byId.get(id);
    if (p === undefined) byId.set(id, (p = prunesOf(store, session, id)));
    return p;
  };
}

function prunesOf(store: BackingStore, session: string, id: string): Promise<AuditRecord[]> {
  if (store.prunesOf !== undefined) return store.prunesOf(session, id);
  return store.auditLog(session).then((log) => log.filter((r) => isPruneDecision(r) && (r.spanId === id || (r.handle !== null && r.handle === id))));
}
