/**
 * Finding 25.6 — resume served forged bytes. Someone with write access to the store edits a span's
 * registered hash (`pruneguard_spans.hash`, PostgreSQL `spans.hash`) and its stored copy (text and hash)
 * together, leaving the audit chain untouched, so `pruneguard audit --verify` still passes. A resumed
 * window took the registry's hash as the truth: it answered recall `found` with the forged text for a
 * pruned span and showed a live one with the forged text.
 *
 * The audit chain is the authority: each checked prune's record carries the span's content hash
 * (`spanHash`). On resume every restored copy is checked against it; a copy that does not match comes back
 * as `copy lost` (pruned) or `lost in a restart` (never pruned), never live with the forged text and never
 * `found`. Seen failing before the fix (SQLite and PostgreSQL): the resumed window rendered
 * `span_1 pruned, recall #1`, `span_2 summary, recall #2` and `[span_3 plain]` live with `│ forged: all green`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { contentHash } from "../../src/hash.js";
import { ContextWindow, ManualClock, SqliteStore, verifyAuditChain } from "../../src/index.js";
import type { BackingStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres.js";
import { describeWithServer, dropSchemas, freshSchema, itWithServer, testPool } from "../stores/pg-helpers.js";

const HOUR = 3_600_000;
const dir = mkdtempSync(join(tmpdir(), "pruneguard-forged-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `tool` is held in `log`. `plain` forbids lossy and lives in `scratch`, which has no holds: every prune
 * of it is refused after its check, and that refusal's record carries the span's hash too.
 */
const kinds = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  plain: { store: "scratch", modes: ["drop"], lossy: "forbid" },
} as const;

const PRUNED = "GET /deploy -> 500 req_8f3a2c91";
const LIVE = "migration 0042 failed: column users.email is not unique";
const FORGED = "forged: all green";

/** Writes a session: span_1 pruned (drop), span_2 pruned (summarize), span_3 live with a refused prune, span_4 live. */
async function writeSession(stores: { log: BackingStore; scratch: BackingStore }, clock: ManualClock): Promise<void> {
  const win = new ContextWindow({ session: "s", clock, stores, kinds });
  const a = await win.append({ kind: "tool", text: PRUNED });
  const b = await win.append({ kind: "tool", text: "a long build log ending in E1042" });
  const c = await win.append({ kind: "plain", text: LIVE });
  await win.append({ kind: "tool", text: "a live tool output" });
  expect(await win.prune({ span: a, mode: "drop" })).toMatchObject({ status: "reversible" });
  expect(await win.prune({ span: b, mode: "summarize", digest: "build failed with E1042" })).toMatchObject({ status: "reversible" });
  expect(await win.tryPrune({ span: c, mode: "drop" })).toMatchObject({ status: "rejected", reason: "not-reversible" });
}

/** What a resumed window must show after span_1, span_2 and span_3 were forged. */
async function expectForgeriesRefused(open: () => { log: BackingStore; scratch: BackingStore }, clock: ManualClock): Promise<void> {
  const win = await ContextWindow.resume({ session: "s", clock, stores: open(), kinds });
  const rendered = win.render();
  expect(rendered).not.toContain(FORGED);
  expect(rendered.split("\n").filter((l) => l !== "")).toEqual([
    "span_1 pruned, copy lost, contents unknown",
    "span_2 summary, copy lost",
    "│ build failed with E1042",
    "span_3 lost in a restart, contents unknown",
    "[span_4 tool]",
    "│ a live tool output",
  ]);
  expect(win.entries().map((e) => e.state)).toEqual(["pruned", "pruned", "lost", "live"]);
  expect(win.span("span_3")).toBeUndefined();
  for (const q of ["span_1", "#1", "span_2", "#2"]) {
    const r = await win.recall(q);
    expect(r, `recall ${q}`).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
    expect(JSON.stringify(r)).not.toContain(FORGED);
  }
  expect(await win.recall("span_3")).toMatchObject({ status: "lost", spanId: "span_3" });
  const searched = await win.search("all green");
  expect(searched).not.toMatchObject({ status: "match" });
  expect(JSON.stringify(searched)).not.toContain(FORGED);
  // A window opened with the constructor agrees: the chain's hash is the authority there too.
  const fresh = new ContextWindow({ session: "s", clock, stores: open(), kinds });
  expect(await fresh.recall("span_1")).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
}

describe("Finding 25.6: a resumed window checks restored copies against the audit chain (SQLite)", () => {
  it("a registry hash and a copy forged together come back as lost, never found, never live", async () => {
    const path = join(dir, "forged.db");
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
    const open = () => ({
      log: new SqliteStore({ name: "log", path, clock }),
      scratch: new SqliteStore({ name: "scratch", handlePrefix: "n", path, clock, holds: false, retentionMs: HOUR }),
    });
    const first = open();
    await writeSession(first, clock);
    // Untouched, the session resumes with its copies.
    const honest = await ContextWindow.resume({ session: "s", clock, stores: open(), kinds });
    expect(await honest.recall("span_1")).toMatchObject({ status: "found", text: PRUNED });
    expect(honest.span("span_3")?.text).toBe(LIVE);

    const db = new DatabaseSync(path);
    const forged = contentHash(FORGED);
    for (const [store, spanId] of [["log", "span_1"], ["log", "span_2"], ["scratch", "span_3"]] as const) {
      db.prepare("UPDATE pruneguard_spans SET hash = ? WHERE session = 's' AND span_id = ?").run(forged, spanId);
      const edited = db.prepare("UPDATE pruneguard_records SET text = ?, hash = ? WHERE store = ? AND session = 's' AND span_id = ?").run(FORGED, forged, store, spanId);
      expect(edited.changes).toBe(1);
    }
    db.close();
    // The chain was not touched: it verifies, in the store and with the CLI.
    for (const s of Object.values(open())) expect(verifyAuditChain(await s.auditLog("s"))).toBeNull();
    for (const store of ["log", "scratch"]) {
      const cli = spawnSync(process.execPath, ["bin/pruneguard.js", "audit", path, "--store", store, "--session", "s", "--verify"], { encoding: "utf8" });
      expect(cli.status, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(/chain ok/);
    }
    await expectForgeriesRefused(open, clock);
  });
});

describeWithServer("Finding 25.6: a resumed window checks restored copies against the audit chain (PostgreSQL)", { needs: "any" }, () => {
  const pool = testPool(2);
  const schemas: string[] = [];
  afterAll(async () => {
    await dropSchemas(pool, schemas);
    await pool.end();
  });

  itWithServer("a registry hash and a copy forged together come back as lost, never found, never live", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "forged", schemas);
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
    const open = () => ({
      log: new PostgresStore({ name: "log", pool, schema, clock }),
      scratch: new PostgresStore({ name: "scratch", handlePrefix: "n", pool, schema, clock, holds: false, retentionMs: HOUR }),
    });
    await writeSession(open(), clock);
    const t = (name: string) => `${pg.escapeIdentifier(schema)}.${name}`;
    const forged = contentHash(FORGED);
    for (const [store, spanId] of [["log", "span_1"], ["log", "span_2"], ["scratch", "span_3"]] as const) {
      await pool.query(`UPDATE ${t("spans")} SET hash = $1 WHERE session = 's' AND span_id = $2`, [forged, spanId]);
      const edited = await pool.query(`UPDATE ${t("records")} SET text = $1, hash = $2 WHERE store = $3 AND session = 's' AND span_id = $4`, [FORGED, forged, store, spanId]);
      expect(edited.rowCount).toBe(1);
    }
    for (const s of Object.values(open())) expect(verifyAuditChain(await s.auditLog("s"))).toBeNull();
    await expectForgeriesRefused(open, clock);
  });
});
