// The DSL's builders are pure and return frozen plain data; the compiler reads the same calls statically
// and must agree with what they return.
import { describe, expect, it } from "vitest";
import { compilePolicies, lowerToRuntime } from "../../compiler/index.js";
import { days, definePolicy, extendPolicy, forever, hours, minutes, pins, seconds, store } from "../../dsl/index.js";
import { formatDuration } from "../../src/policy/durations.js";
import { DEFAULT_COMPACTION } from "../../src/policy/kinds.js";
import org from "../../examples/policies/org.policy.js";
import team from "../../examples/policies/team-search.policy.js";

describe("durations", () => {
  it("are milliseconds", () => {
    expect([seconds(1), minutes(1), hours(1), days(1)]).toEqual([1_000, 60_000, 3_600_000, 86_400_000]);
    expect(formatDuration(hours(1) + minutes(30))).toBe("1h 30m");
    expect(formatDuration(null)).toBe("forever");
    expect(() => hours(-1)).toThrow(RangeError);
  });
});

describe("store", () => {
  it("applies the same defaults as the runtime stores", () => {
    expect(store.sqlite({ retention: hours(2) })).toEqual({ engine: "sqlite", retentionMs: 7_200_000, holds: true, distinguishesAbsent: true, writable: true });
    expect(store.memory({ retention: forever, holds: false }).retentionMs).toBeNull();
  });
});

describe("definePolicy / extendPolicy", () => {
  const base = definePolicy({
    name: "org",
    stores: { log: store.sqlite({ retention: hours(2) }) },
    kinds: { tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag", pins: [pins.requestId] } },
    session: { maxLength: hours(8), lossyBudget: 3 },
  });
  it("returns frozen plain data", () => {
    expect(Object.isFrozen(base)).toBe(true);
    expect(Object.isFrozen(base.kinds.tool.modes)).toBe(true);
    expect(base.session).toEqual({ maxLengthMs: 28_800_000, lossyBudget: 3, searchTokens: null, compaction: null, providerCompaction: null });
  });
  it("an overlay replaces the fields it gives and keeps the rest", () => {
    const t = extendPolicy(base, { name: "team", kinds: { tool: { modes: ["drop"] } }, session: { lossyBudget: 1 } });
    expect(t.extends).toBe("org");
    expect(t.kinds.tool).toMatchObject({ store: "log", modes: ["drop"], lossy: "with-flag" });
    expect(t.session).toEqual({ maxLengthMs: 28_800_000, lossyBudget: 1, searchTokens: null, compaction: null, providerCompaction: null });
  });
  it("normalises compaction: absent fields take their defaults; an overlay's replaces its base's whole", () => {
    const deferred = definePolicy({ name: "org", stores: {}, kinds: {}, session: { compaction: { minFreedTokens: 20_000, atTokens: 120_000 } } });
    expect(deferred.session.compaction).toEqual({ minFreedTokens: 20_000, atTokens: 120_000 });
    expect(extendPolicy(deferred, { name: "team", session: { lossyBudget: 1 } }).session.compaction).toEqual({ minFreedTokens: 20_000, atTokens: 120_000 });
    expect(extendPolicy(deferred, { name: "team", session: { compaction: { atTokens: 60_000 } } }).session.compaction).toEqual({ minFreedTokens: DEFAULT_COMPACTION.minFreedTokens, atTokens: 60_000 });
    expect(extendPolicy(deferred, { name: "team", session: { compaction: "immediate" } }).session.compaction).toBe("immediate");
    expect(definePolicy({ name: "org", stores: {}, kinds: {}, session: { compaction: {} } }).session.compaction).toEqual(DEFAULT_COMPACTION);
  });
});

describe("the compiler agrees with evaluating the DSL", () => {
  it("for every form of session.compaction", () => {
    const H = `import { definePolicy, extendPolicy } from "pruneguard/dsl";\n`;
    const org = definePolicy({ name: "org", stores: {}, kinds: {}, session: { compaction: { minFreedTokens: 20_000, atTokens: 120_000 } } });
    const orgSource = `${H}export default definePolicy({ name: "org", stores: {}, kinds: {}, session: { compaction: { minFreedTokens: 20_000, atTokens: 120_000 } } });\n`;
    const overlays = [
      [extendPolicy(org, { name: "team", session: { compaction: { atTokens: 60_000 } } }), `{ compaction: { atTokens: 60_000 } }`],
      [extendPolicy(org, { name: "team", session: { compaction: "immediate" } }), `{ compaction: "immediate" }`],
      [extendPolicy(org, { name: "team", session: { lossyBudget: 2 } }), `{ lossyBudget: 2 }`],
    ] as const;
    for (const [evaluated, session] of overlays) {
      const team = `${H}import org from "./org.policy.js";\nexport default extendPolicy(org, { name: "team", session: ${session} });\n`;
      const r = compilePolicies({ files: { "org.policy.ts": orgSource, "team.policy.ts": team } });
      expect(r.diagnostics).toEqual([]);
      for (const p of [org, evaluated]) expect(lowerToRuntime(r.policies.find((x) => x.name === p.name)!).policy.session?.compaction).toEqual(p.session.compaction);
    }
  });
  it("for the example policies", () => {
    const r = compilePolicies(["examples/policies/org.policy.ts", "examples/policies/team-search.policy.ts"]);
    for (const evaluated of [org, team]) {
      const ir = r.policies.find((p) => p.name === evaluated.name)!;
      const { policy, stores } = lowerToRuntime(ir);
      expect(Object.keys(policy.kinds).sort()).toEqual(Object.keys(evaluated.kinds).sort());
      for (const [name, k] of Object.entries(evaluated.kinds)) {
        const lowered = policy.kinds[name]!;
        expect(lowered.store).toBe(k.store);
        expect(lowered.modes).toEqual(k.modes);
        expect(lowered.lossy).toBe(k.lossy);
        expect(lowered.pins).toEqual(k.pins ?? []);
      }
      for (const s of stores) expect({ ...s, name: undefined }).toEqual({ ...evaluated.stores[s.name as keyof typeof evaluated.stores], name: undefined });
      // Lowering leaves out what the policy leaves to the runtime's defaults (`null` in the DSL's value).
      const { searchTokens, compaction, providerCompaction, ...limits } = evaluated.session;
      expect(policy.session).toEqual({
        ...limits, ...(searchTokens === null ? {} : { searchTokens }), ...(compaction === null ? {} : { compaction }),
        ...(providerCompaction === null ? {} : { providerCompaction }),
      });
      expect(policy.pins).toEqual(evaluated.pins);
    }
  });
});
