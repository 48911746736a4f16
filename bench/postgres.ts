/**
 * Benchmark 3: prunes on PostgreSQL from 8 concurrent sessions over loopback — throughput, p50/p99
 * latency and round trips per prune (from `PostgresStore.stats.roundTrips`) — against the same 8
 * sessions each writing a bare one-row transaction (an autocommit `INSERT`, one round trip) on the same
 * server and pool. Runs against the real server named by `PRUNEGUARD_PG_URL`, in a schema of its own
 * that it drops afterwards; skips with the reason when the variable is unset or the server does not answer.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { ContextWindow, type SpanRef } from "../src/index.js";
import { createPool, migrate, PG_URL_ENV, PostgresStore } from "../src/postgres.js";
import { median, quantile } from "./measure.js";
import { fmtMs, fmtOps, goalAtMost, type Benchmark, type Row } from "./report.js";

const SESSIONS = 8;
const HOUR = 3_600_000;
const TEXT = "HTTP/1.1 200 OK\n" + '{"step":7,"status":"ok","duration_ms":312,"node":"worker-3"}\n'.repeat(12);

interface Phase {
  readonly wallMs: number;
  readonly latencies: number[];
}

/** Runs `perSession` sequential operations in each of SESSIONS concurrent workers; times each one. */
async function concurrently(perSession: number, op: (session: number, i: number) => Promise<void>): Promise<Phase> {
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      for (let i = 0; i < perSession; i++) {
        const a = performance.now();
        await op(s, i);
        latencies.push(performance.now() - a);
      }
    }),
  );
  return { wallMs: performance.now() - t0, latencies };
}

export const postgresBench: Benchmark = {
  id: 3,
  title: `prune on PostgreSQL, ${SESSIONS} concurrent sessions on loopback`,
  async run(ctx) {
    const name = "prune on PostgreSQL (8 sessions): throughput vs bare one-row txn";
    const url = process.env[PG_URL_ENV];
    if (url === undefined || url === "") return [{ bench: 3, name, skipped: `${PG_URL_ENV} is not set` }];
    const pool = createPool({ url, max: SESSIONS, connectionTimeoutMs: 3000 });
    try {
      await pool.query("SELECT 1");
    } catch (err) {
      await pool.end().catch(() => undefined);
      const where = url.replace(/\/\/[^@/]*@/, "//");
      return [{ bench: 3, name, skipped: `server unreachable at ${where}: ${err instanceof Error ? err.message : String(err)}` }];
    }
    const schema = `pgbench_${randomBytes(5).toString("hex")}`;
    const table = `${pg.escapeIdentifier(schema)}.bench_baseline`;
    try {
      await migrate(pool, { schema });
      await pool.query(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, session text NOT NULL, body text NOT NULL)`);
      const store = new PostgresStore({ name: "toolLog", pool, schema, retentionMs: 2 * HOUR });
      const rounds = ctx.quick ? 1 : 3;
      const perSession = ctx.quick ? 25 : 150;
      const prunes: Phase[] = [];
      const bares: Phase[] = [];
      let roundTrips = 0;
      let retries = 0;
      let session = 0;
      const body = '{"op":"prune","status":"reversible","spanId":"span_7","kind":"toolResult","mode":"drop","handle":"#7"}';
      for (let r = 0; r < rounds; r++) {
        // Untimed: each session's window persists its spans (a prune needs a copy to check).
        const wins = Array.from({ length: SESSIONS }, () => new ContextWindow({
          session: `bench-${++session}`,
          stores: { toolLog: store },
          limits: { maxLengthMs: 8 * HOUR },
          kinds: { toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" } },
        }));
        const refs: Array<Array<SpanRef<"toolResult">>> = await Promise.all(
          wins.map(async (w) => {
            const out: Array<SpanRef<"toolResult">> = [];
            for (let i = 0; i < perSession; i++) out.push(await w.append({ kind: "toolResult", text: TEXT }));
            return out;
          }),
        );
        const bare = () => concurrently(perSession, async (s) => void (await pool.query(`INSERT INTO ${table} (session, body) VALUES ($1, $2)`, [`bench-${s}`, body])));
        const prune = async () => {
          const before = { ...store.stats };
          const phase = await concurrently(perSession, async (s, i) => {
            const o = await wins[s]!.tryPrune({ span: refs[s]![i]!, mode: "drop" });
            if (o.status !== "reversible") throw new Error(`benchmark 3: expected a reversible prune, got ${o.status}: ${"message" in o ? o.message : ""}`);
          });
          roundTrips += store.stats.roundTrips - before.roundTrips;
          retries += store.stats.retries - before.retries;
          return phase;
        };
        // Alternate which goes first, so a slow moment of the server does not always hit the same side.
        if (r % 2 === 0) {
          bares.push(await bare());
          prunes.push(await prune());
        } else {
          prunes.push(await prune());
          bares.push(await bare());
        }
      }
      const n = rounds * SESSIONS * perSession;
      const hz = (p: Phase) => (SESSIONS * perSession * 1000) / p.wallMs;
      const pruneHz = median(prunes.map(hz));
      const bareHz = median(bares.map(hz));
      const throughputRatio = median(prunes.map((p, i) => hz(p) / hz(bares[i]!)));
      const all = (ps: Phase[]) => ps.flatMap((p) => p.latencies);
      const pl = all(prunes);
      const bl = all(bares);
      const perPrune = roundTrips / n;
      const rows: Row[] = [
        {
          bench: 3,
          name,
          subject: fmtOps(pruneHz),
          baseline: fmtOps(bareHz),
          ratio: `${throughputRatio.toFixed(2)}×`,
          goal: null,
          detail: `${n} prunes and ${n} bare writes over ${rounds} round${rounds === 1 ? "" : "s"}, pool of ${SESSIONS} connections; ${retries} retried transactions`,
        },
        {
          bench: 3,
          name: "prune on PostgreSQL (8 sessions): p50 / p99 latency",
          subject: `${fmtMs(quantile(pl, 0.5))} / ${fmtMs(quantile(pl, 0.99))}`,
          baseline: `${fmtMs(quantile(bl, 0.5))} / ${fmtMs(quantile(bl, 0.99))}`,
          ratio: `${(quantile(pl, 0.5) / quantile(bl, 0.5)).toFixed(2)}× / ${(quantile(pl, 0.99) / quantile(bl, 0.99)).toFixed(2)}×`,
          goal: null,
        },
        {
          bench: 3,
          name: "prune on PostgreSQL: round trips per prune",
          subject: perPrune.toFixed(2),
          baseline: "1 (the bare write)",
          ratio: `${perPrune.toFixed(2)}×`,
          goal: goalAtMost(perPrune, 2, ""),
          detail: `${roundTrips} round trips counted by PostgresStore.stats over ${n} prunes`,
        },
      ];
      return rows;
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch((err: unknown) => {
        ctx.log(`could not drop schema ${schema}: ${err instanceof Error ? err.message : String(err)}`);
      });
      await pool.end();
    }
  },
};
