import { DatabaseSync as Database } from "node:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { contentHash } from "../../src/hash.js";
import { ContextWindow, ManualClock, SqliteStore, refSpanId } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-restart-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const kinds = { tool: { store: "log", modes: ["drop"], lossy: "with-flag" }, note: { store: null, modes: ["drop"], lossy: "with-flag" } } as const;

describe("a window rebuilt over the same SQLite file", () => {
  it("finds reversible copies, remembers tombstones, and catches a store that rewrote bytes under a matching hash", async () => {
    const path = join(dir, "agent.db");
    const clock = new ManualClock(0);
    const first = new ContextWindow({ session: "s", clock, stores: { log: new SqliteStore({ name: "log", path, clock }) }, kinds });
    const kept = await first.append({ kind: "tool", text: "request req_7f3a9c2e41 failed" });
    const other = await first.append({ kind: "tool", text: "second result" });
    const note = await first.append({ kind: "note", text: "scratch" });
    await first.prune({ span: kept, mode: "drop" });
    await first.prune({ span: other, mode: "drop" });
    await first.prune({ span: note, mode: "drop", acceptLossy: true });
    // Applied now: a prune still pending when its copy is found lost is not applied at all (test/window/lapse.test.ts).
    await first.compact();

    // A consistent lie: other bytes, and the hash recomputed to match them.
    const db = new Database(path);
    const forged = "second result (edited)";
    db.prepare("UPDATE pruneguard_records SET text = ?, hash = ? WHERE span_id = ?").run(forged, contentHash(forged), refSpanId(other));
    db.close();

    const rebuilt = new ContextWindow({ session: "s", clock, stores: { log: new SqliteStore({ name: "log", path, clock }) }, kinds });
    expect(await rebuilt.recall(kept)).toMatchObject({ status: "found", text: "request req_7f3a9c2e41 failed" });
    expect(await rebuilt.recall(note)).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
    expect(await rebuilt.recall(other)).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
    // The live window knows the hash itself.
    expect(await first.recall(other)).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
    expect(await rebuilt.recall("span_99")).toMatchObject({ status: "unknown" });
  });
});
