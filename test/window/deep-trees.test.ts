/**
 * Summaries of summaries nest as deep as the model keeps rolling them up: ~5,000 `summarize_range` calls,
 * each over the previous summary and the next span, made every search fail with `Maximum call stack size
 * exceeded` (and ~9,000 every rendering). Every walk over a summary or fold tree is iterative; these run
 * each one over a chain far deeper than any recursion reaches (built directly: through the window each
 * level costs a compaction), and check what it answers, not how long it takes.
 */
import { describe, expect, it } from "vitest";
import { contentHash } from "../../src/hash.js";
import { compileQuery } from "../../src/search/query.js";
import type { BackingStore, CopySearchRequest } from "../../src/stores/store.js";
import type { Entry, GoneEntry, SummaryEntry } from "../../src/window/entries.js";
import { summaryRole } from "../../src/window/fold.js";
import { expandLines, planRange, summaryHeader, summaryPromise, summaryText } from "../../src/window/range.js";
import { search } from "../../src/window/search.js";
import { WindowState } from "../../src/window/state.js";
import { entryView } from "../../src/window/view.js";

/** Far past V8's default stack for any of the recursive walks (search overflowed at ~4,500 levels). */
const DEPTH = 30_000;

function pruned(n: number, until: number | null = null): GoneEntry {
  return {
    state: "pruned", spanId: `span_${n}`, kind: "tool", group: null, message: null, hash: contentHash(`step ${n}`), mode: "drop",
    handle: `#${n}`, store: "log", until, keptUntil: until, copyLost: false, hint: null, hintTokens: 0, replacement: null,
  };
}

/** span_1, then each level a summary of the level below and the next pruned span: `DEPTH` levels. */
function chain(untilOfBase: number | null = null): { top: SummaryEntry; leaves: GoneEntry[] } {
  const leaves = [pruned(1, untilOfBase)];
  let below: Entry = leaves[0]!;
  let top: SummaryEntry | null = null;
  for (let level = 1; level <= DEPTH; level++) {
    const leaf = pruned(level + 1);
    leaves.push(leaf);
    const id = `span_${DEPTH + 1 + level}`;
    top = {
      state: "summary", spanId: id, kind: "summary", members: [below, leaf], digest: `level ${level}`, ids: [], handle: null, store: null, replacement: null,
      text: `${id} summary of ${"spanId" in below ? below.spanId : ""}–${leaf.spanId} (2), recall ${id}\n│ level ${level}`,
    };
    below = top;
  }
  return { top: top!, leaves };
}

describe("trees of summaries thousands deep", () => {
  it("search reads every member at every depth, in window order, without recursion", async () => {
    const { top, leaves } = chain();
    const texts = new Map(leaves.map((l) => [l.handle!, l.spanId === "span_1" ? "base req_00000001" : `step ${l.spanId.slice(5)}`]));
    for (const l of leaves) l.hash = contentHash(texts.get(l.handle!)!);
    let asked = 0;
    const store = {
      name: "log",
      searchCopies: async (_session: string, request: CopySearchRequest) => {
        asked += request.copies.length;
        return {
          candidates: request.copies.map((c) => ({ handle: c.handle, spanId: `span_${c.handle.slice(1)}`, kind: "tool", text: texts.get(c.handle)!, hash: c.hash })),
          more: false, gone: [],
        };
      },
    } as unknown as BackingStore;
    const compiled = compileQuery("req_00000001", false);
    if (!compiled.ok) throw new Error("query");
    const outcome = await search(compiled.query, "{}", {
      session: "s", entries: () => [top], store: () => store, auditStore: store, budgetTokens: 2_000,
      audit: async () => null, sessionSpans: async () => [],
    });
    expect(outcome.status).toBe("match");
    expect(outcome.matches.map((m) => [m.spanId, m.source])).toEqual([["span_1", "copy"]]);
    expect(asked).toBe(DEPTH + 1);
    expect(outcome.coverage).toMatchObject({ live: 0, pruned: DEPTH + 1, holes: [] });
  });

  it("renders, expands, finds its role and its members' promise at any depth", () => {
    const now = 1_000;
    const { top } = chain(7_200_000);
    expect(summaryRole([top])).toBe("user");
    // The base's copy is kept only until a time: the top summary's header says so, 30,000 levels up.
    expect(summaryPromise(top.members, now)).toEqual({ until: 7_200_000, mayBeLost: false });
    expect(summaryHeader(top.spanId, top.members, now)).toMatch(/, recall span_\d+ until 02:00Z$/);
    expect(summaryHeader(top.spanId, top.members, 7_200_000)).toMatch(/, copies may be lost, recall span_\d+$/);
    const view = entryView(top, now, "{span} pruned, unrecoverable, contents unknown");
    expect(view.state === "summary" && view.text).toBe(summaryText(top, now));
    expect(expandLines(top, now, "")).toHaveLength(2);
  });

  it("the window state indexes and walks a deep summary pushed whole (a provider's compaction, resumed)", () => {
    const { top } = chain();
    const state = new WindowState();
    state.push(top);
    expect(state.size).toBe(2 * DEPTH + 1);
    expect(state.get("span_1")?.state).toBe("pruned");
    let walked = 0;
    for (const _ of state.all()) walked++;
    expect(walked).toBe(2 * DEPTH + 1);
    state.refreshFolds();
  });

  it("a range planned from a span at the bottom of the chain finds its position, without recursion", () => {
    const { top } = chain();
    const next = pruned(DEPTH + 2);
    const ctx = { entries: [top, next], now: 0, policyOf: () => ({ store: "log", modes: ["drop", "summarize"], lossy: "with-flag" }) as const, pinsFor: () => [] };
    // span_1 is 30,000 levels down in the first position: the run is that whole position and the next.
    const planned = planRange(ctx, "span_1", next.spanId);
    expect("plan" in planned && planned.plan.members).toEqual([top, next]);
    expect(planRange(ctx, top.spanId, next.spanId)).toEqual(planned);
    expect(planRange(ctx, "span_999999", next.spanId)).toEqual({ refusal: { reason: "unknown-span", message: "span_999999 is not in this window" } });
  });
});
