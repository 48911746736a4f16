// The IR contract: validated plain data with locations, lowered to exactly the runtime's policy shape,
// and emitted deterministically.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compilePolicies, emitAll, emitIrJson, irHash, lowerToRuntime, PolicyIR } from "../../compiler/index.js";
import type { RuntimePolicy } from "../../src/types.js";
import { compile, compileOverlay, ORG } from "./helpers.js";

const examples = ["examples/policies/org.policy.ts", "examples/policies/team-search.policy.ts"];

describe("IR", () => {
  it("is plain data that round-trips through the schema", () => {
    const r = compilePolicies(examples);
    expect(r.hasErrors).toBe(false);
    for (const p of r.policies) {
      expect(PolicyIR.parse(JSON.parse(JSON.stringify(p)))).toEqual(p);
      expect(p.location.file).toMatch(/^examples\/policies\//);
      for (const k of p.kinds) expect(k.location.line).toBeGreaterThan(0);
    }
  });

  it("holds the compaction rules the front end reports (PG2013, PG2014), so IR from elsewhere cannot break them", () => {
    const p = compile({ "org.policy.ts": ORG }).policies[0]!;
    const withCompaction = (compaction: unknown) => PolicyIR.safeParse({ ...p, session: { ...p.session, compaction } }).success;
    expect([null, "immediate", { minFreedTokens: 1_024, atTokens: null }, { minFreedTokens: 20_000, atTokens: 20_001 }].map(withCompaction)).toEqual([true, true, true, true]);
    expect([{ minFreedTokens: 1_023, atTokens: null }, { minFreedTokens: 20_000, atTokens: 20_000 }, { minFreedTokens: 20_000 }, "never"].map(withCompaction)).toEqual([false, false, false, false]);
  });

  it("resolves an overlay: inherited nodes keep their base locations, overrides point into the overlay", () => {
    const r = compileOverlay(`  kinds: { toolResult: { modes: ["drop"] } },`);
    const team = r.policies.find((p) => p.name === "team")!;
    expect(team.extends).toEqual({ name: "org", file: "org.policy.ts" });
    const tr = team.kinds.find((k) => k.name === "toolResult")!;
    expect(tr.modes).toEqual(["drop"]);
    expect(tr.fields.modes?.file).toBe("team.policy.ts");
    expect(tr.fields.lossy?.file).toBe("org.policy.ts");
    expect(team.kinds.find((k) => k.name === "userTurn")!.location.file).toBe("org.policy.ts");
  });
});

describe("lowerToRuntime", () => {
  it("lowers to exactly the RuntimePolicy shape and the store declarations", () => {
    const org = compile({ "org.policy.ts": ORG }).policies[0]!;
    const { policy, stores } = lowerToRuntime(org);
    const expected: RuntimePolicy = {
      kinds: {
        toolResult: {
          store: "toolLog",
          modes: ["drop", "summarize"],
          lossy: "with-flag",
          repersist: true,
          pins: [
            { name: "requestId", pattern: expect.any(String) as unknown as string },
            { name: "ticket", pattern: "T-\\d+" },
          ],
        },
        userTurn: { store: "transcript", modes: ["summarize"], lossy: "forbid", repersist: false, pins: [] },
      },
      session: { maxLengthMs: 8 * 3_600_000, lossyBudget: 3 },
      pins: [{ name: "uuid", pattern: expect.any(String) as unknown as string }],
    };
    expect(policy).toEqual(expected);
    expect(stores).toEqual([
      { name: "toolLog", engine: "sqlite", retentionMs: 7_200_000, holds: true, distinguishesAbsent: true, writable: true },
      { name: "transcript", engine: "postgres", retentionMs: 30 * 86_400_000, holds: true, distinguishesAbsent: true, writable: true },
    ]);
    expect(Object.isFrozen(policy)).toBe(true);
  });
});

describe("emit", () => {
  it("is deterministic: same input, same bytes, sorted keys, relative POSIX paths", () => {
    const a = emitAll(compilePolicies(examples).policies);
    const b = emitAll(compilePolicies([...examples].reverse()).policies);
    expect(a).toEqual(b);
    expect(a.map((f) => f.path)).toEqual([
      "org.guard.ts",
      "org.ir.json",
      "org.types.ts",
      "team-search.guard.ts",
      "team-search.ir.json",
      "team-search.types.ts",
    ]);
    const json = JSON.parse(a[1]!.contents) as { hash: string; policy: { file: string } };
    expect(json.policy.file).toBe("examples/policies/org.policy.ts");
    expect(json.hash).toMatch(/^[0-9a-f]{64}$/);
    for (const f of a) expect(f.contents.endsWith("\n")).toBe(true);
    expect(readFileSync(examples[0]!, "utf8")).toContain("definePolicy");
  });
});

describe("ir.json", () => {
  it("is the IR itself, compact: it parses back to the same policy, with its hash, one line per store, kind and pin", () => {
    for (const p of compilePolicies(examples).policies) {
      const text = emitIrJson(p).contents;
      const json = JSON.parse(text) as { hash: string; irVersion: number; policy: unknown };
      expect(PolicyIR.parse(json.policy)).toEqual(p);
      expect(json.hash).toBe(irHash(p));
      // The hash is over the file's own `policy` member: a tool can check one against the other.
      const member = text.slice(text.indexOf('"policy":') + '"policy":'.length, text.trimEnd().length - 1);
      expect(createHash("sha256").update(member).digest("hex")).toBe(json.hash);
      // Not indented: the head, the policy up to its first list, one line per store, kind and pin, and
      // after each list a line closing it (and holding the keys up to the next list).
      const lists = [p.stores, p.kinds, p.pins].filter((l) => l.length > 0);
      expect(text.trimEnd().split("\n").length).toBe(2 + lists.reduce((n, l) => n + l.length + 1, 0));
      expect(text).not.toMatch(/\n {2}/);
    }
  });
});
