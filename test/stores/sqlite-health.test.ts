/**
 * A SQLite store whose file disappears or is swapped under it fails closed: without the check, prunes go
 * on "reversibly" into an unlinked inode that no restart can read, or into a database that is not the one
 * the session's copies are in.
 */
import { copyFileSync, mkdtempSync, renameSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as fs from "node:fs";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { contentHash } from "../../src/hash.js";
import { READ_CHECK_MS, SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { ManualClock } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";

// The store's `stat`s, counted: the same function, watched.
vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs")>();
  return { ...actual, statSync: vi.fn(actual.statSync) };
});
const stats = vi.mocked(fs.statSync);
afterEach(() => void vi.useRealTimers());

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

  it("a replaced file (same path, another inode): the next write fails closed, and every call after it", async () => {
    const path = join(dir, "replaced.db");
    const clock = new ManualClock(0);
    const store = new SqliteStore({ name: "log", path, clock });
    await store.persist({ session: "s", spanId: "span_1", kind: "tool", text: "a", hash: contentHash("a") });
    replace(path);
    await expect(store.persist({ session: "s", spanId: "span_2", kind: "tool", text: "b", hash: contentHash("b") })).rejects.toThrow(
      `database file ${path} was replaced by another file`,
    );
    await expect(store.auditLog("s")).rejects.toThrow(/was replaced/);
    await expect(store.lookup("s", { spanId: "span_1" })).rejects.toThrow(/was replaced/);
    await store.close();
  });

  it("reads check the file at most once a second: until then they read the file the store opened, then fail closed", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const path = join(dir, "replaced-read.db");
    const clock = new ManualClock(0);
    const store = new SqliteStore({ name: "log", path, clock });
    await store.persist({ session: "s", spanId: "span_1", kind: "tool", text: "a", hash: contentHash("a") });
    replace(path);
    // The copy this store wrote is still what it reads: nothing is lost by reading it.
    expect(await store.lookup("s", { spanId: "span_1" })).toMatchObject({ status: "found", text: "a" });
    vi.advanceTimersByTime(READ_CHECK_MS);
    await expect(store.lookup("s", { spanId: "span_1" })).rejects.toThrow(`database file ${path} was replaced by another file`);
    await expect(store.sessionSpans("s")).rejects.toThrow(/was replaced/);
    await store.close();
  });

  it("every write stats the file; map() and checkCopies() over many spans stat it at most once", async () => {
    const path = join(dir, "counted.db");
    const clock = new ManualClock(0);
    const store = new SqliteStore({ name: "log", path, clock });
    const win = new ContextWindow({ session: "s", clock, stores: { log: store }, kinds });
    const ids: string[] = [];
    const writes = (["persist", "registerSpan", "sessionStart"] as const).map((m) => vi.spyOn(store, m));
    stats.mockClear();
    // An append is two writes (the copy, the span's registration; the first one also the session's start), each checked.
    for (let i = 0; i < 40; i++) ids.push(await win.append({ kind: "tool", text: `bytes ${i}` }));
    const written = writes.reduce((n, w) => n + w.mock.calls.length, 0);
    expect(written).toBeGreaterThanOrEqual(80);
    expect(stats.mock.calls.filter(([p]) => p === path)).toHaveLength(written);
    for (const id of ids.slice(0, 20)) expect((await win.tryPrune({ span: id as never, mode: "drop" })).status).toBe("reversible");
    const lookups = vi.spyOn(store, "lookup");
    stats.mockClear();
    await win.map();
    await win.checkCopies();
    expect(lookups.mock.calls.length).toBeGreaterThanOrEqual(40);
    // The map's two writes (its audit record, and the lossy counter read under the write lock) check; of the
    // 40 and more reads, at most one does.
    expect(stats.mock.calls.filter(([p]) => p === path).length).toBeLessThanOrEqual(3);
    await store.close();
  });
});

/** Puts another database file at `path` (rename over it: same path, another inode). */
function replace(path: string): void {
  const other = `${path}.other`;
  new SqliteStore({ name: "log", path: other }).close();
  copyFileSync(other, `${path}.swap`);
  renameSync(`${path}.swap`, path);
}
