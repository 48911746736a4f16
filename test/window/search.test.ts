/**
 * Search: matches in live spans, verified copies and replacements; coverage that names every pruned span
 * it could not read; bad queries as data; bounded answers on hostile input.
 */
import { describe, expect, it } from "vitest";
import { ContextWindow } from "../../src/window/window.js";
import { refSpanId } from "../../src/window/refs.js";
import { MemoryStore } from "../../src/stores/memory.js";
import type { BackingStore } from "../../src/stores/store.js";
import { countTokens } from "../../src/tokens.js";
import { ManualClock, type KindPolicy } from "../../src/types.js";
import type { DirectiveOutcome, SearchOutcome } from "../../src/outcome.js";
import { compileQuery, requiredLiteral, scanner, SEARCH_WORK_UNITS } from "../../src/search/query.js";
import { compilePinPattern } from "../../src/policy/pins.js";
import { contentHash } from "../../src/hash.js";
import { sqliteFile } from "./sqlite-file.js";

const HOUR = 3_600_000;
const KINDS: Record<string, KindPolicy> = {
  tool: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag", pins: [{ name: "req", pattern: "req_[0-9a-f]{6,}" }] },
  scratch: { store: null, modes: ["drop", "summarize"], lossy: "with-flag", pins: [{ name: "req", pattern: "req_[0-9a-f]{6,}" }] },
};

/** The store with its `searchCopies` replaced (every other method bound to the store itself). */
function withSearch(inner: MemoryStore, searchCopies: BackingStore["searchCopies"]): BackingStore {
  return new Proxy(inner, {
    get(target, p) {
      if (p === "searchCopies") return searchCopies;
      const v = Reflect.get(target, p, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

function setup(o: { store?: (inner: MemoryStore) => BackingStore; holds?: boolean; searchTokens?: number; session?: string; inner?: MemoryStore } = {}) {
  const clock = new ManualClock(0);
  const inner = o.inner ?? new MemoryStore({ name: "log", retentionMs: 2 * HOUR, clock, holds: o.holds ?? true });
  const store = o.store ? o.store(inner) : inner;
  const win = new ContextWindow({
    session: o.session ?? "s", clock, stores: { log: store }, kinds: KINDS,
    ...(o.searchTokens !== undefined ? { limits: { searchTokens: o.searchTokens } } : {}),
  });
  return { win, clock, inner, store };
}

const searched = (o: DirectiveOutcome): SearchOutcome => {
  if (o.op !== "search" || o.status === "invalid") throw new Error(`not a search answer: ${JSON.stringify(o)}`);
  return o;
};

describe("search", () => {
  it("finds a pruned span's text in its verified copy, with the handle that recalls it and a snippet", async () => {
    const { win } = setup();
    await win.append({ kind: "tool", text: "GET /health 200" });
    const ref = await win.append({ kind: "tool", text: "GET /orders 502\nX-Request-Id: req_7f3a9c2e41\nupstream timeout" });
    await win.append({ kind: "scratch", text: "plan: look for the request id" });
    await win.prune({ span: ref, mode: "drop" });
    const r = searched(await win.applyDirective({ op: "search", query: "X-Request-Id" }));
    expect(r.status).toBe("match");
    expect(r.matches).toEqual([{ spanId: "span_2", handle: "#2", kind: "tool", source: "copy", snippet: "GET /orders 502 X-Request-Id: req_7f3a9c2e41 upstream timeout" }]);
    expect(r.coverage).toEqual({ live: 2, pruned: 1, holes: [], truncated: false, unread: 0 });
    expect(r.text).toContain("span_2 tool (pruned, recall #2)");
    const rx = searched(await win.search({ query: "req_[0-9a-f]{10}", regex: true }));
    expect(rx.matches.map((m) => m.spanId)).toEqual(["span_2"]);
    const log = await win.auditLog();
    expect(log.filter((a) => a.op === "search").map((a) => [a.status, a.reason])).toEqual([["match", "search:complete"], ["match", "search:complete"]]);
  });

  it("a miss with no holes says nothing pruned is unrecoverable", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "tool", text: "alpha" });
    await win.prune({ span: ref, mode: "drop" });
    const r = searched(await win.search("omega"));
    expect(r.status).toBe("no-match");
    expect(r.text).toBe('search "omega": no match\nno match in 0 live and 1 recoverable pruned span; nothing pruned is unrecoverable');
  });

  it("never answers 'nothing there' when the window knows of holes: tombstones and lost copies are named", async () => {
    const { win, clock, inner } = setup({ holds: false });
    const lossy = await win.append({ kind: "scratch", text: "scratch note with req_aaaaaaaa" });
    const lost = await win.append({ kind: "tool", text: "old output" });
    const kept = await win.append({ kind: "tool", text: "kept output" });
    await win.prune({ span: lossy, mode: "drop", acceptLossy: true });
    await win.prune({ span: lost, mode: "drop" });
    // Applied now: a prune still pending when its copy lapses is not applied at all (its bytes stay live, test/window/lapse.test.ts).
    await win.compact();
    // No holds in this store: the copy of span_2 ages out like any other record.
    clock.advance(2 * HOUR + 1);
    await inner.rotate();
    await inner.persist({ session: "s", spanId: refSpanId(kept), kind: "tool", text: "kept output", hash: win.span(kept)!.hash });
    await win.prune({ span: kept, mode: "drop" });
    const r = searched(await win.search("req_bbbbbbbb"));
    expect(r.status).toBe("no-match");
    expect(r.coverage).toEqual({ live: 0, pruned: 1, holes: [{ spanId: "span_1", why: "lossy" }, { spanId: "span_2", why: "copy-lost" }], truncated: false, unread: 0 });
    expect(r.text).toContain("no match in 0 live and 1 recoverable pruned span; span_1–span_2 are unrecoverable and may have held it");
    expect((await win.auditLog()).at(-1)).toMatchObject({ op: "search", status: "no-match", reason: "search:holes" });
  });

  it("searches what stands in a pruned span's place: a digest's carried ids are found even under a tombstone", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "scratch", text: "long investigation ... X-Request-Id: req_7f3a9c2e41 ..." });
    await win.prune({ span: ref, mode: "summarize", digest: "looked into the outage", acceptLossy: true });
    const r = searched(await win.search("req_7f3a9c2e41"));
    expect(r.matches).toMatchObject([{ spanId: "span_1", source: "replacement", handle: null }]);
    expect(r.coverage.holes).toEqual([{ spanId: "span_1", why: "lossy" }]);
    expect(r.text).toContain("span_1 is unrecoverable and may have held more");
  });

  it("a copy whose bytes changed since the prune is a hole, not a match", async () => {
    const { win } = setup({
      store: (inner) => withSearch(inner, async (session, request) => {
        const r = await inner.searchCopies(session, request);
        return { ...r, candidates: r.candidates.map((c) => ({ ...c, text: `${c.text} (edited)` })) };
      }),
    });
    const ref = await win.append({ kind: "tool", text: "secret req_1234567890" });
    await win.prune({ span: ref, mode: "drop" });
    // Applied: a pending prune whose copy a search finds altered is not applied, and its span is read live (lapse.test.ts).
    await win.compact();
    const r = searched(await win.search("req_1234567890"));
    expect(r.status).toBe("no-match");
    expect(r.coverage.holes).toEqual([{ spanId: "span_1", why: "copy-lost" }]);
  });

  it("a store that fails makes its pruned spans holes to retry, and the search is still answered and audited", async () => {
    let fail = false;
    const { win } = setup({
      store: (inner) => withSearch(inner, (session, request) =>
        fail ? Promise.reject(new Error("connection reset")) : inner.searchCopies(session, request)),
    });
    const ref = await win.append({ kind: "tool", text: "abc" });
    await win.prune({ span: ref, mode: "drop" });
    fail = true;
    const r = searched(await win.search("abc"));
    expect(r.coverage.holes).toEqual([{ spanId: "span_1", why: "unavailable" }]);
    expect(r.text).toContain("span_1 could not be read now (store unreachable; retry)");
  });

  it("is scoped to the session: another session's copy of the same text is never a match", async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryStore({ name: "log", clock });
    const a = setup({ inner, session: "a" }).win;
    const b = setup({ inner, session: "b" }).win;
    const ra = await a.append({ kind: "tool", text: "shared-looking req_abcdef12" });
    await a.prune({ span: ra, mode: "drop" });
    const rb = await b.append({ kind: "tool", text: "other" });
    await b.prune({ span: rb, mode: "drop" });
    expect(searched(await b.search("req_abcdef12")).status).toBe("no-match");
    expect(searched(await a.search("req_abcdef12")).status).toBe("match");
  });

  it("bad queries are invalid outcomes, audited, the window unchanged", async () => {
    const { win } = setup();
    await win.append({ kind: "tool", text: "x" });
    const before = win.render();
    const bad: unknown[] = [
      { op: "search", query: "" },
      { op: "search", query: "x".repeat(201) },
      { op: "search", query: "a*", regex: true },
      { op: "search", query: "(unclosed", regex: true },
      { op: "search", query: "(?=lookahead)x", regex: true },
      { op: "search", query: "x", regex: "true" },
      { op: "search", query: "x", extra: 1 },
      { op: "search" },
    ];
    for (const d of bad) {
      const r = await win.applyDirective(d);
      expect({ d, status: r.status, op: r.op }).toEqual({ d, status: "invalid", op: "search" });
    }
    expect((await win.search({ query: "a?", regex: true })).status).toBe("invalid");
    const log = await win.auditLog();
    expect(log.filter((a) => a.status === "invalid")).toHaveLength(bad.length + 1);
    expect(win.render().startsWith(before)).toBe(true);
  });

  it("keeps every answer within the policy's token budget, counting what it leaves out", async () => {
    const { win } = setup({ searchTokens: 120 });
    for (let i = 0; i < 30; i++) {
      const ref = await win.append({ kind: "tool", text: `line ${i}: the needle is here, ${"padding ".repeat(20)}` });
      await win.prune({ span: ref, mode: "drop" });
    }
    for (let i = 0; i < 40; i++) await win.prune({ span: await win.append({ kind: "scratch", text: `s${i}` }), mode: "drop", acceptLossy: true });
    const r = searched(await win.search("needle"));
    expect(r.tokens).toBeLessThanOrEqual(120);
    expect(countTokens(r.text)).toBe(r.tokens);
    expect(r.matches.length + r.omitted).toBe(30);
    expect(r.omitted).toBeGreaterThan(0);
    expect(r.coverage.holes).toHaveLength(40);
    // Forty consecutive tombstones are one range.
    expect(r.text).toContain("span_31–span_70 are unrecoverable");
    expect(() => new ContextWindow({ session: "s", stores: {}, kinds: {}, limits: { searchTokens: 10 } })).toThrow(/searchTokens/);
  });

  // Finding 25.13: the budget holds for the final text, whatever the query costs to quote.
  it("keeps the answer within the budget for queries that cost several tokens a character, cut on code points", async () => {
    const fc = (await import("fast-check")).default;
    const { win } = setup({ searchTokens: 64 });
    for (let i = 0; i < 12; i++) await win.prune({ span: await win.append({ kind: "scratch", text: `s${i * 2}` }), mode: "drop", acceptLossy: true });
    await win.append({ kind: "tool", text: "🦀🧪 emoji text 𝒳𝒴" });
    const hostile = fc.array(fc.constantFrom("🦀", "🧪", "𝒳", "\u{1F3F3}\u{FE0F}\u200D\u{1F308}", "ア", "ü", "a", "\n"), { minLength: 1, maxLength: 100 }).map((a) => a.join(""));
    await fc.assert(
      fc.asyncProperty(hostile, async (q) => {
        const r = searched(await win.search({ query: q.slice(0, 200) }));
        expect(r.tokens).toBeLessThanOrEqual(64);
        expect(r.text.isWellFormed()).toBe(true);
      }),
      { numRuns: 150 },
    );
    const emoji = searched(await win.search({ query: "🦀".repeat(60) }));
    expect(emoji.tokens).toBeLessThanOrEqual(64);
    expect(emoji.text).toContain("unrecoverable");
  });

  it("stays fast on hostile text and patterns: a megabyte of near-misses, a pattern that backtracks elsewhere", async () => {
    const { win } = setup();
    const hostile = `${"a".repeat(1_000_000)}!`;
    const ref = await win.append({ kind: "tool", text: hostile });
    await win.prune({ span: ref, mode: "drop" });
    const t0 = performance.now();
    const r = searched(await win.search({ query: "(a|aa)+$", regex: true }));
    const slow = searched(await win.search({ query: "(?:a+)+b", regex: true }));
    const elapsed = performance.now() - t0;
    expect(r.status).toBe("no-match");
    expect(slow.status).toBe("no-match");
    // A backtracking engine would not finish; linear time is well under a few seconds even on a loaded machine.
    expect(elapsed).toBeLessThan(20_000);
    const m = searched(await win.search({ query: "a!", regex: true }));
    expect(m.matches[0]!.snippet.length).toBeLessThan(100);
  });
});

describe("requiredLiteral (what a store's index is asked for)", () => {
  it("reads the longest run every match contains, and gives up when unsure", () => {
    const cases: Array<[string, string | null]> = [
      ["req_[0-9a-f]{10}", "req_"],
      ["X-Request-Id: (\\w+)", "X-Request-Id: "],
      ["abc?de", "ab"],
      ["ab{0,2}cdef", "cdef"],
      ["a|bcd", null],
      ["(?i)error", null],
      ["\\d+ms timeout", "ms timeout"],
      ["E10\\.42", "E10.42"],
      ["[abc]+xyz", "xyz"],
      ["(foo)?barbaz", "barbaz"],
      ["\\Qa.b\\E", null],
      ["\\x41BC", "BC"],
    ];
    for (const [pattern, literal] of cases) expect({ pattern, literal: requiredLiteral(pattern) }).toEqual({ pattern, literal });
  });
});

describe("requiredLiteral is sound: whenever a pattern matches, the text holds its literal", () => {
  it("on generated patterns and texts", async () => {
    const fc = (await import("fast-check")).default;
    const { compileQuery } = await import("../../src/search/query.js");
    const atom = fc.oneof(
      fc.constantFrom("a", "b", "c", "_", "-", "\\.", "\\d", "\\w", ".", "[ab]", "[^c]", "(ab|c)", "(?:b)", "\\x61", "\\b", "^", "$", "{", "}", "\\{"),
      fc.constantFrom("ab", "abc", "ca"),
    );
    const quant = fc.constantFrom("", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,}", "??", "+?");
    const pattern = fc.array(fc.tuple(atom, quant).map(([a, q]) => a + q), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(""));
    const text = fc.stringMatching(/^[abc_\-.0-9 {}]{0,24}$/);
    fc.assert(
      fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 8 }), (p, texts) => {
        const compiled = compileQuery(p, true);
        if (!compiled.ok || compiled.query.type !== "regex") return;
        const lit = compiled.query.literal;
        if (lit === null) return;
        for (const t of texts) {
          if (compiled.query.matcher.matcher(t).find()) expect({ p, t, lit, holds: t.includes(lit) }).toEqual({ p, t, lit, holds: true });
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe("search as a provider tool", () => {
  it("a strict-mode call (nulls for absent fields) is answered with the search text", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "tool", text: "X-Request-Id: req_7f3a9c2e41" });
    await win.prune({ span: ref, mode: "drop" });
    const r = await win.handleToolCall({ name: "search", arguments: JSON.stringify({ query: "req_7f3a", regex: null }) });
    expect(r?.isError).toBe(false);
    expect(r?.text).toMatch(/^search "req_7f3a": 1 span match\n- span_1 tool \(pruned, recall #1\)/);
    const bad = await win.handleToolCall({ name: "search", arguments: { query: "a*", regex: true } });
    expect(bad?.isError).toBe(true);
  });
});

// Finding 25.2: linear time is not enough; a search's cost is bounded in program size and in work.
describe("search cost is bounded in size and in work", () => {
  /** 12 KB of base64, as a tool that prints a blob would: every character a `\w` or `[+/=]`. */
  const blob = (seed: number) => Buffer.from(Array.from({ length: 9000 }, (_, i) => (i * 7919 + seed * 131) % 256)).toString("base64");

  it("the reported pattern (175 characters, ~60,000 instructions) is refused as invalid, audited, window unchanged", async () => {
    const { win } = setup();
    await win.append({ kind: "tool", text: blob(1) });
    const before = win.render();
    const pattern = `${"(?:\\w|\\w\\w|[+/=]|\\w\\w\\w){999}".repeat(6)}.`;
    expect(pattern.length).toBeLessThanOrEqual(200);
    const r = await win.applyDirective({ op: "search", query: pattern, regex: true });
    expect(r.status).toBe("invalid");
    expect(JSON.stringify(r)).toMatch(/compiles to \d+ instructions, more than 1000/);
    expect(win.render().startsWith(before)).toBe(true);
    expect((await win.auditLog()).at(-1)).toMatchObject({ op: "search", status: "invalid" });
  });

  it("a costly pattern within the bound reads spans until its work is spent, then says how many it did not read", async () => {
    const { win } = setup();
    for (let i = 0; i < 60; i++) await win.append({ kind: "tool", text: blob(i) });
    // ~600 instructions, no required literal, no match: the NFA's worst case on every character.
    const pattern = "(?:\\w|\\w\\w|[+/=]|\\w\\w\\w){60}[!@]";
    const compiled = compileQuery(pattern, true);
    if (!compiled.ok || compiled.query.type !== "regex") throw new Error("expected a regex");
    const perSpan = blob(0).length * compiled.query.program;
    const r = searched(await win.search({ query: pattern, regex: true }));
    expect(r.status).toBe("no-match");
    expect(r.coverage.live).toBe(Math.floor(SEARCH_WORK_UNITS / perSpan));
    expect(r.coverage.live + r.coverage.unread).toBe(60);
    expect(r.text).toContain(`${r.coverage.unread} spans were not read: the pattern costs too much for their length`);
    expect(r.text).not.toContain("nothing pruned is unrecoverable");
    // A substring, or a pattern with a literal the blobs lack, reads everything and costs nothing against the bound.
    expect(searched(await win.search({ query: "!@" })).coverage).toMatchObject({ live: 60, unread: 0 });
    expect(searched(await win.search({ query: "(?:\\w|\\w\\w){60}#!", regex: true })).coverage).toMatchObject({ live: 60, unread: 0 });
  });

  it("the scanner charges text length × program size, and never runs past its bound", () => {
    const compiled = compileQuery("\\w{2,}z", true);
    if (!compiled.ok || compiled.query.type !== "regex") throw new Error("expected a regex");
    const { program } = compiled.query;
    const scan = scanner(compiled.query, 10 * program + 5);
    expect(scan("abcdez")).toEqual({ start: 0, end: 6 }); // 6 × program spent
    expect(scan("abcdez")).toBe("unread"); // 6 more would pass the bound
    expect(scan("abz")).toEqual({ start: 0, end: 3 }); // 3 fit
    expect(scan("abcd")).toBe(null); // no `z`: the required literal answers, free
  });

  it("compiled queries and pins are cached with a bound: old ones are let go", () => {
    const first = compileQuery("req_[0-9a-f]{8}", true);
    expect(compileQuery("req_[0-9a-f]{8}", true)).toBe(first);
    for (let i = 0; i < 8; i++) compileQuery(`other_${i}[0-9]+`, true);
    expect(compileQuery("req_[0-9a-f]{8}", true)).not.toBe(first);
    const pin = compilePinPattern("pin_a[0-9]+");
    expect(compilePinPattern("pin_a[0-9]+")).toBe(pin);
    for (let i = 0; i < 300; i++) compilePinPattern(`pin_${i}_[0-9]+`);
    expect(compilePinPattern("pin_a[0-9]+")).not.toBe(pin);
  });
});

// Finding 25.14: a pattern that can match the empty string is found by walking the engine's own program.
describe("empty-match refusal by the engine's analysis", () => {
  it("refuses lookbehinds, assertions and optional patterns; accepts a lookbehind before a character", () => {
    for (const p of ["(?<=q)", "(?<!q)", "\\b", "^", "$", "(?:)|a", "a*", "(?<=q)\\b", "(?:x?){3}", "(?m)^$"]) {
      const c = compileQuery(p, true);
      expect({ p, ok: c.ok }).toEqual({ p, ok: false });
      if (!c.ok) expect(c.message).toContain("can match the empty string");
    }
    for (const p of ["(?<=q)x", "\\bq", "a+", "(?<=q)\\w"]) expect({ p, ok: compileQuery(p, true).ok }).toEqual({ p, ok: true });
  });

  it("no accepted pattern ever matches the empty string, on generated patterns and texts", async () => {
    const fc = (await import("fast-check")).default;
    const atom = fc.constantFrom("a", "b", "q", "\\w", ".", "[ab]", "(ab|c)", "(?:b)", "\\b", "\\B", "^", "$", "(?<=q)", "(?<=a|b)", "(?<!a)");
    const quant = fc.constantFrom("", "", "?", "*", "+", "{0,2}", "{1,}");
    const pattern = fc.array(fc.tuple(atom, quant).map(([a, q]) => a + q), { minLength: 1, maxLength: 5 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(pattern, fc.array(fc.stringMatching(/^[abcq \n]{0,12}$/), { minLength: 1, maxLength: 6 }), (p, texts) => {
        const compiled = compileQuery(p, true);
        if (!compiled.ok || compiled.query.type !== "regex") return;
        for (const t of texts) {
          const m = compiled.query.matcher.matcher(t);
          for (let at = 0; at <= t.length && m.find(at); at = m.end() + 1) expect({ p, t, empty: m.end() === m.start() }).toEqual({ p, t, empty: false });
        }
      }),
      { numRuns: 2000 },
    );
  });
});

// Finding 25.3: coverage comes from everything the window and the stores know.
describe("search coverage never hides a hole the window or a store knows of", () => {
  async function sqliteSetup() {
    const clock = new ManualClock(0);
    const { log, sql } = sqliteFile(clock, "search-holes");
    const open = () => new ContextWindow({ session: "s", clock, stores: { log }, kinds: KINDS });
    return { clock, log, open, sql };
  }

  it("a copy deleted or altered behind the runtime is named, whether or not the window has noticed", async () => {
    const { open, sql, log } = await sqliteSetup();
    const win = open();
    const refs = [];
    for (const t of ["alpha req_aaaaaa01", "beta req_bbbbbb02", "gamma req_cccccc03"]) refs.push(await win.append({ kind: "tool", text: t }));
    for (const r of refs) await win.prune({ span: r, mode: "drop" });
    // Applied now: a prune still pending when its copy is found lost is not applied at all (test/window/lapse.test.ts).
    await win.compact();
    sql("DELETE FROM pruneguard_records WHERE span_id = ?", "span_1");
    sql("UPDATE pruneguard_records SET text = 'forged', hash = ? WHERE span_id = ?", "0".repeat(64), "span_2");
    const r = searched(await win.search("req_"));
    expect(r.matches.map((m) => m.spanId)).toEqual(["span_3"]);
    expect(r.coverage.holes).toEqual([{ spanId: "span_1", why: "copy-lost" }, { spanId: "span_2", why: "copy-lost" }]);
    expect(r.text).not.toContain("nothing pruned is unrecoverable");
    // Once a recall has found the loss, the window names it without asking the store.
    expect((await win.recall("span_1")).status).not.toBe("found");
    const again = searched(await win.search("absent-literal"));
    expect(again.coverage.holes.map((h) => h.spanId)).toEqual(["span_1", "span_2"]);
    await log.close();
  });

  it("a span another window of the session appended and tombstoned is named as not searched here", async () => {
    const { open, log } = await sqliteSetup();
    const a = open();
    await a.append({ kind: "tool", text: "first" });
    const b = await ContextWindow.resume({ session: "s", clock: new ManualClock(0), stores: { log }, kinds: KINDS });
    const ref = await b.append({ kind: "scratch", text: "only b saw req_deadbeef" });
    await b.prune({ span: ref, mode: "drop", acceptLossy: true });
    const r = searched(await a.search("req_deadbeef"));
    expect(r.status).toBe("no-match");
    expect(r.coverage.holes).toEqual([{ spanId: "span_2", why: "elsewhere" }]);
    expect(r.text).toContain("span_2 is another window's of this session, not searched here");
    expect(r.text).not.toContain("nothing pruned is unrecoverable");
    await log.close();
  });

  it("reads the registry only when the session has spans the window does not know", async () => {
    const { open, log } = await sqliteSetup();
    let reads = 0;
    const sessionSpans = log.sessionSpans.bind(log);
    log.sessionSpans = async (session: string) => (reads++, sessionSpans(session));
    const a = open();
    const first = await a.append({ kind: "tool", text: "first req_aaaaaa01" });
    await a.prune({ span: first, mode: "drop" });
    await a.append({ kind: "tool", text: "second" });
    // Every span of the session is this window's: one counter read, no registry read, and nothing named elsewhere.
    const known = searched(await a.search("req_aaaaaa01"));
    expect(known.matches.map((m) => m.spanId)).toEqual(["span_1"]);
    expect(known.coverage.holes).toEqual([]);
    expect(reads).toBe(0);
    // Another window of the session appends: the count no longer matches, the registry is read, its span named.
    const b = await ContextWindow.resume({ session: "s", clock: new ManualClock(0), stores: { log }, kinds: KINDS });
    await b.append({ kind: "tool", text: "b's own" });
    reads = 0;
    const r = searched(await a.search("req_aaaaaa01"));
    expect(r.coverage.holes).toEqual([{ spanId: "span_3", why: "elsewhere" }]);
    expect(reads).toBe(1);
    // b resumed with every span: it knows all three, so it reads no registry either.
    reads = 0;
    expect(searched(await b.search("second")).coverage.holes).toEqual([]);
    expect(reads).toBe(0);
    await log.close();
  });

  it("a literal holding a NUL finds the copy on SQLite that holds it", async () => {
    const { open, log } = await sqliteSetup();
    const win = open();
    const ref = await win.append({ kind: "tool", text: "binary\0req_nul123 tail" });
    await win.prune({ span: ref, mode: "drop" });
    const r = searched(await win.search("\0req_nul"));
    // On every supported Node: Node 22's node:sqlite reads text only up to a NUL, so the store reads span text
    // as bytes there (src/stores/sqlite/sqlite-text.ts, `TextColumn`).
    expect(r.matches.map((m) => [m.spanId, m.source])).toEqual([["span_1", "copy"]]);
    expect(r.coverage.holes).toEqual([]);
    expect(await win.recall("span_1")).toMatchObject({ status: "found", text: "binary\0req_nul123 tail" });
    await log.close();
  });
});

// Finding 25.15: a search reads this window's copies by handle, so its cost cannot tell what other sessions hold.
describe("search cost is independent of other sessions' data", () => {
  it("the store is asked only about the window's pruned copies, and SQLite reads them through the handle index", async () => {
    const asked: unknown[] = [];
    const { win } = setup({ store: (inner) => withSearch(inner, async (session, request) => (asked.push(request.copies), inner.searchCopies(session, request))) });
    await win.append({ kind: "tool", text: "live req_1111111" });
    const ref = await win.append({ kind: "tool", text: "pruned req_2222222" });
    await win.prune({ span: ref, mode: "drop" });
    await win.search("req_");
    expect(asked).toEqual([[{ handle: "#2", hash: contentHash("pruned req_2222222") }]]);
    const { DatabaseSync } = await import("node:sqlite");
    const { SqliteStore } = await import("../../src/stores/sqlite/sqlite-store.js");
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const path = join(mkdtempSync(join(tmpdir(), "pruneguard-plan-")), "agent.db");
    await new SqliteStore({ name: "log", path }).close();
    // The statement the store runs, planned on the store's own schema.
    const db = new DatabaseSync(path);
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT handle, span_id AS spanId, kind, hash, text IS NULL AS rotated,
                CASE WHEN text IS NOT NULL AND instr(text, ?1) > 0 THEN text END AS text
         FROM pruneguard_records WHERE store = ?2 AND session = ?3 AND handle IN (SELECT value FROM json_each(?4))`)
      .all("x", "log", "s", "[]") as Array<{ detail: string }>;
    // From 512 copies the store walks the session's records instead: by index too, this session's rows only.
    const walk = db
      .prepare(`EXPLAIN QUERY PLAN SELECT handle, span_id AS spanId, kind, hash, text IS NULL AS rotated,
                CASE WHEN text IS NOT NULL AND instr(text, ?1) > 0 THEN text END AS text
         FROM pruneguard_records WHERE store = ?2 AND session = ?3`)
      .all("x", "log", "s") as Array<{ detail: string }>;
    db.close();
    expect(plan.map((p) => p.detail).join("\n")).toMatch(/USING (?:COVERING )?INDEX \S+ \(store=\? AND session=\? AND handle=\?\)/);
    expect(walk.map((p) => p.detail).join("\n")).toMatch(/^SEARCH \S+ USING (?:COVERING )?INDEX \S+ \(store=\? AND session=\?\)$/);
  });
});
