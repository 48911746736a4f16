/**
 * Done-when of sessions that outlive a process: an agent process is killed with SIGKILL mid-session (on
 * SQLite and on PostgreSQL), a new process resumes the session, and every span the first process ever
 * acknowledged is live, recallable byte-identical, or answered as pruned or lost — none answers "never in
 * this session" — and the new process appends and prunes normally.
 *
 * Seen to fail when broken on purpose: making `restoreEntries` skip the registry (returning no entries)
 * fails with `span_3 (note, prune none acknowledged): expected 'unknown' not to be 'unknown'` — an unbacked
 * span the first process held answered as if it never existed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freshSchema, itWithServer, PG_URL, schemasDroppedAfterAll, testPool } from "../stores/pg-helpers.js";
import { spawnChild, textFor } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-session-restart-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function killAndResume(location: Record<string, unknown>, session: string): Promise<void> {
  const first = spawnChild({ role: "work", session, ...location });
  await first.waitFor((l) => l["ready"] === true);
  // Let it get well into the session, then kill it at a moment nobody chose.
  await first.waitFor((l) => typeof l["n"] === "number" && l["n"] >= 20 + Math.floor(Math.random() * 20));
  await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 30)));
  first.proc.kill("SIGKILL");
  const exit = await first.exited;
  expect(exit.signal).toBe("SIGKILL");

  const appended = first.lines.filter((l) => typeof l["appended"] === "string") as Array<{ appended: string; kind: string; n: number }>;
  const pruned = new Map((first.lines.filter((l) => typeof l["pruned"] === "string") as Array<{ pruned: string; status: string }>).map((l) => [l.pruned, l.status]));
  const maxN = Math.max(...appended.map((a) => a.n));
  // The ids it acknowledged, and two beyond: one may have been registered before the kill without being printed.
  const ids = [...appended.map((a) => a.appended), `span_${maxN + 1}`, `span_${maxN + 2}`];

  const second = spawnChild({ role: "resume", session, ids, ...location });
  const result = await second.waitFor((l) => "recalls" in l) as {
    recalls: Record<string, { status: string; text: string | null; source: string | null }>;
    states: string[]; appended: string; pruned: string; prunedOld: string | null; back: string;
  };
  expect((await second.exited).code).toBe(0);

  for (const a of appended) {
    const r = result.recalls[a.appended]!;
    const ack = pruned.get(a.appended);
    const where = `${a.appended} (${a.kind}, prune ${ack ?? "none acknowledged"})`;
    expect(r.status, where).not.toBe("unknown");
    if (a.kind === "tool") {
      // Backed: live again or recalled from the store, byte-identical either way.
      expect(r, where).toMatchObject({ status: "found", text: textFor(a.n) });
      if (ack === "reversible") expect(r.source, where).toBe("store");
    } else if (ack === "lossy") {
      expect(r.status, where).toBe("pruned-unrecoverable");
    } else {
      expect(["lost", "pruned-unrecoverable"], where).toContain(r.status);
    }
  }
  // Beyond what was acknowledged: registered before the kill (then it is answered like any other span), or never.
  for (const extra of ids.slice(appended.length)) {
    const n = Number(extra.slice(5));
    const r = result.recalls[extra]!;
    if (n <= result.states.length) expect(r.status, extra).not.toBe("unknown");
    else expect(r.status, extra).toBe("unknown");
  }
  expect(result.states.length).toBeGreaterThanOrEqual(appended.length);
  expect(Number(result.appended.slice(5))).toBe(result.states.length + 1);
  expect(result.pruned).toBe("reversible");
  if (result.prunedOld !== null) expect(result.prunedOld).toBe("reversible");
  expect(result.back).toBe("after the restart");
}

describe("SIGKILL mid-session, then resume in a new process", () => {
  it("SQLite: every span the first process held is live, recallable byte-identical, pruned or lost", { timeout: 120_000 }, async () => {
    for (let round = 0; round < 3; round++) await killAndResume({ engine: "sqlite", path: join(dir, "agent.db") }, `restart-${round}`);
  });

  const schemas = schemasDroppedAfterAll();
  itWithServer("PostgreSQL: every span the first process held is live, recallable byte-identical, pruned or lost", { needs: "any" }, async () => {
    const pool = testPool(1);
    const schema = await freshSchema(pool, "restart", schemas);
    await pool.end();
    for (let round = 0; round < 2; round++) await killAndResume({ engine: "postgres", url: PG_URL, schema }, `restart-${round}`);
  }, 120_000);
});
