/**
 * `pruneguard audit` over a hostile store: a SQLite file (or a PostgreSQL schema) of which every byte was
 * chosen by someone else, as a pull request can plant a file. The command must show such a store for what it
 * is, and nothing in it may act on the reader:
 *
 * - HTML: no value from the store becomes markup in the `--format html` page, and a record whose fields are
 *   not of their types (a `seq` that is `<img src=x onerror=…>`) is refused as unreadable, not rendered;
 * - terminal: no control character from the store (ESC sequences that clear the screen and print a fake
 *   "chain ok", retitle the window, ring the bell) reaches the text output: store and session names,
 *   records' fields, a foreign record's details, a JSON error quoting the text, the errors naming stores;
 * - memory: a record longer than `MAX_AUDIT_RECORD_BYTES` is never read into the process (its reader asks
 *   the engine for its length first); it is reported as unreadable, and the chain does not verify past it.
 *   Every other column is bounded the same way (`MAX_AUDIT_FIELD_BYTES`: a kind, a span id, a handle, a
 *   status, a session name; span text read in part), its row reported, not shown; a store with more rows
 *   than one run reads (`MAX_AUDIT_ROWS`) is refused with exit 2, none of them loaded.
 *
 * The files are made by a window and edited with node:sqlite, in a temp folder. Most runs are in process
 * (`main`); the memory test spawns the built CLI (`npm run build` first, as `npm test` does) to read its
 * peak resident memory.
 *
 * Seen failing without the fix (audit.run.ts, timeline.ts, src/audit.ts and the readers reverted, dist
 * rebuilt): every test but "writes every string … as text" failed. The page held `log #<img src=x
 * onerror=alert(document.domain)>` and, from a legacy file's seq column, `chain broken at record <img …>`;
 * every text run held raw ESC or BEL (the table, the foreign record's verdict, the JSON error, the session
 * list, both errors naming stores); the reader returned the oversized record's text, and the command's peak
 * resident memory with the 128 MiB record was 953 MiB; no record was refused for its types. The test that
 * passed is a guard over the strings that were escaped already. "A field past its bound" (and its PostgreSQL
 * case) failed in every test with the readers, audit.run.ts and timeline.ts of before: the page held the 4 MiB
 * kind whole, the status and session name were read, and the 200,001-row registry was read and shown.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../compiler/cli/main.js";
import { ContextWindow, ManualClock, SqliteStore, type BackingStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres.js";
import { AuditReadBudget, MAX_AUDIT_FIELD_BYTES, MAX_AUDIT_RECORD_BYTES, MAX_AUDIT_ROWS, MAX_AUDIT_TEXT_BYTES } from "../../src/stores/audit-reader.js";
import { openPostgresAuditReader } from "../../src/stores/postgres/postgres-audit.js";
import { openSqliteAuditReader } from "../../src/stores/sqlite/sqlite-audit.js";
import { SQLITE_SCHEMA_VERSION } from "../../src/stores/sqlite/sqlite-schema.js";
import { SCHEMA_VERSION } from "../../src/stores/postgres/schema.js";
import { legacyFile } from "../stores/sqlite-legacy.js";
import { describeWithServer, dropSchemas, freshSchema, itWithServer, PG_URL, testPool } from "../stores/pg-helpers.js";

const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-audit-hostile-"));
const clean = path.join(dir, "clean.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MARKUP = "<img src=x onerror=alert(document.domain)>";
/** Clears the screen, homes the cursor and prints a green verdict; then retitles the window and rings the bell. */
const FAKE_OK = "\u001b[2J\u001b[H\u001b[32mchain ok: 3 records\u001b[0m\u001b]0;pwned\u0007";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(["audit", ...argv], { cwd: dir, stdout: (t) => void (out += t), stderr: (t) => void (err += t), color: false });
  return { code, out, err };
}

/** A session of three decisions (a prune, a recall, a search) on a store named `log`. */
async function session(store: BackingStore, clock: ManualClock): Promise<void> {
  const win = new ContextWindow({ session: "s1", clock, stores: { log: store }, kinds: { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } } });
  const a = await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
  await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
  await win.applyDirective({ op: "recall", span_id: a });
  await win.applyDirective({ op: "search", query: "req_" });
}

/** The key of record `seq` of session s1's chain in the audit table. */
const key = (seq: number) => `((SELECT chain FROM pruneguard_chains WHERE session = 's1') << 32) + ${seq}`;

let copies = 0;
/** A copy of the clean file with `edits` run on it (each a statement and its parameters). */
function planted(...edits: ReadonlyArray<readonly [string, ...SQLInputValue[]]>): string {
  const file = path.join(dir, `planted-${copies++}.db`);
  copyFileSync(clean, file);
  const db = new DatabaseSync(file);
  for (const [sql, ...params] of edits) db.prepare(sql).run(...params);
  db.close();
  return file;
}

/** Every tag the page opens, and the tags it may open: what a stored value turned into markup would add to. */
const tags = (page: string) => new Set([...page.matchAll(/<([a-zA-Z][\w-]*)/g)].map((m) => m[1]!.toLowerCase()));
const PAGE_TAGS = new Set(["html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "code", "b", "div", "span", "svg", "text", "line", "rect", "polyline", "i", "table", "thead", "tbody", "tr", "th", "td"]);

/** No tag but the page's own, and no event handler attribute in any tag. */
function expectNoInjectedMarkup(page: string): void {
  expect([...tags(page)].filter((t) => !PAGE_TAGS.has(t))).toEqual([]);
  expect(page).not.toMatch(/<[^>]*\son\w+\s*=/i);
}

/** Control characters a terminal acts on (all but newline), bidi controls and the line separators. */
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

beforeAll(async () => {
  const clock = new ManualClock(Date.UTC(2026, 11, 6, 9, 0, 0));
  const store = new SqliteStore({ name: "log", path: clean, clock });
  await session(store, clock);
  await store.close();
});

describe("audit --format html over a planted file", () => {
  it("refuses a record whose seq is markup as unreadable, and writes nothing of it into the page", async () => {
    const file = planted([`UPDATE pruneguard_audit SET record = json_set(record, '$.seq', ?) WHERE id = ${key(1)}`, MARKUP]);
    const r = await cli(file, "--session", "s1", "--format", "html");
    expect(r.code, r.err).toBe(0);
    expectNoInjectedMarkup(r.out);
    expect(r.out).not.toContain("<img");
    expect(r.out).toContain("chain broken at record 1: unreadable: record 1 is not a record pruneguard writes: its field &quot;seq&quot; is a string, not a whole number from 1.");
    expect(r.out).toContain("1 record could not be read and is not shown.");
    expect(r.out).not.toMatch(/log #1</); // only records 2 and 3 are in the tables
    expect(r.out).toMatch(/log #2</);

    const json = await cli(file, "--session", "s1", "--verify", "--format", "json");
    expect(json.code).toBe(1);
    const data = JSON.parse(json.out) as { records: Array<{ seq: number }>; unreadable: Array<{ seq: number; problem: string }>; verify: { break: { seq: number; problem: string } } };
    expect(data.records.map((x) => x.seq)).toEqual([2, 3]);
    expect(data.unreadable).toMatchObject([{ seq: 1, problem: "unreadable" }]);
    expect(data.verify.break).toMatchObject({ seq: 1, problem: "unreadable" });
  });

  it("writes every string a record, a row or the registry holds as text, never as markup", async () => {
    const file = planted(
      // An edited record is still shown (as what the store holds now): each of its strings carries markup.
      [`UPDATE pruneguard_audit SET record = json_set(record, '$.reason', ?, '$.kind', ?, '$.handle', ?, '$.mode', ?, '$.spanId', ?, '$.directive', ?) WHERE id = ${key(1)}`,
        MARKUP, "<script>alert(1)</script>", "<svg onload=alert(2)>", "\"><b onmouseover=alert(3)>", "<iframe src=//x>", "<object data=x>"],
      ["UPDATE pruneguard_spans SET span_id = ?, kind = ? WHERE ordinal = 1", "<img src=y onerror=alert(4)>", "<style>*{}</style>"],
      ["UPDATE pruneguard_records SET text = ?, span_id = ?", "</td><img src=z onerror=alert(5)>", "<img src=y onerror=alert(4)>"],
    );
    for (const extra of [[], ["--content"]]) {
      const r = await cli(file, "--session", "s1", "--format", "html", ...extra);
      expect(r.code, r.err).toBe(0);
      expectNoInjectedMarkup(r.out);
      expect(r.out).toContain("&lt;img src=x onerror=alert(document.domain)&gt;"); // shown, as text
      expect(r.out).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(r.out).toContain("&lt;img src=y onerror=alert(4)&gt;");
      expect(r.out).toContain("&lt;style&gt;*{}&lt;/style&gt;");
      if (extra.length > 0) expect(r.out).toContain("&lt;/td&gt;&lt;img src=z onerror=alert(5)&gt;");
    }
  });

  it("names a row whose seq column is not a number by its position, never by what the column holds", async () => {
    // A file in the legacy schema keeps seq as a plain column, which SQLite lets hold any text.
    const file = path.join(dir, "legacy-planted.db");
    legacyFile(file);
    const db = new DatabaseSync(file);
    // A copy of record 3 under it: a record that reads, on a row named by markup.
    db.prepare("INSERT INTO pruneguard_audit (store, session, seq, status, hash, record) SELECT store, session, ?, status, hash, record FROM pruneguard_audit WHERE store = 'toolLog' AND session = 's1' AND seq = 3")
      .run(MARKUP);
    db.close();
    const r = await cli(file, "--store", "toolLog", "--session", "s1", "--format", "html");
    expect(r.code, r.err).toBe(0);
    expectNoInjectedMarkup(r.out);
    expect(r.out).toContain("chain broken at record 4: unreadable: row 4 (in seq order): its seq column is text, not a whole number from 1.");
    const text = await cli(file, "--store", "toolLog", "--session", "s1", "--verify");
    expect(text.code).toBe(1);
    expect(text.out).toContain("chain broken at record 4: unreadable: row 4 (in seq order): its seq column is text");
  });

  it("refuses a record with any field of the wrong type, naming the field and never its value", async () => {
    const cases: Array<[string, string, RegExp]> = [
      ["$.seq", "0", /field "seq" is a number, not a whole number from 1/],
      ["$.at", `'"${MARKUP}"'`, /field "at" is a string, not a number/],
      ["$.store", "7", /field "store" is a number, not a string/],
      ["$.status", "json('[1]')", /field "status" is an array, not a string/],
      ["$.reason", "json('{\"a\":1}')", /field "reason" is an object, not a string or null/],
      ["$.acceptLossy", "'true'", /field "acceptLossy" is a string, not true or false/],
      ["$.conditions", "json('[]')", /field "conditions" is an array, not null or an object of three flags/],
      ["$.decided", "'1'", /field "decided" is a string, not a number/],
      ["$.until", "json('null')", /field "until" is null, not a number/],
    ];
    const runs = await Promise.all(cases.map(async ([field, value]) => {
      const file = planted([`UPDATE pruneguard_audit SET record = json_set(record, '${field}', ${value}) WHERE id = ${key(2)}`]);
      return cli(file, "--session", "s1", "--verify");
    }));
    for (const [i, [field, , expected]] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, `${field}: ${r.out}${r.err}`).toBe(1);
      expect(r.out, field).toMatch(/chain broken at record 2: unreadable: record 2 is not a record pruneguard writes: its /);
      expect(r.out, field).toMatch(expected);
      expect(r.out, field).not.toContain("<img");
    }
    const missing = await cli(planted([`UPDATE pruneguard_audit SET record = json_remove(record, '$.prevHash') WHERE id = ${key(2)}`]), "--session", "s1", "--verify");
    expect(missing.out).toMatch(/record 2 is not a record pruneguard writes: its field "prevHash" is missing/);
    const array = await cli(planted([`UPDATE pruneguard_audit SET record = '[1,2]' WHERE id = ${key(2)}`]), "--session", "s1", "--verify");
    expect(array.out).toMatch(/record 2 is not a record pruneguard writes: it is an array, not a record \(a JSON object\)/);
  });
});

describe("audit's text output over a planted file", () => {
  it("writes out every control character from the store, in the table, the verdict and the errors", async () => {
    const fields = planted([
      `UPDATE pruneguard_audit SET record = json_set(record, '$.reason', ?, '$.kind', ?, '$.handle', ?, '$.mode', ?, '$.op', ?, '$.spanId', ?) WHERE id = ${key(1)}`,
      FAKE_OK, "tool\u001b[8m", "#1\u001b[1A", "drop\r", "prune\u202e", "span_1\u2028",
    ]);
    const foreign = planted([`UPDATE pruneguard_audit SET record = json_set(record, '$.store', ?, '$.session', ?) WHERE id = ${key(2)}`, "log\u001b]0;pwned\u0007", "s1\u001b[2J"]);
    const notJson = planted([`UPDATE pruneguard_audit SET record = ? WHERE id = ${key(3)}`, `${FAKE_OK} not JSON`]);
    // A second chain of session s1, in a store whose name is an escape sequence.
    const names = planted(
      ["INSERT INTO pruneguard_chains (chain, store, session) VALUES (99, ?, 's1')", "log\u001b[2J\u001b[H"],
      ["INSERT INTO pruneguard_chains (chain, store, session) VALUES (98, 'log', ?)", "s2\u001b]0;pwned\u0007"],
      ["INSERT INTO pruneguard_audit (id, status, hash, record) VALUES ((99 << 32) + 1, 'invalid', 'x', '{}'), ((98 << 32) + 1, 'invalid', 'x', '{}')"],
    );
    const runs = {
      table: await cli(fields, "--session", "s1", "--verify"),
      foreign: await cli(foreign, "--session", "s1", "--verify"),
      notJson: await cli(notJson, "--session", "s1", "--verify"),
      notJsonListed: await cli(notJson, "--session", "s1"),
      sessions: await cli(names),
      twoStores: await cli(names, "--session", "s1"),
      twoStoresJson: await cli(names, "--session", "s1", "--format", "json"),
      noStore: await cli(names, "--session", "s1", "--store", "nope"),
    };
    for (const [name, r] of Object.entries(runs)) {
      expect(`${r.out}${r.err}`, name).not.toMatch(TERMINAL_CONTROL);
      // The only verdict a line starts with is the command's own.
      expect(r.out, name).not.toMatch(/^chain ok/m);
    }
    expect(runs.table.code).toBe(1);
    // The reason, written out (the table wraps it at its spaces).
    expect(runs.table.out).toContain(String.raw`\u001b[2J\u001b[H\u001b[32mchain ok:`);
    expect(runs.table.out).toContain(String.raw`records\u001b[0m\u001b]0;pwned\u0007`);
    expect(runs.table.out).toContain(String.raw`tool\u001b[8m`);
    expect(runs.table.out).toContain(String.raw`prune\u202e`);
    expect(runs.table.out).toMatch(/chain broken at record 1: hash-mismatch/);
    expect(runs.foreign.out).toContain(String.raw`chain broken at record 2: foreign-record: record 2 belongs to store log\u001b]0;pwned\u0007, session s1\u001b[2J`);
    expect(runs.notJson.out).toMatch(/chain broken at record 3: unreadable: record 3 is not valid JSON \(.*\\u001b\[2J/);
    expect(runs.notJsonListed.code).toBe(0);
    expect(runs.notJsonListed.out).toContain("1 record not shown, unreadable; the chain cannot be verified past record 3:\n  record 3 is not valid JSON (");
    expect(runs.sessions.out).toContain(String.raw`log\u001b[2J\u001b[H`);
    expect(runs.sessions.out).toContain(String.raw`s2\u001b]0;pwned\u0007`);
    // Every store's chain of the session, one after the other, each named as the terminal should print it.
    expect(runs.twoStores.code).toBe(0);
    expect(runs.twoStores.out).toMatch(/^store log, session s1: \d+ records$/m);
    expect(runs.twoStores.out).toContain(String.raw`store log\u001b[2J\u001b[H, session s1: 0 records`);
    expect(runs.twoStoresJson.code).toBe(2);
    expect(runs.twoStoresJson.err).toContain(String.raw`session s1 has records in stores log, log\u001b[2J\u001b[H; --format json reads one chain: choose one with --store`);
    expect(runs.noStore.err).toContain(String.raw`(stores: log, log\u001b[2J\u001b[H)`);
  });
});

describe("a record past the bound", () => {
  /** Record `seq` of the clean file with spaces added inside it until its text is `bytes` long (JSON still). */
  const padded = (seq: number, bytes: number) => planted([
    `UPDATE pruneguard_audit SET record = '{' || printf('%.*c', ? - length(record), ' ') || substr(record, 2) WHERE id = ${key(seq)}`, bytes,
  ]);

  it("is not read: the reader gives its length only, and the command reports it unreadable", async () => {
    const over = padded(2, MAX_AUDIT_RECORD_BYTES + 1);
    const reader = openSqliteAuditReader(over);
    try {
      const rows = await reader.rows("log", "s1");
      expect(rows.map((r) => [r.seq, r.bytes > MAX_AUDIT_RECORD_BYTES, r.record === null])).toEqual([[1, false, false], [2, true, true], [3, false, false]]);
      expect(rows[1]!.bytes).toBe(MAX_AUDIT_RECORD_BYTES + 1);
    } finally {
      await reader.close();
    }
    const expected = `record 2 is ${MAX_AUDIT_RECORD_BYTES + 1} bytes long, over the ${MAX_AUDIT_RECORD_BYTES} bytes (1 MiB) pruneguard audit reads of one record (pruneguard writes none over 10 kB): not read`;
    const listed = await cli(over, "--session", "s1");
    expect(listed.code).toBe(0);
    expect(listed.out).toContain("store log, session s1: 2 records");
    expect(listed.out).toContain(`1 record not shown, unreadable; the chain cannot be verified past record 2:\n  ${expected}\n`);
    const verified = await cli(over, "--session", "s1", "--verify");
    expect(verified.code).toBe(1);
    expect(verified.out).toContain(`chain broken at record 2: unreadable: ${expected}`);
    const json = JSON.parse((await cli(over, "--session", "s1", "--verify", "--format", "json")).out) as { verify: { ok: boolean; break: { seq: number; detail: string } } };
    expect(json.verify).toMatchObject({ ok: false, break: { seq: 2, problem: "unreadable", detail: expected } });
    const page = await cli(over, "--session", "s1", "--format", "html", "--verify");
    expect(page.code).toBe(1);
    expect(page.out).toContain(`chain broken at record 2: unreadable: ${expected}.`);
  });

  it("is read up to the bound: a record of exactly MAX_AUDIT_RECORD_BYTES is shown and checked", async () => {
    const at = padded(2, MAX_AUDIT_RECORD_BYTES);
    const r = await cli(at, "--session", "s1", "--verify");
    expect(r.code).toBe(1);
    expect(r.out).toContain("store log, session s1: 3 records");
    // The added spaces make it other than its canonical serialisation: read, parsed and found tampered.
    expect(r.out).toMatch(/chain broken at record 2: non-canonical/);
  });

  it("costs the command no memory: a 128 MiB record, and the command's peak resident memory stays below it", () => {
    const size = 128 * 1024 * 1024;
    const big = padded(1, size);
    // Reports the process's peak resident memory on stderr as it exits.
    const probe = 'data:text/javascript,process.on("exit",()=>process.stderr.write(`maxrss ${process.resourceUsage().maxRSS * 1024}\\n`))';
    // COLUMNS=0: each message on one line (test/compiler/output-width.test.ts checks the layout).
    const env = { ...process.env, COLUMNS: "0" };
    const r = spawnSync(process.execPath, ["--import", probe, "bin/pruneguard.js", "audit", big, "--session", "s1", "--verify"], { encoding: "utf8", cwd: process.cwd(), env });
    rmSync(big);
    const peak = Number(/maxrss (\d+)/.exec(r.stderr)?.[1]);
    expect(peak, r.stderr).toBeGreaterThan(0);
    expect(peak, `peak resident memory ${Math.round(peak / 2 ** 20)} MiB`).toBeLessThan(size);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toContain(`chain broken at record 1: unreadable: record 1 is ${size} bytes long, over the ${MAX_AUDIT_RECORD_BYTES} bytes (1 MiB)`);
  });
});

describe("a field past its bound, and a store too large to read", () => {
  const MiB = 1024 * 1024;
  /** A page, a listing or a verdict carrying none of a planted value: well under the value's own size. */
  const SMALL = 64 * 1024;
  /** The sentence `pruneguard audit` ends an oversized column's report with. */
  const over = `over the ${MAX_AUDIT_FIELD_BYTES} bytes pruneguard audit reads of one field (a name, an id, a status, a hash or a number): not read`;

  it("reports a registry row whose kind or span id is past the bound, and shows none of it (the page stays small)", async () => {
    const file = planted(
      ["UPDATE pruneguard_spans SET kind = ? WHERE ordinal = 1", "<".repeat(4 * MiB)],
      ["INSERT INTO pruneguard_spans (store, session, ordinal, span_id, kind, hash, backing) VALUES ('log', 's1', 2, ?, 'tool', 'h', 'log')", "<".repeat(2 * MiB)],
    );
    const reader = openSqliteAuditReader(file);
    try {
      const spans = await reader.registry("log", "s1", true);
      expect(spans.map((s) => [s.ordinal, s.oversized, s.kind, s.spanId])).toEqual([[1, { kind: 4 * MiB }, null, "span_1"], [2, { span_id: 2 * MiB }, "tool", null]]);
    } finally {
      await reader.close();
    }
    for (const extra of [[], ["--content"]]) {
      const r = await cli(file, "--session", "s1", "--format", "html", ...extra);
      expect(r.code, r.err).toBe(0);
      expect(r.out.length).toBeLessThan(SMALL);
      expectNoInjectedMarkup(r.out);
      expect(r.out).toContain('data-unreadable="2">✗ 2 rows of the store could not be read and are not shown');
      expect(r.out).toContain(`registry row for span span_1 at position 1 in store log: its kind column is ${4 * MiB} bytes long, ${over}`);
      expect(r.out).toContain(`registry row at position 2 in store log: its span_id column is ${2 * MiB} bytes long, ${over}`);
      expect(r.out).toContain("<h2 id=\"spans\">Spans (0)</h2>");
    }
  });

  it("reports a copy whose handle is past the bound, and reads a copy's text only in part (none of it past 1 MiB)", async () => {
    const handle = planted(["UPDATE pruneguard_records SET handle = ?", "#".repeat(MAX_AUDIT_FIELD_BYTES + 1)]);
    const page = await cli(handle, "--session", "s1", "--format", "html");
    expect(page.code, page.err).toBe(0);
    expect(page.out.length).toBeLessThan(SMALL);
    expect(page.out).toContain(`copy of span span_1 in store log: its handle column is ${MAX_AUDIT_FIELD_BYTES + 1} bytes long, ${over}`);
    expect(page.out).toContain("copies held (of 0)");

    const text = planted(["UPDATE pruneguard_records SET text = ?", "<".repeat(3 * MiB)]);
    const reader = openSqliteAuditReader(text);
    try {
      expect(await reader.copies("s1", true)).toMatchObject([{ spanId: "span_1", text: null, textBytes: 3 * MiB }]);
    } finally {
      await reader.close();
    }
    const shown = await cli(text, "--session", "s1", "--format", "html", "--content");
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out.length).toBeLessThan(SMALL);
    expect(shown.out).toContain(`(not read: ${3 * MiB} bytes, over the ${MAX_AUDIT_RECORD_BYTES} bytes pruneguard audit reads of one text)`);
    expect(shown.out).not.toContain("data-unreadable");

    // Under the bound, only the start is read: what the page shows of it, and the whole length.
    const long = planted(["UPDATE pruneguard_records SET text = ?", "é".repeat(100_000)]);
    const cut = await cli(long, "--session", "s1", "--format", "html", "--content");
    expect(cut.code, cut.err).toBe(0);
    expect(cut.out).toContain(`${"é".repeat(600)}… (200000 bytes in all)`);
    expect(cut.out).not.toContain("é".repeat(601));
  });

  it("reports an audit row whose status or hash is past the bound as unreadable, in every format", async () => {
    const file = planted([`UPDATE pruneguard_audit SET status = ? WHERE id = ${key(2)}`, "<".repeat(2 * MiB)]);
    const expected = `record 2: its status column is ${2 * MiB} bytes long, ${over}`;
    const text = await cli(file, "--session", "s1", "--verify");
    expect(text.code).toBe(1);
    expect(text.out.length).toBeLessThan(SMALL);
    expect(text.out).toContain(`chain broken at record 2: unreadable: ${expected}`);
    const json = await cli(file, "--session", "s1", "--verify", "--format", "json");
    expect(json.code).toBe(1);
    expect(json.out.length).toBeLessThan(SMALL);
    expect(JSON.parse(json.out).verify.break).toEqual({ seq: 2, problem: "unreadable", detail: expected });
    const page = await cli(file, "--session", "s1", "--format", "html");
    expect(page.code, page.err).toBe(0);
    expect(page.out.length).toBeLessThan(SMALL);
    expect(page.out).toContain(`chain broken at record 2: unreadable: ${expected}.`);
  });

  it("lists a chain whose session name is past the bound by its length, never its name", async () => {
    const file = planted(["UPDATE pruneguard_chains SET session = ?", "\u001b[2J".repeat(MiB)]);
    const text = await cli(file);
    expect(text.code).toBe(0);
    expect(text.out.length).toBeLessThan(SMALL);
    expect(text.out).not.toMatch(TERMINAL_CONTROL);
    expect(text.out).toBe(`no audit records\n1 chain not listed, unreadable:\n  a chain of 3 records in store log: its session column is ${4 * MiB} bytes long, ${over}\n`);
    const json = JSON.parse((await cli(file, "--format", "json")).out) as { sessions: unknown[]; unlisted: unknown[] };
    expect(json).toMatchObject({ sessions: [], unlisted: [{ n: 3, oversized: { session: 4 * MiB } }] });
  });

  it(`refuses a store holding more than ${MAX_AUDIT_ROWS} rows to read, loading none of them`, async () => {
    const file = planted([
      `WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i <= ${MAX_AUDIT_ROWS})
       INSERT INTO pruneguard_spans (store, session, ordinal, span_id, kind, hash) SELECT 'log', 's1', i, 'span_' || i, 'tool', 'h' FROM n`,
    ]);
    const r = await cli(file, "--session", "s1", "--format", "html");
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(new RegExp(`cannot read \\S*planted-\\d+\\.db: the span registry of session s1 in store log holds ${MAX_AUDIT_ROWS + 1} rows \\(\\d+ bytes of text\\), after the \\d+ rows \\(\\d+ bytes\\) read before it, past what pruneguard audit reads in one run \\(${MAX_AUDIT_ROWS} rows, ${MAX_AUDIT_TEXT_BYTES} bytes of text`));
    // The chain alone is well within the bound: read and verified as before.
    expect((await cli(file, "--session", "s1")).code).toBe(0);
    // And so is the text read in all, records included, whatever the rows' count.
    const budget = new AuditReadBudget();
    expect(budget.spend("a chain", 10, MAX_AUDIT_TEXT_BYTES - 1)).toBe(10);
    expect(() => budget.spend("the registry", 1, 2)).toThrow(/the registry holds 1 rows \(2 bytes of text\), after the 10 rows \(67108863 bytes\) read before it, past what/);
  });
});

describe("a store of a later format", () => {
  it("is refused by the SQLite reader, saying which format, and the file is left as it was", async () => {
    const later = path.join(dir, "later.db");
    copyFileSync(clean, later);
    const db = new DatabaseSync(later);
    db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    const r = await cli(later, "--session", "s1");
    expect(r.code).toBe(2);
    expect(r.err).toContain(`is at SQLite store format ${SQLITE_SCHEMA_VERSION + 1}, newer than this pruneguard reads (${SQLITE_SCHEMA_VERSION}); upgrade pruneguard`);
    const check = new DatabaseSync(later, { readOnly: true });
    expect(check.prepare("PRAGMA user_version").get()).toEqual({ user_version: SQLITE_SCHEMA_VERSION + 1 });
    check.close();
  });
});

describeWithServer("audit over a planted PostgreSQL schema", { needs: "any" }, () => {
  const pool = testPool(2);
  const schemas: string[] = [];
  afterAll(async () => {
    await dropSchemas(pool, schemas);
    await pool.end();
  });

  itWithServer("leaves a record past the bound on the server, refuses markup in a seq, and writes out control characters", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "audithostile", schemas);
    const clock = new ManualClock(Date.UTC(2026, 11, 6, 9, 0, 0));
    await session(new PostgresStore({ name: "log", pool, schema, clock }), clock);
    const audit = `${pg.escapeIdentifier(schema)}.audit`;
    await pool.query(`UPDATE ${audit} SET record = '{' || repeat(' ', $1) || substr(record, 2) WHERE seq = 3`, [MAX_AUDIT_RECORD_BYTES]);
    await pool.query(`UPDATE ${audit} SET record = jsonb_set(record::jsonb, '{seq}', to_jsonb($1::text))::text WHERE seq = 2`, [MARKUP]);
    await pool.query(`UPDATE ${audit} SET record = jsonb_set(record::jsonb, '{reason}', to_jsonb($1::text))::text WHERE seq = 1`, [FAKE_OK]);

    const reader = await openPostgresAuditReader(PG_URL, schema);
    try {
      const rows = await reader.rows("log", "s1");
      expect(rows.map((r) => [r.seq, r.record === null])).toEqual([[1, false], [2, false], [3, true]]);
      expect(rows[2]!.bytes).toBeGreaterThan(MAX_AUDIT_RECORD_BYTES);
    } finally {
      await reader.close();
    }
    const args = ["--url", PG_URL, "--schema", schema, "--session", "s1"];
    const text = await cli(...args, "--verify");
    expect(text.code).toBe(1);
    expect(text.out).not.toMatch(TERMINAL_CONTROL);
    expect(text.out).toContain(String.raw`\u001b[2J\u001b[H\u001b[32mchain ok:`);
    expect(text.out).toContain("2 records not shown, unreadable; the chain cannot be verified past record 2:");
    expect(text.out).toMatch(/record 3 is \d+ bytes long, over the 1048576 bytes \(1 MiB\)/);
    // Record 1 was edited (its hash no longer matches), and is the earliest break.
    expect(text.out).toMatch(/chain broken at record 1: hash-mismatch/);
    const page = await cli(...args, "--format", "html");
    expect(page.code, page.err).toBe(0);
    expectNoInjectedMarkup(page.out);
    expect(page.out).not.toContain("<img");
    expect(page.out).toContain("2 records could not be read and are not shown.");
  });

  itWithServer("leaves every field past its bound on the server, reports its row, and refuses a registry too large to read", { needs: "any" }, async () => {
    const MiB = 1024 * 1024;
    const schema = await freshSchema(pool, "auditfields", schemas);
    const clock = new ManualClock(Date.UTC(2026, 11, 6, 9, 0, 0));
    await session(new PostgresStore({ name: "log", pool, schema, clock }), clock);
    const q = (table: string) => `${pg.escapeIdentifier(schema)}.${table}`;
    // A span id past the field bound (and under the btree's own limit for its unique index), a kind, a
    // status and a copy's text of megabytes.
    await pool.query(`UPDATE ${q("spans")} SET kind = repeat('<', $1) WHERE ordinal = 1`, [4 * MiB]);
    await pool.query(`INSERT INTO ${q("spans")} (store, session, ordinal, span_id, kind, hash) VALUES ('log', 's1', 2, repeat('x', $1), 'tool', 'h')`, [MAX_AUDIT_FIELD_BYTES + 1]);
    await pool.query(`UPDATE ${q("audit")} SET status = repeat('<', $1) WHERE seq = 2`, [2 * MiB]);
    await pool.query(`UPDATE ${q("records")} SET text = repeat('<', $1)`, [3 * MiB]);

    const reader = await openPostgresAuditReader(PG_URL, schema);
    try {
      expect((await reader.registry("log", "s1", true)).map((s) => [s.ordinal, s.oversized, s.kind, s.spanId])).toEqual([
        [1, { kind: 4 * MiB }, null, "span_1"], [2, { span_id: MAX_AUDIT_FIELD_BYTES + 1 }, "tool", null],
      ]);
      expect((await reader.rows("log", "s1")).map((r) => r.oversized ?? null)).toEqual([null, { status: 2 * MiB }, null]);
      expect(await reader.copies("s1", true)).toMatchObject([{ spanId: "span_1", text: null, textBytes: 3 * MiB }]);
    } finally {
      await reader.close();
    }
    const over = `over the ${MAX_AUDIT_FIELD_BYTES} bytes pruneguard audit reads of one field`;
    const args = ["--url", PG_URL, "--schema", schema, "--session", "s1"];
    const page = await cli(...args, "--format", "html", "--content");
    expect(page.code, page.err).toBe(0);
    expect(page.out.length).toBeLessThan(64 * 1024);
    expectNoInjectedMarkup(page.out);
    expect(page.out).toContain(`registry row for span span_1 at position 1 in store log: its kind column is ${4 * MiB} bytes long, ${over}`);
    expect(page.out).toContain(`registry row at position 2 in store log: its span_id column is ${MAX_AUDIT_FIELD_BYTES + 1} bytes long, ${over}`);
    expect(page.out).toContain(`chain broken at record 2: unreadable: record 2: its status column is ${2 * MiB} bytes long, ${over}`);
    const text = await cli(...args, "--verify");
    expect(text.code).toBe(1);
    expect(text.out.length).toBeLessThan(64 * 1024);

    await pool.query(`INSERT INTO ${q("spans")} (store, session, ordinal, span_id, kind, hash) SELECT 'log', 's1', i, 'span_' || i, 'tool', 'h' FROM generate_series(3, $1::bigint) AS i`, [MAX_AUDIT_ROWS + 2]);
    const refused = await cli(...args, "--format", "html");
    expect(refused.code).toBe(2);
    expect(refused.out).toBe("");
    expect(refused.err).toContain(`cannot read postgres:${schema}: the span registry of session s1 in store log holds ${MAX_AUDIT_ROWS + 2} rows`);
  });

  itWithServer("refuses a schema of a later version, saying which", { needs: "any" }, async () => {
    const schema = await freshSchema(pool, "auditlater", schemas);
    await pool.query(`INSERT INTO ${pg.escapeIdentifier(schema)}.schema_version (version) VALUES ($1)`, [SCHEMA_VERSION + 1]);
    const r = await cli("--url", PG_URL, "--schema", schema, "--session", "s1");
    expect(r.code).toBe(2);
    expect(r.err).toContain(`is at store schema version ${SCHEMA_VERSION + 1}, newer than this pruneguard reads (${SCHEMA_VERSION}); upgrade pruneguard`);
  });
});
