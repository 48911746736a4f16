// Pins run on every pruned span of untrusted tool output, so no pattern may take more than linear
// time. These tests run the shapes that make backtracking engines exponential, generated at random,
// on adversarial inputs; the per-call budget is seconds where a linear scan takes milliseconds and a
// backtracking one would take years.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { presetPins } from "../../dsl/pins.js";
import { compilePinPattern } from "../../src/policy/pins.js";
import { findPins } from "../../src/pin-carry.js";
import type { PinPattern } from "../../src/types.js";

/** Generous for a loaded two-core machine: a linear scan of these inputs takes a few milliseconds. */
const BUDGET_MS = 3_000;

function timed(text: string, patterns: readonly PinPattern[]): number {
  const started = performance.now();
  findPins(text, patterns);
  return performance.now() - started;
}

/** Regular-expression sources built from atoms, nested repetition and ambiguous alternation. */
const atom = fc.constantFrom("a", "\\d", "\\w", "[a-z]", ".", "(?:a|a)", "(?:a|ab)", "\\.", "-", "[0-9a-f]");
const quantifier = fc.constantFrom("+", "*", "?", "{1,30}", "{2,}", "{0,5}");
const regex: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    atom,
    fc.tuple(tie("node"), quantifier).map(([body, q]) => `(?:${body})${q}`),
    fc.tuple(tie("node"), tie("node")).map(([a, b]) => `${a}${b}`),
    fc.tuple(tie("node"), tie("node")).map(([a, b]) => `(?:${a}|${b})`),
  ),
})).node;

/** Inputs that make backtracking engines try every split: long runs of near-misses. */
const input = fc
  .tuple(fc.constantFrom("a", "0", "ab", "a.", "1a", "x-", "a_", "9f"), fc.integer({ min: 1_000, max: 20_000 }), fc.constantFrom("", "!", "@corp.example", "c"))
  .map(([unit, times, tail]) => unit.repeat(times) + tail);

describe("pins run in linear time", () => {
  it("property: generated patterns with nested and ambiguous repetition stay within the budget", () => {
    fc.assert(
      fc.property(regex, input, (source, text) => {
        // Ends with a literal that never occurs, so the engine must consider every split.
        const pattern = `${source}@corp\\.example!`;
        fc.pre(compilePinPattern(pattern).ok);
        expect(timed(text, [{ name: "generated", pattern }])).toBeLessThan(BUDGET_MS);
      }),
      { numRuns: 60 },
    );
  });

  it.each([
    ["(?:(?:\\w|\\d)\\.?)+@corp\\.example", "1".repeat(50_000)],
    ["(?:(?:a|a)b?)+c", "a".repeat(50_000)],
    ["(a|a){1,100}c", "a".repeat(50_000)],
    ["(?:a{1,30}){1,30}c", "a".repeat(50_000)],
    ["(\\w+)+-\\d", "a".repeat(50_000)],
  ])("the pattern %s, which hangs a backtracking engine, scans 50k adversarial characters within the budget", (pattern, text) => {
    expect(compilePinPattern(pattern).ok).toBe(true);
    expect(timed(text, [{ name: "custom", pattern }])).toBeLessThan(BUDGET_MS);
  });

  it("every preset scans a megabyte of near-miss runs within the budget", () => {
    const fillers = ["a".repeat(200_000), "0a".repeat(100_000), "req_".repeat(50_000), "/a".repeat(100_000), "A-".repeat(100_000), "File \"".repeat(30_000), "a.".repeat(100_000)];
    for (const [name, preset] of Object.entries(presetPins)) {
      for (const text of fillers) expect(timed(text, [preset]), `${name} on ${JSON.stringify(text.slice(0, 8))}…`).toBeLessThan(BUDGET_MS);
    }
  });
});
