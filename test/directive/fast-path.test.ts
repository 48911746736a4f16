/**
 * The directive parser's zod-free fast path accepts only what the schema accepts, and returns exactly what
 * the schema returns (same values, same keys, same key order); everything else falls through to the schema,
 * so outcomes and error messages do not depend on which path ran.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, directiveSchema, fastDirective, parseDirective, type DirectiveLimits } from "../../src/directive.js";

const TIGHT: DirectiveLimits = { maxDigestChars: 5, maxDirectiveChars: 64_000, maxQueryChars: 200 };
const [defaultSchema, tightSchema] = [directiveSchema(DEFAULT_LIMITS), directiveSchema(TIGHT)];

/** Values near every rule's edge, weighted so that a good share of the objects are well-formed. */
const op = fc.oneof(
  { weight: 8, arbitrary: fc.constant<unknown>("prune") },
  { weight: 4, arbitrary: fc.constant<unknown>("recall") },
  { weight: 1, arbitrary: fc.constantFrom<unknown>("Prune", "prune ", "", null, 1, true, ["prune"]) },
);
const spanId = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 999_999_999 }).map((n) => `span_${n}`) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("", "t", "ab", "wxyz"), fc.integer({ min: 1 })).map(([p, n]) => `${p}#${n}`) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>("span_0", "span_01", "span_1234567890", "spаn_7", "span_7 ", "SPAN_7", "#0", "abcde#9", "#12345678901234567", "", 7, null) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const mode = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<unknown>("drop", "summarize", "compress") },
  { weight: 1, arbitrary: fc.constantFrom<unknown>("Drop", "", null, 0, ["drop"]) },
);
const digest = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constant<unknown>(null) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>("x".repeat(8_000), "x".repeat(8_001), 5, { text: "x" }) },
);
const acceptLossy = fc.oneof(
  { weight: 4, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant<unknown>(null) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>("true", 1, 0, "yes", [true]) },
);
const extra = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom("x", "__proto__", "constructor", "toString", "op ", "Op", "spanId", "acceptLossy"), fc.jsonValue({ maxDepth: 1 })) },
);
/** Present most of the time (`often`) or about half the time. */
const often = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 10 });
const sometimes = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 });

/** A directive-shaped object as JSON text, keys in any order, each field present or not. */
const directiveText = fc
  .record({
    op: often(op),
    span_id: often(spanId),
    mode: often(mode),
    digest: sometimes(digest),
    accept_lossy: sometimes(acceptLossy),
    extra,
  })
  .chain((r) => {
    const entries: Array<[string, unknown]> = Object.entries(r).filter(([k, v]) => k !== "extra" && v !== undefined);
    if (r.extra !== undefined) entries.push(r.extra);
    return fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length });
  })
  // Written by hand: an object literal would make "__proto__" a prototype instead of a key.
  .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`);

const anyText = fc.oneof({ weight: 6, arbitrary: directiveText }, { weight: 1, arbitrary: fc.json({ maxDepth: 2 }) });

describe("directive fast path", () => {
  it("accepts nothing the schema rejects, and returns the schema's result, key order included", () => {
    let accepted = 0;
    fc.assert(
      fc.property(anyText, fc.constantFrom(DEFAULT_LIMITS, TIGHT), (text, limits) => {
        const value: unknown = JSON.parse(text);
        const fast = fastDirective(value, limits);
        const ref = (limits === TIGHT ? tightSchema : defaultSchema).safeParse(value);
        if (fast !== undefined) {
          accepted++;
          expect(ref.success, text).toBe(true);
          expect(fast, text).toStrictEqual(ref.data);
          expect(Object.keys(fast), text).toEqual(Object.keys(ref.data!));
        }
        // The text path (fast path first) and the value path (schema only) agree on every input; a JSON
        // string value would be read as text again, so only objects and other values are compared.
        if (typeof value !== "string") expect(parseDirective(text, limits), text).toStrictEqual(parseDirective(value, limits));
      }),
      { numRuns: 4000 },
    );
    // The property is not vacuous: the fast path took a good share of the inputs.
    expect(accepted).toBeGreaterThan(150);
  });

  it("takes the forms models send: drop, summarize with a digest, accept_lossy, strict mode's nulls, recall by id or handle", () => {
    for (const d of [
      { op: "prune", span_id: "span_7", mode: "drop" },
      { op: "prune", span_id: "span_7", mode: "summarize", digest: "ran the tests; 3 failed" },
      { op: "prune", span_id: "span_7", mode: "compress", accept_lossy: true },
      { op: "prune", span_id: "span_7", mode: "drop", digest: null, accept_lossy: null },
      { op: "prune", span_id: "span_7", mode: "summarize", digest: "ran the tests; 3 failed", accept_lossy: null },
      { op: "recall", span_id: "span_7" },
      { op: "recall", span_id: "t#3" },
    ]) {
      expect(fastDirective(JSON.parse(JSON.stringify(d)), DEFAULT_LIMITS)).toStrictEqual(d);
    }
  });

  it("names the operation of an invalid directive from the schema's own members, and lists them when op is unknown", () => {
    const ops = directiveSchema().options.map((m) => m.shape.op.value);
    expect(ops).toEqual(["prune", "recall", "map", "search", "summarize_range", "compact"]);
    for (const op of ops) expect(parseDirective(JSON.stringify({ op, unexpected: 1 }))).toMatchObject({ ok: false, op });
    const unknown = parseDirective('{"op":"forget"}');
    expect(unknown).toMatchObject({ ok: false, op: null });
    expect(!unknown.ok && unknown.issues[0]!.message).toBe('op must be "prune", "recall", "map", "search", "summarize_range" or "compact"');
  });

  it("reads the digest's bounds off the schema of the limits it is given", () => {
    const text = (digest: string) => JSON.parse(JSON.stringify({ op: "prune", span_id: "span_1", mode: "summarize", digest }));
    expect(fastDirective(text("12345"), TIGHT)).toMatchObject({ digest: "12345" });
    expect(fastDirective(text("123456"), TIGHT)).toBeUndefined();
    expect(fastDirective(text("123456"), DEFAULT_LIMITS)).toMatchObject({ digest: "123456" });
    expect(fastDirective(text(""), DEFAULT_LIMITS)).toBeUndefined();
  });

  it("leaves to the schema what only the schema may judge", () => {
    for (const text of [
      '{"op":"prune","span_id":"span_7","mode":"drop","accept_lossy":"true"}',
      '{"op":"prune","span_id":"span_7","mode":"drop","__proto__":{"accept_lossy":true}}',
      '{"op":"prune","span_id":"span_7","mode":"drop","digest":"x"}',
      '{"op":"prune","span_id":"span_7","mode":"summarize"}',
      '{"op":"recall","span_id":"span_7","mode":"drop"}',
      '{"op":"recall","span_id":"span_7","accept_lossy":null}',
      '{"op":"prune","span_id":"span_7","mode":"summarize","digest":null}',
      '["prune"]',
    ]) {
      expect(fastDirective(JSON.parse(text), DEFAULT_LIMITS), text).toBeUndefined();
      expect(parseDirective(text).ok, text).toBe(false);
    }
  });
});
