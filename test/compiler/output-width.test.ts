// Every line the CLI prints fits 120 columns: `bin/pruneguard.js` (the built dist/, as `npm test` builds
// first) is spawned over every command on the example policies, once with `COLUMNS=120` (as a CI log or a
// 120-column terminal would ask) and once piped with `COLUMNS` unset (a CI log, `| tee`), where it lays out
// its output as on a 120-column terminal; no line of stdout or stderr is wider than 120 columns. The example
// policies' warnings run to 321–443 characters, so this holds only because they wrap. Wrapped, a
// diagnostic's first line is still tsc's `file:line:col - warning PGnnnn: …`, for CI problem matchers;
// `COLUMNS=0` asks for no wrapping (each diagnostic on one line, for grep), and `--format json` is data.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { ManualClock } from "../../src/types.js";
import { makeWindow } from "../reliability/model.js";

const BIN = path.resolve("bin/pruneguard.js");
const ROOT = process.cwd();
const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-width-"));
const db = path.join(dir, "agent.db");

/** The environment a run gets: `COLUMNS` as given (or none), no colour, no PostgreSQL URL to fall back on. */
function env(columns: string | undefined): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const key of ["COLUMNS", "FORCE_COLOR", "PRUNEGUARD_PG_URL"]) delete e[key];
  if (columns !== undefined) e["COLUMNS"] = columns;
  return e;
}

/** The CLI's output, stdout and stderr, as the lines a terminal shows (escape sequences take no column). */
function spawn(args: readonly string[], options: { cwd?: string; columns?: string | undefined } = {}): { code: number | null; lines: string[]; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: env("columns" in options ? options.columns : "120"), encoding: "utf8" });
  const lines = `${r.stdout}\n${r.stderr}`.split(/\r?\n/).map(stripVTControlCharacters);
  return { code: r.status, lines, stdout: r.stdout, stderr: r.stderr };
}

/** Columns a line takes: one per code point (the CLI prints no wide characters). */
const columnsOf = (line: string): number => [...line].length;

function expectFits(label: string, lines: readonly string[], width: number): void {
  const over = lines.filter((l) => columnsOf(l) > width).map((l) => `${columnsOf(l)}: ${l}`);
  expect(over, `${label}: lines wider than ${width}`).toEqual([]);
}

const COMMANDS = ["init", "compile", "check", "explain", "diff", "migrate", "audit"];

beforeAll(async () => {
  // A store with a session to audit: decisions of every outcome, and a search whose query is long.
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  const store = new SqliteStore({ name: "toolLog", path: db, retentionMs: 2 * 3_600_000, clock });
  const win = makeWindow("s-42", store, clock);
  const a = await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
  const b = await win.append({ kind: "scratch", text: "thinking" });
  await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
  await win.applyDirective({ op: "prune", span_id: b, mode: "drop" });
  await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true });
  await win.applyDirective({ op: "recall", span_id: a });
  await win.applyDirective({ op: "search", query: "req_8f3a2c91 and the database the failing call waited on" });
  await win.applyDirective('{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":"true"}');
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const columns of ["120", undefined]) {
  describe(`every line the CLI prints fits 120 columns (${columns === undefined ? "piped, COLUMNS unset" : `COLUMNS=${columns}`})`, () => {
    /** `cli`, with this suite's `COLUMNS` unless the options say otherwise. */
    const cli = (args: readonly string[], options: { cwd?: string; columns?: string | undefined } = {}) => spawn(args, { columns, ...options });
    const out = path.join(dir, `generated-${columns ?? "piped"}`);

    it("--help, and every command's --help", () => {
      for (const args of [["--help"], [], ["help", "compile"], ...COMMANDS.map((c) => [c, "--help"])]) {
        const r = cli(args);
        expect(r.lines.join("\n"), args.join(" ")).toContain("Usage: pruneguard");
        expectFits(`pruneguard ${args.join(" ")}`, r.lines, 120);
      }
    });

    // Once: it asks for its own width.
    if (columns !== undefined) it("--help fits a narrower width too, its examples still one shell command each", () => {
      for (const args of [["--help"], ...COMMANDS.map((c) => [c, "--help"])]) expectFits(`COLUMNS=80 pruneguard ${args.join(" ")}`, cli(args, { columns: "80" }).lines, 80);
      const diff = cli(["diff", "--help"], { columns: "80" }).stdout;
      // A comment that does not fit goes above its command; a command too long is continued with a backslash.
      expect(diff).toContain("  # a policy and a kind renamed\n  pruneguard diff --base origin/main --rename org=acme --rename \\\n    org.userTurn=acme.turn\n");
    });

    it("compile, check and explain on the example policies, whose warnings run to 443 characters", () => {
      const compile = cli(["compile", "examples/policies", "--out", out]);
      expect(compile.code).toBe(0);
      // The longest warning (PG3001) is wrapped, its continuation lines indented, and loses no word.
      const pg3001 = compile.stderr.slice(compile.stderr.indexOf("warning PG3001"));
      expect(pg3001.slice(0, pg3001.indexOf("\n\n"))).toMatch(/^warning PG3001: store `toolLog` retains copies for\s+2h \(its holds start only when a span is pruned\)(.|\n {2})+to keep it\s+reversible\)$/);
      expectFits("compile", compile.lines, 120);
      const again = cli(["compile", "examples/policies", "--out", out]);
      expect(again.stdout).toContain("Nothing to write");
      expectFits("compile (nothing to write)", again.lines, 120);
      const check = cli(["check", "examples/policies", "--out", out]);
      expect(check.code).toBe(0);
      expectFits("check", check.lines, 120);
      expectFits("check --no-drift --force", cli(["check", "examples/policies", "--no-drift", "--force"]).lines, 120);
      writeFileSync(path.join(out, "org.types.ts"), "// edited\n");
      const stale = cli(["check", "examples/policies", "--out", out]);
      expect(stale.code).toBe(1);
      expectFits("check (stale)", stale.lines, 120);
      const explain = cli(["explain", "examples/policies"]);
      expect(explain.code).toBe(0);
      expectFits("explain", explain.lines, 120);
    });

    it("diff, text format, and its usage error", () => {
      const diff = cli(["diff", "examples/policies/org.policy.ts", "examples/policies/team-payments.policy.ts"]);
      expect(diff.code).toBe(1);
      expect(diff.stdout).toContain("refused by the overlay rule");
      expectFits("diff", diff.lines, 120);
      const usage = cli(["diff", "examples/policies"]);
      expect(usage.code).toBe(2);
      expectFits("diff (one side)", usage.lines, 120);
    });

    it("init, in an empty folder and again", () => {
      const project = path.join(dir, `project-${columns ?? "piped"}`);
      mkdirSync(project);
      for (const run of ["first", "again"]) {
        const r = cli(["init"], { cwd: project });
        expect(r.code, `${run}: ${r.stderr}`).toBe(0);
        expectFits(`init (${run})`, r.lines, 120);
      }
    });

    it("migrate's errors (no server is needed to refuse a URL)", () => {
      for (const args of [["migrate"], ["migrate", "--url", "notaurl"], ["migrate", "--url", "http://db.internal/agents"]]) {
        const r = cli(args);
        expect(r.code, args.join(" ")).toBe(2);
        expectFits(args.join(" "), r.lines, 120);
      }
    });

    it("audit: the sessions, a session's decisions as a table, --verify, and its errors", () => {
      const sessions = cli(["audit", db]);
      expect(sessions.stdout).toContain("s-42");
      expectFits("audit", sessions.lines, 120);
      const table = cli(["audit", db, "--session", "s-42", "--verify"]);
      expect(table.code).toBe(0);
      expect(table.stdout).toContain("chain ok: 6 records");
      expectFits("audit --session --verify", table.lines, 120);
      for (const args of [["audit", db, "--store", "nope", "--session", "s-42"], ["audit", path.join(dir, "none.db")], ["audit"]]) {
        expectFits(args.join(" "), cli(args).lines, 120);
      }
    });

    it("usage errors", () => {
      for (const args of [["frob"], ["compile", "--frob"], ["explain", "nowhere"], ["compile", "--format", "xml"]]) {
        const r = cli(args);
        expect(r.code, args.join(" ")).toBe(2);
        expectFits(args.join(" "), r.lines, 120);
      }
    });
  });
}

describe("piped, wrapped: a problem matcher still reads every diagnostic's first line", () => {
  /** A CI problem matcher for tsc-style lines: file, line, column, severity, code and the message's start. */
  const MATCHER = /^([^\s].*?):(\d+):(\d+) - (error|warning) (PG\d{4}): (\S.*)$/;
  const firstLines = (stderr: string) => stderr.split("\n").filter((l) => MATCHER.test(l));

  it("each diagnostic's first line is file:line:col - severity code: the message's start; the rest are indented", () => {
    const piped = spawn(["check", "examples/policies", "--no-drift"], { columns: undefined });
    const unwrapped = spawn(["check", "examples/policies", "--no-drift"], { columns: "0" });
    expect(piped.code).toBe(0);
    expectFits("check (piped)", piped.lines, 120);
    const found = firstLines(piped.stderr);
    expect(found.length).toBeGreaterThan(0);
    // The same diagnostics, at the same places, as unwrapped: each wrapped first line starts its unwrapped line.
    const whole = firstLines(unwrapped.stderr);
    expect(found.map((l) => l.replace(MATCHER, "$1:$2:$3 $4 $5"))).toEqual(whole.map((l) => l.replace(MATCHER, "$1:$2:$3 $4 $5")));
    found.forEach((l, i) => expect(whole[i]!.startsWith(l), l).toBe(true));
    // A diagnostic is its first line, lines indented under it, then a blank line (or its code frame).
    for (const block of piped.stderr.split("\n\n").filter((b) => MATCHER.test(b.split("\n")[0]!))) {
      for (const line of block.split("\n").slice(1)) expect(line, block).toMatch(/^ {2}/);
    }
    expect(piped.stderr).toMatch(/^examples\/policies\/team-payments\.policy\.ts:19:40 - warning PG3001: store `toolLog` retains copies for\n {2}/m);
  });
});

describe("COLUMNS=0, the way to ask for no wrapping; --format json is data", () => {
  it("each diagnostic keeps its message on one line, for grep", () => {
    const r = spawn(["check", "examples/policies", "--no-drift"], { columns: "0" });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^examples\/policies\/team-payments\.policy\.ts:19:40 - warning PG3001: store `toolLog` .* to keep it reversible\)$/m);
    expect(r.lines.some((l) => l.length > 120)).toBe(true);
    // An error message too.
    const usage = spawn(["explain", `nowhere/${"deep/".repeat(20)}x.policy.ts`], { columns: "0" });
    expect(usage.code).toBe(2);
    expect(usage.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("text (explain, audit's table) still fits 120 columns, and --help commander's 80", () => {
    const stdoutLines = (args: string[]) => spawn(args, { columns: "0" }).stdout.split("\n");
    expectFits("explain", stdoutLines(["explain", "examples/policies"]), 120);
    expectFits("audit --session", stdoutLines(["audit", db, "--session", "s-42"]), 120);
    for (const args of [["--help"], ...COMMANDS.map((c) => [c, "--help"])]) expectFits(`pruneguard ${args.join(" ")}`, spawn(args, { columns: "0" }).lines, 80);
  });

  it("--format json holds each message whole, piped or not", () => {
    type Json = { diagnostics: Array<{ code: string; message: string }> };
    const piped = JSON.parse(spawn(["check", "examples/policies", "--no-drift", "--format", "json"], { columns: undefined }).stdout) as Json;
    const zero = JSON.parse(spawn(["check", "examples/policies", "--no-drift", "--format", "json"], { columns: "0" }).stdout) as Json;
    expect(piped).toEqual(zero);
    const pg3001 = piped.diagnostics.find((d) => d.code === "PG3001")!;
    expect(pg3001.message.length).toBeGreaterThan(300);
    expect(pg3001.message).not.toContain("\n");
  });
});
