/**
 * Benchmark 10: `ContextWindow.search` over a session of 10,000 pruned spans — the store reads the copies the
 * window pruned by handle and proposes those holding the literal, the window confirms each on its bytes against the
 * hash it recorded, and states the coverage — against a bare indexed lookup of the same rows (the copy's
 * record by its handle, as a recall does when the model already knows the handle), in the same run.
 *
 * SQLite runs under tinybench (`compareMicro`); PostgreSQL (loopback, needs `PRUNEGUARD_PG_URL`) is timed
 * with `performance.now()`, subject and baseline interleaved one call each, medians over every call.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { ContextWindow, SqliteStore, type BackingStore, type SearchOutcome } from "../src/index.js";
import { createPool, migrate, PG_URL_ENV, PostgresStore } from "../src/postgres.js";
import { compareMicro, median, quantile, type MicroResult } from "./measure.js";
import { fmtMs, type Benchmark, type Row } from "./report.js";

const HOUR = 3_600_000;
const KINDS = { toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" } } as const;

/** A tool output of about 400 bytes holding one request id only it holds. */
function output(i: number): { text: string; id: string } {
  const id = `req_${(i * 2654435761 % 0xffffffff).toString(16).padStart(8, "0")}${i.toString(36)}`;
  return {
    id,
    text: `HTTP/1.1 ${i % 17 === 0 ? 502 : 200} OK\nX-Request-Id: ${id}\n` + `{"step":${i},"status":"ok","duration_ms":${100 + (i % 400)},"node":"worker-${i % 7}"}\n`.repeat(4),
  };
}

/** A window of `n` spans, every one pruned reversibly (untimed set-up); the ids and handles, in order. */
async function prunedSession(store: BackingStore, session: string, n: number) {
  const win = new ContextWindow({ session, stores: { toolLog: store }, kinds: KINDS, limits: { maxLengthMs: 8 * HOUR } });
  const ids: string[] = [];
  const handles: string[] = [];
  for (let i = 0; i < n; i++) {
    const { text, id } = output(i);
    const ref = await win.append({ kind: "toolResult", text });
    const o = await win.tryPrune({ span: ref, mode: "drop" });
    if (o.status !== "reversible") throw new Error(`benchmark 10: set-up prune was ${o.status}`);
    ids.push(id);
    handles.push(o.handle);
  }
  return { win, ids, handles };
}

function check(o: unknown, expectMatch: boolean, n: number): void {
  const s = o as SearchOutcome;
  if (s.op !== "search" || (s.status === "match") !== expectMatch || s.coverage.pruned !== n) {
    throw new Error(`benchmark 10: unexpected search answer ${JSON.stringify(o).slice(0, 300)}`);
  }
}

export const searchBench: Benchmark = {
  id: 10,
  title: "search over 10,000 pruned spans vs a bare indexed lookup of the same rows",
  async run(ctx) {
    const n = ctx.quick ? 2_000 : 10_000;
    return [...(await sqliteRows(n, ctx.quick)), ...(await postgresRows(n, ctx.quick))];
  },
};

async function sqliteRows(n: number, quick: boolean): Promise<Row[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-bench-search-"));
  const file = path.join(dir, "search.db");
  const store = new SqliteStore({ path: file, name: "toolLog", retentionMs: 2 * HOUR });
  const db = new DatabaseSync(file);
  try {
    const t0 = performance.now();
    const { win, ids, handles } = await prunedSession(store, "bench", n);
    const setupMs = performance.now() - t0;
    db.exec("PRAGMA busy_timeout = 5000");
    const lookup = db.prepare("SELECT handle, span_id, kind, text, hash FROM pruneguard_records WHERE store = ? AND session = ? AND handle = ?");
    let k = 0;
    let m = 0;
    const rounds = quick ? 2 : 5;
    const { results } = await compareMicro(
      [
        { name: "bare indexed lookup", fn: () => void lookup.get("toolLog", "bench", handles[(k = (k + 7919) % n)]!) },
        { name: "search (hit)", fn: async () => check(await win.search(ids[(m = (m + 7919) % n)]!), true, n) },
        { name: "search (miss)", fn: async () => check(await win.search("req_not_in_this_session"), false, n) },
      ],
      { rounds, time: quick ? 200 : 800 },
    );
    const [base, hit, miss] = results as [MicroResult, MicroResult, MicroResult];
    return [
      figure("SQLite", "hit", hit, base, n, `${fmtMs(setupMs)} to append and prune ${n} spans; median of ${rounds} rounds, ${hit.samples} + ${base.samples} samples`),
      figure("SQLite", "miss", miss, base, n, `no span holds the id: every pruned span counted as searched, none named`),
    ];
  } finally {
    db.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresRows(n: number, quick: boolean): Promise<Row[]> {
  const name = `search over ${n} pruned spans on PostgreSQL: p50 latency vs bare indexed lookup`;
  const url = process.env[PG_URL_ENV];
  if (url === undefined || url === "") return [{ bench: 10, name, skipped: `${PG_URL_ENV} is not set` }];
  const pool = createPool({ url, max: 2, connectionTimeoutMs: 3000 });
  const schema = `pgbench_${randomBytes(5).toString("hex")}`;
  try {
    try {
      await pool.query("SELECT 1");
    } catch (err) {
      return [{ bench: 10, name, skipped: `server unreachable: ${err instanceof Error ? err.message : String(err)}` }];
    }
    await migrate(pool, { schema });
    const store = new PostgresStore({ name: "toolLog", pool, schema, retentionMs: 2 * HOUR });
    const t0 = performance.now();
    const { win, ids, handles } = await prunedSession(store, "bench", n);
    const setupMs = performance.now() - t0;
    // The steady state autovacuum keeps: statistics fresh, dead tuples gone.
    await pool.query(`VACUUM ANALYZE ${pg.escapeIdentifier(schema)}.records`);
    const lookupSql = `SELECT handle, span_id, kind, text, hash FROM ${pg.escapeIdentifier(schema)}.records WHERE store = $1 AND session = $2 AND handle = $3`;
    const calls = quick ? 100 : 400;
    const base: number[] = [];
    const hit: number[] = [];
    const miss: number[] = [];
    for (let i = 0; i < calls; i++) {
      const j = (i * 7919) % n;
      let a = performance.now();
      await pool.query(lookupSql, ["toolLog", "bench", handles[j]]);
      base.push(performance.now() - a);
      a = performance.now();
      check(await win.search(ids[j]!), true, n);
      hit.push(performance.now() - a);
      a = performance.now();
      check(await win.search("req_not_in_this_session"), false, n);
      miss.push(performance.now() - a);
    }
    const stat = (xs: number[]) => ({ p50: median(xs), p99: quantile(xs, 0.99) });
    const b = stat(base);
    return (["hit", "miss"] as const).map((kind) => {
      const s = stat(kind === "hit" ? hit : miss);
      return {
        bench: 10,
        name: `search over ${n} pruned spans on PostgreSQL (${kind}): p50 latency vs bare indexed lookup`,
        subject: `${fmtMs(s.p50)} (p99 ${fmtMs(s.p99)})`,
        baseline: `${fmtMs(b.p50)} (p99 ${fmtMs(b.p99)})`,
        ratio: `${(s.p50 / b.p50).toFixed(1)}×`,
        goal: null,
        detail: `${calls} calls each, interleaved; ${kind === "hit" ? `${fmtMs(setupMs)} to append and prune ${n} spans; ` : ""}copies read by handle, filtered in the select list (after VACUUM ANALYZE, the state autovacuum keeps), one round trip per search`,
      } satisfies Row;
    });
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

function figure(engine: string, kind: "hit" | "miss", s: MicroResult, b: MicroResult, n: number, detail: string): Row {
  return {
    bench: 10,
    name: `search over ${n} pruned spans on ${engine} (${kind}): p50 latency vs bare indexed lookup`,
    subject: `${fmtMs(s.p50)} (p99 ${fmtMs(s.p99)})`,
    baseline: `${fmtMs(b.p50)} (p99 ${fmtMs(b.p99)})`,
    ratio: `${(s.p50 / b.p50).toFixed(1)}×`,
    goal: null,
    detail,
  };
}
