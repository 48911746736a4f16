// Two emitter helpers were made cheaper for a cold compile (BENCHMARKS.md, figure 4) and must print the same
// bytes as before: `printValue` no longer prints a whole value on one line to learn that it does not fit, and
// the compiler's `sortKeys` orders keys without `Array.prototype.sort`. Each is held here to the form it
// replaced, on arbitrary values.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sortKeys } from "../../compiler/emit/json.js";
import { printValue, propertyKey, quote, type Value } from "../../compiler/emit/printer.js";
import { sortKeys as runtimeSortKeys } from "../../src/hash.js";

const WIDTH = 120;

/** `printValue` as it was: the whole value flat, and the multi-line form when that is too long. */
function printValueBefore(v: Value, indent: string, column = indent.length): string {
  const flat = printFlat(v);
  if (column + flat.length <= WIDTH || !isComposite(v)) return flat;
  const inner = `${indent}  `;
  if (Array.isArray(v)) return `[\n${v.map((x) => `${inner}${printValueBefore(x, inner)},`).join("\n")}\n${indent}]`;
  const entries = Object.entries(v as Record<string, Value | undefined>).filter((e): e is [string, Value] => e[1] !== undefined);
  return `{\n${entries.map(([k, x]) => `${inner}${isShorthand(k, x) ? k : `${propertyKey(k)}: ${printValueBefore(x, inner, inner.length + propertyKey(k).length + 2)}`},`).join("\n")}\n${indent}}`;
}
function printFlat(v: Value): string {
  if (v === null) return "null";
  if (typeof v === "string") return quote(v);
  if (typeof v === "number") return !Number.isInteger(v) || Math.abs(v) < 10_000 ? String(v) : String(v).replace(/\B(?=(\d{3})+(?!\d))/g, "_");
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(printFlat).join(", ")}]`;
  if (isCode(v)) return v.code;
  const entries = Object.entries(v as Record<string, Value | undefined>).filter((e): e is [string, Value] => e[1] !== undefined);
  return entries.length === 0 ? "{}" : `{ ${entries.map(([k, x]) => (isShorthand(k, x) ? k : `${propertyKey(k)}: ${printFlat(x)}`)).join(", ")} }`;
}
const isShorthand = (key: string, v: Value): boolean => isCode(v) && v.code === key;
const isCode = (v: Value): v is { readonly code: string } =>
  typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as { code?: unknown }).code === "string" && Object.keys(v).length === 1;
const isComposite = (v: Value): boolean => typeof v === "object" && v !== null && !isCode(v) && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);

const key = fc.oneof(fc.constantFrom("store", "modes", "kinds", "a", "pins", "compressTargetTokens", "with-dash", "code"), fc.string({ maxLength: 12 }));
const { value } = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.string({ maxLength: 40 }),
    fc.oneof(fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
    fc.boolean(),
    fc.constant(null),
    fc.oneof(fc.constantFrom("kinds", "pin.requestId", "store"), fc.string({ maxLength: 30 })).map((c) => ({ code: c })),
    fc.array(tie("value"), { maxLength: 12 }),
    fc.dictionary(key, fc.option(tie("value"), { nil: undefined }), { maxKeys: 10 }) as fc.Arbitrary<Value>,
  ),
}));

describe("printValue prints what it printed before", () => {
  it("at every column, for values of every shape and size", () => {
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 130 }), fc.constantFrom("", "  ", "    "), (v, column, indent) => {
        expect(printValue(v, indent, column)).toBe(printValueBefore(v, indent, column));
      }),
      { numRuns: 3000 },
    );
  });

  it("around the width: a value that fits exactly, one character over, and an empty object's members", () => {
    const row = (n: number): Value => ({ store: "x".repeat(n), modes: ["drop", "summarize"], lossy: undefined });
    for (let n = 70; n < 110; n++) for (const column of [0, 2, 18, 40]) expect(printValue(row(n), "", column)).toBe(printValueBefore(row(n), "", column));
    for (const v of [{ a: undefined }, [{ a: undefined }], { x: [] as Value[], y: {} }] as Value[]) {
      for (let column = 0; column <= 122; column++) expect(printValue(v, "", column)).toBe(printValueBefore(v, "", column));
    }
  });
});

describe("the compiler's sortKeys is the runtime's", () => {
  it("gives the same JSON, sorted at every depth, undefined members left out", () => {
    const withUndefined = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: "small" },
        fc.jsonValue({ maxDepth: 1 }),
        fc.array(tie("v"), { maxLength: 5 }),
        fc.dictionary(fc.string({ maxLength: 6 }), fc.option(tie("v"), { nil: undefined }), { maxKeys: 8 }),
      ),
    })).v;
    fc.assert(
      fc.property(withUndefined, (v) => {
        expect(JSON.stringify(sortKeys(v), null, 2)).toBe(JSON.stringify(runtimeSortKeys(v), null, 2));
        expect(JSON.stringify(sortKeys(v))).toBe(JSON.stringify(runtimeSortKeys(v)));
      }),
      { numRuns: 3000 },
    );
  });
});
