/**
 * The commit step every adapter shares, inside its prune transaction: check each item against the record
 * the adapter read, ask the window's `decide` once, validate every decision before the first write, and
 * work out what to write — re-persist (over the span's own record, or as a new one under a fresh handle),
 * hold, and one audit draft per item. The adapter then writes the plan and seals the drafts in the same
 * transaction; if anything throws, nothing is committed.
 */
import type { AuditDraft, AuditRecord } from "../audit.js";
import { computeCheck, unbackedCheck } from "./check.js";
import { readOnly } from "./records.js";
import { recordState, type StoredRecord } from "./records.js";
import type { BackingStore, CheckResult, PruneCommit, PruneDecision, PruneItem, PruneTransaction } from "./store.js";

/** What the commit step reads through the adapter, inside its transaction. */
export interface CommitAccess {
  /** The record the item's handle names, or with no handle the span's own record. */
  find(item: PruneItem): StoredRecord | undefined;
  /** The span's own record, by span id. */
  own(spanId: string): StoredRecord | undefined;
  /** Mints the session's next handle; called only to re-persist a span that has no record at all. */
  mint(): string;
}

/** One reversible item's writes. */
export interface CommitWrite {
  readonly item: PruneItem;
  /** Write the window's bytes back over the span's own record, or insert them as a new record, or neither. */
  readonly repersist: "rewrite" | "insert" | null;
  /** Place a hold (until the transaction's `holdUntil`). */
  readonly hold: boolean;
  /** The record's handle: its own, or the one minted for an insert. */
  readonly handle: string;
}

export interface CommitPlan {
  readonly checks: readonly CheckResult[];
  readonly decisions: readonly PruneDecision[];
  /** Per item, the final handle when reversible, else `null`. */
  readonly handles: readonly (string | null)[];
  readonly writes: readonly CommitWrite[];
  /** One audit draft per item, with the final handle filled in. */
  readonly drafts: readonly AuditDraft[];
  /** How many decisions are lossy: what the session's counter grows by when the store keeps it. */
  readonly lossy: number;
}

/**
 * Checks, decides and validates; returns what to write. Throws before any write when a decision cannot be
 * applied. `lossyUsed` is the session's lossy counter as the adapter read it inside the transaction (read
 * only with `txn.lossyBudget`).
 */
export function planCommit(
  store: Pick<BackingStore, "name" | "capabilities" | "retentionMs">,
  txn: PruneTransaction,
  access: CommitAccess,
  lossyUsed: number = 0,
): CommitPlan {
  const found = txn.items.map((item) => (item.backed ? access.find(item) : undefined));
  const checks = txn.items.map((item, i) =>
    item.backed ? computeCheck(item.handle, item.spanId, item.hash, recordState(found[i]), store) : unbackedCheck(),
  );
  const budget = txn.lossyBudget;
  const decisions = txn.decide(checks, budget === null || budget === undefined ? Number.POSITIVE_INFINITY : Math.max(0, budget - lossyUsed));
  if (decisions.length !== checks.length) {
    throw new Error(`decide returned ${decisions.length} decisions for ${checks.length} items`);
  }
  // The span's own record: the one just read when it is the span's, else read by span id.
  const own = txn.items.map((item, i) => {
    if (decisions[i]!.status !== "reversible") return undefined;
    const read = found[i];
    return read !== undefined && read.spanId === item.spanId ? read : access.own(item.spanId);
  });
  decisions.forEach((d, i) => {
    const item = txn.items[i]!;
    if (d.status !== "reversible") return;
    if (!item.backed) throw new Error(`store ${store.name}: reversible decision for unbacked span ${item.spanId}`);
    if (d.repersist && !store.capabilities.writable) throw readOnly(store.name);
    if (!d.repersist && own[i] === undefined) throw new Error(`store ${store.name}: no record for ${item.spanId}`);
  });
  const writes: CommitWrite[] = [];
  const handles = decisions.map((d, i) => {
    if (d.status !== "reversible") return null;
    const item = txn.items[i]!;
    const existing = own[i];
    const repersist = !d.repersist ? null : existing === undefined ? "insert" : "rewrite";
    const handle = existing?.handle ?? access.mint();
    writes.push({ item, repersist, hold: d.hold && store.capabilities.holds, handle });
    return handle;
  });
  // A re-persist may have minted the handle; otherwise the draft already names it and is used as it is.
  const drafts = decisions.map((d, i) => {
    const handle = handles[i]!;
    return handle === null || d.audit.handle === handle ? d.audit : { ...d.audit, handle };
  });
  const lossy = decisions.filter((d) => d.status === "lossy").length;
  if (budget !== null && budget !== undefined && lossy > Math.max(0, budget - lossyUsed)) {
    throw new Error(`store ${store.name}: ${lossy} lossy decisions with ${Math.max(0, budget - lossyUsed)} of the session's budget left`);
  }
  return { checks, decisions, handles, writes, drafts, lossy };
}

/**
 * The lossy units a session's counter says are spent, as a commit or a reservation may count them. Every
 * lossy commitment a store makes is added to its counter in the same transaction, so a counter below the
 * lossy commitments the store's own chain records for the session was reset or edited behind the runtime:
 * the budget then counts as spent (lossy commitments are refused) instead of being handed out again. A
 * counter at or above the chain's count is taken as it is (it also holds reservations for other stores).
 */
export function lossySpent(counter: number, chainLossy: number): number {
  return counter < chainLossy ? Number.POSITIVE_INFINITY : counter;
}

/** The commit's answer, once the adapter has sealed the plan's drafts (same order). */
export function commitResult(plan: CommitPlan, records: readonly AuditRecord[]): PruneCommit {
  return {
    items: plan.checks.map((check, i) => ({ check, decision: plan.decisions[i]!, handle: plan.handles[i]!, audit: records[i]! })),
  };
}
