import fc from "fast-check";
import { countTokens } from "../../src/tokens.js";
import { describe, expect, it } from "vitest";
import { pin, pins } from "../../dsl/pins.js";
import { CARRIED_PINS_PREFIX, carryPins, carryScanned, containsPin, findPins } from "../../src/pin-carry.js";
import { ALL_PRESETS, EXPECTED_PINS, LOSSY_DIGEST, loadCorpus } from "./corpus.js";

describe("findPins", () => {
  it("returns distinct matches in first-seen order across patterns", () => {
    const text = "E1042 then req_8f3a2c then E1042 again, then HTTP 503 and req_8f3a2c";
    expect(findPins(text, [pins.requestId, pins.errorCode, pins.httpStatus])).toEqual(["E1042", "req_8f3a2c", "HTTP 503"]);
  });

  it("lists an identifier two presets both match once", () => {
    // A 32-hex trace id is also a plausible SHA.
    expect(findPins("trace 4bf92f3577b34da6a3ce929d0e0e4736", [pins.gitSha, pins.traceId])).toEqual([
      "4bf92f3577b34da6a3ce929d0e0e4736",
    ]);
  });

  it("caps distinct matches per pattern", () => {
    const text = Array.from({ length: 10 }, (_, i) => `E10${i}0`).join(" ");
    expect(findPins(text, [pins.errorCode], { maxMatchesPerPattern: 3 })).toEqual(["E1000", "E1010", "E1020"]);
  });

  it("scans the head and the tail of a text longer than maxScanChars", () => {
    const text = `E1001 ${"x ".repeat(50_000)}E2002 ${"y ".repeat(50_000)}E3003`;
    expect(findPins(text, [pins.errorCode], { maxScanChars: 1_000 })).toEqual(["E1001", "E3003"]);
    expect(findPins(text, [pins.errorCode])).toEqual(["E1001", "E2002", "E3003"]);
  });

  it("refuses a pattern the engine cannot run that bypassed the compiler, instead of skipping it", () => {
    expect(() => findPins("ab", [{ name: "bad", pattern: "a(?=b)" }])).toThrow(/pin "bad" cannot run: .*lookahead/);
  });

  it("pins the first capture group that took part, and nothing for a match where none did", () => {
    const p = { name: "ord", pattern: "\\b(?:ord_test|(ord_\\d+))(?:\\s|$)" };
    expect(findPins("ord_test ord_12 ord_34", [p])).toEqual(["ord_12", "ord_34"]);
  });
});

describe("containsPin", () => {
  it("matches whole tokens only at word-character edges", () => {
    expect(containsPin("code E1042 seen", "E1042")).toBe(true);
    expect(containsPin("code E10423 seen", "E1042")).toBe(false);
    expect(containsPin("(HTTP 503)", "HTTP 503")).toBe(true);
    expect(containsPin("at /app/x.js:1:2", "/app/x.js:1:2")).toBe(true);
    expect(containsPin("xE1042", "E1042")).toBe(false);
    expect(containsPin("éE1042", "E1042")).toBe(false);
  });
});

describe("carryPins", () => {
  const original = "POST /v1/checkout failed: HTTP 503, request_id=req_8f3a2c, E1042 at src/db/pool.ts:88:14";

  it("appends the missing identifiers as one compact line and reports its token cost", () => {
    const result = carryPins(original, LOSSY_DIGEST, ALL_PRESETS);
    expect(result.text).toBe(`${LOSSY_DIGEST}\nids: HTTP 503, req_8f3a2c, E1042, src/db/pool.ts:88:14`);
    expect(result.carried).toEqual(["HTTP 503", "req_8f3a2c", "E1042", "src/db/pool.ts:88:14"]);
    expect(result.tokens).toBe(countTokens("\nids: HTTP 503, req_8f3a2c, E1042, src/db/pool.ts:88:14"));
    expect(result.capped).toBe(false);
  });

  it("returns the replacement itself when nothing is missing", () => {
    const digest = "checkout got HTTP 503 (req_8f3a2c, E1042) from src/db/pool.ts:88:14";
    const result = carryPins(original, digest, ALL_PRESETS);
    expect(result.text).toBe(digest);
    expect(result).toMatchObject({ carried: [], tokens: 0 });
  });

  it("carries only what is missing, and does not repeat an id contained in another carried one", () => {
    const result = carryPins("E1042 in build/E1042.log and req_8f3a2c", "saw req_8f3a2c", ALL_PRESETS);
    expect(result.carried).toEqual(["build/E1042.log"]);
    expect(result.text).toBe("saw req_8f3a2c\nids: build/E1042.log");
  });

  it("does not add a newline to an empty replacement or one that ends with one", () => {
    expect(carryPins("E1042", "", ALL_PRESETS).text).toBe(`${CARRIED_PINS_PREFIX}E1042`);
    expect(carryPins("E1042", "digest\n", ALL_PRESETS).text).toBe(`digest\n${CARRIED_PINS_PREFIX}E1042`);
  });

  it("counts a text that spells a special token instead of throwing", () => {
    expect(carryPins("<|endoftext|> E1042", "gist", ALL_PRESETS).tokens).toBeGreaterThan(0);
    expect(countTokens("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("keeps every pinned identifier of every corpus file through the reference incident's digest", () => {
    for (const { name, text } of loadCorpus()) {
      const found = findPins(text, ALL_PRESETS);
      for (const id of EXPECTED_PINS[name] ?? []) expect(found, `${name} should pin ${id}`).toContain(id);
      const result = carryPins(text, LOSSY_DIGEST, ALL_PRESETS);
      for (const id of found) expect(containsPin(result.text, id), `${name}: ${id}`).toBe(true);
      expect(carryPins(text, result.text, ALL_PRESETS).text).toBe(result.text);
    }
  });

  describe("property: never loses a planted identifier, and is idempotent", () => {
    const hex = (min: number, max: number) =>
      fc.array(fc.constantFrom(..."0123456789abcdef"), { minLength: min, maxLength: max }).map((a) => a.join(""));
    const identifier = fc.oneof(
      hex(6, 10).map((h) => `req_${h}1`),
      fc.integer({ min: 1000, max: 99999 }).map((n) => `E${n}`),
      fc.uuid(),
      fc.constantFrom("PAY", "OPS", "DATA").chain((k) => fc.integer({ min: 1, max: 99999 }).map((n) => `${k}-${n}`)),
      fc.integer({ min: 100, max: 599 }).map((n) => `HTTP ${n}`),
      fc.constantFrom("src/a.ts:1:2", "/var/log/app/error.log", "./lib/x.py"),
    );
    const prose = fc.string({ unit: fc.constantFrom(..."abc xyz.,:\n-_/é😀"), maxLength: 40 });

    it("for random texts and digests", () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(prose, identifier), { minLength: 1, maxLength: 8 }), prose, (parts, digest) => {
          const original = parts.map(([p, id]) => `${p} ${id} `).join("");
          const planted = parts.map(([, id]) => id);
          const once = carryPins(original, digest, ALL_PRESETS);
          for (const id of planted) expect(containsPin(once.text, id), id).toBe(true);
          expect(carryPins(original, once.text, ALL_PRESETS).text).toBe(once.text);
          expect(once.tokens === 0).toBe(once.text === digest);
        }),
        { numRuns: 300, seed: 20261113 },
      );
    });

    it("with a custom case-insensitive pin", () => {
      const order = pin("orderId", /ord_[a-z0-9]{6}/i);
      fc.assert(
        fc.property(hex(6, 6), fc.boolean(), prose, (h, upper, digest) => {
          const id = upper ? `ORD_${h.toUpperCase()}` : `ord_${h}`;
          const original = `order ${id} failed`;
          const once = carryPins(original, digest, [order]);
          expect(containsPin(once.text, id)).toBe(true);
          expect(carryPins(original, once.text, [order]).text).toBe(once.text);
        }),
        { numRuns: 200, seed: 7 },
      );
    });
  });
});

/** What `carryScanned` carried before it was linear: every missing id compared with every other. */
function pairwiseCarried(ids: readonly string[], replacement: string): string[] {
  const missing = ids.filter((id) => !containsPin(replacement, id));
  return missing.filter((id) => !missing.some((other) => other !== id && containsPin(other, id)));
}

/** Calls of `String.prototype.indexOf` (what `containsPin` compares with) while `f` runs. */
function indexOfCalls(f: () => void): number {
  const original = String.prototype.indexOf;
  let calls = 0;
  String.prototype.indexOf = function (this: string, ...args: Parameters<typeof original>) {
    calls++;
    return original.apply(this, args);
  };
  try {
    f();
  } finally {
    String.prototype.indexOf = original;
  }
  return calls;
}

describe("carryScanned over many identifiers (a range summary's)", () => {
  const piece = fc.constantFrom("E1042", "req_8f3a2c", "src", "a", "x.ts", "é", "😀", "HTTP 503", "1:2", "log");
  const sep = fc.constantFrom("/", ".", ":", " ", "-", "_", "", "(", "é");
  const id = fc.array(fc.tuple(piece, sep), { minLength: 1, maxLength: 4 }).map((parts) => parts.map(([p, s]) => p + s).join("")).filter((s) => s.length > 0);

  it("property: carries exactly what comparing every pair carried (an id inside another carried one is not repeated)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(id, { maxLength: 30 }), fc.constantFrom("", "saw E1042", "digest with src/x.ts"), (ids, replacement) => {
        expect(carryScanned({ ids, capped: false }, replacement).carried).toEqual(pairwiseCarried(ids, replacement));
      }),
      { numRuns: 400, seed: 20260601 },
    );
  });

  it("is linear: 6,000 ids cost a few comparisons each, not one per pair (36 million)", () => {
    const ids = Array.from({ length: 6_000 }, (_, i) => (i % 3 === 0 ? `src/mod${i}/E${i}.ts:${i}:2` : i % 3 === 1 ? `E${i - 1}` : `req_${(0x10000000 + i).toString(16)}`));
    let carried: readonly string[] = [];
    const calls = indexOfCalls(() => {
      carried = carryScanned({ ids, capped: false }, "access logs").carried;
    });
    // Each E<n> is inside src/mod<n>/E<n>.ts:<n>:2: carried once, in the path.
    expect(carried).toHaveLength(4_000);
    expect(carried.some((c) => /^E\d+$/.test(c))).toBe(false);
    expect(calls).toBeLessThan(4 * ids.length);
  });
});

describe("findPins line by line", () => {
  it("matches within a line, with ^ and $ at its ends, LF or CRLF", () => {
    const p = { name: "deploy", pattern: "^deploy (\\d+)$" };
    expect(findPins("deploy 1\ndeploy 2\r\nx deploy 3\ndeploy 4", [p])).toEqual(["1", "2", "4"]);
    expect(findPins("a\nb", [{ name: "span", pattern: "a\\nb" }])).toEqual([]);
  });
});
