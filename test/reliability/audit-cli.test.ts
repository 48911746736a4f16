/**
 * `pruneguard audit` end to end: a real SQLite file written by a window, tampered with through
 * node:sqlite the way someone with file access would, and `node bin/pruneguard.js audit … --verify`
 * spawned on it. Assumes `npm run build` has run (`npm test` builds first).
 *
 * Seen to fail when broken on purpose (local edits of the built dist/ files the CLI runs, restored
 * afterwards): making `verifyAuditChain` skip the hash recomputation failed the tampering test on
 * "an edited record" (exit 0, "5 records" and no break); dropping the command's column check failed it
 * on "an edited status column". Finding 25.11: before the command checked that a record's stored text is
 * its canonical serialisation, "a record with a key written twice" and "a record with other spacing"
 * passed (exit 0, "chain ok"); before it cross-checked the session's counters, so did "a reset lossy budget
 * counter" (seen again by making `counterProblem` in the built dist/ return null).
 */
import { execFile, spawnSync } from "node:child_process";
import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync as Database } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentHash, canonicalJson } from "../../src/hash.js";
import { ContextWindow } from "../../src/index.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { ManualClock } from "../../src/types.js";
import { legacyFile } from "../stores/sqlite-legacy.js";
import { HOUR, tempDir } from "./helpers.js";
import { makeWindow } from "./model.js";

const dir = tempDir("audit-cli");
const source = join(dir, "agent.db");
let copies = 0;

/** The environment the CLI runs in: `COLUMNS=0`, so each message is on one line (test/compiler/output-width.test.ts checks the layout). */
const env = { ...process.env, COLUMNS: "0" };

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ["bin/pruneguard.js", "audit", ...args], { encoding: "utf8", cwd: process.cwd(), env });
  expect(r.stderr, "a stack trace reached the user").not.toMatch(/\n\s+at /);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The same, without blocking, so independent runs can overlap. */
function cliAsync(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["bin/pruneguard.js", "audit", ...args], { encoding: "utf8", env }, (error, stdout, stderr) => {
      expect(stderr, "a stack trace reached the user").not.toMatch(/\n\s+at /);
      resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, out: stdout, err: stderr });
    });
  });
}

/** The key of a session's record `seq` (the audit table is keyed by the session's chain and the seq). */
const at = (session: string, seq: number | string) => `((SELECT chain FROM pruneguard_chains WHERE session = '${session}') << 32) + ${seq}`;
const ofSession = (session: string) => `chain = (SELECT chain FROM pruneguard_chains WHERE session = '${session}')`;

/** A copy of the clean file with `sql` applied through a second connection. */
function tampered(sql: string): string {
  const path = join(dir, `copy-${copies++}.db`);
  copyFileSync(source, path);
  const db = new Database(path);
  db.exec(sql);
  db.close();
  return path;
}

beforeAll(async () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  const store = new SqliteStore({ name: "toolLog", path: source, retentionMs: 2 * HOUR, clock });
  const win = makeWindow("s-42", store, clock);
  const a = await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
  const b = await win.append({ kind: "scratch", text: "thinking" });
  await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
  await win.applyDirective({ op: "prune", span_id: b, mode: "drop" });
  await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true });
  await win.applyDirective({ op: "recall", span_id: a });
  await win.applyDirective('{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":"true"}');
  const other = makeWindow("s-43", store, clock);
  await other.applyDirective({ op: "recall", span_id: "#1" });
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("pruneguard audit", () => {
  it("lists the sessions in a file", () => {
    const r = cli(source);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/toolLog\s+s-42\s+5/);
    expect(r.out).toMatch(/toolLog\s+s-43\s+1/);
  });

  it("lists a session's decisions readably and verifies a clean chain", () => {
    const r = cli(source, "--store", "toolLog", "--session", "s-42", "--verify");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("store toolLog, session s-42: 5 records");
    expect(r.out).toMatch(/1\s+2026-11-13T09:00:00.000Z\s+prune\s+reversible\s+span_1\s+tool\s+drop\s+#1/);
    expect(r.out).toMatch(/2\s+\S+\s+prune\s+rejected\s+span_2\s+scratch\s+drop\s+-\s+-\s+not-reversible:unbacked/);
    expect(r.out).toMatch(/3\s+\S+\s+prune\s+lossy\s+span_2\s+scratch\s+drop\s+-\s+accept\s+unbacked/);
    expect(r.out).toMatch(/5\s+\S+\s+prune\s+invalid\s+-.*parse/);
    expect(r.out).toMatch(/chain ok: 5 records, head [0-9a-f]{64}/);
  });

  it("--format json gives the records and the verdict as data", () => {
    const r = cli(source, "--session", "s-42", "--verify", "--format", "json");
    expect(r.code).toBe(0);
    const data = JSON.parse(r.out) as { records: Array<{ seq: number }>; verify: { ok: boolean; head: string } };
    expect(data.records.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(data.verify).toMatchObject({ ok: true });
  });

  const breaks: Array<[string, string, RegExp]> = [
    ["an edited record", `UPDATE pruneguard_audit SET record = json_set(record, '$.reason', 'nothing to see') WHERE id = ${at("s-42", 2)}`,
      /chain broken at record 2: hash-mismatch: record 2 was edited/],
    ["an edited status column (the lossy budget counts it)", `UPDATE pruneguard_audit SET status = 'rejected' WHERE id = ${at("s-42", 3)}`,
      /chain broken at record 3: column-mismatch: row 3: column status/],
    ["a dropped record", `DELETE FROM pruneguard_audit WHERE id = ${at("s-42", 2)}`,
      /chain broken at record 3: seq-gap: expected record 2, found 3/],
    ["two records swapped", `
      CREATE TEMP TABLE t AS SELECT seq, status, hash, record FROM pruneguard_audit WHERE ${ofSession("s-42")} AND seq IN (2, 3);
      UPDATE pruneguard_audit SET record = (SELECT record FROM t WHERE t.seq = 5 - pruneguard_audit.seq),
        status = (SELECT status FROM t WHERE t.seq = 5 - pruneguard_audit.seq), hash = (SELECT hash FROM t WHERE t.seq = 5 - pruneguard_audit.seq)
        WHERE ${ofSession("s-42")} AND seq IN (2, 3);`,
      /chain broken at record 2: column-mismatch: row 2: column seq/],
    ["two records swapped with their seq renumbered", `
      CREATE TEMP TABLE t AS SELECT seq, status, hash, record FROM pruneguard_audit WHERE ${ofSession("s-42")} AND seq IN (2, 3);
      UPDATE pruneguard_audit SET record = json_set((SELECT record FROM t WHERE t.seq = 5 - pruneguard_audit.seq), '$.seq', pruneguard_audit.seq),
        status = (SELECT status FROM t WHERE t.seq = 5 - pruneguard_audit.seq), hash = (SELECT hash FROM t WHERE t.seq = 5 - pruneguard_audit.seq)
        WHERE ${ofSession("s-42")} AND seq IN (2, 3);`,
      /chain broken at record 2: prev-mismatch: record 2 does not link to record 1/],
    ["a record moved into another session", `UPDATE pruneguard_audit SET id = ${at("s-42", 6)} WHERE id = ${at("s-43", 1)}`,
      /chain broken at record 6: foreign-record: record 6 belongs to store toolLog, session s-43/],
    ["a record that is not JSON", `UPDATE pruneguard_audit SET record = '{broken' WHERE id = ${at("s-42", 4)}`,
      /chain broken at record 4: unreadable/],
    // Finding 25.11: JSON.parse keeps the last "status" (the sealed value, so the hash verifies and the column
    // agrees), SQLite's json_extract reads the first: the text says two things. Refused as tampered.
    ["Finding 25.11: a record with a key written twice", `UPDATE pruneguard_audit SET record = '{"status":"rejected",' || substr(record, 2) WHERE id = ${at("s-42", 1)}`,
      /chain broken at record 1: non-canonical: record 1: its stored text names the key "status" twice/],
    ["Finding 25.11: a record with other spacing", `UPDATE pruneguard_audit SET record = replace(record, '","', '", "') WHERE id = ${at("s-42", 2)}`,
      /chain broken at record 2: non-canonical: record 2: its stored text is not the canonical serialisation of what it parses to/],
    // The session spent its budget (record 3 is lossy): a counter reset to 0 would refill it.
    ["Finding 25.11: a reset lossy budget counter", "UPDATE pruneguard_sessions SET lossy_used = 0 WHERE store = 'toolLog' AND session = 's-42'",
      /chain broken at record 3: counter-mismatch: the session's lossy budget counter \(pruneguard_sessions\.lossy_used\) is 0, below the 1 lossy commitment its chain records \(record 3\)/],
    ["Finding 25.11: a reset span counter", "UPDATE pruneguard_sessions SET next_span = 1 WHERE store = 'toolLog' AND session = 's-42'",
      /counter-mismatch: the session's span counter \(pruneguard_sessions\.next_span\) is 1, below span_2 in its registry/],
    ["Finding 25.11: a deleted counter row", "DELETE FROM pruneguard_sessions WHERE store = 'toolLog' AND session = 's-42'",
      /counter-mismatch: the session's counters \(pruneguard_sessions\) are missing, though its registry holds span_2/],
  ];

  it("--verify exits 1 naming the record, for every kind of tampering", async () => {
    // Spawned in parallel: each run starts a Node process, and they are independent.
    const runs = await Promise.all(breaks.map(async ([name, sql, expected]) => ({
      name, expected, text: await cliAsync(tampered(sql), "--store", "toolLog", "--session", "s-42", "--verify"),
    })));
    for (const { name, expected, text } of runs) {
      expect(text.code, `${name}: ${text.out}${text.err}`).toBe(1);
      expect(text.out, name).toMatch(expected);
    }
    const json = await cliAsync(tampered(breaks[0]![1]), "--session", "s-42", "--verify", "--format", "json");
    expect(json.code).toBe(1);
    expect((JSON.parse(json.out) as { verify: { ok: boolean; break: { seq: number; problem: string } } }).verify).toMatchObject({ ok: false, break: { seq: 2, problem: "hash-mismatch" } });
  });

  it("an edit that re-seals the record still breaks the link to the next one", () => {
    // Rewrite record 2 consistently (new reason, recomputed hash in the record and its column): the edit
    // is invisible at record 2, and record 3's prevHash no longer matches.
    const path = join(dir, `reseal-${copies++}.db`);
    copyFileSync(source, path);
    const db = new Database(path);
    const row = (db.prepare(`SELECT record FROM pruneguard_audit WHERE id = ${at("s-42", 2)}`).get() as unknown as { record: string });
    const { hash: _old, ...body } = JSON.parse(row.record) as Record<string, unknown>;
    const edited: Record<string, unknown> = { ...body, reason: "harmless" };
    const hash = contentHash(`${String(edited["prevHash"])}\n${canonicalJson(edited)}`);
    db.prepare(`UPDATE pruneguard_audit SET record = ?, hash = ? WHERE id = ${at("s-42", 2)}`).run(JSON.stringify({ ...edited, hash }), hash);
    db.close();
    const r = cli(path, "--session", "s-42", "--verify");
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/chain broken at record 3: prev-mismatch/);
  });

  it("a cut tail passes the chain but not an anchor recorded before the cut", () => {
    const head = (JSON.parse(cli(source, "--session", "s-42", "--verify", "--format", "json").out) as { verify: { head: string } }).verify.head;
    const cut = tampered(`DELETE FROM pruneguard_audit WHERE id = ${at("s-42", 5)}`);
    expect(cli(cut, "--session", "s-42", "--verify").code).toBe(0);
    const r = cli(cut, "--session", "s-42", "--verify", "--anchor", head);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/anchor-missing/);
    expect(cli(source, "--session", "s-42", "--verify", "--anchor", head).code).toBe(0);
  });

  it("reads a file written by the legacy schema as it is, without upgrading it", () => {
    const path = join(dir, "legacy.db");
    const stored = legacyFile(path);
    const r = cli(path, "--store", "toolLog", "--session", "s1", "--verify", "--format", "json");
    expect(r.code, r.err).toBe(0);
    const data = JSON.parse(r.out) as { records: unknown[]; verify: { ok: boolean } };
    expect(data.records.map((x) => JSON.stringify(x))).toEqual(stored.get("toolLog/s1"));
    expect(data.verify.ok).toBe(true);
    const db = new Database(path, { readOnly: true });
    const columns = (db.prepare("SELECT name FROM pragma_table_info('pruneguard_audit')").all() as Array<{ name: string }>).map((c) => c.name);
    db.close();
    expect(columns).toContain("store");
  });

  // It used to say `no store toolLog in …` of a store whose copies were in the file, and to list a search
  // as `search - match`, hiding what was searched for.
  it("--store names a store without an audit chain as such, and a search is listed with its query", async () => {
    const file = join(dir, "two-stores.db");
    const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
    const toolLog = new SqliteStore({ name: "toolLog", path: file, retentionMs: 2 * HOUR, clock });
    const transcript = new SqliteStore({ name: "transcript", path: file, retentionMs: 2 * HOUR, clock, handlePrefix: "t" });
    const win = new ContextWindow({
      session: "s-7", stores: { toolLog, transcript }, auditStore: "transcript", clock,
      kinds: { tool: { store: "toolLog", modes: ["drop"], lossy: "with-flag" } },
    });
    await win.append({ kind: "tool", text: "GET /deploy -> 500 req_7f3a9c" });
    await win.search("req_7f3a");
    await win.search({ query: "req_\\d+", regex: true });
    await win.applyDirective({ op: "search", query: 'say "hi"\u001b[2J' });
    await toolLog.close();
    await transcript.close();

    const none = cli(file, "--session", "s-7", "--store", "toolLog");
    expect(none.code).toBe(2);
    expect(none.err).toContain(`store toolLog in ${file} has no audit chain: it holds spans or copies, but no decision was recorded in it`);
    expect(none.err).toContain("stores with an audit chain: transcript");
    expect(none.err).not.toContain("no store toolLog");
    expect(cli(file, "--store", "toolLog").err).toContain("has no audit chain");
    const missing = cli(file, "--session", "s-7", "--store", "nope");
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`no store nope in ${file} (stores: toolLog, transcript)`);

    const listed = cli(file, "--session", "s-7");
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(/span\/query/);
    expect(listed.out).toMatch(/1\s+\S+\s+search\s+match\s+"req_7f3a"\s/);
    expect(listed.out).toMatch(/2\s+\S+\s+search\s+match\s+\/req_\\d\+\/\s/);
    // Untrusted text: quoted, and the escape sequence that would clear the terminal written out.
    expect(listed.out).toContain(String.raw`"say \"hi\"\u001b[2J"`);
    expect(listed.out).not.toContain("\u001b");
  });

  it("usage and I/O errors exit 2 with one line and no stack trace", async () => {
    const notStore = join(dir, "plain.db");
    new Database(notStore).close();
    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, "this is not a database file at all, just text".repeat(100));
    const cases = [
      [[join(dir, "missing.db"), "--session", "s"], /no such file/],
      [[notStore, "--session", "s"], /not a pruneguard store/],
      [[garbage, "--session", "s"], /cannot (open|read)/],
      [[source, "--verify"], /--verify needs --session/],
      [[source, "--session", "s-42", "--store", "nope"], /no store nope/],
      [[source, "--session", "s-42", "--format", "xml"], /invalid/i],
      [[], /give a SQLite file or --url/],
    ] as const;
    const results = await Promise.all(cases.map(([args]) => cliAsync(...args)));
    for (const [i, [args, msg]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(2);
      expect(r.err).toMatch(msg);
    }
  });
});
