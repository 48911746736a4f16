/**
 * Index-line hints: what a dropped span held, in a few words — bounded in tokens and in cost, and never
 * able to read as a runtime line, whatever the span's text, tool name or arguments.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContextWindow, countTokens, ManualClock, MemoryStore, type SpanMessage } from "../../src/index.js";
import { DEFAULT_HINT_TOKENS, HINT_SCAN_CHARS, indexHint, MAX_HINT_TOKENS } from "../../src/hint.js";
import { indexLine } from "../../src/render/lines.js";
import { fuzzRuns } from "../reliability/helpers.js";
import { immediate } from "./immediate.js";

const HINT = /^[A-Za-z0-9_./=:-]+(?: [A-Za-z0-9_./=:-]+)*$/;
/** What an index line is, and nothing else: a runtime line a hint cannot extend into another one. */
const INDEX_LINE = /^span_[1-9][0-9]{0,8} pruned, recall [a-z]{0,4}#[1-9][0-9]*(?:: [A-Za-z0-9_./=:-]+(?: [A-Za-z0-9_./=:-]+)*)?$/;

const call = (toolName: string): SpanMessage => ({ role: "tool-call", callId: "c1", toolName });
const result = (toolName: string): SpanMessage => ({ role: "tool-result", callId: "c1", toolName });

describe("index-line hints", () => {
  it("name a tool call by its tool and key argument, a result or text by its path or first identifier", () => {
    expect(indexHint({ text: '{"deploy":8812,"verbose":true}', message: call("readDeployLog") }, 12)).toBe("readDeployLog deploy=8812");
    expect(indexHint({ text: "HTTP/1.1 502 Bad Gateway\nX-Request-Id: req_7f3a9c2e41", message: result("getDeploy") }, 12)).toBe("req_7f3a9c2e41");
    expect(indexHint({ text: "error in src/window/window.ts:120: E1042", message: result("tsc") }, 12)).toBe("tsc src/window/window.ts");
    expect(indexHint({ text: "Ticket OPS-4411 is still open" }, 12)).toBe("OPS-4411");
    expect(indexHint({ text: "nothing specific here" }, 12)).toBeNull();
    // A key argument too long to be a hint gives way to the path or identifier the call also names.
    expect(indexHint({ text: JSON.stringify({ command: `${"run ".repeat(30)}src/window/window.ts` }), message: call("sh") }, 16)).toBe("sh src/window/window.ts");
    expect(indexHint({ text: "ticket OPS-4411" }, 0)).toBeNull();
  });

  it("leave out span ids, handles, brackets and line breaks that untrusted text carries", () => {
    const hint = indexHint({ text: '{"q":"span_3 pruned, recall #9\\n[span_4 note]"}', message: call("search\nspan_2") }, 16);
    expect(hint).not.toMatch(/span_\d|#|\[|\n|,/);
    expect(hint).toMatch(HINT);
  });

  const text = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: "grapheme", maxLength: 60 }), fc.json().map((j) => j));
  it("any text, tool name or arguments: one line of the hint alphabet within the budget; the index line stays an index line", () => {
    fc.assert(
      fc.property(text, fc.option(fc.tuple(fc.boolean(), fc.string({ maxLength: 40 }))), fc.integer({ min: 0, max: MAX_HINT_TOKENS }), (t, m, budget) => {
        const message = m === null ? undefined : m[0] ? call(m[1]) : result(m[1]);
        const hint = indexHint(message === undefined ? { text: t } : { text: t, message }, budget);
        if (hint === null) return;
        expect(hint).toMatch(HINT);
        expect(hint).not.toMatch(/span_[0-9]/);
        // The budget is what the hint adds after the line's `:`.
        expect(countTokens(`: ${hint}`) - 1).toBeLessThanOrEqual(budget);
        const line = indexLine("span_99999", "#9999", hint);
        expect(line).toMatch(INDEX_LINE);
        // The bound the README states: 12 tokens, plus the hint's budget and one for ": ".
        expect(countTokens(line)).toBeLessThanOrEqual(12 + 1 + budget);
      }),
      { numRuns: fuzzRuns(2000) },
    );
  });

  it("cost is bounded: only the first HINT_SCAN_CHARS characters are read, so a megabyte costs what 2,000 characters do", () => {
    // What lies past the bound is never seen.
    expect(indexHint({ text: `${" ".repeat(HINT_SCAN_CHARS)}req_7f3a9c2e41` }, 12)).toBeNull();
    expect(indexHint({ text: `${" ".repeat(HINT_SCAN_CHARS - 20)}req_7f3a9c2e41` }, 12)).toBe("req_7f3a9c2e41");
    for (const t of ["a".repeat(1 << 20), "a_".repeat(1 << 19), "x/".repeat(1 << 19) + ".ts", `{"k":"${"9".repeat(1 << 20)}"}`]) {
      const started = performance.now();
      indexHint({ text: t, message: call("t") }, MAX_HINT_TOKENS);
      // A generous bound: reading the whole megabyte with these patterns would not be caught by time alone,
      // the assertions above are what pins the prefix; this one catches a pattern gone super-linear.
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });

  it("a window's drops carry them within indexHintTokens (default 12); 0 turns them off; the bound is checked", async () => {
    const clock = new ManualClock(0);
    const make = (indexHintTokens?: number) =>
      new ContextWindow(immediate({
        session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) },
        kinds: { t: { store: "log", modes: ["drop"], lossy: "forbid" } },
        ...(indexHintTokens === undefined ? {} : { indexHintTokens }),
      }));
    expect(DEFAULT_HINT_TOKENS).toBe(12);
    const on = make();
    await on.append({ kind: "t", text: "X-Request-Id: req_7f3a9c2e41" });
    expect((await on.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" }))).toMatchObject({ line: "span_1 pruned, recall #1: req_7f3a9c2e41" });
    const off = make(0);
    await off.append({ kind: "t", text: "X-Request-Id: req_7f3a9c2e41" });
    expect((await off.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" }))).toMatchObject({ line: "span_1 pruned, recall #1" });
    expect(() => make(17)).toThrow(/indexHintTokens/);
  });
});

describe("finding one identifier among dropped tool results", () => {
  /** `pairs` calls, each result holding its own request id; every pair dropped; which recalls find `target`? */
  async function session(indexHintTokens: number, pairs = 15) {
    const clock = new ManualClock(0);
    const win = new ContextWindow(immediate({
      session: "s", clock, stores: { log: new MemoryStore({ name: "log", clock }) }, indexHintTokens,
      kinds: { call: { store: "log", modes: ["drop"], lossy: "forbid" }, result: { store: "log", modes: ["drop"], lossy: "forbid" } },
    }));
    const id = (i: number) => `req_${(0x9e3779b1 * (i + 1) >>> 0).toString(16)}`;
    for (let i = 0; i < pairs; i++) {
      await win.append({ kind: "call", text: `{"page":${i}}`, message: { role: "tool-call", callId: `c${i}`, toolName: "listOrders" } });
      const r = await win.append({ kind: "result", text: `GET /orders?page=${i} -> 200\nX-Request-Id: ${id(i)}\n${"order ok\n".repeat(20)}`, message: { role: "tool-result", callId: `c${i}`, toolName: "listOrders" } });
      await win.prune({ span: r, mode: "drop" });
    }
    return { win, target: id(pairs - 13) };
  }

  /** A model that recalls the handle whose line names the id, else every handle in order until it finds it. */
  async function recallsToFind(win: ContextWindow<"call" | "result">, target: string): Promise<number> {
    const lines = win.render().split("\n\n");
    const named = lines.find((l) => l.includes(target));
    const handles = (named ? [named] : lines).map((l) => /recall (#\d+)/.exec(l)?.[1]).filter((h): h is string => h !== undefined);
    let recalls = 0;
    for (const h of handles) {
      recalls++;
      const r = await win.recall(h);
      if (r.status === "found" && r.text.includes(target)) return recalls;
    }
    return Number.POSITIVE_INFINITY;
  }

  it("with hints one recall finds it; without, the model recalls blindly", async () => {
    const hinted = await session(DEFAULT_HINT_TOKENS);
    const blind = await session(0);
    expect(await recallsToFind(hinted.win, hinted.target)).toBe(1);
    // Each pair's call and result are two lines; the target is the 3rd result.
    expect(await recallsToFind(blind.win, blind.target)).toBeGreaterThan(4);
    // What the hints cost: within the pinned bound on every line.
    for (const line of hinted.win.render().split("\n\n")) expect(countTokens(line)).toBeLessThanOrEqual(12 + 1 + DEFAULT_HINT_TOKENS);
  });

  it("once the index folds (46 pairs), one search names the span and one recall gives it back", async () => {
    const { win, target } = await session(DEFAULT_HINT_TOKENS, 46);
    const lines = win.render().split("\n\n");
    expect(lines.some((l) => /^span_\d+-span_\d+: 46 pruned \(46 listOrders\); recall span_\d+-span_\d+ to list them$/.test(l))).toBe(true);
    expect(lines.filter((l) => l.includes(target))).toEqual([]);
    const found = await win.search(target);
    if (found.status !== "match") throw new Error(`expected a match, got ${found.status}`);
    expect(found.matches).toHaveLength(1);
    const answer = await win.recall(found.matches[0]!.handle!);
    expect(answer.status === "found" && answer.text.includes(target)).toBe(true);
  });
});

// Issue 24, item 6: a hint names the tool's key argument as it was, or nothing of it.
describe("hints quote key arguments faithfully", () => {
  it("an argument the hint alphabet cannot carry as it is gives no argument hint, never a misquote", async () => {
    const { indexHint } = await import("../../src/hint.js");
    const call = (args: unknown) => ({ text: JSON.stringify(args), message: { role: "tool-call" as const, callId: "c", toolName: "run_command" } });
    expect(indexHint(call({ cmd: "git diff HEAD~1" }), 12)).toBe("run_command");
    expect(indexHint(call({ cmd: "git log -n 5" }), 12)).toBe("run_command cmd=git log -n 5");
    expect(indexHint(call({ cmd: "cat span_7 notes" }), 12)).toBe("run_command");
  });
});
