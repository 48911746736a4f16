/**
 * Many `map` calls in one response: each answer used to list every live span — the earlier answers included —
 * and each map counted the whole window's tokens, so N calls cost about N³ (200 calls: 72 s) and left N² lines
 * in the window. A map answered while the previous answer is still in the window, as given, refers to it and
 * lists only what changed; a rendering counted once is not counted again. Work is counted in characters given to
 * the tokenizer, and the window's size in characters.
 *
 * Seen failing: with every call answered in full (`answerLines` never referring), the first four tests fail: the
 * work factor, the answers' sizes, the window's growth.
 */
import { describe, expect, it, vi } from "vitest";

const counted = vi.hoisted(() => ({ chars: 0, calls: 0 }));
vi.mock("../../src/tokens.js", async (original) => {
  const real = await original<typeof import("../../src/tokens.js")>();
  return {
    ...real,
    countTokens: (text: string) => {
      counted.chars += text.length;
      counted.calls++;
      return real.countTokens(text);
    },
  };
});

const { ContextWindow, ManualClock, MemoryStore, Transcript } = await import("../../src/index.js");
const { readRendered } = await import("../../src/render/grammar.js");
const { DEFAULT_TOMBSTONE } = await import("../../src/render/lines.js");

function setup(compaction: "immediate" | undefined = undefined) {
  const clock = new ManualClock(0);
  const log = new MemoryStore({ name: "log", clock });
  const win = new ContextWindow({
    session: "s", clock, stores: { log },
    kinds: {
      turn: { store: "log", modes: ["drop", "summarize"], lossy: "forbid" },
      call: { store: "log", modes: ["drop"], lossy: "with-flag" },
      result: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
    },
    ...(compaction === undefined ? {} : { limits: { compaction } }),
  });
  const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "call", toolResult: "result" });
  return { win, t };
}

const mapCalls = (n: number, from = 0) => ({
  content: null,
  tool_calls: Array.from({ length: n }, (_, i) => ({ id: `c${from + i}`, type: "function", function: { name: "map", arguments: "{}" } })),
});

const windowChars = (win: InstanceType<typeof ContextWindow>) => win.render().length;

describe("many map calls in one response", () => {
  for (const compaction of [undefined, "immediate"] as const) {
    it(`cost about N maps, and add about N lines to the window (${compaction ?? "default"} compaction)`, async () => {
      const sizes: number[] = [];
      for (const n of [10, 40]) {
        const { win, t } = setup(compaction);
        await t.user("hello");
        await t.assistant("hi");
        const calls = await t.appendOpenAIChat(mapCalls(n));
        counted.chars = 0;
        const [firstAnswer] = await t.handleToolCalls(calls.slice(0, 1));
        const one = counted.chars;
        const answers = [firstAnswer!, ...(await t.handleToolCalls(calls.slice(1)))];
        const work = counted.chars;
        // N maps cost about N times the first (each later answer adds a few lines; 2.4× at N = 10, 3× at 40): with
        // every answer in full the factor grows with N (5.3× at 10, about 20× at 40).
        expect(work).toBeLessThanOrEqual(5 * n * one);
        // The first answer is the full map; each later one refers to the previous answer: a bounded size.
        expect(answers[0]!.text.split("\n")).toHaveLength((compaction === "immediate" ? 1 : 2) + 2 + n);
        for (const a of answers.slice(1)) {
          expect(a.text.split("\n").length).toBeLessThanOrEqual(6);
          expect(a.text).toMatch(/^as the map in span_\d+ says, but for 1 span:$/m);
        }
        for (const a of answers) expect(readRendered(a.text, { tombstone: DEFAULT_TOMBSTONE }).stray).toEqual([]);
        sizes.push(windowChars(win));
      }
      // 4× the calls, about 4× the window (all answers in full: about 16×).
      expect(sizes[1]! / sizes[0]!).toBeLessThan(5);
    });
  }

  it("the first answer is the full map, as map() gives it; each later one lists only what changed, and every span's fate is still there", async () => {
    const { win, t } = setup();
    await t.user("hello");
    await t.assistant("hi");
    const calls = await t.appendOpenAIChat({
      content: null,
      tool_calls: [
        { id: "a", type: "function", function: { name: "map", arguments: "{}" } },
        { id: "b", type: "function", function: { name: "prune", arguments: '{"span_id":"span_2","mode":"drop"}' } },
        { id: "c", type: "function", function: { name: "map", arguments: "{}" } },
      ],
    });
    const [first, , second] = await t.handleToolCalls(calls);
    expect(first!.text.split("\n")).toEqual([
      expect.stringMatching(/^map: \d+ tokens, 5 live spans$/),
      expect.stringMatching(/^no need to prune yet/),
      "span_1 drop,summarize: reversible",
      "span_2 drop,summarize: reversible",
      "span_3 drop: reversible",
      "span_4 drop: reversible",
      "span_5 drop: reversible",
    ]);
    // span_6 holds the first answer; span_7 the prune's; span_2 was pruned since.
    expect(second!.text.split("\n").slice(-4)).toEqual([
      "as the map in span_6 says, but for 3 spans:",
      "span_6 drop,summarize,compress: reversible",
      "span_7 drop,summarize,compress: reversible",
      "span_2: no longer live",
    ]);
    expect(readRendered(second!.text, { tombstone: DEFAULT_TOMBSTONE }).runtime.filter((l) => l.line === "map-same" || l.line === "map-gone"))
      .toEqual([{ line: "map-same", answer: "span_6", changed: 3 }, { line: "map-gone", spanId: "span_2" }]);
    // The outcome keeps every span's forecast for code; map() from code always answers in full.
    const [third] = await t.handleToolCalls(await t.appendOpenAIChat(mapCalls(1, 9)));
    expect(third!.text).toMatch(/^as the map in span_8 says, but for 2 spans:$/m);
    const full = await win.map();
    expect(full.line.split("\n").filter((l) => /^span_\d+ /.test(l))).toHaveLength(full.spans.length);
    expect(full.spans.map((s) => s.spanId)).toEqual(["span_1", "span_3", "span_4", "span_5", "span_6", "span_7", "span_8", "span_9", "span_10"]);
  });

  it("refers to an answer only while it and every answer it builds on are in the window, as given", async () => {
    const { win, t } = setup();
    await t.user("hello");
    await t.handleToolCalls(await t.appendOpenAIChat(mapCalls(2)));
    // Folded at a compaction point: the next map is full again.
    await win.compact();
    const [afterFold] = await t.handleToolCalls(await t.appendOpenAIChat(mapCalls(1, 2)));
    expect(afterFold!.text).not.toMatch(/^as the map in/m);
    const [refers] = await t.handleToolCalls(await t.appendOpenAIChat(mapCalls(1, 3)));
    expect(refers!.text).toMatch(/^as the map in span_\d+ says/m);
    // An answer the loop did not append (or appended altered) is not referred to.
    const lone = await win.handleToolCall({ id: "x", name: "map", arguments: "{}" });
    expect(lone!.text).toMatch(/^as the map in span_\d+ says/m);
    const [after] = await t.handleToolCalls(await t.appendOpenAIChat(mapCalls(1, 5)));
    expect(after!.text).not.toMatch(/^as the map in/m);
    // One the model pruned since is not either.
    const [next] = await t.handleToolCalls(await t.appendOpenAIChat(mapCalls(1, 6)));
    const answerSpan = /^as the map in (span_\d+)/m.exec(next!.text)![1]!;
    expect((await win.applyDirective({ op: "prune", span_id: answerSpan, mode: "drop" })).status).toBe("reversible");
    const [afterPrune] = await t.handleToolCalls(await t.appendOpenAIChat(mapCalls(1, 7)));
    expect(afterPrune!.text).not.toMatch(/^as the map in/m);
  });

  it("a rendering counted once is not counted again: map and tokens() with nothing changed in between", async () => {
    const { win, t } = setup();
    await t.user("hello ".repeat(500));
    const rendering = win.render().length;
    counted.chars = 0;
    const first = await win.map();
    const afterMap = counted.chars;
    expect(afterMap).toBeGreaterThanOrEqual(rendering);
    expect(win.tokens()).toBe(first.tokens.used);
    expect((await win.map()).tokens.used).toBe(first.tokens.used);
    expect(counted.chars).toBe(afterMap);
    await t.assistant("and more");
    expect(win.tokens()).toBeGreaterThan(first.tokens.used);
    expect(counted.chars).toBeGreaterThan(afterMap + rendering);
  });
});
