/**
 * Measuring side by side. In-process work runs under tinybench, all tasks of a comparison in one bench,
 * repeated for several rounds so a noisy moment hits every task of a round; child processes are timed
 * with `process.hrtime`, baseline and subject interleaved run by run. Figures are medians over rounds.
 */
import { spawnSync } from "node:child_process";
import { Bench, type FnOptions } from "tinybench";

export interface MicroTask {
  readonly name: string;
  readonly fn: () => unknown;
  readonly options?: FnOptions;
}

/** One task's figures: medians over rounds of each round's statistic. */
export interface MicroResult {
  readonly name: string;
  /** Mean latency (ms). */
  readonly mean: number;
  readonly p50: number;
  readonly p99: number;
  /** Operations per second, `1000 / mean`. */
  readonly hz: number;
  readonly samples: number;
}

export interface MicroOptions {
  readonly rounds: number;
  /** Time budget per task per round (ms). */
  readonly time: number;
  readonly warmupTime?: number;
}

/**
 * Runs every task in `rounds` fresh benches (task order rotated per round) and returns per-task medians,
 * plus the per-round ratio of each task's mean to the first task's (the baseline), median over rounds.
 */
export async function compareMicro(
  tasks: readonly MicroTask[],
  options: MicroOptions,
): Promise<{ results: MicroResult[]; ratioToFirst: number[] }> {
  const perRound: Array<Map<string, { mean: number; p50: number; p99: number; samples: number }>> = [];
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      time: options.time,
      warmupTime: options.warmupTime ?? Math.min(100, options.time / 2),
      iterations: 16,
      // Each sample is one call between two timer reads; the reads' own cost is not the task's.
      subtractTimerOverhead: true,
    });
    const order = tasks.map((_, i) => tasks[(i + round) % tasks.length]!);
    for (const t of order) bench.add(t.name, t.fn, t.options);
    await bench.run();
    const m = new Map<string, { mean: number; p50: number; p99: number; samples: number }>();
    for (const task of bench.tasks) {
      const r = task.result;
      if (r.state !== "completed") throw new Error(`benchmark task ${task.name} did not complete: ${r.state}${"error" in r ? `: ${String(r.error)}` : ""}`);
      m.set(task.name, { mean: r.latency.mean, p50: r.latency.p50, p99: r.latency.p99, samples: r.latency.samplesCount });
    }
    perRound.push(m);
  }
  const results = tasks.map((t): MicroResult => {
    const of = (k: "mean" | "p50" | "p99") => median(perRound.map((m) => m.get(t.name)![k]));
    const mean = of("mean");
    return { name: t.name, mean, p50: of("p50"), p99: of("p99"), hz: 1000 / mean, samples: perRound.reduce((n, m) => n + m.get(t.name)!.samples, 0) };
  });
  const first = tasks[0]!.name;
  const ratioToFirst = tasks.map((t) => median(perRound.map((m) => m.get(t.name)!.mean / m.get(first)!.mean)));
  return { results, ratioToFirst };
}

export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

/** Linear-interpolated quantile of unsorted values. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo]! + (s[hi]! - s[lo]!) * (at - lo);
}

export interface Command {
  readonly name: string;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Exit codes that count as success (default `[0]`). */
  readonly okCodes?: readonly number[];
  /** Variables added to the environment of this command only. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface CommandRun {
  readonly ms: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command once, timed wall-clock; throws with its output when it fails. */
export function runTimed(c: Command): CommandRun {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(c.cmd, [...c.args], { cwd: c.cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1", ...c.env } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  if (!(c.okCodes ?? [0]).includes(r.status ?? -1)) {
    throw new Error(`${c.name} exited ${r.status ?? r.signal}:\n${(r.stdout + r.stderr).slice(0, 4000)}`);
  }
  return { ms, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Times commands `runs` times each, interleaved (a, b, a, b …, starting order alternating), after one
 * untimed warm-up run of each (file cache, lazy binaries). Returns every run per command.
 */
export function timeInterleaved(commands: readonly Command[], runs: number): CommandRun[][] {
  for (const c of commands) runTimed(c);
  const out: CommandRun[][] = commands.map(() => []);
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? commands.map((_, j) => j) : commands.map((_, j) => commands.length - 1 - j);
    for (const j of order) out[j]!.push(runTimed(commands[j]!));
  }
  return out;
}
