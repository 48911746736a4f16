/**
 * Figure 13's fault runs: the mix of `postgres-load-worker.ts` while the server's backends of this run are
 * terminated (`pg_terminate_backend`, only connections whose `application_name` is this run's), and while a
 * pool of two connections, which something else in the process holds for 500 ms now and then, serves sixteen
 * sessions with a 200 ms checkout timeout. A scenario may also have the server restarted in the middle of the
 * mix (`FaultScenario.restartAtMs`): the harness calls the caller's `FaultRunOptions.restart` then, which
 * stops and starts the server — so it only runs on a server of the caller's own (the tests start a throwaway
 * one); the shared server is never restarted, and figure 13's own scenarios have no restart. Afterwards every
 * session is resumed afresh on a healthy pool and checked (`verify` in the worker): every acknowledged
 * decision recalls as promised, no lossy budget is overspent, every audit chain verifies, and every failed
 * call reached its caller as an outcome or an error — none hung, none lost.
 *
 * Used by figure 13 (`postgres-load.ts`), by test/stores/postgres-load-faults.test.ts (a small run) and by
 * test/stores/postgres-restart-faults.test.ts (a restart, on a throwaway server).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Pool } from "pg";
import { migrate } from "../src/postgres.js";
import { Fleet, type PhaseReport, type VerifyReport, type WorkerConfig } from "./postgres-load-fleet.js";

export interface FaultScenario {
  readonly name: string;
  readonly procs: number;
  /** Sessions per process. */
  readonly sessions: number;
  readonly poolMax: number;
  readonly connectionTimeoutMs: number;
  readonly statementTimeoutMs: number;
  /** Terminate this run's backends every `terminateEveryMs` (± half), or never (`null`). */
  readonly terminateEveryMs: number | null;
  readonly durationMs: number;
  /** Something else in each process holds every pooled connection for a while, now and then (WorkerConfig.hog). */
  readonly hog?: { readonly everyMs: number; readonly holdMs: number };
  /**
   * The server is restarted this many ms into the mix (`FaultRunOptions.restart`, which the run must then
   * have); absent: no restart.
   */
  readonly restartAtMs?: number;
}

export interface FaultResult {
  readonly scenario: FaultScenario;
  /** Backends terminated, over how many rounds. */
  readonly terminated: number;
  readonly terminateRounds: number;
  /** Whether the server was restarted in the mix (`FaultScenario.restartAtMs`), and how long `restart` took (ms; `null`: none). */
  readonly restarted: boolean;
  readonly restartMs: number | null;
  /** Calls of the mix: started, and how each settled. */
  readonly issued: number;
  readonly ok: number;
  /** Refusals the policy makes with a healthy store too (lossy without the flag, budget spent, …). */
  readonly refused: number;
  /** Outcomes that said the store failed (rejected store-error or outcome-unknown, recall unavailable, …). */
  readonly failedOutcomes: number;
  /** Errors thrown to the caller (an append whose span could not be registered, a resume that could not read, …). */
  readonly errors: number;
  readonly hung: number;
  /** Outcome classes with their counts, most frequent first. */
  readonly classes: ReadonlyArray<readonly [string, number]>;
  readonly retries: number;
  readonly verify: VerifyReport;
  /** Sessions with more lossy records than the budget, counted in SQL over the whole run. */
  readonly lossyOverBudgetSql: number;
  /**
   * What went wrong silently: acknowledged decisions not recalled as promised or not in the audit log, calls
   * that never settled, spans held live that the store shows pruned, broken chains, overspent budgets,
   * audit records never written, sessions that could not be resumed. Must be 0.
   */
  readonly silent: number;
}

export interface FaultRunOptions {
  readonly url: string;
  /** A schema of the run's own (migrated here; the caller drops it). */
  readonly schema: string;
  /** A pool for the harness's own queries (terminations, counts); its application_name must differ from the runs'. */
  readonly admin: Pool;
  readonly scenarios: readonly FaultScenario[];
  /**
   * Stops and starts the server (same address, same data), resolving once it accepts connections again:
   * called at `restartAtMs` in the mix of a scenario that has it. Needed only by such scenarios.
   */
  readonly restart?: () => Promise<void>;
  readonly lossyBudget?: number;
  readonly log?: (line: string) => void;
}

/** The two fault runs, full or short. */
export function faultScenarios(short: boolean): FaultScenario[] {
  return [
    {
      name: "backends terminated", procs: 4, sessions: 4, poolMax: 4, connectionTimeoutMs: 5000, statementTimeoutMs: 5000,
      terminateEveryMs: 400, durationMs: short ? 3000 : 8000,
    },
    {
      name: "pool of 2 exhausted", procs: 1, sessions: 16, poolMax: 2, connectionTimeoutMs: 200, statementTimeoutMs: 5000,
      terminateEveryMs: null, durationMs: short ? 2500 : 6000, hog: { everyMs: 600, holdMs: 500 },
    },
  ];
}

const BUDGET = 3;

export async function runFaults(options: FaultRunOptions): Promise<FaultResult[]> {
  const log = options.log ?? (() => undefined);
  const needsRestart = options.scenarios.filter((sc) => sc.restartAtMs !== undefined).map((sc) => sc.name);
  if (needsRestart.length > 0 && options.restart === undefined) {
    throw new Error(`fault scenarios ${needsRestart.join(", ")} restart the server: runFaults needs options.restart`);
  }
  for (const sc of options.scenarios) {
    if (sc.restartAtMs !== undefined && !(sc.restartAtMs >= 0 && sc.restartAtMs < sc.durationMs)) {
      throw new Error(`fault scenario ${sc.name}: restartAtMs (${sc.restartAtMs}) must fall in the mix (0 to ${sc.durationMs} ms)`);
    }
  }
  await migrate(options.admin, { schema: options.schema });
  const bareTable = `${pg.escapeIdentifier(options.schema)}.bench_baseline`;
  await options.admin.query(`CREATE TABLE IF NOT EXISTS ${bareTable} (id bigserial PRIMARY KEY, session text NOT NULL, body text NOT NULL)`);
  const out: FaultResult[] = [];
  for (const [n, scenario] of options.scenarios.entries()) out.push(await runScenario(options, scenario, n, bareTable, log));
  return out;
}

async function runScenario(options: FaultRunOptions, sc: FaultScenario, n: number, bareTable: string, log: (line: string) => void): Promise<FaultResult> {
  const runId = `f${randomBytes(3).toString("hex")}`;
  const appName = `pgfault_${runId}`;
  const budget = options.lossyBudget ?? BUDGET;
  const fleet = Fleet.start(sc.procs);
  let terminated = 0;
  let rounds = 0;
  /** The restart: how long it took, or what it threw (it never rejects); `null` without one. */
  let restarting: Promise<{ readonly ms: number } | { readonly err: unknown } | null> = Promise.resolve(null);
  try {
    await fleet.all((i) => ({
      type: "init",
      cfg: {
        url: options.url, schema: options.schema, appName, proc: i, sessions: sc.sessions, poolMax: sc.poolMax, connectionTimeoutMs: sc.connectionTimeoutMs,
        statementTimeoutMs: sc.statementTimeoutMs, lossyBudget: budget, runId, seed: 7000 + n, bareTable,
        ...(sc.hog === undefined ? {} : { hog: sc.hog }),
      } satisfies WorkerConfig,
    }), 30_000);
    // Some history first, on a healthy server.
    await fleet.all(() => ({ type: "warmup", min: 4, max: 10 }), 60_000);
    log(`faults: ${sc.name}: ${sc.procs * sc.sessions} sessions, ${sc.procs} process${sc.procs === 1 ? "" : "es"}, pool ${sc.poolMax} (connect timeout ${sc.connectionTimeoutMs} ms), ${(sc.durationMs / 1000).toFixed(0)} s${sc.restartAtMs === undefined ? "" : `, server restarted at ${(sc.restartAtMs / 1000).toFixed(1)} s`}`);
    const startAt = Date.now() + 200;
    const graceMs = 20_000;
    const phase = fleet.all<PhaseReport>(() => ({ type: "phase", kind: "mix", startAt, durationMs: sc.durationMs, graceMs }), sc.durationMs + graceMs + 15_000);
    if (sc.restartAtMs !== undefined) {
      const at = startAt + sc.restartAtMs;
      const restart = options.restart!;
      let phaseOver = false;
      void phase.finally(() => (phaseOver = true)).catch(() => undefined);
      // Never rejects: a failed restart is thrown once the phase is over (the workers are still running).
      restarting = (async () => {
        await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
        if (phaseOver) return null; // the phase failed before it: no restart
        const t0 = performance.now();
        try {
          await restart();
        } catch (err) {
          return { err };
        }
        const ms = Math.round(performance.now() - t0);
        log(`faults: ${sc.name}: server restarted in ${ms} ms`);
        return { ms };
      })();
    }
    if (sc.terminateEveryMs !== null) {
      const every = sc.terminateEveryMs;
      let stop = false;
      void phase.finally(() => (stop = true)).catch(() => undefined);
      while (!stop && Date.now() < startAt + sc.durationMs) {
        await new Promise((r) => setTimeout(r, every / 2 + Math.random() * every));
        if (stop) break;
        const terminate = options.admin.query(
          `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`,
          [appName],
        );
        // While the server restarts, a round finds no server: it is skipped, not fatal.
        const r = sc.restartAtMs === undefined ? await terminate : await terminate.catch(() => null);
        if (r === null) continue;
        terminated += Number(r.rows[0]?.n ?? 0);
        rounds++;
      }
    }
    const reports = await phase;
    const restarted = await restarting;
    if (restarted !== null && "err" in restarted) {
      const err = restarted.err;
      throw new Error(`fault scenario ${sc.name}: the server restart failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const verify = mergeVerify(await fleet.all<VerifyReport>(() => ({ type: "verify" }), 120_000));
    // After a restart the admin pool's connections are gone: the pool opens new ones, and a query that still
    // meets a dead one is tried again.
    const over = await adminQuery(
      options.admin, sc.restartAtMs !== undefined,
      `SELECT count(*)::int AS n FROM (SELECT session FROM ${pg.escapeIdentifier(options.schema)}.audit
       WHERE store = 'toolLog' AND session LIKE $1 AND status = 'lossy' GROUP BY session HAVING count(*) > $2) s`,
      [`${runId}-%`, budget],
    );
    const classes = new Map<string, number>();
    for (const rep of reports) {
      for (const [op, s] of Object.entries(rep.ops)) for (const [k, v] of Object.entries(s.outcomes)) classes.set(`${op} ${k}`, (classes.get(`${op} ${k}`) ?? 0) + v);
    }
    const count = (p: string) => [...classes].filter(([k]) => k.split(" ")[1]!.startsWith(p)).reduce((x, [, v]) => x + v, 0);
    const hung = reports.reduce((x, r) => x + r.hung, 0);
    const lossyOverBudgetSql = Number(over.rows[0]?.n ?? 0);
    const v = verify;
    const silent = (v.acknowledged.reversible - v.verified.reversible) + (v.acknowledged.lossy - v.verified.lossy) + v.auditMismatch + hung + v.liveChanged
      + v.chainsBroken + Math.max(v.lossyOverBudget, lossyOverBudgetSql) + v.pendingAuditLeft + v.resumeFailed;
    return {
      scenario: sc, terminated, terminateRounds: rounds, restarted: restarted !== null, restartMs: restarted?.ms ?? null,
      issued: reports.reduce((x, r) => x + r.issued, 0), ok: count("ok"), refused: count("refused:"), failedOutcomes: count("failed:"), errors: count("error:"), hung,
      classes: [...classes].sort((a, b) => b[1] - a[1]), retries: reports.reduce((x, r) => x + r.retries, 0), verify, lossyOverBudgetSql, silent,
    };
  } finally {
    // A phase that failed leaves no restart half done behind it.
    await restarting;
    await fleet.stop();
  }
}

/** Failures of the connection, not of the query: the server went away (restart) or is not back yet. */
function connectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  const msg = typeof e?.message === "string" ? e.message : String(err);
  return /^(57P0[123]|08...)$/.test(code) || ["ECONNREFUSED", "ECONNRESET", "EPIPE"].includes(code)
    || /Connection terminated|not queryable|timeout exceeded when trying to connect|terminating connection|shutting down|starting up/i.test(msg);
}

/** `admin.query`; with `retry`, a query that fails because its connection was lost is tried again, for up to 30 s. */
async function adminQuery(admin: Pool, retry: boolean, sql: string, params: unknown[]): Promise<pg.QueryResult> {
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      return await admin.query(sql, params);
    } catch (err) {
      if (!retry || !connectionLost(err) || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

function mergeVerify(rs: readonly VerifyReport[]): VerifyReport {
  const sum = (f: (r: VerifyReport) => number) => rs.reduce((x, r) => x + f(r), 0);
  return {
    sessions: sum((r) => r.sessions),
    acknowledged: { reversible: sum((r) => r.acknowledged.reversible), lossy: sum((r) => r.acknowledged.lossy) },
    verified: { reversible: sum((r) => r.verified.reversible), lossy: sum((r) => r.verified.lossy) },
    auditMismatch: sum((r) => r.auditMismatch), liveChanged: sum((r) => r.liveChanged), liveChecked: sum((r) => r.liveChecked),
    liveWithoutCopy: sum((r) => r.liveWithoutCopy), inDoubt: sum((r) => r.inDoubt), inDoubtCommitted: sum((r) => r.inDoubtCommitted),
    orphanSpans: sum((r) => r.orphanSpans), chainsOk: sum((r) => r.chainsOk), chainsBroken: sum((r) => r.chainsBroken),
    lossyOverBudget: sum((r) => r.lossyOverBudget), pendingAuditLeft: sum((r) => r.pendingAuditLeft), resumeFailed: sum((r) => r.resumeFailed),
    skippedHung: sum((r) => r.skippedHung), examples: rs.flatMap((r) => r.examples).slice(0, 10),
  };
}

/** The counts of a fault run, in one line for the report. */
export function describeFaults(f: FaultResult): string {
  const v = f.verify;
  const top = f.classes.filter(([k]) => !k.endsWith(" ok")).slice(0, 8).map(([k, n]) => `${k} ${n}`).join(", ");
  const restart = f.scenario.restartAtMs === undefined ? [] : [
    f.restarted ? `server restarted ${(f.scenario.restartAtMs / 1000).toFixed(1)} s into the mix, back in ${f.restartMs} ms` : "server not restarted",
  ];
  return [
    ...restart,
    f.scenario.terminateEveryMs !== null ? `${f.terminated} backends terminated in ${f.terminateRounds} rounds` : `pool of ${f.scenario.poolMax}, connect timeout ${f.scenario.connectionTimeoutMs} ms`,
    `${f.issued} calls: ${f.ok} ok, ${f.refused} refused by policy, ${f.failedOutcomes} failure outcomes, ${f.errors} errors thrown, ${f.hung} hung (${top})`,
    `${f.retries} retried transactions`,
    `acknowledged ${v.acknowledged.reversible} reversible + ${v.acknowledged.lossy} lossy, recalled as promised after a fresh resume ${v.verified.reversible} + ${v.verified.lossy}; ${v.auditMismatch} not in the audit log`,
    `${v.liveChecked} spans held live checked, ${v.liveChanged} changed; ${v.liveWithoutCopy} without a copy (scratch notes, failed persists: lost on resume); ${v.inDoubt} in doubt (${v.inDoubtCommitted} committed); ${v.orphanSpans} registered spans no append returned`,
    `${v.sessions} sessions: ${v.chainsOk} chains verify, ${v.chainsBroken} broken; lossy over budget ${Math.max(v.lossyOverBudget, f.lossyOverBudgetSql)}; audit records left unwritten ${v.pendingAuditLeft}; resume failed ${v.resumeFailed}; skipped (hung) ${v.skippedHung}`,
  ].join("; ");
}
