// Validation reads a valid IR with plain code (compiler/ir/parse.ts) and asks zod only when that cannot vouch
// for it, so a compile of valid policies never loads zod. These hold `parsePolicyIR` to `PolicyIR.safeParse`:
// on compiled policies it answers, with zod's value member for member and in zod's order; on candidates one
// edit away it never accepts what zod refuses, and what it accepts is zod's value. (ir-schema-lazy.test.ts: an
// invalid policy in an incremental build, which does not load the schema up front, still gets zod's PG1011.)
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policySource } from "../../bench/policies.js";
import { compilePolicies } from "../../compiler/index.js";
import { parsePolicyIR } from "../../compiler/ir/parse.js";
import { PolicyIR } from "../../compiler/ir/schema.js";
import { HEADER } from "./helpers.js";

/** Every member at every depth, in order, `undefined` ones included: what key order and presence zod gives. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v !== null && typeof v === "object") return Object.entries(v).map(([k, x]) => [k, shape(x)]);
  return v;
}

const examples = ["org", "team-payments", "team-search"].map((n) => `examples/policies/${n}.policy.ts`);
const compiled = [
  ...compilePolicies(examples).policies,
  ...compilePolicies({ files: { "bench.policy.ts": policySource("bench", 50) } }).policies,
  ...compilePolicies({
    files: {
      "p.policy.ts": `${HEADER}export default definePolicy({
  name: "p",
  stores: { log: store.sqlite({ retention: hours(2), holds: true }), mem: store.memory({ retention: forever }) },
  kinds: { a: { store: "log", modes: ["drop", "compress"], lossy: "with-flag", compressTargetTokens: 100 }, b: { store: null, modes: ["drop"], lossy: "with-flag" } },
  session: { maxLength: hours(8), lossyBudget: 3, searchTokens: 500, compaction: { minFreedTokens: 2000, atTokens: 90000 }, providerCompaction: "allow" },
  tombstone: "{span} pruned",
});
`,
    },
  }).policies,
];

/** A value and one edit at some depth: a member dropped, added, set to `undefined`, or replaced. */
function edited(base: unknown): fc.Arbitrary<unknown> {
  const replacement = fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.constantFrom(undefined, 0, -1, 1.5, "", "x-y", "Bad Name", "immediate", null, Number.MAX_SAFE_INTEGER + 2));
  return fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), fc.constantFrom("drop", "add", "set"), replacement).map(([picks, edit, json]) => {
    const copy = structuredClone(base) as Record<string, unknown>;
    let node: Record<string, unknown> = copy;
    for (const pick of picks.slice(0, -1)) {
      const keys = Object.keys(node);
      const next = node[keys[pick % keys.length]!];
      if (next === null || typeof next !== "object" || Object.keys(next).length === 0) break;
      node = next as Record<string, unknown>;
    }
    const keys = Object.keys(node);
    const key = Array.isArray(node) ? String(picks.at(-1)! % Math.max(1, node.length)) : keys[picks.at(-1)! % Math.max(1, keys.length)] ?? "x";
    if (edit === "drop") delete node[key];
    else if (edit === "add") node["extra"] = json;
    else node[key] = json;
    return copy;
  });
}

describe("parsePolicyIR is PolicyIR.parse on what it answers", () => {
  it("answers every compiled policy, with zod's value in zod's order", () => {
    expect(compiled.length).toBeGreaterThan(4);
    for (const p of compiled) {
      // The compiled IR came out of validation already; what the front end built is the same data.
      const candidate = structuredClone(p);
      const fast = parsePolicyIR(candidate);
      const zod = PolicyIR.parse(candidate);
      expect(fast, p.name).toBeDefined();
      expect(shape(fast)).toEqual(shape(zod));
      expect(JSON.stringify(fast)).toBe(JSON.stringify(zod));
    }
  });

  it("never accepts what zod refuses, and what it accepts is zod's value", () => {
    fc.assert(
      fc.property(fc.oneof(...compiled.map((p) => edited(p)), fc.jsonValue({ maxDepth: 2 })), (v) => {
        const fast = parsePolicyIR(v);
        const zod = PolicyIR.safeParse(v);
        if (fast !== undefined) {
          expect(zod.success).toBe(true);
          expect(shape(fast)).toEqual(shape(zod.data));
        } else if (zod.success) {
          // Declined although valid: only for what it does not decide (a member present as `undefined`).
          expect(hasUndefined(v)).toBe(true);
        }
      }),
      { numRuns: 4000 },
    );
  });
});

function hasUndefined(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasUndefined);
  if (v !== null && typeof v === "object") return Object.values(v).some((x) => x === undefined || hasUndefined(x));
  return false;
}
