/**
 * The checks every fault run of bench/postgres-faults.ts must pass, shared by
 * test/stores/postgres-load-faults.test.ts and test/stores/postgres-restart-faults.test.ts.
 */
import { expect } from "vitest";
import type { FaultResult } from "../../bench/postgres-faults.js";

/** Nothing went wrong silently: every call settled and said how, every acknowledged decision survived a fresh resume. */
export function expectNothingSilent(f: FaultResult): void {
  const v = f.verify;
  expect(f.hung, "calls that never settled").toBe(0);
  expect(v.skippedHung).toBe(0);
  expect(v.resumeFailed, v.examples.join("\n")).toBe(0);
  expect(v.verified, v.examples.join("\n")).toEqual(v.acknowledged);
  expect(v.auditMismatch, v.examples.join("\n")).toBe(0);
  expect(v.liveChanged, v.examples.join("\n")).toBe(0);
  expect(v.chainsBroken, v.examples.join("\n")).toBe(0);
  expect(v.chainsOk).toBe(v.sessions);
  expect(v.lossyOverBudget).toBe(0);
  expect(f.lossyOverBudgetSql).toBe(0);
  expect(v.pendingAuditLeft).toBe(0);
  // Every call settled as ok, a refusal, a failure outcome or a thrown error: none is unaccounted for.
  expect(f.ok + f.refused + f.failedOutcomes + f.errors).toBe(f.issued);
  expect(f.silent).toBe(0);
}
