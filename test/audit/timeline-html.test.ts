/**
 * `pruneguard audit <file> --session S --format html`: one self-contained page per session, checked as
 * text (no script, no URL, no content unless `--content`, the verification result, every kind of decision)
 * and in headless Chromium (Debian's `chromium`): the page renders, a 10,000-decision session's page stays
 * bounded in size and renders within the test's timeout, and screenshots are written for the reader of the
 * test output (their paths are printed). The Chromium checks are skipped, saying so, where it is missing.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../compiler/cli/main.js";
import { ContextWindow, ManualClock, SqliteStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres.js";
import { describeWithServer, dropSchemas, freshSchema, itWithServer, PG_URL, testPool } from "../stores/pg-helpers.js";

const HOUR = 3_600_000;
const BODY = "SECRETBODY42";
const DIGEST = "DIGESTSECRET9";
const QUERY = "req_querysecret7";
const TEXT = (i: number) => `GET /v1/invoices/${i} -> 500 from billing (${BODY})\n${"a line of a long tool output\n".repeat(8)}request ${QUERY}_${i}\n`;

const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-timeline-"));
const small = path.join(dir, "small.db");
const large = path.join(dir, "large.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { cwd: dir, stdout: (t) => void (out += t), stderr: (t) => void (err += t), color: false });
  return { code, out, err };
}

const KINDS = {
  toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" },
  shortLived: { store: "short", modes: ["drop"], lossy: "with-flag" },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

/** A session with every kind of decision, on two stores of one SQLite file. */
async function smallSession(): Promise<void> {
  const clock = new ManualClock(Date.UTC(2026, 11, 3, 9, 0, 0));
  const toolLog = new SqliteStore({ path: small, name: "toolLog", clock });
  const short = new SqliteStore({ path: small, name: "short", clock, holds: false, retentionMs: HOUR, handlePrefix: "s" });
  const win = new ContextWindow({ session: "s1", clock, stores: { toolLog, short }, auditStore: "toolLog", kinds: KINDS, limits: { lossyBudget: 1, maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 50_000, atTokens: 1 } } });
  const ids = [];
  for (let i = 0; i < 8; i++) {
    ids.push(await win.append({ kind: i % 4 === 3 ? "scratch" : i % 4 === 2 ? "shortLived" : "toolResult", text: TEXT(i) }));
    clock.advance(60_000);
  }
  await win.applyDirective({ op: "prune", span_id: ids[0], mode: "summarize", digest: `billing failed ${DIGEST}` });
  win.render(); // past atTokens with a prune pending: a compaction point the window makes by itself
  clock.advance(30_000);
  await win.applyDirective({ op: "prune", span_id: ids[2], mode: "drop" }); // reversible until: no holds on `short`
  await win.applyDirective({ op: "prune", span_id: ids[3], mode: "drop" }); // rejected: no store, no accept_lossy
  await win.applyDirective({ op: "prune", span_id: ids[3], mode: "drop", accept_lossy: true }); // lossy
  await win.applyDirective({ op: "prune", span_id: ids[7], mode: "drop", accept_lossy: true }); // rejected: budget spent
  clock.advance(60_000);
  await win.applyDirective({ op: "recall", span_id: ids[0] });
  await win.applyDirective({ op: "recall", span_id: ids[3] });
  await win.applyDirective({ op: "recall", span_id: "span_99" });
  await win.applyDirective({ op: "search", query: QUERY });
  await win.applyDirective({ op: "map" }); // the map renders: the pending prunes apply there, by the window itself
  await win.applyDirective({ op: "prune", span_id: ids[5], mode: "drop" });
  await win.applyDirective({ op: "compact" }); // applies that prune: a compaction point asked for
  await win.applyDirective({ op: "compact" }); // nothing left to rewrite: audited, no compaction point
  await win.applyDirective(`{"op":"prune","span_id":"${BODY}"`);
  toolLog.close();
  short.close();
}

/** A session of at least 10,000 decisions. */
async function largeSession(): Promise<number> {
  const clock = new ManualClock(Date.UTC(2026, 11, 3, 9, 0, 0));
  const toolLog = new SqliteStore({ path: large, name: "toolLog", clock });
  const win = new ContextWindow({ session: "big", clock, stores: { toolLog }, kinds: { toolResult: KINDS.toolResult, scratch: KINDS.scratch } });
  let decisions = 0;
  const count = async (p: Promise<unknown>) => {
    await p;
    decisions++;
  };
  for (let i = 0; decisions < 10_000; i++) {
    const id = await win.append({ kind: i % 5 === 4 ? "scratch" : "toolResult", text: TEXT(i) });
    clock.advance(2_000);
    await count(win.applyDirective({ op: "prune", span_id: id, mode: "drop", ...(i % 5 === 4 ? { accept_lossy: true } : {}) }));
    await count(win.applyDirective({ op: "prune", span_id: id, mode: "drop" })); // rejected: already pruned
    await count(win.applyDirective({ op: "recall", span_id: id }));
    if (i % 25 === 0) await count(win.applyDirective({ op: "search", query: `${QUERY}_${i}` }));
  }
  toolLog.close();
  return decisions;
}

beforeAll(async () => {
  await smallSession();
}, 120_000);

describe("audit --format html", () => {
  it("writes one self-contained page: no script, no URL, no content; the chain's verification result first", async () => {
    const r = await cli("audit", small, "--session", "s1", "--format", "html");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const page = r.out;
    expect(page.startsWith("<!doctype html>")).toBe(true);
    expect(page).toContain("default-src 'none'");
    for (const forbidden of [/<script/i, /https?:\/\//i, /\bsrc=/i, /url\(/i, /<link/i, /@import/i]) expect(page).not.toMatch(forbidden);
    for (const secret of [BODY, DIGEST, QUERY, "billing", "invoices"]) expect(page, secret).not.toContain(secret);
    expect(page.match(/data-verify="ok"/g)).toHaveLength(2); // both chains: toolLog and short
    expect(page.indexOf('id="verify"')).toBeLessThan(page.indexOf('id="summary"'));
    // Every kind of answer is there: prunes reversible, until, lossy, rejected; recalls; search; map; compact; invalid.
    for (const label of ["prune: reversible (", "prune: reversible until (", "prune: lossy (tombstone) (", "prune: rejected (", "recall: found (", "recall: not found (", "search: match (", "map (", "compaction point (asked) (", "compaction point (automatic) (", "compact asked: nothing to rewrite (no compaction point) (", "invalid directive ("]) {
      expect(page, label).toContain(label);
    }
    expect(page).toContain("1 lossy commitment; 1 prune refused because the budget was spent.");
    expect(page).toMatch(/1 asked for \(compact\): [^.]+\. [1-9]\d* made by the window itself/);
    expect(page).toMatch(/lossy-budget:/);
    expect(page).toMatch(/<td>s#1<\/td>/); // the copy kept only until a time, in store short
    // The session ran on 2026-12-03 with holds until its end (8 h): the page, made later, says they lapsed,
    // and does not count them as held.
    expect(page).toMatch(/hold lapsed 2026-12-03 17:00:\d\dZ, kept until rotation/);
    expect(page).not.toContain("held until");
    expect(page).toMatch(/>0<\/[a-z]+>\s*<[a-z]+[^>]*>copies held \(of/);
    expect(page).toContain("pruned-unrecoverable");
  });

  it("includes span text, digests and directives only with --content, escaped", async () => {
    const r = await cli("audit", small, "--session", "s1", "--format", "html", "--content");
    expect(r.code).toBe(0);
    for (const secret of [BODY, DIGEST, QUERY]) expect(r.out, secret).toContain(secret);
    expect(r.out).toContain("&quot;op&quot;:&quot;prune&quot;");
    expect(r.out).not.toMatch(/<script|https?:\/\//i);
  });

  it("says when a chain is broken, before anything else; exit 1 only with --verify", async () => {
    const tampered = path.join(dir, "tampered.db");
    writeFileSync(tampered, readFileSync(small));
    const db = new DatabaseSync(tampered);
    db.exec(`UPDATE pruneguard_audit SET record = replace(record, '"status":"lossy"', '"status":"reversible"'), status = 'reversible' WHERE status = 'lossy'`);
    db.close();
    const page = await cli("audit", tampered, "--session", "s1", "--format", "html");
    expect(page.code).toBe(0);
    expect(page.out).toMatch(/data-verify="broken">✗ store toolLog: chain broken at record \d+: hash-mismatch/);
    expect((await cli("audit", tampered, "--session", "s1", "--format", "html", "--verify")).code).toBe(1);
  });

  it("refuses what it cannot show, with exit 2", async () => {
    expect((await cli("audit", small, "--format", "html")).err).toMatch(/--format html needs --session/);
    expect((await cli("audit", small, "--session", "s1", "--format", "html", "--rows", "x")).code).toBe(2);
    expect((await cli("audit", small, "--session", "nobody", "--format", "html")).err).toMatch(/no audit records of session nobody/);
  });
});

describeWithServer("audit --url --format html (PostgreSQL)", { needs: "any" }, () => {
  const pool = testPool(2);
  const schemas: string[] = [];
  afterAll(async () => {
    await dropSchemas(pool, schemas);
    await pool.end();
  });

  itWithServer("reads the chain, the registry and the copies of a PostgreSQL store, and never shows the URL", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "timeline", schemas);
    const clock = new ManualClock(Date.UTC(2026, 11, 3, 9));
    const toolLog = new PostgresStore({ name: "toolLog", pool, schema, clock });
    const win = new ContextWindow({ session: "pg-1", clock, stores: { toolLog }, kinds: { toolResult: KINDS.toolResult, scratch: KINDS.scratch } });
    const a = await win.append({ kind: "toolResult", text: TEXT(1) });
    const b = await win.append({ kind: "scratch", text: TEXT(2) });
    await win.applyDirective({ op: "prune", span_id: a, mode: "summarize", digest: `billing ${DIGEST}` });
    await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true });
    await win.recall(a);
    const r = await cli("audit", "--url", PG_URL, "--schema", schema, "--session", "pg-1", "--format", "html");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`From postgres:${schema}`);
    expect(r.out).toContain('data-verify="ok"');
    expect(r.out).toContain("held");
    expect(r.out).toMatch(/<td>1<\/td><td>span_1<\/td><td>toolResult<\/td><td>toolLog<\/td>/);
    expect(r.out).not.toContain(PG_URL);
    for (const secret of [BODY, DIGEST]) expect(r.out).not.toContain(secret);
    const withContent = await cli("audit", "--url", PG_URL, "--schema", schema, "--session", "pg-1", "--format", "html", "--content");
    for (const secret of [BODY, DIGEST]) expect(withContent.out).toContain(secret);
  }, 60_000);
});

/** Debian's `chromium` on the PATH (`.ci/run` installs it when it can). */
const chromium = ((): string | null => {
  const r = spawnSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" });
  const found = r.status === 0 ? r.stdout.trim().split("\n")[0]! : "";
  return found !== "" && existsSync(found) ? found : null;
})();
const skipChromium = chromium === null;
if (skipChromium) console.warn("timeline-html.test.ts: chromium is not installed (apt-get install -y chromium): the headless rendering checks are skipped");

/** Runs headless Chromium on a file; `--dump-dom` returns the DOM after load, `--screenshot` writes a PNG. */
function browse(file: string, mode: { dom: true } | { screenshot: string }, timeoutMs = 90_000): { dom: string; ms: number } {
  const profile = mkdtempSync(path.join(tmpdir(), "pruneguard-chromium-"));
  const t0 = performance.now();
  try {
    const r = spawnSync(chromium!, [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
      "--disable-dev-shm-usage", `--user-data-dir=${profile}`, "--window-size=1280,900",
      ...("dom" in mode ? ["--dump-dom"] : [`--screenshot=${mode.screenshot}`]),
      `file://${file}`,
    ], { encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`chromium exited ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`);
    return { dom: r.stdout, ms: performance.now() - t0 };
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

describe.skipIf(skipChromium)("audit --format html in headless Chromium", () => {
  it("renders the page, and writes a screenshot", async () => {
    const page = path.join(dir, "s1.html");
    writeFileSync(page, (await cli("audit", small, "--session", "s1", "--format", "html")).out);
    const { dom } = browse(page, { dom: true });
    expect(dom).toContain("<h1>Session <code>s1</code></h1>");
    expect(dom).toContain('data-verify="ok"');
    expect(dom).toMatch(/<svg[^>]*aria-label="decisions over time"/);
    expect(dom).toMatch(/<svg[^>]*aria-label="spans by position and time"/);
    const shot = path.join(tmpdir(), `pruneguard-timeline-s1-${process.pid}.png`);
    browse(page, { screenshot: shot });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    console.log(`timeline screenshot (session s1): ${shot}`);
  });

  it("a 10,000-decision session's page stays bounded in size and renders within the timeout", async () => {
    const decisions = await largeSession();
    expect(decisions).toBeGreaterThanOrEqual(10_000);
    const r = await cli("audit", large, "--session", "big", "--format", "html");
    expect(r.code).toBe(0);
    const bytes = Buffer.byteLength(r.out);
    expect(bytes).toBeLessThan(3 * 1024 * 1024);
    expect(r.out).toContain(`Every decision (${decisions})`);
    expect(r.out).toMatch(/more not listed/);
    const page = path.join(dir, "big.html");
    writeFileSync(page, r.out);
    const { dom, ms } = browse(page, { dom: true }, 110_000);
    expect(dom).toContain('data-verify="ok"');
    expect(dom).toContain("</table>");
    const shot = path.join(tmpdir(), `pruneguard-timeline-big-${process.pid}.png`);
    browse(page, { screenshot: shot }, 110_000);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    console.log(`timeline of ${decisions} decisions: ${(bytes / 1024).toFixed(0)} KiB, rendered by Chromium in ${(ms / 1000).toFixed(1)} s; screenshot: ${shot}`);
  }, 300_000);
});
