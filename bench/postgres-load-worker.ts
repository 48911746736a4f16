/**
 * A worker process of figure 13 (forked by `Fleet`, `postgres-load-fleet.ts`): `cfg.sessions` agents in one
 * process, each a `ContextWindow` on a `PostgresStore` of its own over the process's one pool, all in one
 * shared schema. It answers the parent's requests (see `ToWorker`): runs the bare baseline (one-row
 * `BEGIN; INSERT; COMMIT` transactions) or the mix for a timed phase, makes its backends report their
 * statistics, and after a fault run checks every session in a freshly resumed window.
 *
 * The mix is an agent's loop: tool calls and results appended (a few hundred to a few thousand
 * characters), prunes (drop, summarize, compress; a kind with no copy pruned with and without
 * accept_lossy), recall, search, summarizeRange, compaction points, a resume of the session (a restart), and
 * the session's end after 24–48 spans, when the agent starts a new one — so a session's length, and with it
 * the cost of a resume, is the same at every N.
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import type { Pool } from "pg";
import { ContextWindow, StoreError, verifyAuditChain, type AuditRecord, type KindTable } from "../src/index.js";
import { OutcomeUnknownError } from "../src/errors.js";
import { createPool, PostgresStore } from "../src/postgres.js";
import { withAppName, type FromWorker, type MixOp, type OpKind, type OpStats, type PhaseReport, type ProbeReport, type ToWorker, type VerifyReport, type WorkerConfig } from "./postgres-load-fleet.js";

type Kind = "toolCall" | "toolResult" | "scratch";
const KINDS: KindTable<Kind> = {
  toolCall: { store: "toolLog", modes: ["drop", "summarize"], lossy: "forbid" },
  toolResult: { store: "toolLog", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
  // A model's scratch note: no copy is kept, so pruning it is a lossy commitment (with the flag, within the budget).
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
};
const HOUR = 3_600_000;

/** mulberry32: a small seeded generator, so every run draws the same mix. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["order", "invoice", "customer", "shipment", "retry", "timeout", "cache", "ledger", "refund", "webhook", "queue", "tenant", "region", "quota", "payload"];
const LEVELS = ["INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR"];

/** A length between `lo` and `hi`, log-uniform. */
function lengthBetween(r: () => number, lo: number, hi: number): number {
  return Math.round(Math.exp(Math.log(lo) + r() * (Math.log(hi) - Math.log(lo))));
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function toolCallText(r: () => number, reqId: string): string {
  const tool = pick(r, ["http_get", "sql_query", "read_file", "grep", "kubectl_logs"]);
  const args: Record<string, unknown> = { request_id: reqId, url: `https://api.internal/v1/${pick(r, WORDS)}s/${Math.floor(r() * 1e6)}` };
  const len = lengthBetween(r, 120, 600);
  let note = "";
  while (JSON.stringify({ name: tool, arguments: { ...args, note } }).length < len) note += `${pick(r, WORDS)} `;
  return JSON.stringify({ name: tool, arguments: { ...args, note: note.trim() } });
}

function toolResultText(r: () => number, reqId: string): string {
  const len = lengthBetween(r, 300, 4000);
  const lines = [`HTTP/1.1 ${r() < 0.9 ? "200 OK" : "502 Bad Gateway"}`, `x-request-id: ${reqId}`, `content-type: application/json`];
  let size = lines.join("\n").length;
  while (size < len) {
    const line = JSON.stringify({
      ts: `2026-03-0${1 + Math.floor(r() * 9)}T${String(Math.floor(r() * 24)).padStart(2, "0")}:${String(Math.floor(r() * 60)).padStart(2, "0")}:00Z`,
      level: pick(r, LEVELS), msg: `${pick(r, WORDS)} ${pick(r, WORDS)} ${pick(r, WORDS)}`, id: `${pick(r, WORDS)}_${Math.floor(r() * 1e8).toString(36)}`,
      duration_ms: Math.floor(r() * 2000),
    });
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

function scratchText(r: () => number): string {
  const len = lengthBetween(r, 100, 400);
  let s = "thinking:";
  while (s.length < len) s += ` ${pick(r, WORDS)}`;
  return s;
}

/** A position of the window as the agent tracks it (window order). */
interface Item {
  readonly id: string;
  readonly kind: Kind | "summary";
  /** `lost`: a span with no copy (a scratch note) after a resume — only the process before it had its bytes. */
  state: "live" | "pruned" | "lossy" | "summary" | "doubt" | "lost";
  /** Request ids in the span's text (search targets). */
  readonly reqId: string | null;
}

/** What one session's caller was told, for the check after a fault run. */
interface Ledger {
  readonly session: string;
  /** Every span an append returned: its bytes, and whether its copy was written. */
  readonly spans: Map<string, { readonly text: string; readonly copied: boolean }>;
  /** Decisions acknowledged as committed: span id → status, audit seq. */
  readonly decided: Map<string, { readonly status: "reversible" | "lossy"; readonly seq: number | null }>;
  /** Spans some call answered outcome-unknown for. */
  readonly doubted: Set<string>;
  /** The session's windows (the current one, and any ended or replaced that still had audit records waiting). */
  readonly windows: Array<ContextWindow<Kind>>;
  /** A call of this session never settled: its state is unknown, it is not checked. */
  hung: boolean;
}

const MIX: ReadonlyArray<readonly [MixOp, number]> = [
  ["append", 32], ["prune", 14], ["prune-lossy", 3], ["prune-no-flag", 3], ["recall", 12], ["search", 10], ["summarize-range", 5], ["compact", 8], ["resume", 3],
];
const WARMUP: ReadonlyArray<readonly [MixOp, number]> = [["append", 70], ["prune", 15], ["prune-lossy", 3], ["recall", 6], ["search", 3], ["compact", 3]];

function choose(r: () => number, table: ReadonlyArray<readonly [MixOp, number]>): MixOp {
  const total = table.reduce((n, [, w]) => n + w, 0);
  let x = r() * total;
  for (const [op, w] of table) if ((x -= w) < 0) return op;
  return table[0]![0];
}

/** A short key for a thrown error: its class and SQLSTATE, or what its message says. */
function errorKey(err: unknown): string {
  const name = err instanceof OutcomeUnknownError ? "OutcomeUnknown" : err instanceof StoreError ? "StoreError" : err instanceof Error ? err.name : "thrown";
  return `${name}:${causeKey(err instanceof Error ? err.message : String(err))}`;
}

/** What a failure's message says, in a word. */
function causeKey(message: string): string {
  const code = /\[([0-9A-Z]{5})\]/.exec(message)?.[1];
  if (/timeout exceeded when trying to connect/i.test(message)) return "pool-timeout";
  if (/statement timeout/i.test(message)) return "statement-timeout";
  if (code === "57P01" || /terminating connection/i.test(message)) return "terminated";
  if (/Connection terminated|ECONNRESET|not queryable|connection.*(lost|ended|closed)/i.test(message)) return "connection-lost";
  if (/ECONNREFUSED|server unreachable/i.test(message)) return "unreachable";
  if (code !== undefined) return code;
  return message.replace(/^store \w+: /, "").slice(0, 40);
}

class Agent {
  readonly #cfg: WorkerConfig;
  readonly #k: number;
  readonly r: () => number;
  readonly store: PostgresStore;
  win!: ContextWindow<Kind>;
  session = "";
  #gen = 0;
  items: Item[] = [];
  #target = 0;
  #appended = 0;
  #nextReq = 0;
  #lastKind: Kind = "toolResult";
  ledger!: Ledger;
  readonly ledgers: Ledger[] = [];

  constructor(cfg: WorkerConfig, k: number, store: PostgresStore) {
    this.#cfg = cfg;
    this.#k = k;
    this.r = rng(cfg.seed * 1_000_003 + cfg.proc * 10_007 + k * 101 + 1);
    this.store = store;
    this.#begin();
  }

  options(store: PostgresStore = this.store) {
    return {
      session: this.session, kinds: KINDS, stores: { toolLog: store }, telemetry: false as const,
      limits: { maxLengthMs: 8 * HOUR, lossyBudget: this.#cfg.lossyBudget },
    };
  }

  /** A new session: a new agent conversation. */
  #begin(): void {
    this.session = `${this.#cfg.runId}-p${this.#cfg.proc}-s${this.#k}-g${this.#gen++}`;
    this.win = new ContextWindow<Kind>(this.options());
    this.items = [];
    this.#appended = 0;
    this.#target = 24 + Math.floor(this.r() * 25);
    this.ledger = { session: this.session, spans: new Map(), decided: new Map(), doubted: new Set(), windows: [this.win], hung: false };
    this.ledgers.push(this.ledger);
  }

  /**
   * The op the agent does next: its session's end once it is long enough, else one drawn from `table` — or an
   * append when the window has nothing that op could act on, so every op is counted as the op it was.
   */
  next(table: ReadonlyArray<readonly [MixOp, number]>): MixOp {
    if (this.#appended >= this.#target) return "end";
    const op = choose(this.r, table);
    switch (op) {
      case "prune":
        return this.#live(["toolCall", "toolResult"]).length > 0 ? op : "append";
      case "prune-lossy":
      case "prune-no-flag":
        return this.#live(["scratch"]).length > 0 ? op : "append";
      case "recall":
        return this.items.length > 0 ? op : "append";
      case "summarize-range":
        return this.#rangeStarts(2).length > 0 ? op : "append";
      default:
        return op;
    }
  }

  /** Where a run of `len` positions starts that are all backed spans (live or pruned) or earlier summaries. */
  #rangeStarts(len: number): number[] {
    const ok = (i: Item) => i.kind !== "scratch" && (i.state === "live" || i.state === "pruned" || i.state === "summary");
    const starts: number[] = [];
    for (let s = 0; s + len <= this.items.length; s++) if (this.items.slice(s, s + len).every(ok)) starts.push(s);
    return starts;
  }

  #live(kinds: readonly Kind[]): Item[] {
    return this.items.filter((i) => i.state === "live" && (kinds as readonly string[]).includes(i.kind));
  }

  /** Runs `op`; returns its outcome class (`ok`, `refused:…`, `failed:…`); throws what the window threw. */
  async run(op: MixOp): Promise<string> {
    const r = this.r;
    switch (op) {
      case "append": {
        const kind: Kind = r() < 0.12 ? "scratch" : this.#lastKind === "toolCall" ? "toolResult" : "toolCall";
        if (kind !== "scratch") this.#lastKind = kind;
        const reqId = kind === "scratch" ? null : `req_${this.#cfg.proc}x${this.#k}x${this.#gen}x${this.#nextReq++}`;
        const text = kind === "scratch" ? scratchText(r) : kind === "toolCall" ? toolCallText(r, reqId!) : toolResultText(r, reqId!);
        this.#appended++;
        const ref = await this.win.append({ kind, text });
        const id = String(ref).split("@")[0]!;
        const entry = this.win.entries().at(-1);
        // A scratch note never has a copy: a resume brings it back as lost, as documented.
        const copied = kind !== "scratch" && entry?.state === "live" && entry.span.id === id && entry.handle !== null;
        this.items.push({ id, kind, state: "live", reqId });
        this.ledger.spans.set(id, { text, copied });
        return copied || kind === "scratch" ? "ok" : "failed:persist";
      }
      case "prune": {
        const live = this.#live(["toolCall", "toolResult"]);
        if (live.length === 0) return this.run("append");
        // Older spans first, as an agent frees what it read long ago.
        const item = live[Math.floor(r() * r() * live.length)]!;
        const modes = item.kind === "toolResult" ? (["drop", "drop", "drop", "summarize", "compress"] as const) : (["drop", "drop", "summarize"] as const);
        const mode = pick(r, modes);
        const outcome = await this.win.tryPrune({ span: this.win.ref(item.id), mode, ...(mode === "summarize" ? { digest: `digest of ${item.id}: ${item.reqId ?? ""} ok` } : {}) });
        return this.#pruned(item, outcome);
      }
      case "prune-lossy":
      case "prune-no-flag": {
        const live = this.#live(["scratch"]);
        if (live.length === 0) return this.run("append");
        const item = pick(r, live);
        const outcome = await this.win.tryPrune({ span: this.win.ref(item.id), mode: "drop", ...(op === "prune-lossy" ? { acceptLossy: true } : {}) });
        return this.#pruned(item, outcome);
      }
      case "recall": {
        const pruned = this.items.filter((i) => i.state === "pruned" || i.state === "summary");
        const pool = pruned.length > 0 && r() < 0.8 ? pruned : this.items;
        if (pool.length === 0) return this.run("append");
        const outcome = await this.win.recall(pick(r, pool).id);
        if (outcome.status === "found" || outcome.status === "expanded") return "ok";
        if (outcome.status === "unavailable") return "failed:unavailable";
        return `refused:${outcome.status}`;
      }
      case "search": {
        const withReq = this.items.filter((i) => i.reqId !== null);
        const query = withReq.length > 0 && r() < 0.8 ? pick(r, withReq).reqId! : `${pick(r, WORDS)}_zz${Math.floor(r() * 1e6)}`;
        const outcome = await this.win.search(query);
        if (outcome.status === "invalid") return "refused:invalid";
        return outcome.coverage.holes.some((h) => h.why === "unavailable") ? "failed:unavailable" : "ok";
      }
      case "summarize-range": {
        // A run of 2–4 positions that are all backed spans (live or pruned) or earlier summaries (`next` made sure of 2).
        let len = 2 + Math.floor(r() * 3);
        let starts = this.#rangeStarts(len);
        while (starts.length === 0 && len > 2) starts = this.#rangeStarts(--len);
        if (starts.length === 0) return this.run("append");
        const s = pick(r, starts);
        const run = this.items.slice(s, s + len);
        const outcome = await this.win.summarizeRange({ from: run[0]!.id, to: run.at(-1)!.id, digest: `summary of ${run.length} steps: ${run.map((i) => i.reqId ?? i.id).join(", ")}` });
        if (outcome.status === "summarized") {
          for (const p of outcome.pruned) {
            this.ledger.decided.set(p.spanId, { status: "reversible", seq: outcome.auditSeq });
          }
          this.items.splice(s, len, { id: outcome.spanId, kind: "summary", state: "summary", reqId: null });
          return "ok";
        }
        if (outcome.status === "invalid") return "refused:invalid";
        if (outcome.reason === "outcome-unknown") {
          for (const i of run) {
            this.ledger.doubted.add(i.id);
            if (i.state === "live") i.state = "doubt";
          }
          return "failed:outcome-unknown";
        }
        return outcome.reason === "store-error" ? "failed:store-error" : `refused:${outcome.reason}`;
      }
      case "compact": {
        const outcome = await this.win.compact();
        return outcome.auditSeq === null ? "failed:audit-pending" : "ok";
      }
      case "resume": {
        // A restart: the session's window, rebuilt from the store.
        const resumed = await ContextWindow.resume<Kind>(this.options());
        this.#retire(this.win);
        this.win = resumed;
        // What had no copy comes back lost (only the window before the restart had its bytes).
        for (const i of this.items) if (i.state === "live" && (i.kind === "scratch" || this.ledger.spans.get(i.id)?.copied === false)) i.state = "lost";
        this.ledger.windows.push(resumed);
        return "ok";
      }
      case "end": {
        try {
          await this.win.end();
        } finally {
          this.#retire(this.win);
          this.#begin();
        }
        return "ok";
      }
    }
  }

  /** A window the agent stops using: kept for the check only when it still has audit records to write. */
  #retire(win: ContextWindow<Kind>): void {
    if (win.pendingAudit === 0) {
      const at = this.ledger.windows.indexOf(win);
      if (at >= 0) this.ledger.windows.splice(at, 1);
    }
  }

  #pruned(item: Item, outcome: Awaited<ReturnType<ContextWindow<Kind>["tryPrune"]>>): string {
    if (outcome.status === "reversible" || outcome.status === "lossy") {
      item.state = outcome.status === "reversible" ? "pruned" : "lossy";
      this.ledger.decided.set(item.id, { status: outcome.status, seq: outcome.auditSeq });
      return "ok";
    }
    if (outcome.status === "invalid") return "refused:invalid";
    if (outcome.reason === "outcome-unknown") {
      this.ledger.doubted.add(item.id);
      item.state = "doubt";
      return "failed:outcome-unknown";
    }
    if (outcome.reason === "store-error") return "failed:store-error";
    return `refused:${outcome.reason}`;
  }
}

let cfg: WorkerConfig | null = null;
let pool: Pool | null = null;
let agents: Agent[] = [];
let bareSql: string[] = [];
/** Agents whose call never settled in some phase (busy forever): left out of later phases and the check. */
const stuck = new Set<Agent>();

function stats(): OpStats {
  return { lat: [], roundTrips: 0, outcomes: {} };
}

function bump(o: Record<string, number>, k: string): void {
  o[k] = (o[k] ?? 0) + 1;
}

async function sleep(ms: number): Promise<void> {
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}

function init(c: WorkerConfig): void {
  cfg = c;
  pool = createPool({ url: withAppName(c.url, c.appName), max: c.poolMax, connectionTimeoutMs: c.connectionTimeoutMs });
  agents = Array.from({ length: c.sessions }, (_, k) => {
    const store = new PostgresStore({ name: "toolLog", pool: pool!, schema: c.schema, retentionMs: 2 * HOUR, statementTimeoutMs: c.statementTimeoutMs });
    return new Agent(c, k, store);
  });
  // The baseline: one-row transactions, one message each, from as many concurrent clients on the same pool.
  const body = pg.escapeLiteral('{"op":"prune","status":"reversible","spanId":"span_7","kind":"toolResult","mode":"drop","handle":"#7"}');
  bareSql = agents.map((a) => `BEGIN; INSERT INTO ${c.bareTable} (session, body) VALUES (${pg.escapeLiteral(a.session)}, ${body}); COMMIT`);
}

async function warmup(min: number, max: number): Promise<{ ops: number; errors: number }> {
  let ops = 0;
  let errors = 0;
  await Promise.all(agents.map(async (a) => {
    const n = min + Math.floor(a.r() * (max - min + 1));
    for (let i = 0; i < n; i++) {
      ops++;
      try {
        await a.run(a.next(WARMUP));
      } catch {
        errors++;
      }
    }
  }));
  return { ops, errors };
}

async function phase(kind: "bare" | "mix", startAt: number, durationMs: number, graceMs: number): Promise<PhaseReport> {
  const ops: Partial<Record<OpKind, OpStats>> = {};
  const deadline = startAt + durationMs;
  let issued = 0;
  let endAt = startAt;
  const inFlight = new Set<Agent>();
  const retries0 = agents.reduce((n, a) => n + a.store.stats.retries, 0);
  await sleep(startAt - Date.now());
  const cpu0 = process.cpuUsage();
  const poolSamples = { open: 0, waiting: 0, maxWaiting: 0, samples: 0 };
  const sampler = setInterval(() => {
    poolSamples.open += pool!.totalCount;
    poolSamples.waiting += pool!.waitingCount;
    poolSamples.maxWaiting = Math.max(poolSamples.maxWaiting, pool!.waitingCount);
    poolSamples.samples++;
  }, 50);
  const hogging = kind === "mix" && cfg!.hog !== undefined ? hog(cfg!.hog, deadline) : Promise.resolve();
  const loops = agents.filter((a) => !stuck.has(a)).map(async (a, i) => {
    // Consecutive failed calls: an agent whose store keeps failing backs off (10 ms doubling to 500 ms, with
    // jitter) as a real one would, instead of retrying in a tight loop through an outage.
    let failing = 0;
    while (Date.now() < deadline) {
      if (failing > 0) await sleep(Math.min(deadline - Date.now(), Math.min(500, 10 * 2 ** (failing - 1)) * (0.5 + Math.random() / 2)));
      if (Date.now() >= deadline) break;
      const op: OpKind = kind === "bare" ? "bare" : a.next(MIX);
      const s = (ops[op] ??= stats());
      const rt0 = a.store.stats.roundTrips;
      issued++;
      inFlight.add(a);
      const t0 = performance.now();
      let outcome: string;
      try {
        if (op === "bare") {
          await pool!.query(bareSql[i]!);
          outcome = "ok";
        } else outcome = await a.run(op);
      } catch (err) {
        outcome = `error:${errorKey(err)}`;
      }
      const t1 = performance.now();
      inFlight.delete(a);
      s.lat.push(t1 - t0);
      s.roundTrips += op === "bare" ? 1 : a.store.stats.roundTrips - rt0;
      bump(s.outcomes, outcome);
      failing = outcome.startsWith("error:") || outcome.startsWith("failed:") ? failing + 1 : 0;
      endAt = Math.max(endAt, performance.timeOrigin + t1);
    }
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(loops), new Promise((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now()) + graceMs)))]);
  clearTimeout(timer);
  clearInterval(sampler);
  await hogging;
  const cpu = process.cpuUsage(cpu0);
  for (const a of inFlight) {
    stuck.add(a);
    a.ledger.hung = true;
  }
  const n = Math.max(1, poolSamples.samples);
  return {
    kind, startAt, endAt, ops, hung: inFlight.size, issued,
    retries: agents.reduce((x, a) => x + a.store.stats.retries, 0) - retries0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    pool: { open: poolSamples.open / n, waiting: poolSamples.waiting / n, maxWaiting: poolSamples.maxWaiting, samples: poolSamples.samples },
  };
}

/** Until `deadline`: every `everyMs`, check out every pooled connection and hold them `holdMs` (see WorkerConfig.hog). */
async function hog(h: { readonly everyMs: number; readonly holdMs: number }, deadline: number): Promise<void> {
  while (Date.now() + h.everyMs < deadline) {
    await sleep(h.everyMs);
    const held = await Promise.all(Array.from({ length: cfg!.poolMax }, () => pool!.connect().then(
      (c) => {
        // A held connection that breaks must not crash the process; release(err) then destroys it.
        let broken: Error | undefined;
        c.on("error", (err) => (broken = err));
        return { c, broken: () => broken };
      },
      () => null, // this checkout timed out too: the others still hold theirs
    )));
    await sleep(h.holdMs);
    for (const x of held) x?.c.release(x.broken());
  }
}

/** After ≥ 1 s idle, one query on every pooled connection: each backend then reports its table statistics. */
async function flush(): Promise<null> {
  await sleep(1100);
  const clients = [];
  try {
    for (let i = 0; i < pool!.totalCount; i++) clients.push(await pool!.connect());
    await Promise.all(clients.map((c) => c.query("SELECT 1")));
  } finally {
    for (const c of clients) c.release();
  }
  return null;
}

/** CPU time (ns) the server process `pid` has run, from /proc (a server on this machine); `null` when unreadable. */
function backendCpuNs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    if (!readFileSync(`/proc/${pid}/stat`, "utf8").includes("(postgres)")) return null;
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return null;
  }
}

/**
 * One session alone on a pool of one connection: `ops` ops of the mix, one at a time, each with the server
 * backend's CPU time (read from /proc around it), this process's CPU time, its latency and its round trips —
 * what each op kind costs with nobody else on the server.
 */
async function probe(count: number): Promise<ProbeReport> {
  if (agents.length !== 1 || cfg!.poolMax !== 1) throw new Error("probe: needs one session on a pool of one connection");
  const a = agents[0]!;
  const client = await pool!.connect();
  const pid = Number((await client.query("SELECT pg_backend_pid() AS pid")).rows[0]?.pid);
  client.release();
  const ops: ProbeReport["ops"] = {};
  for (let i = 0; i < count; i++) {
    // Every fourth op a bare one-row transaction, the baseline's, on the same connection.
    const op: OpKind = i % 4 === 3 ? "bare" : a.next(MIX);
    const s = (ops[op] ??= { n: 0, latMs: [], serverUs: 0, clientUs: 0, roundTrips: 0, serverKnown: true });
    const rt0 = a.store.stats.roundTrips;
    const srv0 = backendCpuNs(pid);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    try {
      if (op === "bare") await pool!.query(bareSql[0]!);
      else await a.run(op);
    } catch {
      // counted like any op: the probe is about cost
    }
    const t1 = performance.now();
    const cpu = process.cpuUsage(cpu0);
    const srv1 = backendCpuNs(pid);
    s.n++;
    s.latMs.push(t1 - t0);
    s.clientUs += cpu.user + cpu.system;
    s.roundTrips += op === "bare" ? 1 : a.store.stats.roundTrips - rt0;
    // The pool keeps the one connection; should it have been replaced, this op's server time is unknown.
    if (srv0 === null || srv1 === null || srv1 < srv0) s.serverKnown = false;
    else s.serverUs += (srv1 - srv0) / 1000;
  }
  return { ops };
}

async function verify(): Promise<VerifyReport> {
  const c = cfg!;
  // A healthy pool of its own: the run's pool may be the one made to fail.
  const healthy = createPool({ url: withAppName(c.url, `${c.appName}_verify`), max: 2, connectionTimeoutMs: 10_000 });
  const out = {
    sessions: 0, acknowledged: { reversible: 0, lossy: 0 }, verified: { reversible: 0, lossy: 0 }, auditMismatch: 0, liveChanged: 0, liveChecked: 0,
    liveWithoutCopy: 0, inDoubt: 0, inDoubtCommitted: 0, orphanSpans: 0, chainsOk: 0, chainsBroken: 0, lossyOverBudget: 0, pendingAuditLeft: 0,
    resumeFailed: 0, skippedHung: 0, examples: [] as string[],
  };
  const example = (s: string) => void (out.examples.length < 8 && out.examples.push(s));
  try {
    for (const a of agents) {
      for (const ledger of a.ledgers) {
        if (ledger.hung) {
          out.skippedHung++;
          continue;
        }
        out.sessions++;
        // Records windows still hold (their store failed) are written now that it does not.
        for (const w of ledger.windows) {
          await w.auditLog().catch(() => undefined);
          out.pendingAuditLeft += w.pendingAudit;
        }
        const store = new PostgresStore({ name: "toolLog", pool: healthy, schema: c.schema, retentionMs: 2 * HOUR, statementTimeoutMs: 10_000 });
        let log: AuditRecord[];
        let win: ContextWindow<Kind>;
        try {
          log = await store.auditLog(ledger.session);
          win = await ContextWindow.resume<Kind>({ ...a.options(store), session: ledger.session });
        } catch (err) {
          out.resumeFailed++;
          example(`${ledger.session}: resume failed: ${err instanceof Error ? err.message : String(err)}`);
          continue;
        }
        const broken = verifyAuditChain(log);
        if (broken === null) out.chainsOk++;
        else {
          out.chainsBroken++;
          example(`${ledger.session}: audit chain broken: ${JSON.stringify(broken).slice(0, 200)}`);
        }
        const lossy = log.filter((x) => x.status === "lossy").length;
        if (lossy > c.lossyBudget) {
          out.lossyOverBudget++;
          example(`${ledger.session}: ${lossy} lossy records, budget ${c.lossyBudget}`);
        }
        for (const [spanId, d] of ledger.decided) {
          out.acknowledged[d.status]++;
          // The record is in the chain, and the seq the outcome named (when it named one) is there too.
          const inLog = log.some((x) => x.spanId === spanId && x.status === d.status && (x.op === "prune" || x.op === "summarize_range"));
          if (!inLog || (d.seq !== null && log[d.seq - 1] === undefined)) {
            out.auditMismatch++;
            example(`${ledger.session} ${spanId}: acknowledged ${d.status} at seq ${d.seq}, not so in the audit log`);
          }
          const recalled = await win.recall(spanId);
          const text = ledger.spans.get(spanId)?.text;
          if (d.status === "reversible" && recalled.status === "found" && recalled.text === text) out.verified.reversible++;
          else if (d.status === "lossy" && recalled.status === "pruned-unrecoverable" && recalled.reason === "lossy") out.verified.lossy++;
          else example(`${ledger.session} ${spanId}: acknowledged ${d.status}, resumed recall says ${recalled.status}${"reason" in recalled ? ` (${recalled.reason})` : ""}`);
        }
        const known = new Set(ledger.spans.keys());
        const entries = win.entries();
        const ids = new Set<string>();
        for (const e of entries) {
          ids.add(e.state === "live" ? e.span.id : e.spanId);
          if (e.state === "summary" || e.state === "fold") for (const m of e.members) ids.add(m);
        }
        for (const id of ids) if (/^span_\d+$/.test(id) && !known.has(id) && !entries.some((e) => e.state === "summary" && e.spanId === id)) {
          out.orphanSpans++;
          example(`${ledger.session} ${id}: in the resumed window, but no append returned it`);
        }
        for (const [spanId, s] of ledger.spans) {
          if (ledger.decided.has(spanId)) continue;
          const liveNow = win.span(spanId) !== undefined;
          if (ledger.doubted.has(spanId)) {
            out.inDoubt++;
            if (!liveNow) out.inDoubtCommitted++;
            continue;
          }
          if (!s.copied) {
            // No copy (a scratch note, or a persist that failed): after a resume it is lost, or live if it never left.
            out.liveWithoutCopy++;
            const e = entries.find((x) => (x.state === "live" ? x.span.id : x.spanId) === spanId);
            if (e !== undefined && e.state !== "lost" && e.state !== "live") {
              out.liveChanged++;
              example(`${ledger.session} ${spanId}: no copy and no prune acknowledged, the resumed window shows ${e.state}`);
            }
            continue;
          }
          out.liveChecked++;
          if (!liveNow) {
            out.liveChanged++;
            const e = entries.find((x) => x.state !== "live" && x.spanId === spanId);
            example(`${ledger.session} ${spanId}: the caller holds it live (no prune of it acknowledged), the resumed window shows ${e?.state ?? "it inside a summary"}`);
          }
        }
      }
    }
  } finally {
    await healthy.end();
  }
  return out;
}

async function handle(msg: ToWorker): Promise<unknown> {
  switch (msg.type) {
    case "init":
      init(msg.cfg);
      return null;
    case "warmup":
      return warmup(msg.min, msg.max);
    case "phase":
      return phase(msg.kind, msg.startAt, msg.durationMs, msg.graceMs);
    case "flush":
      return flush();
    case "verify":
      return verify();
    case "probe":
      return probe(msg.ops);
    case "stop":
      await pool?.end().catch(() => undefined);
      process.exit(0);
  }
}

if (process.send !== undefined) {
  // Requests are answered one at a time, in order.
  let tail: Promise<unknown> = Promise.resolve();
  process.on("message", (msg: ToWorker) => {
    tail = tail.then(async () => {
      let reply: FromWorker;
      try {
        reply = { type: "ok", reply: await handle(msg) };
      } catch (err) {
        reply = { type: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
      }
      process.send!(reply);
    });
  });
  // The parent gone (killed, crashed): nothing is left to answer.
  process.on("disconnect", () => process.exit(0));
}
