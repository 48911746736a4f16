/**
 * Benchmark 2: a durable prune on SQLite — check, hold and audit record in one `BEGIN IMMEDIATE`
 * transaction, then the window rewrite — against a bare one-row `IMMEDIATE` transaction on the same
 * database file (a second connection, same pragmas: WAL, synchronous NORMAL).
 *
 * The spans a prune needs are appended a batch at a time, untimed, and the WAL is checkpointed after each
 * batch: an append writes several pages (the record, its three indexes, the handle counter), and SQLite
 * checkpoints on the commit that crosses 1,000 WAL pages, so appending one span before each prune made
 * timed prunes pay for checkpointing the appends' pages. Each task also starts on a checkpointed WAL, so it
 * pays for checkpointing its own pages, not the other task's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ContextWindow, SqliteStore, type SpanRef } from "../src/index.js";
import { compareMicro, type MicroResult } from "./measure.js";
import { fmtMs, goalAtLeast, throughputFigure, type Benchmark } from "./report.js";

/** Spans per window before a fresh window (same store) takes over, so the window's size stays bounded. */
const BATCH = 512;
const TEXT = "HTTP/1.1 200 OK\n" + '{"step":7,"status":"ok","duration_ms":312,"node":"worker-3"}\n'.repeat(12);
const HOUR = 3_600_000;

export const sqliteBench: Benchmark = {
  id: 2,
  title: "durable prune on SQLite vs a bare one-row IMMEDIATE transaction",
  async run(ctx) {
    const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-bench-sqlite-"));
    const file = path.join(dir, "bench.db");
    const store = new SqliteStore({ path: file, name: "toolLog", retentionMs: 2 * HOUR });
    const db = new DatabaseSync(file);
    try {
      db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;");
      db.exec("CREATE TABLE IF NOT EXISTS bench_baseline (id INTEGER PRIMARY KEY, session TEXT NOT NULL, body TEXT NOT NULL)");
      const insert = db.prepare("INSERT INTO bench_baseline (session, body) VALUES (?, ?)");
      const [begin, commit] = [db.prepare("BEGIN IMMEDIATE"), db.prepare("COMMIT")];
      const bare = (session: string, body: string) => {
        begin.run();
        insert.run(session, body);
        commit.run();
      };
      const auditSized = '{"op":"prune","status":"reversible","spanId":"span_7","kind":"toolResult","mode":"drop","handle":"#7"}';

      // Each task starts on a checkpointed WAL, so it pays for checkpointing its own pages only.
      const checkpoint = () => void db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      let win: ContextWindow<"toolResult"> | null = null;
      let session = 0;
      let refs: Array<SpanRef<"toolResult">> = [];
      let next = BATCH;
      let last = "";
      // Untimed: a new window of BATCH persisted spans (a prune needs a copy to check), then a checkpoint.
      const ready = async () => {
        if (next < BATCH) return;
        win = new ContextWindow({
          session: `s${++session}`,
          stores: { toolLog: store },
          limits: { maxLengthMs: 8 * HOUR },
          kinds: { toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" } },
        });
        refs = [];
        for (let i = 0; i < BATCH; i++) refs.push(await win.append({ kind: "toolResult", text: TEXT }));
        checkpoint();
        next = 0;
      };
      const rounds = ctx.quick ? 2 : 5;
      const { results, ratioToFirst } = await compareMicro(
        [
          { name: "bare IMMEDIATE transaction", fn: () => bare("s0", auditSized), options: { beforeAll: checkpoint } },
          {
            name: "durable prune",
            fn: async () => {
              last = (await win!.tryPrune({ span: refs[next++]!, mode: "drop" })).status;
            },
            options: { beforeAll: checkpoint, beforeEach: ready },
          },
        ],
        { rounds, time: ctx.quick ? 200 : 800 },
      );
      if (last !== "reversible") throw new Error(`benchmark 2: expected reversible prunes, got ${last}`);
      const [base, prune] = results as [MicroResult, MicroResult];
      const throughputRatio = 1 / ratioToFirst[1]!;
      return [
        throughputFigure(
          2,
          "durable prune on SQLite: throughput vs bare one-row IMMEDIATE txn",
          prune.hz,
          base.hz,
          throughputRatio,
          goalAtLeast(throughputRatio, 0.5),
          `latency p50 ${fmtMs(prune.p50)} vs ${fmtMs(base.p50)}, p99 ${fmtMs(prune.p99)} vs ${fmtMs(base.p99)}; median of ${rounds} rounds, ${prune.samples} + ${base.samples} samples`,
        ),
        {
          bench: 2,
          name: "durable prune on SQLite: p50 / p99 latency",
          subject: `${fmtMs(prune.p50)} / ${fmtMs(prune.p99)}`,
          baseline: `${fmtMs(base.p50)} / ${fmtMs(base.p99)}`,
          ratio: `${(prune.p50 / base.p50).toFixed(2)}× / ${(prune.p99 / base.p99).toFixed(2)}×`,
          goal: null,
        },
      ];
    } finally {
      db.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
