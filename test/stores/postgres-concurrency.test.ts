/**
 * PostgresStore against the real server, with other OS processes acting on the same session: concurrency,
 * a worker killed mid-transaction, and faults (server unreachable, connection terminated, statement
 * timeout). Runs only on a real server (`needs: "server"`); assumes `npm run build` has run (the workers import
 * the built store).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Pool, PoolClient } from "pg";
import pg from "pg";
import type { AuditDraft } from "../../src/audit.js";
import { verifyAuditChain } from "../../src/audit.js";
import { StoreError } from "../../src/errors.js";
import { refSpanId } from "../../src/window/refs.js";
import { contentHash } from "../../src/hash.js";
import { createPool, PostgresStore } from "../../src/postgres.js";
import type { CheckResult, PruneDecision, PruneItem } from "../../src/stores/store.js";
import { ContextWindow } from "../../src/window/window.js";
import { testDraft } from "./conformance.js";
import { describeWithServer, dropSchemas, freshSchema, PG_URL, testPool } from "./pg-helpers.js";
import { immediate } from "../window/immediate.js";

const WORKER = fileURLToPath(new URL("./workers/pg-worker.mjs", import.meta.url));

const draft = (status: AuditDraft["status"], extra: Partial<AuditDraft> = {}): AuditDraft => testDraft(status, { kind: "k", ...extra });

const reversible = (checks: readonly CheckResult[]): PruneDecision[] =>
  checks.map((c) =>
    c.conditions.existence && c.conditions.addressability && c.conditions.provenance
      ? { status: "reversible", repersist: false, hold: true, audit: draft("reversible") }
      : { status: "rejected", audit: draft("rejected", { reason: c.copy }) },
  );

const item = (spanId: string, text: string, handle: string | null): PruneItem => ({ spanId, kind: "k", backed: true, handle, hash: contentHash(text), text });

interface Worker {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  line(pred: (l: string) => boolean, timeoutMs?: number): Promise<string>;
}

function startWorker(args: Record<string, unknown>): Worker {
  const child = spawn(process.execPath, [WORKER, JSON.stringify({ url: PG_URL, ...args })], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let buf = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString("utf8");
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      waiters.splice(0).forEach((w) => w());
    }
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => {
    if (code !== 0 && code !== null) console.error(`worker ${JSON.stringify(args.role)} exited ${code}: ${stderr}`);
    waiters.splice(0).forEach((w) => w());
    resolve(code);
  }));
  const line = (pred: (l: string) => boolean, timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker gave no matching line; stderr: ${stderr}`)), timeoutMs);
      const check = () => {
        const hit = lines.find(pred);
        if (hit !== undefined) {
          clearTimeout(timer);
          resolve(hit);
        } else if (child.exitCode !== null) {
          clearTimeout(timer);
          reject(new Error(`worker exited ${child.exitCode}; stderr: ${stderr}`));
        } else waiters.push(check);
      };
      check();
    });
  return { child, lines, exited, line };
}

async function resultOf(w: Worker): Promise<any> {
  const code = await w.exited;
  expect(code).toBe(0);
  return JSON.parse(w.lines[w.lines.length - 1]!);
}

/** Waits until some backend of the given application is waiting on a lock; returns its pid. */
async function waitingBackend(pool: Pool, timeoutMs = 10_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const r = await pool.query("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'pruneguard-fault'");
    if (r.rows[0]) return Number(r.rows[0].pid);
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error("no backend started waiting on the lock");
}

describeWithServer("PostgresStore on the real server: processes, kills and faults", {
  needs: "server",
  why: "OS processes racing on one session's rows, a worker killed mid-transaction, a lock held by another session, pg_terminate_backend and statement timeouts",
}, () => {
  const schemas: string[] = [];
  let admin: Pool;
  beforeAll(() => {
    admin = testPool(4);
  });
  afterAll(async () => {
    await dropSchemas(admin, schemas);
    await admin.end();
  });

  /** A pool the fault tests can find in pg_stat_activity. */
  const faultPool = () => new pg.Pool({ connectionString: PG_URL, max: 2, application_name: "pruneguard-fault", connectionTimeoutMillis: 5000 }).on("error", () => {});

  /** Locks a record from another connection; returns the client holding the lock (ROLLBACK to release). */
  async function lockRecord(schema: string, session: string, spanId: string): Promise<PoolClient> {
    const c = await admin.connect();
    await c.query("BEGIN");
    await c.query(`SELECT 1 FROM ${pg.escapeIdentifier(schema)}.records WHERE session = $1 AND span_id = $2 FOR UPDATE`, [session, spanId]);
    return c;
  }

  async function assertConsistent(schema: string, session: string): Promise<void> {
    const store = new PostgresStore({ name: "toolLog", pool: admin, schema });
    const log = await store.auditLog(session);
    expect(verifyAuditChain(log)).toBeNull();
    const head = await admin.query(`SELECT seq, hash FROM ${pg.escapeIdentifier(schema)}.audit_heads WHERE session = $1`, [session]);
    if (log.length > 0) expect(head.rows[0]).toEqual({ seq: String(log.length), hash: log[log.length - 1]!.hash });
    const heldGone = await admin.query(`SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(schema)}.records WHERE held AND text IS NULL`);
    expect(heldGone.rows[0].n).toBe(0);
  }

  it("two pruning processes and a rotating one: nothing lost or doubled, no held copy deleted, every prune audited once", async () => {
    const schema = await freshSchema(admin, "conc", schemas);
    const session = "shared-session";
    const setup = new PostgresStore({ name: "toolLog", pool: admin, schema, retentionMs: 150 });
    const shared = [];
    for (let i = 1; i <= 4; i++) {
      const text = `shared span ${i}`;
      const p = await setup.persist({ session, spanId: `shared_${i}`, kind: "toolResult", text, hash: contentHash(text) });
      shared.push({ spanId: `shared_${i}`, handle: p.handle, text });
    }
    const count = 30;
    const rotator = startWorker({ role: "rotator", schema, session, durationMs: 4000 });
    const a = startWorker({ role: "pruner", schema, session, id: "a", count, shared });
    const b = startWorker({ role: "pruner", schema, session, id: "b", count, shared });
    const [ra, rb, rr] = await Promise.all([resultOf(a), resultOf(b), resultOf(rotator)]);
    expect(ra.errors).toEqual([]);
    expect(rb.errors).toEqual([]);
    expect(rr.runs).toBeGreaterThan(5);
    // The race was real: rotation expired copies while the pruners worked, and some prunes re-persisted.
    expect(rr.rotated).toBeGreaterThan(0);
    expect([...ra.prunes, ...rb.prunes].map((x: any) => x.repersisted), "no prune re-persisted").toContain(true);

    const q = (text: string) => admin.query(text.replaceAll("S.", `${pg.escapeIdentifier(schema)}.`));
    // No record lost or doubled: one row per span, handles 1..n with no gap or repeat.
    const recs = (await q("SELECT span_id, handle, text, hash, held FROM S.records WHERE store = 'toolLog' ORDER BY span_id")).rows;
    expect(recs).toHaveLength(4 + 2 * count);
    const nums = recs.map((r) => Number(String(r.handle).slice(1))).sort((x, y) => x - y);
    expect(nums).toEqual(Array.from({ length: recs.length }, (_, i) => i + 1));
    // Every reversible prune left a held, live, byte-identical copy; rotation deleted none of them.
    const bySpan = new Map(recs.map((r) => [r.span_id, r]));
    const prunes = [...ra.prunes, ...rb.prunes];
    for (const p of prunes.filter((x: any) => x.status === "reversible")) {
      const r = bySpan.get(p.spanId)!;
      expect(r.held, p.spanId).toBe(true);
      expect(r.text, p.spanId).not.toBeNull();
      expect(contentHash(r.text)).toBe(p.hash);
      expect(r.handle).toBe(p.handle);
    }
    expect(prunes.filter((x: any) => x.status === "reversible").length).toBeGreaterThan(count);
    // Every committed item is audited exactly once, at the seq its commit reported; recalls too.
    const log = await setup.auditLog(session);
    expect(verifyAuditChain(log)).toBeNull();
    expect(log).toHaveLength(prunes.length + ra.recalls + rb.recalls);
    const seqs = prunes.map((p: any) => p.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    for (const p of prunes) expect(log[p.seq - 1]).toMatchObject({ op: "prune", spanId: p.spanId, status: p.status });
    expect(log.filter((r) => r.op === "recall")).toHaveLength(ra.recalls + rb.recalls);
    await assertConsistent(schema, session);
  });

  it("a worker killed (SIGKILL) between its two round trips leaves nothing written and its locks released", async () => {
    const schema = await freshSchema(admin, "kill", schemas);
    const session = "s";
    const store = new PostgresStore({ name: "toolLog", pool: admin, schema, statementTimeoutMs: 10_000 });
    const text = "the only copy of request req_77";
    const p = await store.persist({ session, spanId: "span_1", kind: "toolResult", text, hash: contentHash(text) });
    await store.appendAudit(session, draft("invalid"));
    const w = startWorker({ role: "hang", schema, session, spanId: "span_1", handle: p.handle, text });
    await w.line((l) => l === "locked");
    // While the worker holds the locks, our prune would wait: prove it, with a short timeout.
    const impatient = new PostgresStore({ name: "toolLog", pool: admin, schema, statementTimeoutMs: 300 });
    await expect(impatient.commitPrune({ session, items: [item("span_1", text, p.handle)], holdUntil: null, decide: reversible })).rejects.toThrow(/statement timeout/);
    w.child.kill("SIGKILL");
    await w.exited;
    // The server ends the dead backend's transaction: the locks are free and nothing of it was written.
    const after = await store.commitPrune({ session, items: [item("span_1", text, p.handle)], holdUntil: null, decide: reversible });
    expect(after.items[0]).toMatchObject({ handle: p.handle, audit: { seq: 2 } });
    const log = await store.auditLog(session);
    expect(log.map((r) => r.status)).toEqual(["invalid", "reversible"]);
    await assertConsistent(schema, session);
  });

  it("server unreachable: persist and prune reject with StoreError, quickly", async () => {
    const pool = createPool({ url: "postgres://postgres@127.0.0.1:1/test", connectionTimeoutMs: 2000 });
    const store = new PostgresStore({ name: "toolLog", pool, schema: "pruneguard" });
    await expect(store.persist({ session: "s", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") })).rejects.toThrow(StoreError);
    const err = await store.commitPrune({ session: "s", items: [item("span_1", "t", "#1")], holdUntil: null, decide: reversible }).catch((e) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err.message).toMatch(/unreachable|ECONNREFUSED/);
    await pool.end();
  });

  it("a connection terminated mid-transaction: StoreError, nothing half-written, the pool serves the next call", async () => {
    const schema = await freshSchema(admin, "term", schemas);
    const pool = faultPool();
    const store = new PostgresStore({ name: "toolLog", pool, schema });
    const p = await store.persist({ session: "s", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
    const holder = await lockRecord(schema, "s", "span_1");
    const pending = store.commitPrune({ session: "s", items: [item("span_1", "t", p.handle)], holdUntil: null, decide: reversible }).catch((e) => e);
    const pid = await waitingBackend(admin);
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    const err = await pending;
    expect(err).toBeInstanceOf(StoreError);
    await holder.query("ROLLBACK");
    holder.release();
    expect(await store.auditLog("s")).toEqual([]);
    expect(await store.releaseHolds("s")).toBe(0);
    // The broken client was destroyed; a fresh one serves the retry.
    const ok = await store.commitPrune({ session: "s", items: [item("span_1", "t", p.handle)], holdUntil: null, decide: reversible });
    expect(ok.items[0]!.audit.seq).toBe(1);
    // An idle pooled connection killed by the server is discarded too.
    const idle = await admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = 'pruneguard-fault' AND state = 'idle'");
    for (const r of idle.rows) await admin.query("SELECT pg_terminate_backend($1)", [r.pid]);
    await new Promise((res) => setTimeout(res, 100));
    expect(await store.lookup("s", { handle: p.handle })).toMatchObject({ status: "found" });
    await assertConsistent(schema, "s");
    await pool.end();
  });

  it("a statement timeout on a lock: StoreError, nothing half-written, the same store works once the lock is gone", async () => {
    const schema = await freshSchema(admin, "tmo", schemas);
    const pool = faultPool();
    const store = new PostgresStore({ name: "toolLog", pool, schema, statementTimeoutMs: 250 });
    const p = await store.persist({ session: "s", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
    const holder = await lockRecord(schema, "s", "span_1");
    const started = Date.now();
    const err = await store.commitPrune({ session: "s", items: [item("span_1", "t", p.handle)], holdUntil: null, decide: reversible }).catch((e) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err.message).toMatch(/statement timeout/);
    expect(Date.now() - started).toBeLessThan(5000);
    await holder.query("ROLLBACK");
    holder.release();
    expect(await store.auditLog("s")).toEqual([]);
    const ok = await store.commitPrune({ session: "s", items: [item("span_1", "t", p.handle)], holdUntil: null, decide: reversible });
    expect(ok.items[0]!.audit.seq).toBe(1);
    await assertConsistent(schema, "s");
    await pool.end();
  });

  it("through ContextWindow a store fault is a rejected store-error outcome and the window is unchanged but for the line", async () => {
    const schema = await freshSchema(admin, "win", schemas);
    const pool = faultPool();
    const store = new PostgresStore({ name: "toolLog", pool, schema, statementTimeoutMs: 250 });
    const window = new ContextWindow(immediate({
      session: "w1",
      kinds: { toolResult: { store: "toolLog", modes: ["drop", "summarize", "compress"], lossy: "with-flag" } },
      stores: { toolLog: store },
    }));
    const ref = await window.append({ kind: "toolResult", text: "GET /v1/orders -> 502, request req_8f3a2c" });
    await window.append({ kind: "toolResult", text: "second result" });
    const before = window.render();
    const holder = await lockRecord(schema, "w1", refSpanId(ref));
    const outcome = await window.applyDirective({ op: "prune", span_id: String(ref), mode: "drop" });
    await holder.query("ROLLBACK");
    holder.release();
    expect(outcome).toMatchObject({ status: "rejected", reason: "store-error" });
    const line = (outcome as { line: string }).line;
    expect(window.render()).toContain(line);
    expect(window.render().replace(`\n${line}`, "")).toBe(before);
    expect(window.span(String(ref))).toBeDefined();
    // Once the lock is gone the same directive prunes reversibly.
    const again = await window.applyDirective({ op: "prune", span_id: String(ref), mode: "drop" });
    expect(again).toMatchObject({ status: "reversible" });
    const log = await window.auditLog();
    expect(log.filter((r) => r.reason === "store-error")).toHaveLength(1);
    expect(verifyAuditChain(await store.auditLog("w1"))).toBeNull();
    await pool.end();
  });
});
