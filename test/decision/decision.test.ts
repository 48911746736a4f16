/**
 * The decision boundary as pure functions: every branch of one span's decision, the group's all-or-nothing
 * rule and lossy budget, and the stable codes audit records store for each reason.
 */
import { describe, expect, it } from "vitest";
import { decideGroup, type MemberInput } from "../../src/decision/group.js";
import { auditReason, rejectReasonOf, type DecisionReason } from "../../src/decision/reasons.js";
import { decideSpan, lossyRefusal, type SpanDecisionInput } from "../../src/decision/span.js";
import type { CheckResult, StoreCapabilities } from "../../src/stores/store.js";
import type { KindPolicy } from "../../src/types.js";

const caps: StoreCapabilities = { distinguishesAbsent: true, holds: true, writable: true };
const policy = (over: Partial<KindPolicy> = {}): KindPolicy => ({ store: "s", modes: ["drop"], lossy: "with-flag", ...over });

const ok: CheckResult = { conditions: { existence: true, addressability: true, provenance: true }, copy: "ok", handle: "#1", expiresAt: null };
const failing = (copy: Exclude<CheckResult["copy"], "ok">, provenance = true): CheckResult => ({
  conditions: { existence: false, addressability: copy !== "no-handle", provenance },
  copy,
  handle: copy === "no-handle" ? null : "#1",
  expiresAt: null,
});
const noProvenance: CheckResult = { ...ok, conditions: { ...ok.conditions, provenance: false } };

const input = (over: Partial<SpanDecisionInput> = {}): SpanDecisionInput => ({
  policy: policy(),
  acceptLossy: false,
  budgetLeft: true,
  store: caps,
  ...over,
});

describe("decideSpan", () => {
  it("a verified copy is reversible with no reason, whatever the flag says", () => {
    expect(decideSpan(input(), ok)).toEqual({ status: "reversible", repersist: false, reason: null, keep: { keptUntil: null, until: null, retainedUntil: null } });
    expect(decideSpan(input({ acceptLossy: true }), ok)).toEqual({ status: "reversible", repersist: false, reason: null, keep: { keptUntil: null, until: null, retainedUntil: null } });
  });

  it.each(["absent", "expired", "no-handle"] as const)("re-persists a %s copy when the kind asks and the store can take it", (copy) => {
    expect(decideSpan(input({ policy: policy({ repersist: true }) }), failing(copy))).toEqual({
      status: "reversible",
      repersist: true,
      reason: { code: "repersisted", copy },
      keep: { keptUntil: null, until: null, retainedUntil: null },
    });
  });

  it("never re-persists over a differing copy, into a read-only store, or where absent cannot be told from pruned", () => {
    const kind = policy({ repersist: true });
    // A differing copy may be another writer's record or tampering: overwriting it would hide that.
    expect(decideSpan(input({ policy: kind }), failing("hash-mismatch")).status).toBe("rejected");
    expect(decideSpan(input({ policy: kind, store: { ...caps, writable: false } }), failing("expired")).status).toBe("rejected");
    expect(decideSpan(input({ policy: kind, store: { ...caps, distinguishesAbsent: false } }), failing("expired", false)).status).toBe("rejected");
    expect(decideSpan(input({ policy: kind, store: null }), failing("no-handle", false)).status).toBe("rejected");
    expect(decideSpan(input({ policy: policy({ repersist: false }) }), failing("expired")).status).toBe("rejected");
  });

  describe("a copy the store still has but nothing keeps any longer counts as expired", () => {
    const NOW = 1_000_000;
    // Retention of 30 min ran out a minute ago; the store has not rotated the copy away yet.
    const stale: CheckResult = { ...ok, expiresAt: NOW - 60_000 };
    const noHolds = { ...caps, holds: false };
    const at = (over: Partial<SpanDecisionInput>) => input({ retentionMs: 30 * 60_000, keep: { now: NOW, holdUntil: null }, ...over });

    it("without holds: refused as not-reversible (expired), lossy with the flag, written back where the kind re-persists", () => {
      expect(decideSpan(at({ store: noHolds }), stale)).toEqual({ status: "rejected", reason: { code: "not-reversible", copy: "expired" } });
      expect(decideSpan(at({ store: noHolds, acceptLossy: true }), stale)).toEqual({ status: "lossy", reason: { code: "lossy-committed", copy: "expired" } });
      const back = decideSpan(at({ store: noHolds, policy: policy({ repersist: true }) }), stale);
      // Written back, its retention starts again now.
      expect(back).toMatchObject({ status: "reversible", repersist: true, reason: { code: "repersisted", copy: "expired" }, keep: { keptUntil: NOW + 30 * 60_000 } });
    });

    it("with holds past the session's horizon: the same; before it, the hold placed now keeps the copy", () => {
      expect(decideSpan(at({ keep: { now: NOW, holdUntil: NOW } }), stale).status).toBe("rejected");
      expect(decideSpan(at({ keep: { now: NOW, holdUntil: NOW - 1 } }), stale).status).toBe("rejected");
      expect(decideSpan(at({ keep: { now: NOW, holdUntil: NOW + 60_000 } }), stale)).toMatchObject({ status: "reversible", repersist: false, keep: { until: null } });
      expect(decideSpan(at({}), stale)).toMatchObject({ status: "reversible", repersist: false, keep: { keptUntil: null } });
    });

    it("a copy whose retention runs out later, or that is kept forever, is reversible as before", () => {
      expect(decideSpan(at({ store: noHolds }), { ...ok, expiresAt: NOW + 1 })).toMatchObject({ status: "reversible", keep: { until: NOW + 1 } });
      expect(decideSpan(at({ store: noHolds, retentionMs: null }), ok)).toMatchObject({ status: "reversible", keep: { until: null } });
      // Without the clock, the decision cannot tell, and takes the store's word (as it always did).
      expect(decideSpan(input({ store: noHolds, retentionMs: 30 * 60_000 }), stale).status).toBe("reversible");
    });
  });

  it("without the flag, a failed check is refused as not-reversible, naming the copy", () => {
    expect(decideSpan(input(), failing("absent"))).toEqual({ status: "rejected", reason: { code: "not-reversible", copy: "absent" } });
  });

  it("names a store that cannot tell pruned from absent as no-provenance, not as a copy problem", () => {
    expect(decideSpan(input(), noProvenance)).toEqual({ status: "rejected", reason: { code: "not-reversible", copy: "no-provenance" } });
  });

  it("with the flag, an allowed kind within budget goes lossy; a forbidding kind or a spent budget is refused", () => {
    expect(decideSpan(input({ acceptLossy: true }), failing("expired"))).toEqual({
      status: "lossy",
      reason: { code: "lossy-committed", copy: "expired" },
    });
    expect(decideSpan(input({ acceptLossy: true, policy: policy({ lossy: "forbid" }) }), failing("expired")).reason).toEqual({
      code: "lossy-forbidden",
      copy: "expired",
    });
    expect(decideSpan(input({ acceptLossy: true, budgetLeft: false }), failing("expired")).reason).toEqual({
      code: "lossy-budget",
      copy: "expired",
    });
  });

  it("lossyRefusal checks the flag first, then the kind, then the budget", () => {
    const forbid = policy({ lossy: "forbid" });
    expect(lossyRefusal({ acceptLossy: false, policy: forbid, budgetLeft: false })).toBe("not-reversible");
    expect(lossyRefusal({ acceptLossy: true, policy: forbid, budgetLeft: false })).toBe("lossy-forbidden");
    expect(lossyRefusal({ acceptLossy: true, policy: policy(), budgetLeft: false })).toBe("lossy-budget");
    expect(lossyRefusal({ acceptLossy: true, policy: policy(), budgetLeft: true })).toBeNull();
  });
});

describe("decideGroup", () => {
  const member = (over: Partial<KindPolicy> = {}): MemberInput => ({ policy: policy(over), store: caps });

  it("decides every member on its own when all go ahead", () => {
    const g = decideGroup({ members: [member(), member()], lead: 0, acceptLossy: false, lossyLeft: Infinity }, [ok, ok]);
    expect(g.refusal).toBeNull();
    expect(g.decisions.map((d) => d.status)).toEqual(["reversible", "reversible"]);
  });

  it("refuses the whole group when one member refuses, telling the lead a member refused and the others the lead did", () => {
    const g = decideGroup({ members: [member(), member(), member()], lead: 0, acceptLossy: false, lossyLeft: Infinity }, [ok, failing("absent"), ok]);
    expect(g.decisions.map((d) => d.reason)).toEqual<(DecisionReason | null)[]>([
      { code: "group-refused", refusedBy: "member" },
      { code: "not-reversible", copy: "absent" },
      { code: "group-refused", refusedBy: "lead" },
    ]);
    expect(g.refusal).toEqual({ member: 1, reason: "not-reversible", byLead: false });
  });

  it("names the first member that refused on its own account, and says when that is the lead", () => {
    const g = decideGroup({ members: [member(), member()], lead: 1, acceptLossy: false, lossyLeft: Infinity }, [ok, failing("expired")]);
    expect(g.refusal).toEqual({ member: 1, reason: "not-reversible", byLead: true });
    const both = decideGroup({ members: [member(), member()], lead: 1, acceptLossy: false, lossyLeft: Infinity }, [failing("absent"), failing("expired")]);
    expect(both.refusal).toEqual({ member: 0, reason: "not-reversible", byLead: false });
  });

  it("spends the lossy budget member by member: the member past it is refused, and with it the group", () => {
    const g = decideGroup({ members: [member(), member()], lead: 0, acceptLossy: true, lossyLeft: 1 }, [failing("absent"), failing("absent")]);
    expect(g.decisions.map((d) => d.reason)).toEqual<(DecisionReason | null)[]>([
      { code: "group-refused", refusedBy: "member" },
      { code: "lossy-budget", copy: "absent" },
    ]);
    expect(g.refusal).toEqual({ member: 1, reason: "lossy-budget", byLead: false });
    const fits = decideGroup({ members: [member(), member()], lead: 0, acceptLossy: true, lossyLeft: 2 }, [failing("absent"), failing("absent")]);
    expect(fits.decisions.map((d) => d.status)).toEqual(["lossy", "lossy"]);
  });

  it("a reversible member does not spend budget", () => {
    const g = decideGroup({ members: [member(), member()], lead: 0, acceptLossy: true, lossyLeft: 1 }, [ok, failing("absent")]);
    expect(g.decisions.map((d) => d.status)).toEqual(["reversible", "lossy"]);
  });

  it("refuses a check list that does not match the members instead of deciding part of the group", () => {
    expect(() => decideGroup({ members: [member(), member()], lead: 0, acceptLossy: false, lossyLeft: Infinity }, [ok])).toThrow(RangeError);
  });
});

describe("reason codes", () => {
  // Audit records store these codes and hash them: changing one would change every new record's form.
  it.each<[DecisionReason | null, string | null]>([
    [null, null],
    [{ code: "not-reversible", copy: "absent" }, "not-reversible:absent"],
    [{ code: "lossy-forbidden", copy: "no-provenance" }, "lossy-forbidden:no-provenance"],
    [{ code: "lossy-budget", copy: "no-handle" }, "lossy-budget:no-handle"],
    [{ code: "lossy-committed", copy: "expired" }, "expired"],
    [{ code: "repersisted", copy: "expired" }, "repersisted:expired"],
    [{ code: "group-refused", refusedBy: "member" }, "group:member-refused"],
    [{ code: "group-refused", refusedBy: "lead" }, "group:lead-refused"],
    [{ code: "mode-not-allowed" }, "mode-not-allowed"],
    [{ code: "unknown-span" }, "unknown-span"],
    [{ code: "already-pruned" }, "already-pruned"],
    [{ code: "group" }, "group"],
    [{ code: "store-error" }, "store-error"],
    [{ code: "parse" }, "parse"],
    [{ code: "recall-live" }, "live"],
    [{ code: "recall-store-only" }, "store-only"],
    [{ code: "recall-lossy" }, "lossy"],
    [{ code: "copy-lost", loss: "altered" }, "copy-lost:altered"],
  ])("%j is stored as %j", (reason, code) => {
    expect(auditReason(reason)).toBe(code);
  });

  it("maps refusals to the outcome's reject reason, and refuses to map a success", () => {
    expect(rejectReasonOf({ code: "lossy-budget", copy: "absent" })).toBe("lossy-budget");
    expect(rejectReasonOf({ code: "group-refused", refusedBy: "lead" })).toBe("group");
    expect(rejectReasonOf({ code: "store-error" })).toBe("store-error");
    expect(() => rejectReasonOf({ code: "recall-live" })).toThrow(TypeError);
  });
});
