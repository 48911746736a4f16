import { countTokens } from "../../src/tokens.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pins } from "../../dsl/pins.js";
import { compress } from "../../src/compress.js";
import { carryPins, containsPin, findPins } from "../../src/pin-carry.js";
import { ALL_PRESETS, LOSSY_DIGEST, loadCorpus } from "../pins/corpus.js";

/** A long CI log: 600 passing lines around one failure, the shape `compress` exists for. */
function longCiLog(eol = "\n"): string {
  const lines = ["Run npm test"];
  for (let i = 0; i < 600; i++) lines.push(`  ✓ ledger > case ${i} (${i % 17}ms)`);
  lines.splice(311, 0, "  ✗ orders > rejects duplicate: duplicate key (SQLSTATE 23505) request_id=req_77aa91f1");
  lines.push("##[error]Process completed with exit code 1. Tracked in PAY-1187.");
  return lines.join(eol) + eol;
}

/** The corpus file padded in the middle with noise, so every file needs compressing. */
function padded(text: string): string {
  const lines = text.split("\n");
  const mid = Math.floor(lines.length / 2);
  const noise = Array.from({ length: 200 }, (_, i) => `debug: heartbeat ${i} ok`);
  return [...lines.slice(0, mid), ...noise, ...lines.slice(mid)].join("\n");
}

describe("compress", () => {
  it("returns text that already fits unchanged", () => {
    const text = "short output\nE1042";
    const result = compress(text, { targetTokens: 100, pins: ALL_PRESETS });
    expect(result).toEqual({ text, tokens: countTokens(text), bodyTokens: countTokens(text), pinTokens: 0, carried: [], omittedLines: 0 });
    expect(compress("", { targetTokens: 1 }).text).toBe("");
  });

  it("keeps first and last lines, the failing line, and one marker per omitted run", () => {
    const text = longCiLog();
    const result = compress(text, { targetTokens: 200, pins: ALL_PRESETS });
    const out = result.text.split("\n");
    expect(out[0]).toBe("Run npm test");
    expect(result.text).toContain("##[error]Process completed with exit code 1. Tracked in PAY-1187.\n");
    expect(result.text).toContain("  ✗ orders > rejects duplicate: duplicate key (SQLSTATE 23505) request_id=req_77aa91f1\n");
    expect(result.text).toMatch(/^… \d+ lines omitted …$/mu);
    expect(result.omittedLines).toBeGreaterThan(500);
    expect(result.tokens).toBeLessThanOrEqual(200);
    expect(result.carried).toEqual([]);
    const omittedInMarkers = [...result.text.matchAll(/… (\d+) lines? omitted …/gu)].reduce((n, m) => n + Number(m[1]), 0);
    expect(omittedInMarkers).toBe(result.omittedLines);
  });

  it("is deterministic and within target across a range of targets", () => {
    const text = longCiLog();
    for (const target of [1, 5, 12, 40, 100, 333, 1000]) {
      const a = compress(text, { targetTokens: target, pins: ALL_PRESETS });
      const b = compress(text, { targetTokens: target, pins: ALL_PRESETS });
      expect(b).toEqual(a);
      expect(a.bodyTokens).toBeLessThanOrEqual(target);
      expect(a.tokens).toBe(countTokens(a.text));
      // The whole text fits unless the carried pins alone do not.
      if (a.pinTokens <= target) expect(a.tokens).toBeLessThanOrEqual(target);
      for (const id of findPins(text, ALL_PRESETS)) expect(containsPin(a.text, id), `${target}: ${id}`).toBe(true);
    }
  });

  it("keeps CRLF line endings byte-identical", () => {
    const result = compress(longCiLog("\r\n"), { targetTokens: 150, pins: ALL_PRESETS });
    expect(result.text.replace(/\r\n/gu, "")).not.toContain("\n");
    expect(result.text).toMatch(/^… \d+ lines omitted …\r$/mu);
    expect(result.text.startsWith("Run npm test\r\n")).toBe(true);
  });

  it("clips a single huge line in the middle and carries the pin it lost", () => {
    const text = `${"x".repeat(6000)} req_abc12345 ${"y".repeat(6000)}`;
    const result = compress(text, { targetTokens: 60, pins: [pins.requestId] });
    expect(result.text).toMatch(/^x+ … \d+ chars omitted … y+\nids: req_abc12345$/u);
    expect(result.omittedLines).toBe(0);
    expect(result.carried).toEqual(["req_abc12345"]);
    expect(result.tokens).toBeLessThanOrEqual(60);
  });

  it("never splits a code point when clipping unicode", () => {
    const text = "😀é中".repeat(4000);
    const result = compress(text, { targetTokens: 40 });
    expect(result.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u);
    expect(result.bodyTokens).toBeLessThanOrEqual(40);
    expect(Buffer.from(result.text, "utf8").toString("utf8")).toBe(result.text);
  });

  it("falls back to a marker when the target is tiny", () => {
    const result = compress(longCiLog(), { targetTokens: 1 });
    expect(result.bodyTokens).toBeLessThanOrEqual(1);
    expect(result.omittedLines).toBe(longCiLog().split("\n").length - 1);
  });

  it("rejects a target that is not a positive integer", () => {
    for (const bad of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => compress("x", { targetTokens: bad })).toThrow(RangeError);
    }
  });
});

describe("the tool-output corpus", () => {
  const corpus = loadCorpus();

  it("keeps every pinned identifier through compress, within target, deterministically", () => {
    for (const { name, text } of corpus) {
      for (const source of [text, padded(text)]) {
        const target = Math.max(40, Math.floor(countTokens(source) / 3));
        const result = compress(source, { targetTokens: target, pins: ALL_PRESETS });
        expect(compress(source, { targetTokens: target, pins: ALL_PRESETS })).toEqual(result);
        expect(result.bodyTokens, name).toBeLessThanOrEqual(target);
        // Identifiers win over the target only when they alone do not fit (go-panic.txt's three long paths).
        if (result.pinTokens <= target) expect(result.tokens, name).toBeLessThanOrEqual(target);
        for (const id of findPins(source, ALL_PRESETS)) expect(containsPin(result.text, id), `${name}: ${id}`).toBe(true);
      }
    }
  });

  it("reports the token cost of carried pins", () => {
    const rows = corpus.map(({ name, text }) => {
      const digest = carryPins(text, LOSSY_DIGEST, ALL_PRESETS);
      const target = Math.max(40, Math.floor(countTokens(padded(text)) / 3));
      const compressed = compress(padded(text), { targetTokens: target, pins: ALL_PRESETS });
      return {
        file: name,
        originalTokens: countTokens(text),
        digestCarried: digest.carried.length,
        digestPinTokens: digest.tokens,
        compressTarget: target,
        compressCarried: compressed.carried.length,
        compressPinTokens: compressed.pinTokens,
      };
    });
    const total = rows.reduce((n, r) => n + r.digestPinTokens, 0);
    console.table(rows);
    console.log(`carried-pin suffix after the lossy digest: ${total} tokens over ${rows.length} files (mean ${(total / rows.length).toFixed(1)})`);
    for (const r of rows) {
      // Carrying must stay compact next to what was pruned.
      expect(r.digestPinTokens).toBeLessThan(r.originalTokens / 2);
      expect(r.digestCarried).toBeGreaterThan(0);
    }
  });
});

describe("compress with pins against compress without", () => {
  const NOISE = ["  ✓ case passed (3ms)", "debug: heartbeat ok", "collecting metrics", "GET /health 200 1ms", "retrying in 100 ms"];
  const ERRORS = ["Error: upstream failed", "FATAL: connection refused", "Traceback (most recent call last):"];
  const ID_LINES = [
    (n: number) => `  request_id=req_${(1000 + n).toString(36)}a${n}`,
    (n: number) => `  code E${1000 + n} at src/app/mod${n}.ts:${n + 1}:3`,
    (n: number) => `  commit ${(0xabc0000 + n * 7919).toString(16)}1 failed`,
    (n: number) => `json.decoder.JSONDecodeError: Expecting value: line ${n} column 1`,
  ];
  const line = fc.oneof(
    fc.constantFrom(...NOISE),
    fc.constantFrom(...ERRORS),
    fc.tuple(fc.integer({ min: 0, max: ID_LINES.length - 1 }), fc.integer({ min: 0, max: 5000 })).map(([k, n]) => ID_LINES[k]!(n)),
  );

  it("property: never keeps fewer pinned identifiers, and stays within target when the pins fit", () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 5, maxLength: 120 }), fc.integer({ min: 8, max: 400 }), (lines, target) => {
        const text = lines.join("\n");
        const ids = findPins(text, ALL_PRESETS);
        const kept = (out: string) => ids.filter((id) => containsPin(out, id)).length;
        const without = compress(text, { targetTokens: target });
        const withPins = compress(text, { targetTokens: target, pins: ALL_PRESETS });
        expect(kept(withPins.text)).toBeGreaterThanOrEqual(kept(without.text));
        expect(kept(withPins.text)).toBe(ids.length);
        if (withPins.pinTokens <= target / 2) expect(withPins.tokens).toBeLessThanOrEqual(target);
      }),
      { numRuns: 150 },
    );
  });

  it("keeps the error line a Python traceback ends with whenever compress without pins keeps it", () => {
    const frames = Array.from({ length: 3 }, (_, i) => `  File "/srv/app/pkg/mod${i}.py", line ${i + 10}, in step${i}\n    return step${i + 1}(payload)`);
    const noise = Array.from({ length: 60 }, (_, i) => `DEBUG decoder: read chunk ${i} of 60 (4096 bytes)`);
    const error = "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)";
    let compared = 0;
    for (const text of [[...noise, ...frames, error], [...noise, ...frames, error, "exit status 1"], [...frames, error]].map((ls) => ["Traceback (most recent call last):", ...ls].join("\n"))) for (let target = 30; target <= 200; target += 5) {
      const without = compress(text, { targetTokens: target });
      const withPins = compress(text, { targetTokens: target, pins: [pins.filePath] });
      if (withPins.pinTokens > target / 3 || !without.text.includes(error)) continue;
      compared++;
      expect(withPins.text, `target ${target}`).toContain(error);
      expect(withPins.tokens).toBeLessThanOrEqual(target);
    }
    expect(compared).toBeGreaterThan(30);
  });
});

// Issue 24, item 6: a grep output whose first hit is the one asked about later keeps that line, not only its id.
describe("compress keeps each pinned identifier's first line", () => {
  it("the first occurrence's line stays in the body, ahead of later lines", () => {
    // Every hit carries a request id; the first is the one a later question is about.
    const lines = [
      "$ grep -rn 502 logs/",
      ...Array.from({ length: 24 }, (_, i) => `logs/api.log:${100 + i}: upstream answered 502 Bad Gateway, X-Request-Id: req_${(0x1a2b3c4d + i * 977).toString(16)}`),
      "24 matches",
    ];
    const r = compress(lines.join("\n"), { targetTokens: 300, pins: [pins.requestId] });
    expect(r.text).toContain(lines[1]);
    expect(r.tokens).toBeLessThanOrEqual(300);
  });
});
