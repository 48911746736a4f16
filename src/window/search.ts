/**
 * Search over the session: the live spans, the verified copies of reversibly pruned spans, and the
 * replacements (digests, compressed forms, carried ids) that stand in pruned spans' places. Every span
 * the window knows was pruned but cannot be read now — pruned under a tombstone, a copy rotated out or
 * altered, a store that failed — is named in the answer as a possible holder, so "no match" never
 * passes for "nothing there" when the window knows of holes.
 *
 * Every copy the window pruned is read and hashed, whether or not it holds the query: a copy is counted as
 * searched only when its bytes hash to the content hash the window recorded when it pruned the span
 * (a record edited in place under its old hash is a hole too), and a match is confirmed on those bytes.
 */
import type { AuditDraft } from "../audit.js";
import { contentHash } from "../hash.js";
import type { SearchHole, SearchMatch, SearchOutcome } from "../outcome.js";
import { renderSearch, snippetOf } from "../search/answer.js";
import { scanner, type SearchQuery } from "../search/query.js";
import type { BackingStore } from "../stores/store.js";
import { searchDraft } from "./audit-drafts.js";
import { spanIdOf, type Entry, type GoneEntry } from "./entries.js";

/** A search written in code: the typed path (`window.search`). */
export interface SearchRequest {
  /** An exact substring, or with `regex: true` an RE2 pattern; at most `maxQueryChars` characters. */
  readonly query: string;
  readonly regex?: boolean;
}

/** Copies one store is asked to send in one read; a search reads all of a store's in as many reads as it takes. */
export const CANDIDATE_LIMIT = 256;

/** What search needs from the window (internal). */
export interface SearchContext {
  readonly session: string;
  /** The window's positions, in order. */
  entries(): readonly Entry[];
  store(name: string): BackingStore;
  readonly auditStore: BackingStore;
  readonly budgetTokens: number;
  audit(store: BackingStore, draft: AuditDraft): Promise<number | null>;
  /** The session's span ids as the home store registered them, from every window of the session. */
  sessionSpans(): Promise<readonly string[]>;
  /** A pruned entry whose copy the store no longer has as pruned (deleted, rotated out, altered): found lost. */
  lost?(e: GoneEntry): void;
  /**
   * Asked once the copies are read: `true` when what `lost` was told put spans back in the window (a pending
   * prune not applied after all). The search then runs again, unaudited the first time, so it reads those
   * spans as the live spans they now are rather than naming them as holes.
   */
  again?(): boolean;
}

/** Runs a compiled query over the session and audits the answer. */
export async function search(query: SearchQuery, raw: string, ctx: SearchContext): Promise<SearchOutcome> {
  const entries = ctx.entries();
  const found = new Map<string, SearchMatch>();
  const holes = new Map<string, SearchHole["why"]>();
  /** Reversibly pruned entries, by store and handle: their copies are what the stores are asked about. */
  const byStore = new Map<string, Map<string, GoneEntry>>();
  let live = 0;
  /** Every position searched, members of summaries included, in window order. */
  const order: string[] = [];
  const scan = scanner(query);
  /** Spans a text of which the search's work bound did not let it read (and that did not match elsewhere). */
  const unread = new Set<string>();
  const match = (spanId: string, kind: string, handle: string | null, source: SearchMatch["source"], text: string): boolean => {
    const at = scan(text);
    if (at === "unread") {
      unread.add(spanId);
      return false;
    }
    if (at === null) return false;
    found.set(spanId, { spanId, handle, kind, source, snippet: snippetOf(text, at.start, at.end) });
    return true;
  };
  /**
   * The positions to visit, last first, with an explicit stack (a chain of summaries of summaries may be
   * thousands deep, past what recursion takes): an entry, or a summary's id to place in `order` after its members.
   */
  const todo: Array<Entry | { readonly after: string }> = [];
  const visit = (e: Entry): void => {
    order.push(spanIdOf(e));
    switch (e.state) {
      case "live":
        match(e.span.id, e.span.kind, e.handle, "live", e.span.text);
        if (!unread.has(e.span.id)) live++;
        break;
      case "pruned":
        if (e.replacement !== null) match(e.spanId, e.kind, e.handle, "replacement", e.replacement);
        // A copy the window already found lost (a recall, `checkCopies`) is not asked about again.
        if (e.store === null || e.handle === null || e.copyLost) holes.set(e.spanId, "copy-lost");
        else {
          let m = byStore.get(e.store);
          if (!m) byStore.set(e.store, (m = new Map()));
          m.set(e.handle, e);
        }
        break;
      case "tombstone":
        // What stands in its place is still in the window and is searched; the original is gone.
        if (e.replacement !== null) match(e.spanId, e.kind, null, "replacement", e.replacement);
        holes.set(e.spanId, "lossy");
        break;
      case "lost":
        // Lost in a restart: nothing of it is left anywhere to search.
        holes.set(e.spanId, "copy-lost");
        break;
      case "summary":
        // The digest is in the window; its members are searched like any other position.
        match(e.spanId, e.kind, null, "replacement", e.digest);
        order.pop();
        todo.push({ after: e.spanId });
        for (let i = e.members.length - 1; i >= 0; i--) todo.push(e.members[i]!);
        break;
      case "fold":
        // A fold is only a line: its members are searched as the positions they are.
        order.pop();
        for (let i = e.members.length - 1; i >= 0; i--) todo.push(e.members[i]!);
        break;
      default:
        assertNever(e);
    }
  };
  for (let i = entries.length - 1; i >= 0; i--) todo.push(entries[i]!);
  while (todo.length > 0) {
    const next = todo.pop()!;
    if ("after" in next) order.push(next.after);
    else visit(next);
  }
  let pruned = 0;
  for (const [name, byHandle] of byStore) {
    const store = ctx.store(name);
    const copies = [...byHandle.values()].map((e) => ({ handle: e.handle!, hash: e.hash }));
    /** Copies whose bytes hashed to what the window pruned: the only ones counted as searched. */
    const verified = new Set<string>();
    // Every copy's bytes are read, not only those holding the query's literal: a copy edited in place under
    // its old hash is found only by hashing it, and one that no longer holds the literal would otherwise be
    // counted as searched. A read at a time is bounded, so no store sends more than CANDIDATE_LIMIT copies at once.
    for (let at = 0; at < copies.length; at += CANDIDATE_LIMIT) {
      const chunk = copies.slice(at, at + CANDIDATE_LIMIT);
      let answer;
      try {
        answer = await store.searchCopies(ctx.session, { copies: chunk, literal: null, limit: chunk.length });
      } catch {
        for (const c of chunk) holes.set(byHandle.get(c.handle)!.spanId, "unavailable");
        continue;
      }
      // Rotated out, deleted or re-hashed behind the runtime: the store no longer has the bytes pruned.
      for (const handle of answer.gone) {
        const e = byHandle.get(handle);
        if (e === undefined) continue;
        holes.set(e.spanId, "copy-lost");
        ctx.lost?.(e);
      }
      for (const c of answer.candidates) {
        const e = byHandle.get(c.handle);
        // A record this window did not prune under that handle, or other bytes than it pruned: as lost as a deleted copy.
        if (e === undefined || holes.has(e.spanId)) continue;
        if (e.spanId !== c.spanId || c.hash !== e.hash || contentHash(c.text) !== e.hash) {
          holes.set(e.spanId, "copy-lost");
          ctx.lost?.(e);
          continue;
        }
        verified.add(e.spanId);
        match(e.spanId, e.kind, e.handle, "copy", c.text);
      }
      // A copy the store neither returned nor called gone was not read (an adapter that capped its answer):
      // unverified, so a hole to retry rather than a span searched.
      for (const c of chunk) {
        const e = byHandle.get(c.handle)!;
        if (!verified.has(e.spanId) && !holes.has(e.spanId)) holes.set(e.spanId, "unavailable");
      }
    }
    for (const e of byHandle.values()) if (verified.has(e.spanId) && !holes.has(e.spanId) && !unread.has(e.spanId)) pruned++;
  }
  if (ctx.again?.() === true) {
    const { lost: _lost, again: _again, ...once } = ctx;
    return search(query, raw, once);
  }
  for (const id of found.keys()) unread.delete(id);
  // Spans another window of the session appended (and may have pruned under a tombstone): not here to read.
  const here = new Set(order);
  let elsewhere: readonly string[] = [];
  try {
    elsewhere = (await ctx.sessionSpans()).filter((id) => !here.has(id));
  } catch {
    // The home store failed: the live spans and copies above were still searched; say what could not be.
    elsewhere = [];
    holes.set("(session registry)", "unavailable");
  }
  for (const id of elsewhere) holes.set(id, "elsewhere");
  order.push(...elsewhere);
  if (holes.has("(session registry)")) order.push("(session registry)");
  const inOrder = <T>(m: ReadonlyMap<string, T>) => order.filter((id) => m.has(id));
  const matches = inOrder(found).map((id) => found.get(id)!);
  const coverage = {
    live,
    pruned,
    holes: inOrder(holes).map((spanId) => ({ spanId, why: holes.get(spanId)! })),
    // Every copy is read, in bounded reads: no store's answer is cut short by a candidate limit any more.
    truncated: false,
    unread: [...unread].filter((id) => !holes.has(id)).length,
  };
  const regex = query.type === "regex";
  const rendered = renderSearch({ query: query.text, regex, matches, coverage, candidateLimit: CANDIDATE_LIMIT, budgetTokens: ctx.budgetTokens });
  const status = matches.length > 0 ? "match" : "no-match";
  const seq = await ctx.audit(
    ctx.auditStore,
    searchDraft(raw, status, { code: "search", coverage: coverage.unread > 0 ? "partial" : coverage.holes.length > 0 ? "holes" : "complete" }),
  );
  return {
    op: "search", status, query: query.text, regex, matches: matches.slice(0, rendered.shown), omitted: matches.length - rendered.shown,
    coverage, text: rendered.text, tokens: rendered.tokens, auditSeq: seq,
  };
}

function assertNever(e: never): never {
  throw new TypeError(`search: unhandled window entry ${JSON.stringify(e)}`);
}
