import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { contentHash } from "../../src/hash.js";
import { SqliteStore } from "../../src/stores/sqlite.js";
import { ManualClock } from "../../src/types.js";
import { describeStoreConformance } from "./conformance.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-sqlite-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStoreConformance("SqliteStore (file, WAL)", async (o) => new SqliteStore({ ...o, path: join(dir, `conf-${n++}.db`) }));

describe("SqliteStore specifics", () => {
  it("survives reopening the file: records, holds and the audit chain persist", async () => {
    const path = join(dir, "reopen.db");
    const clock = new ManualClock(0);
    const a = new SqliteStore({ name: "toolLog", path, retentionMs: 1000, clock });
    await a.persist({ session: "s", spanId: "span_1", kind: "k", text: "t", hash: contentHash("t") });
    await a.appendAudit("s", {
      op: "prune", status: "invalid", spanId: null, kind: null, mode: null, conditions: null, handle: null,
      repersisted: false, acceptLossy: false, reason: "parse", pinsCarried: 0, directive: "{}",
    });
    await a.close();
    const b = new SqliteStore({ name: "toolLog", path, retentionMs: 1000, clock });
    expect(await b.lookup("s", { handle: "#1" })).toMatchObject({ status: "found", text: "t" });
    expect((await b.auditLog("s")).map((r) => r.seq)).toEqual([1]);
    expect(b.integrityCheck()).toBe("ok");
    await b.close();
  });

  it("two stores may share one file without seeing each other's records", async () => {
    const path = join(dir, "shared.db");
    const a = new SqliteStore({ name: "a", path });
    const b = new SqliteStore({ name: "b", path });
    await a.persist({ session: "s", spanId: "span_1", kind: "k", text: "a", hash: contentHash("a") });
    expect(await b.lookup("s", { spanId: "span_1" })).toEqual({ status: "absent" });
    await a.close();
    await b.close();
  });

  it("search looks literals of three or more characters up in the FTS5 trigram index, shorter ones by scan", async () => {
    const s = new SqliteStore({ name: "a", path: join(dir, "fts.db") });
    await s.persist({ session: "s", spanId: "span_1", kind: "k", text: "X-Request-Id: req_7f3a9c2e41", hash: contentHash("X-Request-Id: req_7f3a9c2e41") });
    expect(await s.searchCopies("s", { literal: "req_7f", limit: 5 })).toMatchObject({ index: "fts5-trigram", candidates: [{ spanId: "span_1" }] });
    expect(await s.searchCopies("s", { literal: "7f", limit: 5 })).toMatchObject({ index: "scan", candidates: [{ spanId: "span_1" }] });
    await s.close();
  });

  it("a file written before the search index gets one when opened, and VACUUM does not detach it from the copies", async () => {
    const path = join(dir, "old-format.db");
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(path);
    db.exec(`CREATE TABLE pruneguard_records (store TEXT NOT NULL, session TEXT NOT NULL, span_id TEXT NOT NULL, handle TEXT NOT NULL,
      kind TEXT NOT NULL, text TEXT, hash TEXT NOT NULL, created_at INTEGER NOT NULL, expired_at INTEGER, held INTEGER NOT NULL DEFAULT 0,
      held_until INTEGER, UNIQUE (store, session, span_id), UNIQUE (store, session, handle))`);
    const ins = db.prepare("INSERT INTO pruneguard_records (store, session, span_id, handle, kind, text, hash, created_at) VALUES ('a', 's', ?, ?, 'k', ?, ?, 0)");
    for (let i = 1; i <= 20; i++) ins.run(`span_${i}`, `#${i}`, `row ${i} id_${i}_end`, contentHash(`row ${i} id_${i}_end`));
    // Rows deleted before the VACUUM make SQLite renumber the rest.
    db.exec("DELETE FROM pruneguard_records WHERE span_id IN ('span_1', 'span_2', 'span_3')");
    db.close();
    const a = new SqliteStore({ name: "a", path });
    expect((await a.searchCopies("s", { literal: "id_17_end", limit: 5 })).candidates.map((c) => c.spanId)).toEqual(["span_17"]);
    await a.close();
    const v = new DatabaseSync(path);
    v.exec("VACUUM");
    v.close();
    const b = new SqliteStore({ name: "a", path });
    await b.persist({ session: "s", spanId: "span_21", kind: "k", text: "row 21 id_21_end", hash: contentHash("row 21 id_21_end") });
    for (const i of [4, 17, 20, 21]) {
      expect((await b.searchCopies("s", { literal: `id_${i}_end`, limit: 5 })).candidates.map((c) => c.spanId)).toEqual([`span_${i}`]);
      expect((await b.searchCopies("s", { literal: `row ${i} id_${i}_end`, limit: 5 })).candidates.map((c) => c.spanId)).toEqual([`span_${i}`]);
    }
    expect(b.integrityCheck()).toBe("ok");
    await b.close();
  });

  it("uses WAL journaling", async () => {
    const path = join(dir, "wal.db");
    const s = new SqliteStore({ name: "a", path });
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(path, { readOnly: true });
    expect(db.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    db.close();
    await s.close();
  });
});
