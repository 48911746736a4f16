/**
 * The session's lossy budget when the lossy commitment is made in a store other than the home store: the
 * units are reserved on the home store's counter first, and given back when unused. Several windows of one
 * session race; together they make exactly min(budget, attempts) lossy commitments, and the counter ends
 * at what was committed (no reservation leaks when nothing crashed).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, SqliteStore } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-budget-stores-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// `scratch` names a read-only store: it never has a copy, so every prune of it is lossy, committed in `notes`.
const kinds = {
  tool: { store: "log", modes: ["drop"], lossy: "with-flag" },
  scratch: { store: "notes", modes: ["drop"], lossy: "with-flag" },
} as const;

describe("one lossy budget across stores", () => {
  it("windows racing on lossy prunes in a non-home store never exceed the session's budget", async () => {
    const path = join(dir, "stores.db");
    const clock = new ManualClock(0);
    const open = () => ({
      log: new SqliteStore({ name: "log", path, clock }),
      notes: new SqliteStore({ name: "notes", path, clock, writable: false, handlePrefix: "n" }),
    });
    const budget = 3;
    const windows = Array.from({ length: 4 }, () => new ContextWindow({ session: "s", clock, stores: open(), kinds, limits: { lossyBudget: budget } }));
    const outcomes = await Promise.all(windows.map(async (win, w) => {
      const statuses: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = await win.append({ kind: "scratch", text: `scratch ${w}.${i}` });
        const out = await win.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true });
        statuses.push(out.status === "rejected" ? `rejected:${out.reason}` : out.status);
      }
      return statuses;
    }));
    const all = outcomes.flat();
    expect(all.filter((s) => s === "lossy")).toHaveLength(budget);
    expect(all.filter((s) => s === "rejected:lossy-budget")).toHaveLength(all.length - budget);
    const notes = new SqliteStore({ name: "notes", path, clock });
    const log = new SqliteStore({ name: "log", path, clock });
    expect(await notes.countLossy("s")).toBe(budget);
    // Every unused reservation was given back: the home counter holds exactly the commitments.
    expect(await log.reserveLossy("s", budget + 1, 10)).toBe(1);
    await notes.close();
    await log.close();
  });
});
