/**
 * Schema version 2 of the SQLite store: the committed prunes are indexed by span in a table of their own
 * (`pruneguard_audit_spans`, through `pruneguard_chains.indexed`) that recall fills in batches, instead of an
 * expression index every prune's transaction wrote. `prunesOf` must answer exactly what a filter over the
 * whole chain answers — before, during and after the index catches up, across connections, on a migrated
 * file — and never leave more than `INDEX_TAIL` rows of a chain outside the index after a call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/audit.js";
import { contentHash } from "../../src/hash.js";
import { INDEX_TAIL, SQLITE_SCHEMA_VERSION } from "../../src/stores/sqlite/sqlite-schema.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import type { PruneTransaction } from "../../src/stores/store.js";
import { ManualClock } from "../../src/types.js";
import { testDraft } from "./conformance.js";
import { version0File } from "./sqlite-legacy.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-sqlite-spans-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function open(path: string): SqliteStore {
  return new SqliteStore({ name: "toolLog", path, clock: new ManualClock(0) });
}

/** Persists a copy of `spanId` and prunes it reversibly, or (with `lossy`) commits a lossy prune of it. */
async function prune(s: SqliteStore, session: string, spanId: string, lossy = false): Promise<void> {
  if (lossy) {
    await s.appendAudit(session, testDraft("lossy", { spanId }));
    return;
  }
  const text = `copy of ${spanId}`;
  const { handle } = await s.persist({ session, spanId, kind: "toolResult", text, hash: contentHash(text) });
  const txn: PruneTransaction = {
    session, holdUntil: null,
    items: [{ spanId, kind: "toolResult", backed: true, handle, hash: contentHash(text), text }],
    decide: (checks) => checks.map(() => ({ status: "reversible" as const, repersist: false, hold: true, audit: testDraft("reversible", { spanId, handle }) })),
  };
  await s.commitPrune(txn);
}

/** What recall read before there was any index: the committed prunes naming `id`, from the whole chain. */
async function byScan(s: SqliteStore, session: string, id: string): Promise<AuditRecord[]> {
  return (await s.auditLog(session)).filter((r) =>
    r.op === "prune" && (r.status === "reversible" || r.status === "lossy") && (r.spanId === id || (r.handle !== null && r.handle === id)));
}

function sql<T>(path: string, query: string): T[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(query).all() as unknown as T[];
  } finally {
    db.close();
  }
}

/** Each chain's last seq and how far its span index reaches. */
function watermarks(path: string): Array<{ session: string; head: number; indexed: number }> {
  return sql(path, `SELECT c.session, c.indexed, (SELECT coalesce(max(a.seq), 0) FROM pruneguard_audit a WHERE a.chain = c.chain) AS head
                    FROM pruneguard_chains c ORDER BY c.chain`);
}

describe("SqliteStore prunes by span, indexed outside the prune (schema version 2)", () => {
  it("answers as the whole chain does while the index lags, catches up past INDEX_TAIL rows, and keeps answering", async () => {
    const path = join(dir, `tail-${n++}.db`);
    const s = open(path);
    // Interleaved noise: rejections and recalls are not prunes; span_1 is pruned again and again.
    const ids = ["span_1", "span_2", "span_77", "#1", "#2", "span_999", "nonsense"];
    const check = async () => {
      for (const id of ids) expect(await s.prunesOf("s", id), id).toEqual(await byScan(s, "s", id));
    };
    for (let i = 0; i < 40; i++) {
      await prune(s, "s", `span_${(i % 3) + 1}`);
      await s.appendAudit("s", testDraft("rejected", { spanId: "span_1" }));
    }
    await check();
    // Fewer than INDEX_TAIL rows since the start: read by their rowid range, nothing written.
    expect(watermarks(path)).toEqual([{ session: "s", head: 80, indexed: 0 }]);
    for (let i = 0; i < INDEX_TAIL; i++) await prune(s, "s", `span_${i + 4}`, i % 5 === 0);
    await check();
    const [caught] = watermarks(path);
    expect(caught!.indexed).toBe(caught!.head);
    // Rows after the index again, below the threshold: still answered, the index stays where it was.
    await prune(s, "s", "span_1");
    await prune(s, "s", "span_77", true);
    await check();
    const [after] = watermarks(path);
    expect(after!.indexed).toBe(caught!.head);
    expect(after!.head - after!.indexed).toBeLessThanOrEqual(INDEX_TAIL);
    expect((await s.prunesOf("s", "span_1")).at(-1)!.seq).toBe(after!.head - 1);
    expect(s.integrityCheck()).toBe("ok");
    await s.close();
  });

  it("a prune committed on another connection after the index caught up is found; sessions never mix", async () => {
    const path = join(dir, `two-${n++}.db`);
    const a = open(path);
    const b = open(path);
    for (let i = 0; i < INDEX_TAIL + 5; i++) await prune(a, "s", `span_${i + 1}`);
    await prune(a, "t", "span_1", true);
    expect((await a.prunesOf("s", "span_1")).map((r) => r.seq)).toEqual([1]);
    await prune(b, "s", "span_1");
    expect((await a.prunesOf("s", "span_1")).map((r) => r.status)).toEqual(["reversible", "reversible"]);
    expect(await a.prunesOf("s", "span_1")).toEqual(await byScan(b, "s", "span_1"));
    expect((await a.prunesOf("t", "span_1")).map((r) => r.status)).toEqual(["lossy"]);
    expect(await a.prunesOf("nobody", "span_1")).toEqual([]);
    await a.close();
    await b.close();
  });

  it("a read never fails for the write lock: with another connection holding it, the rows not indexed are read as they are", async () => {
    const path = join(dir, `locked-${n++}.db`);
    const s = new SqliteStore({ name: "toolLog", path, clock: new ManualClock(0), busyTimeoutMs: 50 });
    for (let i = 0; i < INDEX_TAIL + 10; i++) await prune(s, "s", `span_${(i % 20) + 1}`);
    const expected = await byScan(s, "s", "span_3");
    const other = new DatabaseSync(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      expect(await s.prunesOf("s", "span_3")).toEqual(expected);
      expect(watermarks(path)[0]!.indexed).toBe(0);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    // The lock gone, the next call indexes them.
    expect(await s.prunesOf("s", "span_3")).toEqual(expected);
    expect(watermarks(path)[0]!.indexed).toBe(INDEX_TAIL + 10);
    await s.close();
  });

  it("migrates a version-1 file: its index by span dropped, the same answers from the table that replaces it", async () => {
    const path = join(dir, `v1-${n++}.db`);
    const s = open(path);
    for (let i = 0; i < INDEX_TAIL + 20; i++) await prune(s, "s", `span_${(i % 50) + 1}`, i % 7 === 0);
    const expected = await Promise.all(["span_1", "span_7", "span_50", "#3"].map((id) => byScan(s, "s", id)));
    await s.close();
    // Version 1 as it was written: the expression index, no `indexed` column, no table of spans.
    const db = new DatabaseSync(path);
    db.exec(`DROP TABLE pruneguard_audit_spans;
      ALTER TABLE pruneguard_chains DROP COLUMN indexed;
      CREATE INDEX pruneguard_audit_span ON pruneguard_audit (json_extract(record, '$.spanId')) WHERE status IN ('reversible', 'lossy');
      PRAGMA user_version = 1;`);
    db.close();
    const again = open(path);
    expect(sql(path, "PRAGMA user_version")).toEqual([{ user_version: SQLITE_SCHEMA_VERSION }]);
    expect(sql(path, "SELECT name FROM sqlite_master WHERE name = 'pruneguard_audit_span'")).toEqual([]);
    expect(watermarks(path)).toEqual([{ session: "s", head: INDEX_TAIL + 20, indexed: 0 }]);
    expect(await Promise.all(["span_1", "span_7", "span_50", "#3"].map((id) => again.prunesOf("s", id)))).toEqual(expected);
    expect(watermarks(path)[0]!.indexed).toBe(INDEX_TAIL + 20);
    expect(again.integrityCheck()).toBe("ok");
    await again.close();
  });

  // node:sqlite binds a JavaScript number as REAL: `(chain << 32) + seq` summed with a REAL is a double, wrong
  // from chain 2^21 on (seen: "CHECK constraint failed" on every append of such a chain).
  it("chains numbered from 2^21 on append, fold their holds and answer by span, ids exact", async () => {
    const path = join(dir, `big-${n++}.db`);
    await open(path).close();
    const db = new DatabaseSync(path);
    db.exec("INSERT INTO pruneguard_chains (chain, store, session) VALUES (2097152, 'toolLog', 'filler')");
    db.close();
    const clock = new ManualClock(0);
    const s = new SqliteStore({ name: "toolLog", path, retentionMs: 3_600_000, clock });
    for (let i = 1; i <= INDEX_TAIL + 3; i++) await prune(s, "s", `span_${i}`);
    expect(sql(path, "SELECT chain, id - (chain << 32) AS fromId, seq FROM pruneguard_audit WHERE seq IN (1, 2) ORDER BY id"))
      .toEqual([{ chain: 2097153, fromId: 1, seq: 1 }, { chain: 2097153, fromId: 2, seq: 2 }]);
    expect((await s.prunesOf("s", "span_2")).map((r) => r.seq)).toEqual([2]);
    expect(watermarks(path).find((w) => w.session === "s")).toEqual({ session: "s", head: INDEX_TAIL + 3, indexed: INDEX_TAIL + 3 });
    // Past retention, every copy is kept by the hold its prune placed (folded from the audit rows first).
    clock.set(2 * 3_600_000);
    expect(await s.rotate()).toEqual({ rotated: 0, keptByHold: INDEX_TAIL + 3 });
    expect(await s.releaseHolds("s")).toBe(INDEX_TAIL + 3);
    expect(await s.rotate()).toEqual({ rotated: INDEX_TAIL + 3, keptByHold: 0 });
    await s.close();
  });

  it("migrates a version-0 file through both steps: holds kept, its index by span dropped", async () => {
    const path = join(dir, `v0-${n++}.db`);
    version0File(path, 5 * 3_600_000);
    const s = open(path);
    expect(sql(path, "SELECT name FROM sqlite_master WHERE name = 'pruneguard_audit_span'")).toEqual([]);
    expect(await s.prunesOf("s1", "span_1")).toEqual(await byScan(s, "s1", "span_1"));
    expect((await s.prunesOf("s1", "span_1")).length).toBeGreaterThan(0);
    await s.close();
  });
});
