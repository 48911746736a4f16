/**
 * Benchmark 13: many agents, one PostgreSQL. N concurrent sessions (8, 32, 128; `--quick`: 8) spread over 4
 * worker processes (`postgres-load-worker.ts`), each session a `ContextWindow` on a `PostgresStore` in one
 * shared schema, running an agent's mix — append, prune with and without accept_lossy, recall, search,
 * summarizeRange, compaction points, resume, the session's end — against the baseline of the same clients
 * (same processes, same pools) running bare one-row `BEGIN; INSERT; COMMIT` transactions on the same server,
 * the two interleaved round by round. Per N: throughput ratio, p99 ratio, p50/p99 and round trips per op
 * kind, lock waits (pg_stat_activity sampled every 100 ms), retries and errors; then how each op's p50 and
 * the server's work per op (buffer pages, pg_statio) grow from N = 8 to N = 128, one session's footprint in
 * rows and bytes, and the fault runs (`postgres-faults.ts`). Runs against the server named by
 * `PRUNEGUARD_PG_URL`, in schemas of its own that it drops afterwards; skips with the reason when the
 * variable is unset or the server does not answer.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import type { Pool } from "pg";
import { createPool, migrate, PG_URL_ENV } from "../src/postgres.js";
import { median, quantile } from "./measure.js";
import { describeFaults, faultScenarios, runFaults } from "./postgres-faults.js";
import { Fleet, MIX_OPS, withAppName, type OpKind, type OpStats, type PhaseReport, type ProbeReport, type WorkerConfig } from "./postgres-load-fleet.js";
import { fmtInt, fmtMs, fmtOps, goalAtLeast, goalAtMost, type BenchContext, type Benchmark, type Figure, type Row } from "./report.js";

const PROCS = 4;
/** Most connections one process's pool opens (fewer when it has fewer sessions). */
const POOL_PER_PROC = 8;
const LOSSY_BUDGET = 3;

/** Lock waits and what active backends waited on, sampled from pg_stat_activity. */
interface Waits {
  samples: number;
  /** Sum over samples of backends waiting on a heavyweight lock (wait_event_type 'Lock'). */
  lockWaiting: number;
  maxLockWaiting: number;
  samplesWithLockWait: number;
  active: number;
  /** Sum over samples of connections idle inside a transaction: checked out, the client's turn (its process busy). */
  idleInTx: number;
  /** `type:event` of active backends, counted over samples. */
  events: Map<string, number>;
}

interface PhaseFigures {
  readonly kind: "bare" | "mix";
  readonly wallMs: number;
  readonly ops: Map<OpKind, OpStats>;
  readonly count: number;
  readonly hz: number;
  readonly clientCpuMs: number;
  readonly serverCpuMs: number | null;
  readonly blocks: number;
  readonly tuplesWritten: number;
  readonly waits: Waits;
  readonly poolWaiting: number;
  readonly poolMaxWaiting: number;
  readonly retries: number;
  readonly hung: number;
  readonly deadlocks: number;
  /** Share of the machine's CPU time busy over the phase (/proc/stat; every process, ours and others'); `null` elsewhere. */
  readonly machineBusy: number | null;
}

interface LevelResult {
  readonly n: number;
  readonly poolMax: number;
  readonly phaseMs: number;
  readonly bare: PhaseFigures[];
  readonly mix: PhaseFigures[];
}

/** The machine's CPU time so far, all cores (jiffies): total and idle (idle + iowait); `null` off Linux. */
function machineCpu(): { total: number; idle: number } | null {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { total: f.slice(0, 8).reduce((x, y) => x + y, 0), idle: f[3]! + f[4]! };
  } catch {
    return null;
  }
}

/** What the run reads from the server about its own connections and tables. */
class Monitor {
  readonly #admin: Pool;
  readonly #schema: string;
  #cpuReadable = true;

  constructor(admin: Pool, schema: string) {
    this.#admin = admin;
    this.#schema = schema;
  }

  /** Samples pg_stat_activity for `appName` every 100 ms until the returned function is called. */
  sample(appName: string): () => Promise<Waits> {
    const w: Waits = { samples: 0, lockWaiting: 0, maxLockWaiting: 0, samplesWithLockWait: 0, active: 0, idleInTx: 0, events: new Map() };
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const r = await this.#admin.query(
          `SELECT state, wait_event_type, wait_event FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
          [appName],
        ).catch(() => null);
        if (r !== null) {
          const active = r.rows.filter((x) => x.state === "active");
          const locked = active.filter((x) => x.wait_event_type === "Lock").length;
          w.samples++;
          w.lockWaiting += locked;
          w.maxLockWaiting = Math.max(w.maxLockWaiting, locked);
          if (locked > 0) w.samplesWithLockWait++;
          w.active += active.length;
          w.idleInTx += r.rows.filter((x) => x.state === "idle in transaction").length;
          for (const x of active) {
            const k = x.wait_event_type === null ? "CPU" : `${String(x.wait_event_type)}:${String(x.wait_event)}`;
            w.events.set(k, (w.events.get(k) ?? 0) + 1);
          }
        }
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    return async () => {
      stopped = true;
      await loop;
      return w;
    };
  }

  /** CPU time (ms) each backend of `appName` has used, from /proc (a server on this machine); `null` when unreadable. */
  async serverCpu(appName: string): Promise<Map<number, number> | null> {
    if (!this.#cpuReadable) return null;
    const r = await this.#admin.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, [appName]);
    const out = new Map<number, number>();
    for (const { pid } of r.rows as Array<{ pid: number }>) {
      try {
        if (!readFileSync(`/proc/${pid}/stat`, "utf8").includes("(postgres)")) continue;
        // Nanoseconds on a CPU (schedstat): finer than stat's clock ticks.
        out.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6);
      } catch {
        // A backend that exited since the query.
      }
    }
    // None of the server's backends is a process here: a server on another host or in a container.
    if (out.size === 0 && r.rows.length > 0) {
      this.#cpuReadable = false;
      return null;
    }
    return out;
  }

  /** Buffer pages the schema's store tables were read through (heap, index, TOAST), and tuples written. */
  async tableWork(): Promise<{ blocks: number; written: number }> {
    const r = await this.#admin.query(
      `SELECT coalesce(sum(coalesce(s.heap_blks_read, 0) + coalesce(s.heap_blks_hit, 0) + coalesce(s.idx_blks_read, 0) + coalesce(s.idx_blks_hit, 0)
                       + coalesce(s.toast_blks_read, 0) + coalesce(s.toast_blks_hit, 0) + coalesce(s.tidx_blks_read, 0) + coalesce(s.tidx_blks_hit, 0)), 0)::float8 AS blocks,
              coalesce(sum(t.n_tup_ins + t.n_tup_upd + t.n_tup_del), 0)::float8 AS written
       FROM pg_statio_user_tables s JOIN pg_stat_user_tables t USING (relid) WHERE s.schemaname = $1`,
      [this.#schema],
    );
    return { blocks: Number(r.rows[0]?.blocks ?? 0), written: Number(r.rows[0]?.written ?? 0) };
  }

  /** Deadlocks detected in this database (all its users: other runs on the server count too). */
  async deadlocks(): Promise<number> {
    const r = await this.#admin.query(`SELECT deadlocks::float8 AS d FROM pg_stat_database WHERE datname = current_database()`);
    return Number(r.rows[0]?.d ?? 0);
  }
}

function mergeOps(reports: readonly PhaseReport[]): Map<OpKind, OpStats> {
  const out = new Map<OpKind, OpStats>();
  for (const rep of reports) {
    for (const [k, s] of Object.entries(rep.ops) as Array<[OpKind, OpStats]>) {
      const m = out.get(k) ?? { lat: [], roundTrips: 0, outcomes: {} };
      m.lat.push(...s.lat);
      m.roundTrips += s.roundTrips;
      for (const [o, n] of Object.entries(s.outcomes)) m.outcomes[o] = (m.outcomes[o] ?? 0) + n;
      out.set(k, m);
    }
  }
  return out;
}

async function runLevel(ctx: BenchContext, url: string, schema: string, bareTable: string, monitor: Monitor, n: number, runTag: string): Promise<LevelResult> {
  const per = n / PROCS;
  const poolMax = Math.min(per, POOL_PER_PROC);
  const appName = `${runTag}_n${n}`;
  const phaseMs = ctx.quick ? 2500 : 5000;
  const rounds = ctx.quick ? 1 : 2;
  const fleet = Fleet.start(PROCS);
  const result: LevelResult = { n, poolMax, phaseMs, bare: [], mix: [] };
  try {
    await fleet.all((i) => ({
      type: "init",
      cfg: {
        url, schema, appName, proc: i, sessions: per, poolMax, connectionTimeoutMs: 10_000, statementTimeoutMs: 15_000, lossyBudget: LOSSY_BUDGET,
        runId: `${runTag}n${n}`, seed: n, bareTable,
      } satisfies WorkerConfig,
    }), 30_000);
    const t0 = performance.now();
    const warm = await fleet.all<{ ops: number; errors: number }>(() => ({ type: "warmup", min: ctx.quick ? 4 : 6, max: ctx.quick ? 10 : 20 }), 90_000);
    ctx.log(`13: N=${n}: warm-up ${warm.reduce((x, w) => x + w.ops, 0)} ops in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await fleet.all(() => ({ type: "flush" }), 30_000);
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so a slow moment of the server does not always hit the same side.
      for (const kind of r % 2 === 0 ? (["bare", "mix"] as const) : (["mix", "bare"] as const)) {
        const cpu0 = await monitor.serverCpu(appName);
        const work0 = await monitor.tableWork();
        const dl0 = await monitor.deadlocks();
        const startAt = Date.now() + 150;
        const machine0 = machineCpu();
        const stop = monitor.sample(appName);
        const reports = await fleet.all<PhaseReport>(() => ({ type: "phase", kind, startAt, durationMs: phaseMs, graceMs: 30_000 }), phaseMs + 45_000);
        const machine1 = machineCpu();
        const waits = await stop();
        const cpu1 = await monitor.serverCpu(appName);
        await fleet.all(() => ({ type: "flush" }), 30_000);
        const work1 = await monitor.tableWork();
        const dl1 = await monitor.deadlocks();
        let serverCpuMs: number | null = null;
        if (cpu0 !== null && cpu1 !== null) {
          serverCpuMs = 0;
          for (const [pid, ms] of cpu1) serverCpuMs += ms - (cpu0.get(pid) ?? 0);
        }
        const ops = mergeOps(reports);
        const count = [...ops.values()].reduce((x, s) => x + s.lat.length, 0);
        const wallMs = Math.max(...reports.map((x) => x.endAt)) - startAt;
        const figures: PhaseFigures = {
          kind, wallMs, ops, count, hz: (count * 1000) / wallMs,
          clientCpuMs: reports.reduce((x, rep) => x + rep.cpuMs, 0), serverCpuMs,
          blocks: work1.blocks - work0.blocks, tuplesWritten: work1.written - work0.written, waits,
          poolWaiting: reports.reduce((x, rep) => x + rep.pool.waiting, 0), poolMaxWaiting: Math.max(...reports.map((x) => x.pool.maxWaiting)),
          retries: reports.reduce((x, rep) => x + rep.retries, 0), hung: reports.reduce((x, rep) => x + rep.hung, 0), deadlocks: dl1 - dl0,
          machineBusy: machine0 === null || machine1 === null ? null : 1 - (machine1.idle - machine0.idle) / Math.max(1, machine1.total - machine0.total),
        };
        result[kind].push(figures);
        ctx.log(`13: N=${n} round ${r + 1} ${kind}: ${count} ops in ${(wallMs / 1000).toFixed(1)} s = ${fmtOps(figures.hz)}`);
      }
    }
  } finally {
    await fleet.stop();
  }
  return result;
}

/** One session alone on one connection, after a level: what each op kind costs the server and the client at rest. */
async function runProbe(ctx: BenchContext, url: string, schema: string, bareTable: string, runTag: string, after: number): Promise<ProbeReport> {
  const fleet = Fleet.start(1);
  try {
    await fleet.all(() => ({
      type: "init",
      cfg: {
        url, schema, appName: `${runTag}_probe`, proc: 0, sessions: 1, poolMax: 1, connectionTimeoutMs: 10_000, statementTimeoutMs: 15_000,
        lossyBudget: LOSSY_BUDGET, runId: `${runTag}probe${after}`, seed: 4242, bareTable,
      } satisfies WorkerConfig,
    }), 30_000);
    await fleet.all(() => ({ type: "warmup", min: 16, max: 16 }), 60_000);
    const [report] = await fleet.all<ProbeReport>(() => ({ type: "probe", ops: ctx.quick ? 200 : 400 }), 120_000);
    return report!;
  } finally {
    await fleet.stop();
  }
}

interface ProbeFigures {
  readonly k: OpKind;
  readonly n: number;
  readonly latP50: number;
  /** Mean µs per op; `null` when the server's CPU could not be read. */
  readonly serverUs: number | null;
  readonly clientUs: number;
  readonly roundTrips: number;
}

function probeFigures(p: ProbeReport): Map<OpKind, ProbeFigures> {
  const out = new Map<OpKind, ProbeFigures>();
  for (const k of ["bare", ...MIX_OPS] as const) {
    const o = p.ops[k];
    if (o === undefined || o.n === 0) continue;
    out.set(k, { k, n: o.n, latP50: p50(o.latMs), serverUs: o.serverKnown ? o.serverUs / o.n : null, clientUs: o.clientUs / o.n, roundTrips: o.roundTrips / o.n });
  }
  return out;
}

const fmtUs = (us: number | null) => (us === null ? "n/a" : fmtMs(us / 1000));

function probeRow(after: number, p: Map<OpKind, ProbeFigures>): Figure {
  const mix = [...p.values()].filter((f) => f.k !== "bare");
  const n = mix.reduce((x, f) => x + f.n, 0);
  const known = mix.every((f) => f.serverUs !== null);
  const server = known ? mix.reduce((x, f) => x + f.serverUs! * f.n, 0) / n : null;
  const bare = p.get("bare");
  return {
    bench: 13,
    name: `shared PostgreSQL: server CPU per op, one session alone (after N=${after}), mix vs bare`,
    subject: fmtUs(server),
    baseline: fmtUs(bare?.serverUs ?? null),
    ratio: server === null || bare?.serverUs == null ? "n/a" : `${(server / bare.serverUs).toFixed(2)}×`,
    goal: null,
    detail: `per op kind (ops, server CPU, client CPU, p50, round trips): `
      + [...p.values()].map((f) => `${f.k} ${f.n}: ${fmtUs(f.serverUs)}, ${fmtUs(f.clientUs)}, ${fmtMs(f.latP50)}, ${f.roundTrips.toFixed(1)} RT`).join("; ")
      + (known ? "" : " (server CPU n/a: the server's processes are not readable here)"),
  };
}

/** Figures of one level, over its rounds. */
function summarize(level: LevelResult) {
  const mixOps = mergeOps([]);
  for (const p of level.mix) {
    for (const [k, s] of p.ops) {
      const m = mixOps.get(k) ?? { lat: [], roundTrips: 0, outcomes: {} };
      m.lat.push(...s.lat);
      m.roundTrips += s.roundTrips;
      for (const [o, c] of Object.entries(s.outcomes)) m.outcomes[o] = (m.outcomes[o] ?? 0) + c;
      mixOps.set(k, m);
    }
  }
  const bareLat = level.bare.flatMap((p) => p.ops.get("bare")?.lat ?? []);
  const mixLat = [...mixOps.values()].flatMap((s) => s.lat);
  const sum = (ps: readonly PhaseFigures[], f: (p: PhaseFigures) => number) => ps.reduce((x, p) => x + f(p), 0);
  const mixCount = sum(level.mix, (p) => p.count);
  const bareCount = sum(level.bare, (p) => p.count);
  const serverCpu = (ps: readonly PhaseFigures[], count: number) => (ps.every((p) => p.serverCpuMs !== null) ? sum(ps, (p) => p.serverCpuMs!) / count : null);
  const waits = (ps: readonly PhaseFigures[]) => {
    const samples = sum(ps, (p) => p.waits.samples) || 1;
    const events = new Map<string, number>();
    for (const p of ps) for (const [k, v] of p.waits.events) events.set(k, (events.get(k) ?? 0) + v);
    return {
      mean: sum(ps, (p) => p.waits.lockWaiting) / samples, max: Math.max(0, ...ps.map((p) => p.waits.maxLockWaiting)),
      share: sum(ps, (p) => p.waits.samplesWithLockWait) / samples, active: sum(ps, (p) => p.waits.active) / samples,
      idleInTx: sum(ps, (p) => p.waits.idleInTx) / samples, samples, events,
    };
  };
  const outcomes = new Map<string, number>();
  for (const [op, s] of [...mixOps, ...level.bare.flatMap((p) => [...p.ops])]) {
    for (const [o, c] of Object.entries(s.outcomes)) if (o !== "ok") outcomes.set(`${op} ${o}`, (outcomes.get(`${op} ${o}`) ?? 0) + c);
  }
  return {
    mixOps, bareLat, mixLat, mixCount, bareCount,
    mixHz: median(level.mix.map((p) => p.hz)), bareHz: median(level.bare.map((p) => p.hz)),
    throughputRatio: median(level.mix.map((p, i) => p.hz / level.bare[i]!.hz)),
    clientCpu: { mix: sum(level.mix, (p) => p.clientCpuMs) / mixCount, bare: sum(level.bare, (p) => p.clientCpuMs) / bareCount },
    serverCpu: { mix: serverCpu(level.mix, mixCount), bare: serverCpu(level.bare, bareCount) },
    blocks: { mix: sum(level.mix, (p) => p.blocks) / mixCount, bare: sum(level.bare, (p) => p.blocks) / bareCount },
    written: { mix: sum(level.mix, (p) => p.tuplesWritten) / mixCount, bare: sum(level.bare, (p) => p.tuplesWritten) / bareCount },
    waits: { mix: waits(level.mix), bare: waits(level.bare) },
    pool: {
      mix: sum(level.mix, (p) => p.poolWaiting) / level.mix.length, bare: sum(level.bare, (p) => p.poolWaiting) / level.bare.length,
      max: Math.max(0, ...level.mix.map((p) => p.poolMaxWaiting)),
    },
    busy: {
      mix: level.mix.every((p) => p.machineBusy !== null) ? median(level.mix.map((p) => p.machineBusy!)) : null,
      bare: level.bare.every((p) => p.machineBusy !== null) ? median(level.bare.map((p) => p.machineBusy!)) : null,
    },
    retries: sum(level.mix, (p) => p.retries), hung: sum([...level.mix, ...level.bare], (p) => p.hung), deadlocks: sum([...level.mix, ...level.bare], (p) => p.deadlocks),
    outcomes,
  };
}

type Summary = ReturnType<typeof summarize>;

const p50 = (xs: readonly number[]) => quantile(xs, 0.5);
const p99 = (xs: readonly number[]) => quantile(xs, 0.99);

function levelRows(level: LevelResult, s: Summary): Figure[] {
  const n = level.n;
  const per = n / PROCS;
  const counts = MIX_OPS.filter((k) => s.mixOps.has(k)).map((k) => `${k} ${s.mixOps.get(k)!.lat.length}`).join(", ");
  const failures = [...s.outcomes].filter(([k]) => !k.includes(" refused:")).map(([k, v]) => `${k} ${v}`).join(", ") || "none";
  const refusals = [...s.outcomes].filter(([k]) => k.includes(" refused:")).map(([k, v]) => `${k.replace(" refused:", " ")} ${v}`).join(", ") || "none";
  const cpu = (x: number | null) => (x === null ? "n/a" : fmtMs(x));
  const pct = (x: number | null) => (x === null ? "n/a" : `${(x * 100).toFixed(0)}%`);
  const perOp = MIX_OPS.filter((k) => s.mixOps.has(k)).map((k) => {
    const o = s.mixOps.get(k)!;
    return `${k} ${fmtMs(p50(o.lat))} / ${fmtMs(p99(o.lat))}, ${(o.roundTrips / o.lat.length).toFixed(1)} RT`;
  }).join("; ");
  const topEvents = (e: Map<string, number>, samples: number) =>
    [...e].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, v]) => `${k} ${(v / samples).toFixed(2)}`).join(", ");
  const rounds = level.mix.length;
  return [
    {
      bench: 13,
      name: `shared PostgreSQL, N=${n}: mix ops/s vs bare one-row txn/s`,
      subject: fmtOps(s.mixHz),
      baseline: fmtOps(s.bareHz),
      ratio: `${s.throughputRatio.toFixed(2)}×`,
      goal: goalAtLeast(s.throughputRatio, 0.5),
      detail: `${fmtInt(s.mixCount)} mix ops (${counts}) and ${fmtInt(s.bareCount)} bare transactions, ${rounds} round${rounds === 1 ? "" : "s"} of ${level.phaseMs / 1000} s each; `
        + `${PROCS} processes × ${per} sessions, pool of ${level.poolMax} per process (${PROCS * level.poolMax} connections); `
        + `client CPU ${fmtMs(s.clientCpu.mix)}/op (bare ${fmtMs(s.clientCpu.bare)}), server CPU ${cpu(s.serverCpu.mix)}/op (bare ${cpu(s.serverCpu.bare)}); `
        + `machine CPU busy ${pct(s.busy.mix)} (bare ${pct(s.busy.bare)}); `
        + `callers waiting for a pooled connection, all pools: mean ${s.pool.mix.toFixed(1)} (bare ${s.pool.bare.toFixed(1)}), most in one pool ${s.pool.max}; `
        + `failures: ${failures}; policy refusals: ${refusals}; ${s.hung} hung`,
    },
    {
      bench: 13,
      name: `shared PostgreSQL, N=${n}: p99 latency, mix vs bare`,
      subject: fmtMs(p99(s.mixLat)),
      baseline: fmtMs(p99(s.bareLat)),
      ratio: `${(p99(s.mixLat) / p99(s.bareLat)).toFixed(2)}×`,
      goal: goalAtMost(p99(s.mixLat) / p99(s.bareLat), 3),
      detail: `p50 / p99 and round trips per op: ${perOp}; bare ${fmtMs(p50(s.bareLat))} / ${fmtMs(p99(s.bareLat))}, 1 RT; all mix ops p50 ${fmtMs(p50(s.mixLat))}`,
    },
    {
      bench: 13,
      name: `shared PostgreSQL, N=${n}: backends waiting on a lock (mean), mix vs bare`,
      subject: `${s.waits.mix.mean.toFixed(2)} (max ${s.waits.mix.max})`,
      baseline: `${s.waits.bare.mean.toFixed(2)} (max ${s.waits.bare.max})`,
      ratio: `${(s.waits.mix.share * 100).toFixed(1)}% of samples`,
      goal: null,
      detail: `pg_stat_activity of this level's connections every 100 ms (${s.waits.mix.samples} samples in the mix): mean active ${s.waits.mix.active.toFixed(1)}, `
        + `idle in transaction ${s.waits.mix.idleInTx.toFixed(1)} (bare ${s.waits.bare.active.toFixed(1)} active, ${s.waits.bare.idleInTx.toFixed(1)} idle in transaction), `
        + `by wait (mean backends): ${topEvents(s.waits.mix.events, s.waits.mix.samples) || "none"}; bare: ${topEvents(s.waits.bare.events, s.waits.bare.samples) || "none"}; `
        + `${s.retries} transactions retried by the stores (40001/40P01/23505); ${s.deadlocks} deadlocks in the database (pg_stat_database, every user of it); `
        + `server work per op: ${s.blocks.mix.toFixed(0)} buffer pages and ${s.written.mix.toFixed(1)} tuples written (bare ${s.blocks.bare.toFixed(0)}, ${s.written.bare.toFixed(1)})`,
    },
  ];
}

/** How each op's cost moves from the smallest to the largest N. */
function growthRows(a: LevelResult, sa: Summary, pa: Map<OpKind, ProbeFigures>, b: LevelResult, sb: Summary, pb: Map<OpKind, ProbeFigures>): Figure[] {
  const bareA = p50(sa.bareLat);
  const bareB = p50(sb.bareLat);
  const growth = MIX_OPS.filter((k) => sa.mixOps.has(k) && sb.mixOps.has(k)).map((k) => {
    const oa = sa.mixOps.get(k)!;
    const ob = sb.mixOps.get(k)!;
    const raw = p50(ob.lat) / p50(oa.lat);
    return { k, a: p50(oa.lat), b: p50(ob.lat), raw, normalized: raw / (bareB / bareA), rtA: oa.roundTrips / oa.lat.length, rtB: ob.roundTrips / ob.lat.length };
  });
  const worst = growth.reduce((w, g) => (g.normalized > w.normalized ? g : w), growth[0]!);
  return [
    {
      bench: 13,
      name: `shared PostgreSQL: p50 per op, N=${b.n} vs N=${a.n}, each over its bare p50 (worst op)`,
      subject: `${worst.k} ${fmtMs(worst.b)}`,
      baseline: `${fmtMs(worst.a)}`,
      ratio: `${worst.normalized.toFixed(2)}×`,
      goal: goalAtMost(worst.normalized, 2),
      detail: `bare p50 ${fmtMs(bareA)} → ${fmtMs(bareB)} (${(bareB / bareA).toFixed(2)}×); per op p50 N=${a.n} → N=${b.n} (raw ×, over bare ×, round trips): `
        + growth.map((g) => `${g.k} ${fmtMs(g.a)} → ${fmtMs(g.b)} (${g.raw.toFixed(2)}×, ${g.normalized.toFixed(2)}×, ${g.rtA.toFixed(1)} → ${g.rtB.toFixed(1)} RT)`).join("; "),
    },
    serverGrowth(a, sa, pa, b, sb, pb),
  ];
}

/** The server's CPU per op kind with one session alone, after the smallest and after the largest N (more rows of other sessions). */
function serverGrowth(a: LevelResult, sa: Summary, pa: Map<OpKind, ProbeFigures>, b: LevelResult, sb: Summary, pb: Map<OpKind, ProbeFigures>): Figure {
  const blocks = `buffer pages per mix op under load ${sa.blocks.mix.toFixed(0)} → ${sb.blocks.mix.toFixed(0)} (${(sb.blocks.mix / sa.blocks.mix).toFixed(2)}×), `
    + `tuples written per op ${sa.written.mix.toFixed(1)} → ${sb.written.mix.toFixed(1)}, server CPU per op under load ${sa.serverCpu.mix === null ? "n/a" : fmtMs(sa.serverCpu.mix)} → ${sb.serverCpu.mix === null ? "n/a" : fmtMs(sb.serverCpu.mix)}`;
  const growth = MIX_OPS.flatMap((k) => {
    const x = pa.get(k);
    const y = pb.get(k);
    return x === undefined || y === undefined || x.serverUs === null || y.serverUs === null ? [] : [{ k, a: x.serverUs, b: y.serverUs, r: y.serverUs / x.serverUs }];
  });
  const name = `shared PostgreSQL: server CPU per op alone, after N=${b.n} vs after N=${a.n}, over the bare transaction's (worst op)`;
  if (growth.length === 0) return { bench: 13, name, subject: "n/a", baseline: "n/a", ratio: "n/a", goal: null, detail: `the server's processes are not readable here; ${blocks}` };
  // The bare transaction probed beside them is the baseline: whatever the machine did between the two probes
  // (another tenant, a checkpoint, the CPU's clock) moves it too, and its own table grew with every level.
  const bareA = pa.get("bare")?.serverUs ?? null;
  const bareB = pb.get("bare")?.serverUs ?? null;
  const drift = bareA !== null && bareB !== null && bareA > 0 ? bareB / bareA : null;
  const over = (r: number): number => (drift === null ? r : r / drift);
  const worst = growth.reduce((w, g) => (over(g.r) > over(w.r) ? g : w), growth[0]!);
  const r = over(worst.r);
  return {
    bench: 13,
    name,
    subject: `${worst.k} ${fmtUs(worst.b)}`,
    baseline: fmtUs(worst.a),
    ratio: `${r.toFixed(2)}×`,
    goal: goalAtMost(r, 1.5),
    detail: `one session on one connection, the schema holding every earlier session's rows; `
      + `bare one-row transaction ${drift === null ? "n/a" : `${fmtUs(bareA!)} → ${fmtUs(bareB!)} (${drift.toFixed(2)}×, the ratio divides by it)`}; `
      + `per op (raw ×): ${growth.map((g) => `${g.k} ${fmtUs(g.a)} → ${fmtUs(g.b)} (${g.r.toFixed(2)}×)`).join(", ")}; ${blocks}`,
  };
}

/** One session's footprint: rows and bytes of the store's tables, per session. */
async function footprint(admin: Pool, schema: string): Promise<Figure> {
  const q = pg.escapeIdentifier(schema);
  const sizes = await admin.query(
    `SELECT c.relname AS t, pg_total_relation_size(c.oid)::float8 AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> 'bench_baseline' ORDER BY 2 DESC`,
    [schema],
  );
  const counts = await admin.query(
    `SELECT (SELECT count(DISTINCT session) FROM ${q}.spans)::float8 AS sessions, (SELECT count(*) FROM ${q}.spans)::float8 AS spans,
            (SELECT count(*) FROM ${q}.records)::float8 AS records, (SELECT count(*) FROM ${q}.audit)::float8 AS audit,
            (SELECT coalesce(sum(octet_length(text)), 0) FROM ${q}.records)::float8 AS text_bytes,
            (SELECT count(*) FROM ${q}.sessions)::float8 AS session_rows, (SELECT count(*) FROM ${q}.handles)::float8 AS handles,
            (SELECT count(*) FROM ${q}.audit_heads)::float8 AS heads`,
  );
  const indexes = await admin.query(
    `SELECT c.relname AS i, pg_relation_size(c.oid)::float8 AS bytes, coalesce(u.idx_scan, 0)::float8 AS scans FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_index x ON x.indexrelid = c.oid JOIN pg_class t ON t.oid = x.indrelid
     LEFT JOIN pg_stat_user_indexes u ON u.indexrelid = c.oid
     WHERE n.nspname = $1 AND c.relkind = 'i' AND t.relname = 'records' ORDER BY 2 DESC`,
    [schema],
  );
  const hot = await admin.query(`SELECT n_tup_upd::float8 AS upd, n_tup_hot_upd::float8 AS hot FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'records'`, [schema]);
  const c = counts.rows[0] as Record<string, number>;
  const sessions = Math.max(1, Number(c["sessions"]));
  const total = (sizes.rows as Array<{ t: string; bytes: number }>).reduce((x, r) => x + Number(r.bytes), 0);
  const rows = ["spans", "records", "audit", "session_rows", "handles", "heads"].reduce((x, k) => x + Number(c[k]), 0);
  const kb = (b: number) => `${(b / 1024).toFixed(1)} kB`;
  return {
    bench: 13,
    name: "shared PostgreSQL: one session's footprint (rows, bytes with indexes and TOAST)",
    subject: `${kb(total / sessions)}, ${(rows / sessions).toFixed(0)} rows`,
    baseline: `${kb(Number(c["text_bytes"]) / sessions)} of copied text`,
    ratio: `${(total / Math.max(1, Number(c["text_bytes"]))).toFixed(2)}×`,
    goal: null,
    detail: `${fmtInt(sessions)} sessions, ${(Number(c["spans"]) / sessions).toFixed(1)} spans, ${(Number(c["records"]) / sessions).toFixed(1)} copies and ${(Number(c["audit"]) / sessions).toFixed(1)} audit records each; `
      + `${kb(total / Math.max(1, Number(c["spans"])))} per span; by table (per session): `
      + (sizes.rows as Array<{ t: string; bytes: number }>).map((r) => `${r.t} ${kb(Number(r.bytes) / sessions)}`).join(", ")
      + `; of records, its indexes (size per session, scans over the run): ${(indexes.rows as Array<{ i: string; bytes: number; scans: number }>).map((r) => `${r.i} ${kb(Number(r.bytes) / sessions)} ${fmtInt(Number(r.scans))}`).join(", ")}`
      + `; records updated ${fmtInt(Number(hot.rows[0]?.upd ?? 0))} times, ${fmtInt(Number(hot.rows[0]?.hot ?? 0))} of them HOT (no index touched)`,
  };
}

export const postgresLoadBench: Benchmark = {
  id: 13,
  title: `many agents, one PostgreSQL: N concurrent sessions over ${PROCS} processes, with faults`,
  async run(ctx) {
    const name = "shared PostgreSQL under load: mix vs bare one-row txn";
    const url = process.env[PG_URL_ENV];
    if (url === undefined || url === "") return [{ bench: 13, name, skipped: `${PG_URL_ENV} is not set` }];
    const tag = `pgload_${randomBytes(4).toString("hex")}`;
    const admin = createPool({ url: withAppName(url, `${tag}_mon`), max: 3, connectionTimeoutMs: 3000 });
    try {
      await admin.query("SELECT 1");
    } catch (err) {
      await admin.end().catch(() => undefined);
      const where = url.replace(/\/\/[^@/]*@/, "//");
      return [{ bench: 13, name, skipped: `server unreachable at ${where}: ${err instanceof Error ? err.message : String(err)}` }];
    }
    const schema = tag;
    const faultSchema = `${tag}_faults`;
    const bareTable = `${pg.escapeIdentifier(schema)}.bench_baseline`;
    const rows: Row[] = [];
    try {
      await migrate(admin, { schema });
      await admin.query(`CREATE TABLE ${bareTable} (id bigserial PRIMARY KEY, session text NOT NULL, body text NOT NULL)`);
      const monitor = new Monitor(admin, schema);
      const levels: Array<{ level: LevelResult; summary: Summary; probe: Map<OpKind, ProbeFigures> | null }> = [];
      const ns = ctx.quick ? [8] : [8, 32, 128];
      for (const n of ns) {
        const level = await runLevel(ctx, url, schema, bareTable, monitor, n, tag);
        const summary = summarize(level);
        // At rest after the smallest and the largest N (the same ops, the same seed): what each op costs with fewer and with more rows of other sessions.
        const probe = n === ns[0] || n === ns.at(-1) ? probeFigures(await runProbe(ctx, url, schema, bareTable, tag, n)) : null;
        levels.push({ level, summary, probe });
        rows.push(...levelRows(level, summary));
      }
      const a = levels[0]!;
      const b = levels.at(-1)!;
      rows.push(probeRow(b.level.n, b.probe!));
      if (levels.length > 1) rows.push(...growthRows(a.level, a.summary, a.probe!, b.level, b.summary, b.probe!));
      rows.push(await footprint(admin, schema));
      ctx.log("13: fault runs");
      const faults = await runFaults({ url, schema: faultSchema, admin, scenarios: faultScenarios(ctx.quick), log: ctx.log });
      for (const f of faults) {
        const v = f.verify;
        const ack = v.acknowledged.reversible + v.acknowledged.lossy;
        rows.push({
          bench: 13,
          name: `shared PostgreSQL with faults: ${f.scenario.name}, ${f.scenario.procs * f.scenario.sessions} sessions`,
          subject: `${v.verified.reversible + v.verified.lossy}/${ack} acknowledged decisions as promised`,
          baseline: `${f.failedOutcomes + f.errors} failures surfaced`,
          ratio: `${f.silent} silent`,
          goal: { text: "0 silent", met: f.silent === 0 },
          detail: describeFaults(f) + (v.examples.length > 0 ? `; e.g. ${v.examples.slice(0, 3).join(" | ")}` : ""),
        });
      }
      return rows;
    } finally {
      for (const s of [schema, faultSchema]) {
        await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(s)} CASCADE`).catch((err: unknown) => {
          ctx.log(`could not drop schema ${s}: ${err instanceof Error ? err.message : String(err)}`);
        });
      }
      await admin.end();
    }
  },
};
