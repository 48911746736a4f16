/**
 * The commit step every adapter shares, on its own: what it checks against, when it refuses before any
 * write, and what it plans to write. The conformance suite proves each adapter writes the plan.
 */
import { describe, expect, it } from "vitest";
import { commitResult, planCommit, type CommitAccess } from "../../src/stores/commit.js";
import type { StoredRecord } from "../../src/stores/records.js";
import type { CheckResult, PruneDecision, PruneItem, PruneTransaction, StoreCapabilities } from "../../src/stores/store.js";
import { contentHash } from "../../src/hash.js";
import { testDraft } from "./conformance.js";

const caps: StoreCapabilities = { distinguishesAbsent: true, holds: true, writable: true };
const store = (over: Partial<StoreCapabilities> = {}) => ({ name: "t", capabilities: { ...caps, ...over }, retentionMs: null });

const item = (spanId: string, handle: string | null, backed = true): PruneItem => ({
  spanId, kind: "k", backed, handle, hash: contentHash(spanId), text: spanId,
});
const record = (spanId: string, handle: string, text: string | null = spanId): StoredRecord => ({
  handle, spanId, kind: "k", text, hash: contentHash(spanId), createdAt: 0, expiredAt: text === null ? 1 : null,
});

/** Access over a fixed set of records; counts the handles it mints. */
function access(records: StoredRecord[]): CommitAccess & { minted: number } {
  const a = {
    minted: 0,
    find: (i: PruneItem) => records.find((r) => (i.handle === null ? r.spanId === i.spanId : r.handle === i.handle)),
    own: (spanId: string) => records.find((r) => r.spanId === spanId),
    mint: () => `#${100 + ++a.minted}`,
  };
  return a;
}

const reversible = (repersist = false): PruneDecision => ({ status: "reversible", repersist, hold: true, audit: testDraft("reversible") });
const rejected: PruneDecision = { status: "rejected", audit: testDraft("rejected") };

function txn(items: PruneItem[], decide: (checks: readonly CheckResult[]) => readonly PruneDecision[]): PruneTransaction {
  return { session: "s", items, holdUntil: null, decide };
}

describe("planCommit", () => {
  it("checks each backed item against the record the adapter found, and an unbacked one against nothing", () => {
    let seen: readonly CheckResult[] = [];
    planCommit(store(), txn([item("span_1", "#1"), item("span_2", null, false)], (c) => ((seen = c), c.map(() => rejected))), access([record("span_1", "#1")]));
    expect(seen.map((c) => c.copy)).toEqual(["ok", "unbacked"]);
    expect(seen[1]!.conditions).toEqual({ existence: false, addressability: false, provenance: false });
  });

  it("holds a verified copy under its own handle and puts that handle in the draft", () => {
    const plan = planCommit(store(), txn([item("span_1", "#1")], () => [reversible()]), access([record("span_1", "#1")]));
    expect(plan.writes).toEqual([{ item: item("span_1", "#1"), repersist: null, hold: true, handle: "#1" }]);
    expect(plan.drafts[0]!.handle).toBe("#1");
  });

  it("rewrites an expired record in place, and mints a handle only for a span with no record at all", () => {
    const a = access([record("span_1", "#1", null)]);
    const plan = planCommit(store(), txn([item("span_1", "#1"), item("span_2", null)], () => [reversible(true), reversible(true)]), a);
    expect(plan.writes.map((w) => [w.item.spanId, w.repersist, w.handle])).toEqual([["span_1", "rewrite", "#1"], ["span_2", "insert", "#101"]]);
    expect(a.minted).toBe(1);
    expect(plan.handles).toEqual(["#1", "#101"]);
  });

  it("places no hold where the store cannot hold", () => {
    const plan = planCommit(store({ holds: false }), txn([item("span_1", "#1")], () => [reversible()]), access([record("span_1", "#1")]));
    expect(plan.writes.map((w) => w.hold)).toEqual([false]);
  });

  it("plans nothing and keeps the draft's handle empty for a refused item", () => {
    const plan = planCommit(store(), txn([item("span_1", "#1")], () => [rejected]), access([record("span_1", "#1")]));
    expect(plan.writes).toEqual([]);
    expect(plan.handles).toEqual([null]);
    expect(plan.drafts[0]!.handle).toBeNull();
  });

  // Each of these would otherwise write part of a group before failing on a later member.
  it.each([
    ["a reversible decision for an unbacked span", [item("span_1", null, false)], [reversible()], {}, /unbacked span span_1/],
    ["a re-persist into a read-only store", [item("span_1", null)], [reversible(true)], { writable: false }, /read-only/],
    ["a reversible decision for a span with no record", [item("span_1", null)], [reversible()], {}, /no record for span_1/],
    ["the wrong number of decisions", [item("span_1", "#1"), item("span_2", "#2")], [rejected], {}, /1 decisions for 2 items/],
  ] as const)("refuses %s before planning any write", (_, items, decisions, over, error) => {
    const a = access([record("span_2", "#2")]);
    expect(() => planCommit(store(over), txn([...items], () => decisions), a)).toThrow(error);
    expect(a.minted).toBe(0);
  });
});

describe("commitResult", () => {
  it("answers one item per check, with the decision, the final handle and the sealed record", () => {
    const plan = planCommit(store(), txn([item("span_1", "#1")], () => [reversible()]), access([record("span_1", "#1")]));
    const sealed = [{ seq: 1 }] as never;
    expect(commitResult(plan, sealed).items).toEqual([{ check: plan.checks[0], decision: plan.decisions[0], handle: "#1", audit: { seq: 1 } }]);
  });
});
