/**
 * Figure 13's fault harness (bench/postgres-faults.ts) with the server restarted in the middle of the load:
 * sessions in worker processes run the agent mix while the server is stopped (`pg_ctl restart -m fast`: every
 * backend ends, connects are refused until it is back) and started again. Afterwards every session is resumed
 * afresh on a healthy pool: every acknowledged decision recalls as promised, no lossy budget is overspent,
 * every audit chain verifies, and every failed call reached its caller — none hung, none silently lost.
 *
 * The shared server is never restarted: this file starts a throwaway server of its own from the installed
 * binaries (test/setup/postgres.ts, `startThrowawayServer`), restarts that one, and stops and deletes it
 * afterwards. Needs those binaries, a real server for the run (like every `needs: "server"` suite) and
 * `npm run build` (the workers are dist/bench/postgres-load-worker.js).
 *
 * The shutdown is `fast` (a clean one: the WAL is flushed). The throwaway server runs with fsync and
 * synchronous_commit off, so after an `immediate` shutdown (a crash) it may forget commits it acknowledged —
 * the server's doing, not the runtime's: with both on, an immediate restart loses nothing here either.
 */
import { spawn, type SpawnOptions } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Pool } from "pg";
import { describeFaults, runFaults, type FaultScenario } from "../../bench/postgres-faults.js";
import { createPool } from "../../src/postgres.js";
import { findBinDir, startThrowawayServer, type StartedServer } from "../setup/postgres.js";
import { expectNothingSilent } from "./fault-checks.js";
import { describeWithServer, uniqueSchema } from "./pg-helpers.js";

const SCENARIO: FaultScenario = {
  name: "server restarted", procs: 2, sessions: 4, poolMax: 3, connectionTimeoutMs: 5000, statementTimeoutMs: 5000,
  terminateEveryMs: null, durationMs: 3000, restartAtMs: 1000,
};

const BIN = findBinDir(process.env);

/**
 * `pg_ctl restart` of the throwaway server: a fast shutdown, then a start with the options of the first one
 * (pg_ctl reads them from postmaster.opts: port, socket directory, fsync off, …), waiting until it accepts
 * connections. As the data directory's owner, like the start (the postgres user when the tests run as root).
 */
function restartServer(server: StartedServer): Promise<void> {
  const data = join(server.dir, "data");
  const owner = statSync(data);
  const asOwner: SpawnOptions = process.getuid?.() === 0 && owner.uid !== 0 ? { uid: owner.uid, gid: owner.gid } : {};
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: "C", LANG: "C" };
  delete env["PGDATA"];
  // -l: the new postmaster writes to the log file, not to this child's pipes (which would then never close).
  const args = ["restart", "-D", data, "-m", "fast", "-w", "-t", "60", "-l", join(server.dir, "server.log")];
  return new Promise((resolve, reject) => {
    const child = spawn(join(server.binDir, "pg_ctl"), args, { ...asOwner, env, cwd: server.dir, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 75_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`pg_ctl restart failed (${code ?? signal}): ${output.trim().slice(-800)}`));
    });
  });
}

describeWithServer("PostgreSQL restarted under load: nothing acknowledged is lost, nothing failed goes unsaid", {
  needs: "server",
  why: "worker processes racing on a real server that is stopped and started in the middle of their load (a throwaway server of this file's own)",
}, () => {
  const binDir = BIN.dir;
  if (binDir === null) {
    const why = `no PostgreSQL server binaries to start a throwaway server with (looked in ${BIN.tried}); install initdb, pg_ctl and postgres, or set PRUNEGUARD_PG_BINDIR`;
    console.warn(`skipped "server restarted mid-load": ${why}`);
    it.skip(`server restarted mid-load [skipped: ${why}]`, () => undefined);
    return;
  }
  let server: StartedServer | undefined;
  let admin: Pool | undefined;
  const schema = uniqueSchema("restartfault");

  beforeAll(async () => {
    server = await startThrowawayServer(binDir);
    admin = createPool({ url: server.url, max: 2 });
  }, 120_000);

  afterAll(async () => {
    await admin?.end().catch(() => undefined);
    // Stops the server and deletes its directory (the schema with it).
    await server?.stop();
  }, 90_000);

  it("server restarted mid-mix: failures surface, acknowledged decisions survive a fresh resume", async () => {
    const s = server!;
    const [f] = await runFaults({ url: s.url, schema, admin: admin!, scenarios: [SCENARIO], restart: () => restartServer(s) });
    console.log(`${f!.scenario.name}: ${describeFaults(f!)}`);
    expect(f!.restarted, "the server was not restarted").toBe(true);
    expect(f!.restartMs).toBeGreaterThan(0);
    expect(f!.failedOutcomes + f!.errors, `no call failed across the restart: ${JSON.stringify(f!.classes)}`).toBeGreaterThan(0);
    expect(f!.verify.acknowledged.reversible + f!.verify.acknowledged.lossy).toBeGreaterThan(0);
    expectNothingSilent(f!);
  }, 120_000);
});
