/**
 * A SQLite store whose file disappears or is swapped under it fails closed: without the check, prunes go
 * on "reversibly" into an unlinked inode that no restart can read, or into a database that is not the one
 * the session's copies are in.
 */
import { copyFileSync, mkdtempSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { contentHash } from "../../src/hash.js";
import { SqliteStore } from "../../src/stores/sqlite.js";
import { ManualClock } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-sqlite-health-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const kinds = { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } } as const;

describe("SqliteStore notices its file was removed or replaced", () => {
  it("a removed file: every call fails with an error naming the file, and the window keeps the span", async () => {
    const path = join(dir, "removed.db");
    const clock = new ManualClock(0);
    const store = new SqliteStore({ name: "log", path, clock });
    const win = new ContextWindow({ session: "s", clock, stores: { log: store }, kinds });
    const id = await win.append({ kind: "tool", text: "kept bytes" });
    unlinkSync(path);
    for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
    await expect(store.persist({ session: "s", spanId: "span_9", kind: "tool", text: "x", hash: contentHash("x") })).rejects.toThrow(
      `database file ${path} was removed`,
    );
    await expect(store.lookup("s", { spanId: id })).rejects.toThrow(/was removed/);
    const out = await win.applyDirective({ op: "prune", span_id: id, mode: "drop" });
    expect(out).toMatchObject({ status: "rejected", reason: "store-error" });
    expect(win.span(id)?.text).toBe("kept bytes");
    await store.close();
  });

  it("a replaced file (same path, another inode): reads and writes fail closed", async () => {
    const path = join(dir, "replaced.db");
    const clock = new ManualClock(0);
    const store = new SqliteStore({ name: "log", path, clock });
    await store.persist({ session: "s", spanId: "span_1", kind: "tool", text: "a", hash: contentHash("a") });
    const other = join(dir, "other.db");
    new SqliteStore({ name: "log", path: other, clock }).close();
    copyFileSync(other, join(dir, "swap.db"));
    renameSync(join(dir, "swap.db"), path);
    await expect(store.auditLog("s")).rejects.toThrow(`database file ${path} was replaced by another file`);
    await expect(store.persist({ session: "s", spanId: "span_2", kind: "tool", text: "b", hash: contentHash("b") })).rejects.toThrow(/was replaced/);
    await store.close();
  });
});
