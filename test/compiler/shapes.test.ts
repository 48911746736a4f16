// The data the incremental build reads back from disk (its manifest, and the diagnostics and locations in it)
// and the package.json config are checked by plain functions, so that a `check` with nothing to do never loads
// zod. These properties hold each check to a zod schema of the same shape: on valid values, on values one
// mutation away from valid (a key dropped, added or retyped, a bound crossed), and on arbitrary JSON.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseProjectConfig } from "../../compiler/cli/config.js";
import { isDiagnostic } from "../../compiler/diagnostics/diagnostic.js";
import { isManifest } from "../../compiler/incremental/manifest.js";
import { isLocation } from "../../compiler/ir/location.js";
import { DiagnosticSchema, Location as LocationSchema } from "../../compiler/ir/schema.js";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const position = fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constantFrom(1.5, Number.MAX_SAFE_INTEGER + 2));
const location = fc.record({ file: fc.oneof(fc.string({ maxLength: 8 }), fc.constant(3)), line: position, column: position, endLine: position, endColumn: position });
const code = fc.oneof(fc.constantFrom("PG1001", "PG3007", "PG4001", "PG100", "PG10011", "pg1001", "PG3007\n"), fc.string({ maxLength: 7 }));
const diagnostic = fc.record({
  code,
  category: fc.constantFrom("error", "warning", "info"),
  message: fc.oneof(fc.string({ maxLength: 10 }), fc.constant(null)),
  location: fc.oneof(location, fc.constant(null)),
  related: fc.array(fc.record({ message: fc.string({ maxLength: 5 }), location }), { maxLength: 2 }),
});

/** A value and then one edit of it: a key removed, a key added, or a member replaced by arbitrary JSON. */
function mutated<T extends Record<string, unknown>>(base: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.tuple(base, fc.nat(), fc.constantFrom("keep", "drop", "add", "retype"), fc.jsonValue({ maxDepth: 2 })).map(([v, pick, edit, json]) => {
    const keys = Object.keys(v);
    const key = keys[pick % keys.length]!;
    const out: Record<string, unknown> = { ...v };
    if (edit === "drop") delete out[key];
    if (edit === "add") out["extra"] = json;
    if (edit === "retype") out[key] = json;
    return out;
  });
}

describe("plain shape checks agree with zod schemas of the same shape", () => {
  it("isLocation is Location.safeParse().success", () => {
    fc.assert(fc.property(fc.oneof(mutated(location), fc.jsonValue()), (v) => isLocation(v) === LocationSchema.safeParse(v).success), { numRuns: 3000 });
  });

  it("isDiagnostic is DiagnosticSchema.safeParse().success", () => {
    fc.assert(fc.property(fc.oneof(mutated(diagnostic), fc.jsonValue()), (v) => isDiagnostic(v) === DiagnosticSchema.safeParse(v).success), { numRuns: 3000 });
  });

  it("isManifest accepts what writeManifest writes, and nothing one edit away that breaks the shape", () => {
    const hashes = z.record(z.string().min(1).max(1024), z.string().regex(/^[0-9a-f]{64}$/));
    const Manifest = z.strictObject({
      manifest: z.literal(2),
      compiler: z.string(),
      options: z.strictObject({ runtimeImport: z.string(), root: z.string() }),
      units: z.record(
        z.string(),
        z.strictObject({ inputs: hashes, outputs: hashes, policies: z.array(z.strictObject({ name: z.string(), file: z.string() })), diagnostics: z.array(DiagnosticSchema) }),
      ),
    });
    const hash = fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.constantFrom("ab", "G".repeat(64)));
    const hashMap = fc.dictionary(fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), fc.constantFrom("", "x".repeat(1025))), hash, { maxKeys: 2 });
    const unit = fc.record({
      inputs: hashMap,
      outputs: hashMap,
      policies: fc.array(fc.record({ name: fc.string({ maxLength: 4 }), file: fc.oneof(fc.string({ maxLength: 4 }), fc.constant(1)) }), { maxLength: 2 }),
      diagnostics: fc.array(diagnostic, { maxLength: 2 }),
    });
    const manifest = fc.record({
      manifest: fc.constantFrom(2, 1, "2"),
      compiler: fc.string({ maxLength: 6 }),
      options: fc.oneof(fc.record({ runtimeImport: fc.string({ maxLength: 4 }), root: fc.string({ maxLength: 4 }) }), fc.constant({ runtimeImport: "x" })),
      units: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(unit, mutated(unit)) as fc.Arbitrary<Json>, { maxKeys: 2 }),
    });
    fc.assert(fc.property(fc.oneof(mutated(manifest), fc.jsonValue()), (v) => isManifest(v) === Manifest.safeParse(v).success), { numRuns: 3000 });
  });
});

describe("package.json \"pruneguard\" config", () => {
  it("accepts every member, each optional", () => {
    expect(parseProjectConfig({})).toEqual({ config: {} });
    const full = { policies: ["examples/policies"], out: "generated", runtimeImport: "../src/index.js", root: "." };
    expect(parseProjectConfig(full)).toEqual({ config: full });
  });

  it("names the member and what is wrong with it", () => {
    expect(parseProjectConfig([])).toEqual({ path: "", problem: "expected an object, got an array" });
    expect(parseProjectConfig({ outDir: "x" })).toEqual({ path: "", problem: 'unknown key "outDir" (known: policies, out, runtimeImport, root)' });
    expect(parseProjectConfig({ policies: "p" })).toEqual({ path: ".policies", problem: 'expected an array of policy files, folders or globs, got string "p"' });
    expect(parseProjectConfig({ policies: [] })).toMatchObject({ path: ".policies", problem: expect.stringContaining("at least one") });
    expect(parseProjectConfig({ policies: ["a", ""] })).toEqual({ path: ".policies.1", problem: 'expected a non-empty string, got string ""' });
    expect(parseProjectConfig({ out: 3 })).toEqual({ path: ".out", problem: "expected a non-empty string, got number 3" });
    expect(parseProjectConfig({ root: null })).toEqual({ path: ".root", problem: "expected a non-empty string, got null" });
  });

  it("shows a value from the file escaped and cut: no control or bidirectional character reaches the terminal", () => {
    const r = parseProjectConfig({ out: 7, root: "\u202eevil\u0007" });
    expect(r).toEqual({ path: ".out", problem: "expected a non-empty string, got number 7" });
    const bidi = parseProjectConfig({ root: ["\u202e"] });
    expect(bidi).toEqual({ path: ".root", problem: "expected a non-empty string, got an array" });
    const key = parseProjectConfig({ "\u202eout\u001b[31m": 1 });
    expect("problem" in key && key.problem).toBe('unknown key "\\u202eout\\u001b[31m" (known: policies, out, runtimeImport, root)');
    const long = parseProjectConfig({ policies: [1e21, "x".repeat(10_000)] });
    expect(long).toEqual({ path: ".policies.0", problem: "expected a non-empty string, got number 1e+21" });
    const cut = parseProjectConfig({ extra: 1, ["y".repeat(10_000)]: 2 });
    expect("problem" in cut && cut.problem.length).toBeLessThan(250);
  });

  it("agrees with the zod schema it replaced on which configs are valid", () => {
    const ProjectConfig = z.strictObject({
      policies: z.array(z.string().min(1)).min(1).optional(),
      out: z.string().min(1).optional(),
      runtimeImport: z.string().min(1).optional(),
      root: z.string().min(1).optional(),
    });
    const member = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 3 }), fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }), fc.jsonValue({ maxDepth: 1 }));
    const config = fc.record({ policies: member, out: member, runtimeImport: member, root: member }, { requiredKeys: [] });
    fc.assert(fc.property(fc.oneof(mutated(config), fc.jsonValue()), (v) => "config" in parseProjectConfig(v) === ProjectConfig.safeParse(v).success), { numRuns: 3000 });
  });
});
