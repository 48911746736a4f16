/**
 * Schema version 1 of the SQLite store: a prune's hold is written in its own audit row (`hold_span`,
 * `hold_until`), not onto the record's row, and rotation and release fold a chain's new holds into the
 * records before they read them. A file of version 0 opens, migrates, and keeps every hold it had.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { verifyAuditChain } from "../../src/audit.js";
import { contentHash } from "../../src/hash.js";
import { openSqliteAuditReader } from "../../src/stores/sqlite/sqlite-audit.js";
import { SQLITE_SCHEMA_VERSION } from "../../src/stores/sqlite/sqlite-schema.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import type { PruneTransaction } from "../../src/stores/store.js";
import { ManualClock } from "../../src/types.js";
import { testDraft } from "./conformance.js";
import { version0File } from "./sqlite-legacy.js";

const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), "pruneguard-sqlite-holds-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A reversible prune of `spanId` (its copy holds `text`), holding it until `holdUntil`. */
function prune(session: string, spanId: string, text: string, handle: string | null, holdUntil: number | null, hold = true): PruneTransaction {
  return {
    session, holdUntil,
    items: [{ spanId, kind: "toolResult", backed: true, handle, hash: contentHash(text), text }],
    decide: (checks) => checks.map((c) => (c.conditions.existence
      ? { status: "reversible" as const, repersist: false, hold, audit: testDraft("reversible", { spanId, handle: c.handle }) }
      : { status: "rejected" as const, audit: testDraft("rejected", { spanId }) })),
  };
}

/** Persists `text` as the copy of `spanId`. */
function copy(store: SqliteStore, session: string, spanId: string, text: string): Promise<unknown> {
  return store.persist({ session, spanId, kind: "toolResult", text, hash: contentHash(text) });
}

function open(path: string, clock: ManualClock, name = "toolLog"): SqliteStore {
  return new SqliteStore({ name, path, retentionMs: 2 * HOUR, clock });
}

function sql<T>(path: string, query: string, ...params: Array<string | number>): T[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(query).all(...params) as unknown as T[];
  } finally {
    db.close();
  }
}

async function heldCopies(path: string, session: string): Promise<Record<string, number | null | false>> {
  const reader = openSqliteAuditReader(path);
  try {
    return Object.fromEntries((await reader.copies(session, false)).map((c) => [c.spanId, c.held ? c.heldUntil : false]));
  } finally {
    await reader.close();
  }
}

describe("SqliteStore holds in audit rows (schema version 1)", () => {
  it("`pruneguard audit`'s reader reads a version-0 file's holds as they are, without migrating it", async () => {
    const path = join(dir, `v0-read-${n++}.db`);
    const until = 5 * HOUR;
    version0File(path, until);
    expect(await heldCopies(path, "s1")).toEqual({ span_1: null, span_2: until, span_3: false, span_4: false });
    expect(sql(path, "PRAGMA user_version")).toEqual([{ user_version: 0 }]);
  });

  it("migrates a version-0 file: its records and chain unchanged, every hold kept, rotation and release as before", async () => {
    const path = join(dir, `v0-${n++}.db`);
    const until = 5 * HOUR;
    const stored = version0File(path, until);
    const clock = new ManualClock(3 * HOUR);
    const s = open(path, clock);
    expect(sql(path, "PRAGMA user_version")).toEqual([{ user_version: SQLITE_SCHEMA_VERSION }]);
    // Each chain starts folded through its last record: no fold rereads the rows written before.
    expect(sql(path, "SELECT folded FROM pruneguard_chains")).toEqual([{ folded: 3 }]);
    // A process of an earlier version cannot use the migrated file: the statements it prepares (its hold, its
    // rotation) name the records' old `held` column, so it fails to open instead of rotating held copies.
    const old = new DatabaseSync(path);
    try {
      expect(() => old.prepare("UPDATE pruneguard_records SET held = 1, held_until = ? WHERE store = ? AND session = ? AND span_id = ?")).toThrow(/no such column: held/);
    } finally {
      old.close();
    }
    const log = await s.auditLog("s1");
    expect(log.map((r) => JSON.stringify(r))).toEqual(stored);
    expect(verifyAuditChain(log)).toBeNull();
    expect(await heldCopies(path, "s1")).toEqual({ span_1: null, span_2: until, span_3: false, span_4: false });
    // Past retention: the unheld copy goes, both held ones stay.
    expect(await s.rotate()).toEqual({ rotated: 1, keptByHold: 2 });
    expect(await s.lookup("s1", { spanId: "span_3" })).toMatchObject({ status: "expired" });
    expect(await s.lookup("s1", { spanId: "span_1" })).toMatchObject({ status: "found", text: "one" });
    // The expiring hold lapses; the one until release does not.
    clock.set(until + 1);
    expect(await s.rotate()).toEqual({ rotated: 1, keptByHold: 1 });
    expect(await s.lookup("s1", { spanId: "span_2" })).toMatchObject({ status: "expired" });
    expect(await s.releaseHolds("s1")).toBe(1);
    expect(await s.rotate()).toEqual({ rotated: 1, keptByHold: 0 });
    expect(await s.lookup("s1", { spanId: "span_1" })).toMatchObject({ status: "expired" });
    // The chain goes on from its last record; reopening migrates nothing again.
    await copy(s, "s1", "span_5", "five");
    expect((await s.commitPrune(prune("s1", "span_5", "five", "#5", null))).items[0]!.audit.seq).toBe(4);
    expect(s.integrityCheck()).toBe("ok");
    await s.close();
    const again = open(path, clock);
    expect(verifyAuditChain(await again.auditLog("s1"))).toBeNull();
    expect(await again.rotate()).toEqual({ rotated: 0, keptByHold: 0 });
    clock.advance(3 * HOUR);
    expect(await again.rotate()).toEqual({ rotated: 0, keptByHold: 1 });
    await again.close();
  });

  it("refuses a file of a later schema version, and changes nothing in it", async () => {
    const path = join(dir, `later-${n++}.db`);
    await open(path, new ManualClock(0)).close();
    const db = new DatabaseSync(path);
    db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => open(path, new ManualClock(0))).toThrow(new RegExp(`schema version ${SQLITE_SCHEMA_VERSION + 1}, newer than this pruneguard`));
    expect(sql(path, "PRAGMA user_version")).toEqual([{ user_version: SQLITE_SCHEMA_VERSION + 1 }]);
  });

  it("a prune writes its hold in its audit row only; rotation folds it into the record before it reads it", async () => {
    const path = join(dir, `fold-${n++}.db`);
    const clock = new ManualClock(0);
    const s = open(path, clock);
    for (const [i, t] of ["a", "b", "c"].entries()) await copy(s, "s", `span_${i + 1}`, t);
    await s.commitPrune(prune("s", "span_1", "a", "#1", null));
    await s.commitPrune(prune("s", "span_2", "b", "#2", 3 * HOUR));
    // The record rows are untouched by the prune: the hold is in the audit row, and readers see it there.
    expect(sql(path, "SELECT span_id, held_folded AS held FROM pruneguard_records ORDER BY span_id")).toEqual([
      { span_id: "span_1", held: 0 }, { span_id: "span_2", held: 0 }, { span_id: "span_3", held: 0 },
    ]);
    expect(sql(path, "SELECT seq, hold_span, hold_until FROM pruneguard_audit ORDER BY id")).toEqual([
      { seq: 1, hold_span: "span_1", hold_until: null }, { seq: 2, hold_span: "span_2", hold_until: 3 * HOUR },
    ]);
    expect(await heldCopies(path, "s")).toEqual({ span_1: null, span_2: 3 * HOUR, span_3: false });
    clock.set(2 * HOUR + 1);
    expect(await s.rotate()).toEqual({ rotated: 1, keptByHold: 2 });
    expect(sql(path, "SELECT span_id, held_folded AS held, held_until FROM pruneguard_records WHERE text IS NOT NULL ORDER BY span_id")).toEqual([
      { span_id: "span_1", held: 1, held_until: null }, { span_id: "span_2", held: 1, held_until: 3 * HOUR },
    ]);
    expect(sql(path, "SELECT folded FROM pruneguard_chains")).toEqual([{ folded: 2 }]);
    expect(await heldCopies(path, "s")).toEqual({ span_1: null, span_2: 3 * HOUR, span_3: false });
    // An expired hold no longer keeps its copy; the one until release does.
    clock.set(3 * HOUR + 1);
    expect(await s.rotate()).toEqual({ rotated: 1, keptByHold: 1 });
    expect(await s.lookup("s", { spanId: "span_2" })).toMatchObject({ status: "expired" });
    expect(await s.lookup("s", { spanId: "span_1" })).toMatchObject({ status: "found", text: "a" });
    await s.close();
  });

  it("a hold placed through one connection keeps the copy from a rotation through another", async () => {
    const path = join(dir, `two-${n++}.db`);
    const clock = new ManualClock(0);
    const a = open(path, clock);
    const b = open(path, clock);
    await copy(a, "s", "span_1", "a");
    await copy(a, "s", "span_2", "b");
    clock.advance(3 * HOUR);
    // Both copies are past retention; a's prune holds span_1 in its audit row, and b's rotation folds it first.
    await a.commitPrune(prune("s", "span_1", "a", "#1", null));
    expect(await b.rotate()).toEqual({ rotated: 1, keptByHold: 1 });
    expect(await b.lookup("s", { spanId: "span_1" })).toMatchObject({ status: "found", text: "a" });
    expect(await b.lookup("s", { spanId: "span_2" })).toMatchObject({ status: "expired" });
    await a.close();
    await b.close();
  });

  it("release releases every hold placed before it, folded or not, and none placed after it", async () => {
    const path = join(dir, `release-${n++}.db`);
    const clock = new ManualClock(0);
    const s = open(path, clock);
    for (const [i, t] of ["a", "b", "c"].entries()) await copy(s, "s", `span_${i + 1}`, t);
    await s.commitPrune(prune("s", "span_1", "a", "#1", null));
    clock.advance(3 * HOUR);
    expect(await s.rotate()).toEqual({ rotated: 2, keptByHold: 1 }); // span_1's hold folded
    const t = "c again";
    await copy(s, "s", "span_4", t);
    await s.commitPrune(prune("s", "span_4", t, "#4", null)); // not folded yet
    expect(await s.releaseHolds("s")).toBe(2);
    expect(await heldCopies(path, "s")).toMatchObject({ span_1: false, span_4: false });
    // A hold placed after the release is in force, although the release folded the chain before it.
    const u = "after release";
    await copy(s, "s", "span_5", u);
    await s.commitPrune(prune("s", "span_5", u, "#5", null));
    expect(await heldCopies(path, "s")).toMatchObject({ span_5: null });
    clock.advance(3 * HOUR);
    expect(await s.rotate()).toEqual({ rotated: 2, keptByHold: 1 });
    expect(await s.lookup("s", { spanId: "span_5" })).toMatchObject({ status: "found", text: u });
    // Another session's holds are not released by this one's release.
    await copy(s, "t", "span_1", "x");
    await s.commitPrune(prune("t", "span_1", "x", "#1", null));
    expect(await s.releaseHolds("s")).toBe(1);
    clock.advance(3 * HOUR);
    expect(await s.rotate()).toEqual({ rotated: 1, keptByHold: 1 });
    expect(await s.lookup("t", { spanId: "span_1" })).toMatchObject({ status: "found", text: "x" });
    await s.close();
  });

  it("a span's latest hold wins, as when each prune rewrote the record's hold; a prune without a hold places none", async () => {
    const path = join(dir, `latest-${n++}.db`);
    const clock = new ManualClock(0);
    const s = open(path, clock);
    for (const [i, t] of ["a", "b", "c"].entries()) await copy(s, "s", `span_${i + 1}`, t);
    await s.commitPrune(prune("s", "span_1", "a", "#1", 3 * HOUR));
    await s.commitPrune(prune("s", "span_1", "a", "#1", null));
    await s.commitPrune(prune("s", "span_2", "b", "#2", null));
    await s.commitPrune(prune("s", "span_2", "b", "#2", 3 * HOUR));
    await s.commitPrune(prune("s", "span_3", "c", "#3", null, false));
    expect(await heldCopies(path, "s")).toEqual({ span_1: null, span_2: 3 * HOUR, span_3: false });
    clock.set(4 * HOUR);
    expect(await s.rotate()).toEqual({ rotated: 2, keptByHold: 1 });
    expect(await s.lookup("s", { spanId: "span_1" })).toMatchObject({ status: "found" });
    await s.close();
  });

  it("a prune's commit writes the audit table's pages, never the records' (counted on the WAL)", async () => {
    const path = join(dir, `pages-${n++}.db`);
    const clock = new ManualClock(0);
    const s = open(path, clock);
    const spans = 40;
    for (let i = 1; i <= spans; i++) await copy(s, "s", `span_${i}`, `copy ${i}`);
    await s.appendAudit("s", testDraft("invalid")); // the chain exists before the prunes
    const db = new DatabaseSync(path);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    for (let i = 1; i <= spans; i++) await s.commitPrune(prune("s", `span_${i}`, `copy ${i}`, `#${i}`, null));
    const wal = readFileSync(`${path}-wal`);
    const size = wal.readUInt32BE(8);
    const owner = new Map((db.prepare("SELECT name, pageno FROM dbstat").all() as Array<{ name: string; pageno: number }>).map((r) => [r.pageno, r.name]));
    const trees = new Set<string>();
    for (let f = 0; 32 + f * (size + 24) < wal.length; f++) trees.add(owner.get(wal.readUInt32BE(32 + f * (size + 24))) ?? "?");
    db.close();
    // The audit table and page 1 (the header, when the file grows): no index by span (schema version 2).
    expect([...trees].filter((t) => !["pruneguard_audit", "sqlite_schema"].includes(t))).toEqual([]);
    expect(trees.has("pruneguard_audit")).toBe(true);
    await s.close();
  });
});
