/**
 * Figure 13's processes: the messages between the parent (`postgres-load.ts`, `postgres-faults.ts`) and the
 * worker processes (`postgres-load-worker.ts`), and `Fleet`, which forks the workers, sends every one a
 * request, waits for all answers within a time cap, and kills them (by pid) when a cap passes. A worker
 * answers each request with exactly one message, in order.
 */
import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** The operations of the mix (and `bare`, the baseline's one-row transaction). */
export const MIX_OPS = ["append", "prune", "prune-lossy", "prune-no-flag", "recall", "search", "summarize-range", "compact", "resume", "end"] as const;
export type MixOp = (typeof MIX_OPS)[number];
export type OpKind = MixOp | "bare";

export interface WorkerConfig {
  /** Server URL (without application_name: the worker adds `appName`). */
  readonly url: string;
  readonly schema: string;
  /** `application_name` of the worker's pool: what the fault harness terminates, and the monitor counts. */
  readonly appName: string;
  /** Worker index (0-based), for session ids and seeds. */
  readonly proc: number;
  /** Concurrent sessions in this process. */
  readonly sessions: number;
  readonly poolMax: number;
  readonly connectionTimeoutMs: number;
  readonly statementTimeoutMs: number;
  /** The session's lossy budget (`limits.lossyBudget`). */
  readonly lossyBudget: number;
  /** Run tag, part of every session id. */
  readonly runId: string;
  readonly seed: number;
  /** The table the bare baseline inserts into (schema-qualified, quoted). */
  readonly bareTable: string;
  /**
   * During a mix phase, every `everyMs` something else in the process (a long transaction, a report) checks
   * out every pooled connection and holds them `holdMs`: the sessions' checkouts wait, and those that wait
   * longer than `connectionTimeoutMs` fail. Absent: the sessions have the pool to themselves.
   */
  readonly hog?: { readonly everyMs: number; readonly holdMs: number };
}

export type ToWorker =
  | { readonly type: "init"; readonly cfg: WorkerConfig }
  /** Untimed: each session runs `min`…`max` ops of an append-heavy mix, so sessions start the figure with some history. */
  | { readonly type: "warmup"; readonly min: number; readonly max: number }
  /** Runs `kind` from `startAt` (epoch ms) until `startAt + durationMs`; ops still running `graceMs` later count as hung. */
  | { readonly type: "phase"; readonly kind: "bare" | "mix"; readonly startAt: number; readonly durationMs: number; readonly graceMs: number }
  /** Makes every pooled backend report its statistics (idle ≥ 1 s, then one query on each connection). */
  | { readonly type: "flush" }
  /** After a fault run: settles every window, resumes each session afresh on a healthy pool and checks it. */
  | { readonly type: "verify" }
  /** One session on a pool of one connection: `ops` mix ops one at a time, each op's server and client CPU measured. */
  | { readonly type: "probe"; readonly ops: number }
  | { readonly type: "stop" };

export interface ProbeReport {
  readonly ops: Partial<Record<OpKind, {
    n: number;
    latMs: number[];
    /** Server backend CPU (µs, /proc/<pid>/schedstat) and this process's CPU (µs), summed over the ops. */
    serverUs: number;
    clientUs: number;
    roundTrips: number;
    /** False when the backend's CPU could not be read for some op (a server elsewhere, a replaced connection). */
    serverKnown: boolean;
  }>>;
}

/** One op kind's figures in one phase of one worker. */
export interface OpStats {
  /** Latency of every op that settled (ms), in completion order. */
  lat: number[];
  /** Round trips counted by the session's `PostgresStore.stats` over the settled ops. */
  roundTrips: number;
  /** Outcome classes: `ok`, `refused:<reason>`, `failed:<why>` (an outcome saying the store failed), `error:<what>` (thrown). */
  outcomes: Record<string, number>;
}

export interface PhaseReport {
  readonly kind: "bare" | "mix";
  readonly startAt: number;
  /** Epoch ms when this worker's last op settled. */
  readonly endAt: number;
  readonly ops: Partial<Record<OpKind, OpStats>>;
  /** Calls started and not settled `graceMs` after the phase's end. */
  readonly hung: number;
  /** Calls started. */
  readonly issued: number;
  /** Transactions the stores retried (serialisation failure, deadlock, unique-key race). */
  readonly retries: number;
  /** The worker process's CPU time over the phase (user + system, ms). */
  readonly cpuMs: number;
  /** Pool samples every 50 ms: mean connections open, mean callers waiting for one, most waiting. */
  readonly pool: { readonly open: number; readonly waiting: number; readonly maxWaiting: number; readonly samples: number };
}

export interface VerifyReport {
  readonly sessions: number;
  /** Decisions the caller was told committed: reversible prunes (range members too) and lossy prunes. */
  readonly acknowledged: { readonly reversible: number; readonly lossy: number };
  /** Of those, how many a freshly resumed window recalls as promised (bytes identical / pruned-unrecoverable lossy). */
  readonly verified: { readonly reversible: number; readonly lossy: number };
  /** Acknowledged decisions whose record is not at the audit seq the outcome named. */
  readonly auditMismatch: number;
  /** Spans the caller holds live (no failure on them, none in doubt) that the resumed window does not show live. */
  readonly liveChanged: number;
  readonly liveChecked: number;
  /** Spans with no copy (a scratch note, or an append whose persist failed): lost on resume, as documented. */
  readonly liveWithoutCopy: number;
  /** Spans some call left in doubt (outcome-unknown); of them, how many the resumed window shows pruned. */
  readonly inDoubt: number;
  readonly inDoubtCommitted: number;
  /** Spans the resumed window has that no append returned (registered, then the reply lost). */
  readonly orphanSpans: number;
  /** Sessions whose audit chain verifies / does not; lossy records over the budget. */
  readonly chainsOk: number;
  readonly chainsBroken: number;
  readonly lossyOverBudget: number;
  /** Audit records windows could still not write after the faults stopped. */
  readonly pendingAuditLeft: number;
  /** Sessions that could not be resumed on the healthy pool. */
  readonly resumeFailed: number;
  /** Sessions not checked because a call of theirs never settled. */
  readonly skippedHung: number;
  /** A few mismatches, described, for the report. */
  readonly examples: string[];
}

export type FromWorker = { readonly type: "ok"; readonly reply: unknown } | { readonly type: "error"; readonly message: string };

/** The built worker script: next to this module in dist/bench, or dist/bench under the repository when run from source (vitest). */
export function workerScript(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const sibling = path.join(here, "postgres-load-worker.js");
  if (existsSync(sibling)) return sibling;
  const built = path.resolve(here, "../dist/bench/postgres-load-worker.js");
  if (existsSync(built)) return built;
  throw new Error(`postgres-load-worker.js is neither next to ${here} nor in dist/bench: run \`npm run build\` first`);
}

/** The URL with `application_name` set (a URL parameter overrides the pool's own setting in `pg`). */
export function withAppName(url: string, appName: string): string {
  const u = new URL(url);
  u.searchParams.set("application_name", appName);
  return u.toString();
}

interface Member {
  readonly child: ChildProcess;
  readonly pending: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void }>;
  stderr: string;
  exited: boolean;
}

/** Worker processes this run forked; every request goes to all of them (or one) with a time cap. */
export class Fleet {
  readonly #members: Member[] = [];

  private constructor() {}

  static start(count: number, script = workerScript()): Fleet {
    const fleet = new Fleet();
    for (let i = 0; i < count; i++) {
      // stdout is the report's: workers never write to it. No inherited loaders (vitest's): the script is built JS.
      const child = fork(script, [], { stdio: ["ignore", "ignore", "pipe", "ipc"], execArgv: [], serialization: "advanced" });
      const m: Member = { child, pending: [], stderr: "", exited: false };
      child.stderr!.on("data", (d: Buffer) => {
        m.stderr = (m.stderr + d.toString("utf8")).slice(-4000);
      });
      child.on("message", (raw) => {
        const msg = raw as FromWorker;
        const waiter = m.pending.shift();
        if (waiter === undefined) return;
        if (msg.type === "ok") waiter.resolve(msg.reply);
        else waiter.reject(new Error(`worker ${i}: ${msg.message}`));
      });
      // A send on a channel that closed reaches the send's callback; anything else about the channel is the exit's.
      child.on("error", () => undefined);
      child.on("exit", (code, signal) => {
        m.exited = true;
        for (const w of m.pending.splice(0)) w.reject(new Error(`worker ${i} exited (${code ?? signal}) before answering${m.stderr ? `: ${m.stderr.trim().slice(-1500)}` : ""}`));
      });
      fleet.#members.push(m);
    }
    return fleet;
  }

  get size(): number {
    return this.#members.length;
  }

  /** Sends `msg(i)` to worker `i` (every worker, or only those in `only`) and waits for all answers, at most `capMs`. */
  async all<T>(msg: (i: number) => ToWorker, capMs: number, only?: readonly number[]): Promise<T[]> {
    const targets = only ?? this.#members.map((_, i) => i);
    let timer: NodeJS.Timeout | undefined;
    const answers = Promise.all(targets.map((i) => this.#ask<T>(i, msg(i))));
    const cap = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`workers gave no answer to ${msg(targets[0] ?? 0).type} within ${(capMs / 1000).toFixed(0)} s`)), capMs);
    });
    try {
      return await Promise.race([answers, cap]);
    } catch (err) {
      this.kill();
      answers.catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  #ask<T>(i: number, msg: ToWorker): Promise<T> {
    const m = this.#members[i]!;
    if (m.exited) return Promise.reject(new Error(`worker ${i} has exited${m.stderr ? `: ${m.stderr.trim().slice(-1500)}` : ""}`));
    return new Promise<T>((resolve, reject) => {
      m.pending.push({ resolve: resolve as (v: unknown) => void, reject });
      m.child.send(msg, (err) => {
        if (err) {
          const idx = m.pending.findIndex((w) => w.reject === reject);
          if (idx >= 0) m.pending.splice(idx, 1);
          reject(err);
        }
      });
    });
  }

  /** Asks every worker to end its pool and exit; kills (by pid) any still running after `capMs`. */
  async stop(capMs = 15_000): Promise<void> {
    const live = this.#members.map((m, i) => ({ m, i })).filter(({ m }) => !m.exited);
    if (live.length === 0) return;
    const exits = Promise.all(live.map(({ m }) => new Promise<void>((resolve) => (m.exited ? resolve() : m.child.once("exit", () => resolve())))));
    for (const { m } of live) {
      // With a callback, a channel that closed meanwhile is an argument, not an 'error' event; the kill below ends it.
      if (m.child.connected) m.child.send({ type: "stop" } satisfies ToWorker, () => undefined);
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([exits.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), capMs)))]);
    clearTimeout(timer);
    if (timedOut) {
      this.kill();
      await exits;
    }
  }

  /** Kills every worker still running (SIGKILL, each by its own pid). */
  kill(): void {
    for (const m of this.#members) if (!m.exited && m.child.pid !== undefined) m.child.kill("SIGKILL");
  }
}
