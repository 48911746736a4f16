/**
 * The steps that read and free nothing: recall (by span id or handle) and search, wired to the window's
 * state and stores. `recall.ts` and `search.ts` hold the logic; this is what they need from the window.
 */
import { FOLD_KEY, HANDLE } from "../directive.js";
import type { InvalidOutcome, RecallOutcome, SearchOutcome } from "../outcome.js";
import { DEFAULT_SEARCH_TOKENS } from "../policy/kinds.js";
import { compileQuery } from "../search/query.js";
import type { WindowCore } from "./core.js";
import { recall } from "./recall.js";
import { invalid } from "./refusals.js";
import { search } from "./search.js";

/** Recall of `query` (a span id or handle, refs already read). `raw` is the directive as audited. */
export async function recallSpan(core: WindowCore, query: string, raw: string): Promise<RecallOutcome> {
  // A span whose prune is in doubt is still live here: try to settle it, and answer from the window if
  // the store still cannot say (the bytes are the window's either way).
  await core.doubts.settle(query);
  // A pending prune whose copy is no longer promised is not applied: its span is live, and answers from the window.
  core.settleLapses();
  const { state } = core;
  return recall(query, raw, {
    session: core.session,
    tombstone: core.settings.tombstone,
    now: () => core.now(),
    find: (q) => state.get(q) ?? (HANDLE.test(q) ? state.byHandle(q) : FOLD_KEY.test(q) ? state.foldFor(q, core.now()) : undefined),
    storeOf: (e) => core.storeOf(e) ?? core.home,
    stores: () => core.distinctStores(),
    auditStore: core.home,
    unused: (q) => state.unused.has(q),
    summaryBefore: (q) => state.summariesBefore.has(q),
    audit: (store, draft) => core.audit(store, draft),
    copyLost: (entry) => {
      state.markCopyLost(entry);
      // Its line must stop offering the recall now, not at the next compaction point; a prune of it still
      // pending is not applied (`lapse.ts`): the span is live again, and the recall answers from its bytes.
      core.compactNow();
    },
  });
}

/** Search for `text` (a substring, or an RE2 pattern with `regex`). `raw` is the directive as audited. */
export async function searchWindow(core: WindowCore, text: string, regex: boolean, raw: string): Promise<SearchOutcome | InvalidOutcome> {
  const compiled = compileQuery(text, regex, core.settings.directiveLimits.maxQueryChars);
  if (!compiled.ok) return invalid(core, "search", [{ path: "query", message: compiled.message }], raw);
  // A pending prune whose copy is no longer promised is not applied: its bytes are the window's, and searched as live.
  core.settleLapses();
  const { state } = core;
  let lost = 0;
  return search(compiled.query, raw, {
    session: core.session,
    // The directive tools' own calls and answers are the runtime's traffic, not what the model looks for.
    entries: () => (state.directiveNames.size === 0 ? state.entries : state.entries.filter((e) => !state.isDirectiveTraffic(e))),
    store: (name) => core.store(name),
    auditStore: core.home,
    budgetTokens: core.settings.limits.searchTokens ?? DEFAULT_SEARCH_TOKENS,
    audit: (store, draft) => core.audit(store, draft),
    // The session's spans besides this window's: folded traffic and the directive tools' own are this window's.
    sessionSpans: async () => {
      const home = core.home;
      // The session's span ids are span_1 … span_<n>: when this window knows each of them, no other window
      // appended any, and the registry (a row per span) need not be read.
      if (home.sessionSpanCount !== undefined && state.knowsSpans(await home.sessionSpanCount(core.session))) return [];
      return (await home.sessionSpans(core.session)).map((s) => s.spanId).filter((id) => {
        const e = state.get(id);
        return !state.folded.has(id) && !state.unused.has(id) && !state.summariesBefore.has(id) && (e === undefined || !state.isDirectiveTraffic(e));
      });
    },
    // A copy found gone while its prune is still pending: marked lost, so the prune is not applied (its bytes
    // are still the window's) — as a recall or `checkCopies` finding it would. An applied prune's line is
    // left to those, which say so where the model reads it.
    lost: (e) => {
      if (!core.shown.isPending(e.spanId) || e.copyLost) return;
      state.markCopyLost(e);
      lost++;
    },
    again: () => {
      if (lost === 0) return false;
      core.settleLapses();
      return true;
    },
  });
}
