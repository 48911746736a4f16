/**
 * Stores opened from a policy's declarations, and the check a window makes of stores passed in by hand:
 * a store that makes other promises than its declaration (the case: a memory store with 1 s of
 * retention and no holds where the policy declares a PostgreSQL store kept forever) is refused by name.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as org from "../../generated/org.guard.js";
import { handlePrefixes, openStores } from "../../src/stores/open.js";
import { MemoryStore, SqliteStore } from "../../src/index.js";
import { ManualClock } from "../../src/types.js";
import { freshSchema, itWithServer, PG_URL, schemasDroppedAfterAll, testPool } from "./pg-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-open-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const memoryLike = (clock: ManualClock) => Object.fromEntries(
  Object.entries(org.storeDeclarations).map(([name, d], i) => [name, new MemoryStore({
    name, clock, handlePrefix: ["", "t", "n", "a"][i]!, retentionMs: d.retentionMs, holds: d.holds, distinguishesAbsent: d.distinguishesAbsent, writable: d.writable,
  })]),
) as unknown as org.Stores;

describe("openStores and the declaration check", () => {
  it("opens every declared store with its declared promises; prefixes are stable and distinct", async () => {
    const clock = new ManualClock(0);
    const stores = await org.openStores({ memory: true, clock });
    for (const [name, d] of Object.entries(org.storeDeclarations)) {
      const s = stores[name as keyof org.Stores];
      expect({ retentionMs: s.retentionMs, ...s.capabilities }, name).toEqual({
        retentionMs: d.retentionMs, holds: d.holds, distinguishesAbsent: d.distinguishesAbsent, writable: d.writable,
      });
    }
    expect(Object.values(stores).map((s) => s.handlePrefix)).toEqual(["", "t", "n", "a"]);
    expect([...handlePrefixes(["log", "logs", "lo", "l"]).values()]).toEqual(["", "l", "lo", "la"]);
    const win = org.createWindow({ session: "s", stores, clock });
    const ref = await win.append({ kind: "toolResult", text: "HTTP 502 req_7f3a9c2e41" });
    expect(await win.prune(ref, { mode: "drop" })).toMatchObject({ status: "reversible", handle: "#1" });
    const hint = await win.append({ kind: "systemHint", text: "be terse" });
    const resumed = await org.resumeWindow({ session: "s", stores, clock });
    expect(resumed.entries().map((e) => e.state)).toEqual(["pruned", "lost"]);
    expect(await resumed.recall(hint)).toMatchObject({ status: "lost" });
  });

  it("opens SQLite stores in the given file, and says which store lacks a place", async () => {
    const path = join(dir, "org.db");
    await expect(org.openStores({})).rejects.toThrow("openStores: store toolLog is declared sqlite; give a sqlite path");
    const declarations = { toolLog: org.storeDeclarations.toolLog, notes: org.storeDeclarations.notes };
    const stores = await openStores(declarations, { sqlite: { path } });
    expect(stores.toolLog).toBeInstanceOf(SqliteStore);
    expect(stores.notes.capabilities.writable).toBe(false);
    for (const s of Object.values(stores)) await s.close();
  });

  it("a window refuses stores that do not match the declarations, naming each difference", () => {
    const clock = new ManualClock(0);
    const stores = memoryLike(clock);
    const bad = { ...stores, transcript: new MemoryStore({ name: "transcript", clock, retentionMs: 1000, holds: false, handlePrefix: "t" }) };
    expect(() => org.createWindow({ session: "s", stores: bad, clock })).toThrow(
      "store transcript: the policy declares retentionMs 30d, the store has 1s\n  store transcript: the policy declares holds true, the store has false",
    );
    const sqlite = new SqliteStore({ name: "archive", path: join(dir, "wrong.db"), handlePrefix: "a", retentionMs: 3_600_000 });
    expect(() => org.createWindow({ session: "s", stores: { ...stores, archive: sqlite }, clock })).toThrow(
      "store archive: the policy declares retentionMs forever, the store has 1h",
    );
    void sqlite.close();
    // Stores on other engines that make the declared promises are accepted (memory stands in for tests).
    expect(() => org.createWindow({ session: "s", stores, clock })).not.toThrow();
  });

  const schemas = schemasDroppedAfterAll();
  itWithServer("opens the PostgreSQL stores on a shared pool or URL, checked against the schema version", { needs: "any" }, async () => {
    const pool = testPool(2);
    const schema = await freshSchema(pool, "open", schemas);
    const clock = new ManualClock(0);
    const stores = await org.openStores({ sqlite: { path: join(dir, "pg-org.db") }, postgres: { pool, schema }, clock });
    expect(stores.transcript.engine).toBe("postgres");
    const win = org.createWindow({ session: "s", stores, clock });
    const ref = await win.append({ kind: "userTurn", text: "deploy DEP-1234 please" });
    expect(await win.prune(ref, { mode: "summarize", digest: "asked to deploy" })).toMatchObject({ status: "reversible", handle: "t#1" });
    for (const s of Object.values(stores)) await s.close();
    await expect(openStores({ archive: org.storeDeclarations.archive }, { postgres: { url: PG_URL, schema: "pgt_never_migrated" } })).rejects.toThrow(/not migrated/);
    await pool.end();
  });
});
