/**
 * Finding 25.16: recall of a span the window does not hold — an id that never existed, above all — read the
 * whole audit chain of every store and the whole span registry of the home store (~46 ms a call on a
 * 10,000-span SQLite session). Stores now answer it by key: `prunesOf` (the committed prunes naming a span
 * id or handle, by index) and `lookupSpan` (one registry row). The answers must not change: `unknown`
 * stays `unknown`, `lost` stays `lost`, a tombstone stays a tombstone, a copy lost or altered behind the
 * runtime is still said to be lost.
 *
 * Each store is wrapped in a proxy that counts the calls made through it. A window on the plain stores
 * recalls every id; a window on the same stores with `prunesOf` and `lookupSpan` hidden takes the old path
 * (whole chain, whole registry); both must answer the same, and the first must never read a whole chain or
 * registry. Seen to fail before the fix: `expected { auditLog: 11, sessionSpans: 3 } to deeply equal {}` (every
 * recall of an id the window does not hold read the whole chain, and span ids the whole registry), and the
 * failing-store test answered `unknown`: nothing asked a keyed lookup that could fail.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, SqliteStore, type BackingStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres.js";
import { dropSchemas, freshSchema, itWithServer, NO_SERVER, testPool } from "../stores/pg-helpers.js";

const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), "pruneguard-recall-unknown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kinds = {
  tool: { store: "log", modes: ["drop"], lossy: "with-flag" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

/** The methods recall reads whole tables with, and the keyed ones that replace them. */
const WHOLE = new Set<PropertyKey>(["auditLog", "sessionSpans"]);
const KEYED = new Set<PropertyKey>(["prunesOf", "lookupSpan"]);

/** A store seen through a proxy that counts calls by method; with `hideKeyed`, as if it had no keyed lookups. */
function watched(inner: BackingStore, options: { hideKeyed?: boolean; fail?: PropertyKey } = {}) {
  const calls: Record<string, number> = {};
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (options.hideKeyed === true && KEYED.has(prop)) return undefined;
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (typeof prop === "string") calls[prop] = (calls[prop] ?? 0) + 1;
        if (prop === options.fail) return Promise.reject(new Error(`injected: ${String(prop)} fails`));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

interface Fixture {
  readonly log: BackingStore;
  /** Rewrites a copy's bytes behind the runtime (its hash no longer matches). */
  alter(spanId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A session of `n` spans written by one window — live, reversibly pruned, tombstoned, rotated out, altered —
 * then every interesting id recalled by windows that never held them.
 */
async function sameAnswers(open: (clock: ManualClock) => Promise<Fixture>, n: number): Promise<void> {
  const clock = new ManualClock(1_000_000);
  const f = await open(clock);
  try {
    const writer = new ContextWindow({ session: "s", clock, stores: { log: f.log }, kinds, limits: { lossyBudget: 1_000_000 } });
    const ids: Record<string, string> = {};
    for (let i = 0; i < n; i++) {
      const kind = i % 3 === 0 ? "note" : "tool";
      const id = await writer.append({ kind, text: `output ${i}: req_${i.toString(16).padStart(6, "0")}` });
      if (i % 5 === 1) await writer.applyDirective({ op: "prune", span_id: id, mode: "drop" });
      if (i % 7 === 3) await writer.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true });
      if (i === 1) ids["reversible"] = id;
      if (i === 3) ids["tombstone"] = id;
      if (i === 6) ids["unbacked-live"] = id;
      if (i === 11) ids["altered"] = id;
      if (i === 2) ids["rotated"] = id;
    }
    await f.alter(ids["altered"]!);
    // Past retention, unheld copies rotate out (the reversible prunes hold theirs).
    clock.advance(2 * HOUR);
    await f.log.rotate();
    const handles = writer.entries().flatMap((e) => ("handle" in e && typeof e.handle === "string" ? [e.handle] : []));
    const queries = [
      ...Object.values(ids),
      ...handles.slice(0, 3), handles.at(-1)!,
      "span_999999", `span_${n + 1}`, "#999999", "t#4", "nonsense", "span_1\u0000",
    ];

    const keyed = watched(f.log);
    const old = watched(f.log, { hideKeyed: true });
    const reader = (store: BackingStore) => new ContextWindow({ session: "s", clock, stores: { log: store }, kinds });
    const strip = ({ auditSeq: _seq, ...rest }: { auditSeq: number | null }) => rest;
    const a = reader(keyed.store);
    const b = reader(old.store);
    const statuses = new Set<string>();
    for (const q of queries) {
      const now = strip(await a.recall(q));
      const before = strip(await b.recall(q));
      expect(now, q).toEqual(before);
      statuses.add(`${(now as { status: string }).status}${"reason" in now ? `:${String(now.reason)}` : ""}`);
    }
    // The session covers every answer recall can give from the stores alone.
    expect([...statuses].sort()).toEqual(expect.arrayContaining(["found", "lost", "pruned-unrecoverable:copy-lost", "pruned-unrecoverable:lossy", "unknown"]));
    // The keyed window never read a whole chain or a whole registry; the old path did.
    expect(Object.fromEntries(Object.entries(keyed.calls).filter(([m]) => WHOLE.has(m)))).toEqual({});
    expect(keyed.calls["prunesOf"]).toBeGreaterThan(0);
    expect(old.calls["auditLog"]).toBeGreaterThan(0);
  } finally {
    await f.close();
  }
}

describe("Finding 25.16: recall of ids the window does not hold answers by key, and answers the same", () => {
  it("SQLite (1,500 spans)", async () => {
    const path = join(dir, "recall.db");
    await sameAnswers(async (clock) => {
      const log = new SqliteStore({ name: "log", path, clock, retentionMs: HOUR });
      return {
        log,
        alter: async (spanId) => {
          const db = new DatabaseSync(path);
          db.prepare("UPDATE pruneguard_records SET text = 'altered behind the runtime' WHERE span_id = ?").run(spanId);
          db.close();
        },
        close: () => log.close(),
      };
    }, 1500);
  }, 60_000);

  it("memory (300 spans)", async () => {
    await sameAnswers(async (clock) => {
      const log = new MemoryStore({ name: "log", clock, retentionMs: HOUR });
      return { log, alter: async () => undefined, close: () => log.close() };
    }, 300);
  });

  const pool = NO_SERVER === null ? testPool(2) : null;
  const schemas: string[] = [];
  afterAll(async () => {
    if (pool === null) return;
    await dropSchemas(pool, schemas);
    await pool.end();
  });
  itWithServer("PostgreSQL (300 spans)", { needs: "any" }, async () => {
    const schema = await freshSchema(pool!, "recallkey", schemas);
    await sameAnswers(async (clock) => {
      const log = new PostgresStore({ name: "log", pool: pool!, schema, clock, retentionMs: HOUR });
      return {
        log,
        alter: async (spanId) => {
          await pool!.query(`UPDATE ${pg.escapeIdentifier(schema)}.records SET text = 'altered behind the runtime' WHERE span_id = $1`, [spanId]);
        },
        close: () => log.close(),
      };
    }, 300);
  }, 60_000);

  it("a store that fails the keyed lookup is unavailable, never `unknown`", async () => {
    const clock = new ManualClock(0);
    const log = new SqliteStore({ name: "log", path: join(dir, "failing.db"), clock });
    try {
      const writer = new ContextWindow({ session: "s", clock, stores: { log }, kinds });
      await writer.append({ kind: "tool", text: "one" });
      const failing = watched(log, { fail: "prunesOf" });
      const reader = new ContextWindow({ session: "s", clock, stores: { log: failing.store }, kinds });
      expect(await reader.recall("span_999999")).toMatchObject({ status: "unavailable" });
      const registry = watched(log, { fail: "lookupSpan" });
      expect(await new ContextWindow({ session: "s", clock, stores: { log: registry.store }, kinds }).recall("span_999999")).toMatchObject({ status: "unavailable" });
    } finally {
      await log.close();
    }
  });
});
