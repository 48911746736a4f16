/**
 * Benchmark 7: which SQLite driver the store uses. The statements of one durable prune (read the record,
 * place the hold, read the chain's head, append the audit record, in one `BEGIN IMMEDIATE` transaction)
 * run on `node:sqlite` (built into Node) and on better-sqlite3 (a native addon), same file layout, same
 * pragmas. better-sqlite3 is not a dependency: the row is skipped unless it is installed
 * (`npm i --no-save better-sqlite3@13.2.0`), so the choice recorded in BENCHMARKS.md can be re-measured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { compareMicro, type MicroResult } from "./measure.js";
import { throughputFigure, type Benchmark, type Row } from "./report.js";

const SCHEMA = `
PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;
CREATE TABLE records (store TEXT NOT NULL, session TEXT NOT NULL, span_id TEXT NOT NULL, handle TEXT NOT NULL,
  text TEXT, hash TEXT NOT NULL, held INTEGER NOT NULL DEFAULT 0, held_until INTEGER, UNIQUE (store, session, span_id));
CREATE TABLE audit (store TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL, hash TEXT NOT NULL,
  record TEXT NOT NULL, UNIQUE (store, session, seq));`;
const SPANS = 512;
const AUDIT = JSON.stringify({ op: "prune", status: "reversible", spanId: "span_7", kind: "toolResult", mode: "drop", handle: "#7", hash: "x".repeat(64) });

/** The driver surface the prune uses; both drivers' statements fit it. */
interface Statement {
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): unknown;
}
interface Driver {
  exec(sql: string): unknown;
  prepare(sql: string): Statement;
  close(): unknown;
}

function durablePrune(db: Driver): () => void {
  db.exec(SCHEMA);
  const insert = db.prepare("INSERT INTO records (store, session, span_id, handle, text, hash) VALUES ('log', 's', ?, ?, ?, 'h')");
  for (let i = 0; i < SPANS; i++) insert.run(`span_${i}`, `#${i}`, "HTTP/1.1 200 OK\n".repeat(40));
  const q = {
    begin: db.prepare("BEGIN IMMEDIATE"),
    commit: db.prepare("COMMIT"),
    record: db.prepare("SELECT handle, text, hash FROM records WHERE store = 'log' AND session = 's' AND span_id = ?"),
    hold: db.prepare("UPDATE records SET held = 1, held_until = ? WHERE store = 'log' AND session = 's' AND span_id = ?"),
    head: db.prepare("SELECT seq, hash FROM audit WHERE store = 'log' AND session = 's' ORDER BY seq DESC LIMIT 1"),
    append: db.prepare("INSERT INTO audit (store, session, seq, hash, record) VALUES ('log', 's', ?, ?, ?)"),
  };
  let n = 0;
  return () => {
    const span = `span_${n++ % SPANS}`;
    q.begin.run();
    q.record.get(span);
    q.hold.run(n, span);
    const head = q.head.get() as { seq: number } | undefined;
    q.append.run((head?.seq ?? 0) + 1, "h", AUDIT);
    q.commit.run();
  };
}

export const sqliteDriverBench: Benchmark = {
  id: 7,
  title: "SQLite driver: the statements of a durable prune on node:sqlite vs better-sqlite3",
  async run(ctx): Promise<Row[]> {
    let BetterSqlite3: (new (file: string) => Driver) | null = null;
    try {
      const specifier = "better-sqlite3"; // a variable, so the type checker does not require the package
      BetterSqlite3 = ((await import(specifier)) as { default: new (file: string) => Driver }).default;
    } catch {
      return [{ bench: 7, name: this.title, skipped: "better-sqlite3 is not installed (npm i --no-save better-sqlite3@13.2.0 to measure it)" }];
    }
    const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-bench-driver-"));
    const builtin = new DatabaseSync(path.join(dir, "node-sqlite.db"));
    const native = new BetterSqlite3(path.join(dir, "better-sqlite3.db"));
    try {
      const rounds = ctx.quick ? 2 : 5;
      const { results, ratioToFirst } = await compareMicro(
        [
          { name: "better-sqlite3", fn: durablePrune(native) },
          { name: "node:sqlite", fn: durablePrune(builtin as unknown as Driver) },
        ],
        { rounds, time: ctx.quick ? 200 : 800 },
      );
      const [base, builtinResult] = results as [MicroResult, MicroResult];
      const throughput = 1 / ratioToFirst[1]!;
      return [
        throughputFigure(7, "durable prune statements: node:sqlite throughput vs better-sqlite3", builtinResult.hz, base.hz, throughput, null, `median of ${rounds} rounds, ${builtinResult.samples} + ${base.samples} samples`),
      ];
    } finally {
      builtin.close();
      native.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
