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
