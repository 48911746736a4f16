// The CLI end to end, in this process: `main(argv)` with captured output (helpers.ts `runCli`). Exit codes
// 0 clean, 1 errors, 2 usage/I-O. Two tests spawn `bin/pruneguard.js` itself (`npm test` builds first).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { colorEnabled } from "../../compiler/cli/main.js";
import { DEFAULT_COMPACTION } from "../../src/policy/kinds.js";
import { runCli as run } from "./helpers.js";

const BIN = path.resolve("bin/pruneguard.js");

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-cli-"));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  return dir;
}

const GOOD = `import { definePolicy, store, hours } from "pruneguard/dsl";
export default definePolicy({ name: "org", stores: { log: store.sqlite({ retention: hours(2) }) }, kinds: { tool: { store: "log", modes: ["drop"], lossy: "forbid" } } });
`;
const BAD = `import { definePolicy, store, hours } from "pruneguard/dsl";
export default definePolicy({ name: "org", stores: { log: store.sqlite({ retention: hours(2) }) }, kinds: { tool: { store: "lgo", modes: ["drop"], lossy: "forbid" } } });
`;
const COMMANDS = ["compile", "check", "explain", "migrate", "audit"];

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+\)?/);

describe("pruneguard CLI", () => {
  it("--help on the program and on every command exits 0 and lists exit codes and examples", async () => {
    for (const args of [["--help"], ...COMMANDS.map((c) => [c, "--help"])]) {
      const r = await run(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("Usage: pruneguard");
      expect(r.stdout, args.join(" ")).toMatch(/^Exit codes: 0 .*, 2 /m);
      expect(r.stdout, args.join(" ")).toMatch(/^Examples:\n {2}(\S+=\S+ )?pruneguard /m);
    }
  });

  it("every command takes --format pretty|json", async () => {
    for (const c of COMMANDS) {
      const r = await run([c, "--help"]);
      expect(r.stdout, c).toMatch(/--format <format>.*\(choices: "pretty", "json"/s);
    }
  });

  it("compile examples/policies writes deterministic IR JSON and exits 0", async () => {
    const out = mkdtempSync(path.join(tmpdir(), "pruneguard-out-"));
    const a = await run(["compile", "examples/policies", "--out", out]);
    expect(a.code).toBe(0);
    const first = readFileSync(path.join(out, "team-search.ir.json"), "utf8");
    expect((await run(["compile", "examples/policies", "--out", out])).code).toBe(0);
    expect(readFileSync(path.join(out, "team-search.ir.json"), "utf8")).toBe(first);
    expect((await run(["check", "examples/policies", "--out", out])).code).toBe(0);
  });

  it("needs no flags for policies/**/*.policy.ts and generated/; check fails until compile has run", async () => {
    const dir = project({ "policies/org.policy.ts": GOOD });
    const before = await run(["check"], dir);
    expect(before.code).toBe(1);
    expect(before.stderr).toContain("generated/org.guard.ts is missing");
    expect((await run(["check", "--no-drift"], dir)).code).toBe(0);
    expect((await run(["compile"], dir)).code).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, "generated/org.ir.json"), "utf8")).policy.name).toBe("org");
    expect(readFileSync(path.join(dir, "generated/org.guard.ts"), "utf8")).toContain('from "pruneguard";');
    expect((await run(["check"], dir)).code).toBe(0);
  });

  it("check exits 1 with tsc-style diagnostics and a code frame", async () => {
    const dir = project({ "policies/org.policy.ts": BAD });
    const r = await run(["check"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^policies\/org\.policy\.ts:2:124 - error PG2001: /m);
    expect(r.stderr).toContain("~~~~~");
    expect(r.stderr).toContain("Found 1 error and 1 warning.");
  });

  it("--format json prints the same diagnostics as data", async () => {
    const dir = project({ "policies/org.policy.ts": BAD });
    const r = await run(["check", "--format", "json"], dir);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as { diagnostics: Array<{ code: string; location: { line: number; column: number } }>; summary: { errors: number } };
    expect(json.summary.errors).toBe(1);
    expect(json.diagnostics.find((d) => d.code === "PG2001")).toMatchObject({ location: { line: 2, column: 124 } });
  });

  it("a compile with errors writes nothing, keeps what is there, and says so", async () => {
    const dir = project({ "policies/org.policy.ts": GOOD, "policies/bad.policy.ts": BAD.replace('"org"', '"bad"') });
    const r = await run(["compile"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Wrote nothing to generated: the policies have errors. The files there are unchanged");
    expect(existsSync(path.join(dir, "generated"))).toBe(false);
    const json = JSON.parse((await run(["compile", "--format", "json"], dir)).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ written: [], removed: [], wroteNothing: true, summary: { errors: 1 } });
  });

  it("check exits 1 on stale output", async () => {
    const dir = project({ "policies/org.policy.ts": GOOD, "generated/org.ir.json": "{}\n" });
    const r = await run(["check", "--out", "generated"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("generated/org.ir.json differs from what the policies compile to");
  });

  it("usage and I/O errors exit 2 without a stack trace", async () => {
    for (const args of [["frob"], ["check", "no/such/file.policy.ts"], ["compile", "--format", "xml"], [], ["audit"]]) {
      const r = await run(args, project({}));
      expect(r.code, args.join(" ")).toBe(2);
      noStack(r.all);
    }
  });

  it("with --format json, errors are JSON on stdout too, in one shape for every command", async () => {
    const dir = project({});
    for (const args of [["check", "no/such/file.policy.ts"], ["explain", "nowhere"], ["compile", "--frob"], ["audit", "no.db"], ["migrate", "--url", "notaurl"]]) {
      const r = await run([...args, "--format", "json"], dir);
      expect(r.code, args.join(" ")).toBe(2);
      const json = JSON.parse(r.stdout) as { error: { message: string; exitCode: number } };
      expect(json.error.exitCode).toBe(2);
      expect(json.error.message.length, args.join(" ")).toBeGreaterThan(0);
      expect(Object.keys(json)).toEqual(["error"]);
      expect(r.stderr).not.toBe("");
    }
  });

  it("migrate --url notaurl says the URL is invalid, without trying to connect or echoing it", async () => {
    for (const url of ["notaurl", "http://db.internal/x", "postgres:///nohost"]) {
      const r = await run(["migrate", "--url", url]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/migrate: --url (is not a valid URL|must be a PostgreSQL URL|names no server host)/);
      expect(r.stderr).not.toContain("ENOTFOUND");
      if (url !== "notaurl") expect(r.stderr).not.toContain(url);
    }
  });

  it("bad policy input is a diagnostic, never a stack trace, and never executed", async () => {
    const marker = path.join(tmpdir(), `pruneguard-cli-ran-${process.pid}`);
    const dir = project({
      "policies/a.policy.ts": `require("fs").writeFileSync(${JSON.stringify(marker)}, "x");\nprocess.exit(0);\n${GOOD}`,
      "policies/b.policy.ts": `import x from "./missing.policy.js";\nexport default x;`,
      "policies/c.policy.ts": `export default definePolicy({ name: `,
      "policies/d.policy.ts": `import u from "./util.js";\nexport default u;`,
      "policies/util.ts": `export default 1;`,
    });
    const r = await run(["check"], dir);
    expect(r.code).toBe(1);
    for (const code of ["PG1002", "PG1008", "PG1001", "PG1009"]) expect(r.stderr).toContain(code);
    noStack(r.all);
    expect(() => readFileSync(marker)).toThrow();
  });

  it("explain prints a table a reviewer can read, ending with a newline", async () => {
    const r = await run(["explain", "examples/policies/team-search.policy.ts"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("policy team-search (extends org)");
    expect(r.stdout).toMatch(/kind\s+store\s+retention\s+holds\s+modes\s+lossy\s+pins\s+fate/);
    expect(r.stdout).toContain("never prunable");
    expect(r.stdout).toContain("lossy only with flag");
    expect(r.stdout.endsWith("\n")).toBe(true);
    const org = await run(["explain", "examples/policies/org.policy.ts"]);
    expect(org.stdout).toMatch(/scratch .*lossy only with flag \(store notes is read-only/);
    const payments = await run(["explain", "examples/policies/team-payments.policy.ts"]);
    expect(payments.stdout).toContain("reversible for 2h after append, then lossy only with flag");
    expect(org.stdout).toMatch(/^ {2}scratch: keeps uuid, gitSha; loses requestId, errorCode, filePath, fileName, sourcePosition, httpStatus, traceId, ticket$/m);
    expect(org.stdout).toMatch(/^ {2}userTurn: no lossy summarize \(lossy forbidden\)$/m);
  });

  it("explain says when prunes are applied (compaction), in text and in JSON, and that an unset one is the default", async () => {
    const team = `import { extendPolicy } from "pruneguard/dsl";\nimport org from "./org.policy.js";\nexport default extendPolicy(org, { name: "team", session: { compaction: { minFreedTokens: 20_000, atTokens: 120_000 } } });\n`;
    const fast = `import { extendPolicy } from "pruneguard/dsl";\nimport org from "./org.policy.js";\nexport default extendPolicy(org, { name: "fast", session: { compaction: "immediate" } });\n`;
    const dir = project({ "org.policy.ts": GOOD, "team.policy.ts": team, "fast.policy.ts": fast });
    const text = await run(["explain", "org.policy.ts", "team.policy.ts", "fast.policy.ts"], dir);
    expect(text.code).toBe(0);
    // One policy per argument, in path order: fast, org, team.
    expect(text.stdout.match(/^compaction: .*$/gm)).toEqual([
      "compaction: each prune applied as it is decided (compaction: immediate)",
      `compaction: prunes applied once they free ${DEFAULT_COMPACTION.minFreedTokens.toLocaleString("en-US")} tokens or the window reaches its maxTokens, if set (the default)`,
      "compaction: prunes applied once they free 20,000 tokens or the window renders 120,000",
    ]);
    const json = JSON.parse((await run(["explain", "org.policy.ts", "team.policy.ts", "fast.policy.ts", "--format", "json"], dir)).stdout) as { policies: Array<{ session: unknown }> };
    expect(json.policies.map((p) => p.session)).toEqual([
      { maxLengthMs: null, lossyBudget: null, searchTokens: null, compaction: "immediate" },
      { maxLengthMs: null, lossyBudget: null, searchTokens: null, compaction: null },
      { maxLengthMs: null, lossyBudget: null, searchTokens: null, compaction: { minFreedTokens: 20_000, atTokens: 120_000 } },
    ]);
  });

  it("explain takes a folder and explains every policy in it; a file that is not a policy says what it expects", async () => {
    const r = await run(["explain", "examples/policies"]);
    expect(r.code).toBe(0);
    expect(r.stdout.match(/^policy /gm)).toHaveLength(3);
    const json = JSON.parse((await run(["explain", "examples/policies", "--format", "json"])).stdout) as { policies: Array<{ name: string }> };
    expect(json.policies.map((p) => p.name)).toEqual(["org", "team-payments", "team-search"]);
    const notPolicy = await run(["explain", "README.md"]);
    expect(notPolicy.code).toBe(2);
    expect(notPolicy.stderr).toContain("explain expects policy files (*.policy.ts), folders of them or globs; README.md is not a policy file");
  });

  it("--root confines reads: an import that leaves it is a diagnostic", async () => {
    const dir = project({ "org.policy.ts": GOOD, "team/t.policy.ts": `import { extendPolicy } from "pruneguard/dsl";\nimport org from "../org.policy.js";\nexport default extendPolicy(org, { name: "t" });\n` });
    expect((await run(["check", "team", "--no-drift"], dir)).code).toBe(0);
    const confined = await run(["check", "team", "--no-drift", "--root", "team"], dir);
    expect(confined.code).toBe(1);
    expect(confined.stderr).toContain("PG1018");
    for (const c of ["compile", "check", "explain"]) {
      const typo = await run([c, "team", "--root", "tema"], dir);
      expect(typo.code, c).toBe(2);
      expect(typo.stderr, c).toContain("the project root tema is not a folder");
    }
  });
});

describe("colour", () => {
  it("FORCE_COLOR wins, then NO_COLOR, then whether stderr is a terminal", () => {
    expect(colorEnabled({}, true)).toBe(true);
    expect(colorEnabled({}, false)).toBe(false);
    expect(colorEnabled({ NO_COLOR: "1" }, true)).toBe(false);
    expect(colorEnabled({ NO_COLOR: "" }, true)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: "1" }, false)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: "1", NO_COLOR: "1" }, false)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: "0" }, true)).toBe(false);
    expect(colorEnabled({ FORCE_COLOR: "false" }, true)).toBe(false);
  });
});

describe("bin/pruneguard.js, spawned", () => {
  const spawn = (args: string[], cwd: string, env: Record<string, string>) => {
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "", FORCE_COLOR: "", ...env } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  it("runs main and exits with its code; FORCE_COLOR colours diagnostics on a pipe", () => {
    const dir = project({ "policies/org.policy.ts": BAD });
    const coloured = spawn(["check"], dir, { FORCE_COLOR: "1" });
    expect(coloured.code).toBe(1);
    expect(coloured.stderr).toContain("\u001b[91merror\u001b[0m");
    const plain = spawn(["check"], dir, { FORCE_COLOR: "0" });
    expect(plain.stderr).not.toContain("\u001b[");
  });
  it("prints the version and exits 0", () => {
    const r = spawn(["--version"], process.cwd(), {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
  it("loads the tokenizer only to check a policy's tombstone", () => {
    // A module hook in the spawned process reports every file of gpt-tokenizer that is loaded.
    const hook = [
      'import { registerHooks } from "node:module";',
      'registerHooks({ load(url, context, next) { if (url.includes("/gpt-tokenizer/")) process.stderr.write(`tokenizer: ${url}\\n`); return next(url, context); } });',
    ].join("\n");
    const dir = project({ "policies/org.policy.ts": GOOD, "hook.mjs": hook });
    const compile = () => spawnSync(process.execPath, ["--import", "./hook.mjs", BIN, "compile", "--force"], { cwd: dir, encoding: "utf8" });
    const without = compile();
    expect(without.status, without.stderr).toBe(0);
    expect(without.stderr).not.toContain("tokenizer:");
    writeFileSync(path.join(dir, "policies/org.policy.ts"), GOOD.replace("definePolicy({", 'definePolicy({\n  tombstone: "{span} pruned, unrecoverable, contents unknown",'));
    const withTombstone = compile();
    expect(withTombstone.status, withTombstone.stderr).toBe(0);
    expect(withTombstone.stderr).toContain("tokenizer:");
  });
});

describe("start-up", () => {
  // Every command module registers with light imports only; its `.run.ts` holds the heavy ones.
  const HEAVY = ["ts-morph", "gpt-tokenizer", "pg", "node:sqlite", "chokidar", "zod", "tinyglobby"];
  const reached = (file: string, seen = new Set<string>()): Set<string> => {
    if (seen.has(file)) return seen;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    // Static value imports and re-exports only: `import type`, `export type` and `await import(...)` are lazy or erased.
    for (const m of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)";/gms)) {
      const spec = m[1]!;
      if (spec.startsWith(".")) reached(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")), seen);
      else seen.add(spec);
    }
    return seen;
  };

  it("main.ts and the command registrations reach no heavy dependency", () => {
    const all = reached(path.resolve("compiler/cli/main.ts"));
    expect([...all].filter((s) => HEAVY.includes(s) || s.endsWith(".run.ts"))).toEqual([]);
    expect(all.has("commander")).toBe(true);
  });

  it("compile and check load the parser, the checks (with the tokenizer) and the emitters only when a policy changed", () => {
    // The incremental build imports the compiler (ts-morph, and through the tombstone check gpt-tokenizer)
    // when an entry is stale (incremental.test.ts); a build with nothing to do reaches none of it.
    for (const command of ["compile", "check"]) {
      const all = reached(path.resolve(`compiler/cli/commands/${command}.run.ts`));
      expect([...all].filter((s) => s === "ts-morph" || s.startsWith("gpt-tokenizer"))).toEqual([]);
      const heavy = ["compiler/checks/index.ts", "compiler/frontend/index.ts", "compiler/emit/guard.ts", "compiler/ir/schema.ts"];
      expect([...all].filter((s) => heavy.some((h) => s.endsWith(h)))).toEqual([]);
    }
  });

  it("migrate's help defaults are the store's", async () => {
    const light = await import("../../compiler/cli/commands/migrate.js");
    const store = await import("../../src/stores/postgres.js");
    expect(light.MIGRATE_URL_ENV).toBe(store.PG_URL_ENV);
    expect(light.MIGRATE_DEFAULT_SCHEMA).toBe(store.DEFAULT_SCHEMA);
  });
});
