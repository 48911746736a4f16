/**
 * Token counting is exact on the text models and tools produce, and linear on any text: long runs of one
 * character class (the shape that makes BPE quadratic) are counted in pieces, within a token per piece.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { countTokens as exact } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { indexLine, indexLineTokens } from "../../src/render/lines.js";
import { countTokens, LONGEST_EXACT_RUN } from "../../src/tokens.js";

const AS_TEXT = { disallowedSpecial: new Set<string>() };
const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/tool-outputs");

describe("countTokens", () => {
  it("equals the tokenizer's own count on real tool outputs, also when they are long", () => {
    for (const file of readdirSync(fixtures)) {
      const text = readFileSync(path.join(fixtures, file), "utf8").repeat(20);
      expect(countTokens(text), file).toBe(exact(text, AS_TEXT));
    }
  });

  it("equals the tokenizer's own count on any text whose runs of one class are short", () => {
    const piece = fc.oneof(
      fc.constantFrom(" ", "  ", "\n", "\n\n", "\t", "\r\n", ". ", ", ", "/", "://", "==", "<|endoftext|>", "'s", "é", "日本", "🙂", "Ω"),
      fc.stringMatching(/^[A-Za-z]{1,12}$/),
      fc.stringMatching(/^[0-9]{1,9}$/),
      fc.string({ maxLength: 6, unit: "grapheme" }),
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 100, maxLength: 2500 }), (pieces) => {
        const text = pieces.join("");
        fc.pre(!new RegExp(`(\\p{L}{${LONGEST_EXACT_RUN},}|\\s{${LONGEST_EXACT_RUN},}|[^\\s\\p{L}\\p{N}]{${LONGEST_EXACT_RUN},})`, "u").test(text));
        expect(countTokens(text)).toBe(exact(text, AS_TEXT));
      }),
      { numRuns: 60 },
    );
  });

  it("counts a long run of one class within one token per piece of the exact count", () => {
    for (const unit of ["a", " ", "=", "7", "\n", "🙂", "é"]) {
      const text = unit.repeat(6000);
      const pieces = Math.ceil(text.length / LONGEST_EXACT_RUN);
      expect(Math.abs(countTokens(text) - exact(text, AS_TEXT)), JSON.stringify(unit)).toBeLessThanOrEqual(pieces);
    }
  });

  it("counts runs mixing astral and BMP characters within a token per piece, cutting only between code points", () => {
    // "=🙂" repeated puts some piece boundaries on the second half of a surrogate pair; the counter moves
    // those cuts by one code unit, since a split pair would be two replacement characters.
    const text = "=🙂".repeat(4000);
    const pieces = Math.ceil(text.length / LONGEST_EXACT_RUN);
    expect(Math.abs(countTokens(text) - exact(text, AS_TEXT))).toBeLessThanOrEqual(pieces);
    const edge = `${"x".repeat(LONGEST_EXACT_RUN - 1)}🙂`;
    expect(countTokens(edge)).toBe(exact(edge, AS_TEXT));
  });

  it("finishes on megabytes of adversarial text (a hang fails by the suite's timeout, not a clock)", () => {
    for (const unit of ["a", " ", "=", "ab", "\u0301"]) {
      const text = unit.repeat((1 << 20) / unit.length);
      expect(countTokens(text)).toBeGreaterThan(0);
    }
  });
});

describe("indexLineTokens: the index line's count from its shape", () => {
  /** Digit strings of 1 to `max` digits, leading zeros included. */
  const digits = (max: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: max }).map((d) => d.join(""));
  const letters = fc.array(fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz"), { maxLength: 4 }).map((l) => l.join(""));
  /** Hints as hint.ts makes them (its alphabet, words joined by single spaces), and any text at all. */
  const hint = fc.oneof(
    fc.constant(null),
    fc.array(fc.stringMatching(/^[A-Za-z0-9_.\/=:-]{1,12}$/), { minLength: 1, maxLength: 6 }).map((w) => w.join(" ")),
    fc.string({ maxLength: 40 }),
  );
  it("equals the tokenizer's count for every span id, handle and hint the window and stores make", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999_999 }), letters, digits(16), hint, (span, prefix, n, h) => {
        const [id, handle] = [`span_${span}`, `${prefix}#${n}`];
        const line = indexLine(id, handle, h);
        expect(indexLineTokens(id, handle, h), line).toBe(exact(line, AS_TEXT));
      }),
      { numRuns: 2000 },
    );
  });

  it("every 1-3 digit string, the fact the shape rests on, is one o200k token", () => {
    for (let i = 0; i < 1000; i++) {
      for (const s of new Set([String(i), String(i).padStart(2, "0"), String(i).padStart(3, "0")])) expect(exact(s, AS_TEXT), s).toBe(1);
    }
  });

  it("an id or handle of another shape is counted by the tokenizer", () => {
    for (const [id, handle] of [["span_7", "HANDLE#3"], ["span_x", "#3"], ["spän_7", "#3"], ["span_7", "#3 "], ["span_7", "abcde#12"], ["span_١٢", "#٣"]] as const) {
      expect(indexLineTokens(id, handle), `${id} ${handle}`).toBe(exact(indexLine(id, handle), AS_TEXT));
    }
  });
});
