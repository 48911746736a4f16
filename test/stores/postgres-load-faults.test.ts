/**
 * A small version of figure 13's fault runs (bench/postgres-faults.ts): sessions in worker processes run the
 * agent mix on the real server while this run's backends are terminated, and while sixteen sessions share a
 * pool of two with a 200 ms checkout timeout, whose connections something else
 * in the process holds for 500 ms now and then. Afterwards every session is resumed afresh on a healthy
 * pool: every acknowledged decision recalls as promised, no lossy budget is overspent, every audit chain
 * verifies, and every failed call reached its caller — none hung, none silently lost. Only this run's
 * connections are terminated (by application_name); the shared server is never restarted. Needs a real
 * server and `npm run build` (the workers are dist/bench/postgres-load-worker.js).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Pool } from "pg";
import { describeFaults, runFaults, type FaultResult, type FaultScenario } from "../../bench/postgres-faults.js";
import { expectNothingSilent } from "./fault-checks.js";
import { describeWithServer, dropSchemas, PG_URL, testPool, uniqueSchema } from "./pg-helpers.js";

const SCENARIOS: FaultScenario[] = [
  {
    name: "backends terminated", procs: 2, sessions: 4, poolMax: 3, connectionTimeoutMs: 5000, statementTimeoutMs: 5000,
    terminateEveryMs: 300, durationMs: 2500,
  },
  {
    name: "pool of 2 exhausted", procs: 1, sessions: 16, poolMax: 2, connectionTimeoutMs: 200, statementTimeoutMs: 5000,
    terminateEveryMs: null, durationMs: 2500, hog: { everyMs: 600, holdMs: 500 },
  },
];

describeWithServer("PostgreSQL under load with faults: nothing acknowledged is lost, nothing failed goes unsaid", {
  needs: "server",
  why: "worker processes racing on one server, backends terminated with pg_terminate_backend, a pool exhausted",
}, () => {
  let admin: Pool;
  const schema = uniqueSchema("loadfault");
  let results: FaultResult[] = [];
  beforeAll(async () => {
    admin = testPool(2);
    results = await runFaults({ url: PG_URL, schema, admin, scenarios: SCENARIOS });
    for (const f of results) console.log(`${f.scenario.name}: ${describeFaults(f)}`);
  }, 120_000);
  afterAll(async () => {
    await dropSchemas(admin, [schema]);
    await admin.end();
  });

  it("backends terminated mid-mix: failures surface, acknowledged decisions survive a fresh resume", () => {
    const f = results[0]!;
    expect(f.terminated, "no backend of the run was terminated").toBeGreaterThan(0);
    expect(f.verify.acknowledged.reversible).toBeGreaterThan(0);
    expectNothingSilent(f);
  });

  it("a pool of two under sixteen sessions: checkouts time out as errors or outcomes, never silently", () => {
    const f = results[1]!;
    expect(f.failedOutcomes + f.errors, "the pool never ran out").toBeGreaterThan(0);
    expect(f.classes.some(([k]) => k.includes("pool-timeout") || k.includes("failed:")), JSON.stringify(f.classes)).toBe(true);
    expectNothingSilent(f);
  });
});
