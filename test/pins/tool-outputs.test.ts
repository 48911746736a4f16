// Real tools, run now, with fresh identifiers: the presets must recognise what compilers, runtimes,
// git and databases actually print, and every identifier they recognise must survive a lossy
// summarize and a lossy compress in the window. A tool that is not installed skips its test and says
// so in the test name; the Go toolchain's output is covered by captured samples in the corpus instead.
import { execFile, spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, type KindPolicy } from "../../src/index.js";
import { containsPin, findPins } from "../../src/pin-carry.js";
import { ALL_PRESETS } from "./corpus.js";

const DIR = mkdtempSync(join(tmpdir(), "pruneguard-pins-"));
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

/** Compilers on a loaded two-core machine can take tens of seconds to start. */
const TOOL_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 180_000;

const NODE24 = join(process.cwd(), "node_modules/.bin/node");
const TSC = join(process.cwd(), "node_modules/.bin/tsc");
const PG_URL = process.env["PRUNEGUARD_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";

function present(command: string, args: readonly string[] = ["--version"]): boolean {
  const r = spawnSync(command, args, { timeout: TOOL_TIMEOUT_MS, stdio: "ignore" });
  return r.error === undefined && r.status === 0;
}

/** `name`, or `name (skipped: reason)` so a skip is visible in the report. */
function title(name: string, available: boolean, missing: string): string {
  return available ? name : `${name} (skipped: ${missing})`;
}

/** Runs a tool to completion and returns what it printed, stdout then stderr. */
function run(command: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", timeout: TOOL_TIMEOUT_MS, env: { ...process.env, NO_COLOR: "1", LC_ALL: "C" } });
  if (r.error) throw r.error;
  return `${r.stdout}${r.stderr}`;
}

function fresh(): string {
  return randomBytes(4).toString("hex");
}

function workdir(name: string): string {
  const dir = join(DIR, `${name}-${fresh()}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A port nothing listens on: bound, read, released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

const KIND: KindPolicy = { store: null, modes: ["summarize", "compress"], lossy: "with-flag", compressTargetTokens: 120 };

/** What the model reads after the output is pruned lossily with `mode`. */
async function afterLossyPrune(output: string, mode: "summarize" | "compress"): Promise<string> {
  const win = new ContextWindow({ session: "tools", clock: new ManualClock(0), stores: {}, kinds: { tool: KIND }, pins: ALL_PRESETS });
  const span = await win.append({ kind: "tool", text: output });
  const outcome = await win.prune({ span, mode, acceptLossy: true, ...(mode === "summarize" ? { digest: "the command failed" } : {}) });
  expect(outcome.status).toBe("lossy");
  return win.render();
}

/**
 * The identifiers labelled by hand must be ones a preset recognises, and every identifier a preset
 * recognises must survive both lossy prunes.
 */
async function expectSurvival(output: string, labelled: readonly string[]): Promise<void> {
  const found = findPins(output, ALL_PRESETS);
  for (const id of labelled) expect(found, `a preset should pin ${JSON.stringify(id)} in:\n${output}`).toContain(id);
  for (const mode of ["summarize", "compress"] as const) {
    const window = await afterLossyPrune(output, mode);
    for (const id of found) expect(containsPin(window, id), `${mode} lost ${JSON.stringify(id)}:\n${window}`).toBe(true);
  }
}

/** The one substring of `output` matching `shape`, which must exist. */
function printed(output: string, shape: RegExp): string {
  const m = shape.exec(output);
  expect(m, `expected ${shape} in:\n${output}`).not.toBeNull();
  return (m as RegExpExecArray)[0];
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
}

const has = {
  python: present("python3"),
  pytest: present("python3", ["-m", "pytest", "--version"]),
  gcc: present("gcc"),
  gpp: present("g++"),
  rustc: present("rustc"),
  java: present("javac", ["-version"]) && present("java", ["-version"]),
  git: present("git"),
  curl: present("curl"),
  psql: present("psql") && spawnSync("psql", [PG_URL, "-c", "select 1"], { timeout: TOOL_TIMEOUT_MS, stdio: "ignore" }).status === 0,
};

describe("presets on fresh output of real tools", { timeout: TEST_TIMEOUT_MS }, () => {
  it("tsc: position in parentheses and TS code", async () => {
    const dir = workdir("tsc");
    const file = `handler_${fresh()}.ts`;
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", file), `export function total(): number {\n  const n: number = "${fresh()}";\n  return n;\n}\n`);
    const out = run(NODE24, [TSC, "--noEmit", "--pretty", "false", "--strict", `src/${file}`], dir);
    await expectSurvival(out, [`src/${file}(2,9)`, "TS2322"]);
  });

  it("node: file URL position, errno, upper-snake code, request id", async () => {
    const dir = workdir("node");
    const file = `app_${fresh()}.mjs`;
    const req = `req_${fresh()}9`;
    const port = await closedPort();
    writeFileSync(
      join(dir, file),
      [
        `import net from "node:net";`,
        `console.log("X-Request-Id: ${req}");`,
        `const socket = net.connect(${port}, "127.0.0.1");`,
        `socket.on("error", (cause) => {`,
        `  console.error(cause);`,
        `  const err = new Error("upstream failed", { cause });`,
        `  err.code = "E_UPSTREAM_503";`,
        `  throw err;`,
        `});`,
      ].join("\n"),
    );
    const out = run(NODE24, [file], dir);
    const position = printed(out, new RegExp(`${escape(join(dir, file))}:6:\\d+`, "u"));
    await expectSurvival(out, [position, "ECONNREFUSED", "E_UPSTREAM_503", req]);
    expect(findPins(out, ALL_PRESETS)).not.toContain(printed(out, /Node\.js/u));
  });

  it.skipIf(!has.python)(title("python: traceback positions, exception class, request id", has.python, "python3 not on PATH"), async () => {
    const dir = workdir("python");
    const file = join(dir, `decoder_${fresh()}.py`);
    const req = `req_${fresh()}7`;
    writeFileSync(file, `import json\nprint("request_id=${req} reading cfg_${fresh()}.ini")\n\ndef load(raw):\n    return json.loads(raw)\n\nload("")\n`);
    const out = run("python3", [file], dir);
    expect(out).toContain("json.decoder.JSONDecodeError: Expecting value");
    await expectSurvival(out, [`File "${file}", line 7`, `File "${file}", line 5`, file, "JSONDecodeError", req, printed(out, /cfg_[0-9a-f]+\.ini/u)]);
  });

  it.skipIf(!has.pytest)(title("pytest: file:line of the failing assertion", has.pytest, "pytest not installed"), async () => {
    const dir = workdir("pytest");
    const file = `test_calc_${fresh()}.py`;
    writeFileSync(join(dir, file), `def test_total():\n    expected = ${Number.parseInt(fresh(), 16)}\n    assert 1 + 1 == expected\n`);
    const out = run("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", file], dir);
    await expectSurvival(out, [`${file}:3`, "AssertionError"]);
  });

  it.skipIf(!has.gcc)(title("gcc: file:line:col", has.gcc, "gcc not on PATH"), async () => {
    const dir = workdir("gcc");
    const file = `main_${fresh()}.c`;
    const name = `undeclared_${fresh()}`;
    writeFileSync(join(dir, file), `int main(void) {\n  return ${name};\n}\n`);
    const out = run("gcc", ["-fdiagnostics-color=never", "-c", file, "-o", "main.o"], dir);
    await expectSurvival(out, [`${file}:2:10`, file]);
  });

  it.skipIf(!has.gpp)(title("g++: file:line:col", has.gpp, "g++ not on PATH"), async () => {
    const dir = workdir("gpp");
    const file = `ledger_${fresh()}.cpp`;
    writeFileSync(join(dir, file), `#include <string>\nint post() {\n  std::string s = ${Number.parseInt(fresh(), 16)};\n  return s;\n}\n`);
    const out = run("g++", ["-fdiagnostics-color=never", "-c", file, "-o", "ledger.o"], dir);
    await expectSurvival(out, [printed(out, new RegExp(`${escape(file)}:4:\\d+`, "u")), file]);
  });

  it.skipIf(!has.rustc)(title("rustc: error code and --> position", has.rustc, "rustc not on PATH"), async () => {
    const dir = workdir("rustc");
    mkdirSync(join(dir, "src"));
    const file = `src/main_${fresh()}.rs`;
    writeFileSync(join(dir, file), `fn main() {\n    let total: i32 = "${fresh()}";\n    println!("{}", total);\n}\n`);
    const out = run("rustc", ["--color", "never", "--error-format", "human", "--emit", "metadata", "-o", "out.rmeta", file], dir);
    await expectSurvival(out, ["E0308", `${file}:2:22`]);
  });

  it.skipIf(!has.java)(title("java: exception class, ClassName.java:line, uuid", has.java, "javac or java not on PATH"), async () => {
    const dir = workdir("java");
    const cls = `Ledger${fresh()}`;
    const txn = randomUUID();
    writeFileSync(
      join(dir, `${cls}.java`),
      `public class ${cls} {\n  public static void main(String[] args) {\n    String memo = args.length > 99 ? "x" : null;\n    System.out.println("txn ${txn}");\n    System.out.println(memo.length());\n  }\n}\n`,
    );
    run("javac", [`${cls}.java`], dir);
    const out = run("java", ["-cp", ".", cls], dir);
    await expectSurvival(out, ["NullPointerException", `${cls}.java:5`, txn]);
  });

  it.skipIf(!has.curl)(title("curl: status line, request id and traceparent headers", has.curl, "curl not on PATH"), async () => {
    const req = `${fresh()}7${fresh()}`;
    const traceparent = `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;
    const server = createHttpServer((_, res) => {
      res.writeHead(503, { "X-Request-Id": req, traceparent, "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: "upstream unavailable", status: 503 }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      // Asynchronously: the server answering runs on this process's event loop.
      const out = await new Promise<string>((resolve, reject) =>
        execFile("curl", ["-sS", "-i", `http://127.0.0.1:${port}/v1/orders`], { timeout: TOOL_TIMEOUT_MS }, (error, stdout, stderr) =>
          error ? reject(error) : resolve(stdout + stderr),
        ),
      );
      await expectSurvival(out, ["HTTP/1.1 503", req, traceparent, 'status":503']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it.skipIf(!has.git)(title("git: commit SHAs, ticket, path", has.git, "git not on PATH"), async () => {
    const dir = workdir("git");
    const ticket = `PAY-${1000 + Math.floor(Math.random() * 8999)}`;
    const git = (...args: string[]) => run("git", ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "init.defaultBranch=main", ...args], dir);
    git("init", "-q");
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "ledger.ts"), `export const id = "${fresh()}";\n`);
    git("add", ".");
    const commit = git("commit", "-q", "-m", `Post batches in one transaction (${ticket})`);
    const sha = run("git", ["rev-parse", "HEAD"], dir).trim();
    const out = `${commit}${git("log", "--stat", "--abbrev-commit", "-1")}${git("show", "--format=%H %s", "--stat", "HEAD")}${git("checkout", `missing-${fresh()}`)}`;
    const short = printed(out, /^commit ([0-9a-f]{7,})/mu).slice("commit ".length);
    // All-digit and all-letter short SHAs are not pinned by design (see the gitSha preset).
    const shortIsPinned = /[a-f]/u.test(short) && /[0-9]/u.test(short);
    await expectSurvival(out, [sha, ticket, "src/ledger.ts", ...(shortIsPinned ? [short] : [])]);
    if (!shortIsPinned) expect(findPins(out, ALL_PRESETS)).not.toContain(short);
  });

  it.skipIf(!has.psql)(title("psql: script position and the duplicated request id", has.psql, `no psql or no server at ${PG_URL}`), async () => {
    const dir = workdir("psql");
    const file = join(dir, `migrate_${fresh()}.sql`);
    const req = `req_${fresh()}5`;
    writeFileSync(file, `CREATE TEMP TABLE ledger (id text PRIMARY KEY);\nINSERT INTO ledger VALUES ('${req}');\nINSERT INTO ledger VALUES ('${req}');\n`);
    const out = run("psql", [PG_URL, "-X", "-q", "-v", "VERBOSITY=verbose", "-f", file], dir);
    expect(out).toContain("duplicate key");
    await expectSurvival(out, [`${file}:3`, req]);
  });

  it("sqlite (node:sqlite): upper-snake error code from the driver", async () => {
    const dir = workdir("sqlite");
    const file = `store_${fresh()}.mjs`;
    const req = `req_${fresh()}3`;
    writeFileSync(
      join(dir, file),
      `import { DatabaseSync } from "node:sqlite";\nconst db = new DatabaseSync(":memory:");\ndb.exec("CREATE TABLE ledger (id TEXT PRIMARY KEY)");\nconst put = db.prepare("INSERT INTO ledger VALUES (?)");\nconsole.log("request_id=${req}");\nput.run("${req}");\nput.run("${req}");\n`,
    );
    const out = run(NODE24, [file], dir);
    expect(out).toContain("UNIQUE constraint failed");
    await expectSurvival(out, ["ERR_SQLITE_ERROR", req, printed(out, new RegExp(`${escape(join(dir, file))}:7:\\d+`, "u"))]);
  });
});
