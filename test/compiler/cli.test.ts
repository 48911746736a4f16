// End to end: spawns the built CLI (`npm test` builds first). Exit codes 0 clean, 1 errors, 2 usage/I-O.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const BIN = path.resolve("bin/pruneguard.js");

function run(args: string[], cwd = process.cwd()) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, all: r.stdout + r.stderr };
}

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

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+\)?/);

describe("pruneguard CLI", () => {
  it("--help on the program and on every command exits 0", () => {
    for (const args of [["--help"], ["compile", "--help"], ["check", "--help"], ["explain", "--help"]]) {
      const r = run(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: pruneguard");
    }
  });

  it("compile examples/policies writes deterministic IR JSON and exits 0", () => {
    const out = mkdtempSync(path.join(tmpdir(), "pruneguard-out-"));
    const a = run(["compile", "examples/policies", "--out", out]);
    expect(a.code).toBe(0);
    const first = readFileSync(path.join(out, "team-search.ir.json"), "utf8");
    expect(run(["compile", "examples/policies", "--out", out]).code).toBe(0);
    expect(readFileSync(path.join(out, "team-search.ir.json"), "utf8")).toBe(first);
    expect(run(["check", "examples/policies", "--out", out]).code).toBe(0);
  });

  it("needs no flags for policies/**/*.policy.ts and generated/; check fails until compile has run", () => {
    const dir = project({ "policies/org.policy.ts": GOOD });
    const before = run(["check"], dir);
    expect(before.code).toBe(1);
    expect(before.stderr).toContain("generated/org.guard.ts is missing");
    expect(run(["check", "--no-drift"], dir).code).toBe(0);
    expect(run(["compile"], dir).code).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, "generated/org.ir.json"), "utf8")).policy.name).toBe("org");
    expect(readFileSync(path.join(dir, "generated/org.guard.ts"), "utf8")).toContain('from "pruneguard";');
    expect(run(["check"], dir).code).toBe(0);
  });

  it("check exits 1 with tsc-style diagnostics and a code frame", () => {
    const dir = project({ "policies/org.policy.ts": BAD });
    const r = run(["check"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^policies\/org\.policy\.ts:2:124 - error PG2001: /m);
    expect(r.stderr).toContain("~~~~~");
    expect(r.stderr).toContain("Found 1 error and 1 warning.");
  });

  it("--format json prints the same diagnostics as data", () => {
    const dir = project({ "policies/org.policy.ts": BAD });
    const r = run(["check", "--format", "json"], dir);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as { diagnostics: Array<{ code: string; location: { line: number; column: number } }>; summary: { errors: number } };
    expect(json.summary.errors).toBe(1);
    expect(json.diagnostics.find((d) => d.code === "PG2001")).toMatchObject({ location: { line: 2, column: 124 } });
  });

  it("check exits 1 on stale output", () => {
    const dir = project({ "policies/org.policy.ts": GOOD, "generated/org.ir.json": "{}\n" });
    const r = run(["check", "--out", "generated"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("generated/org.ir.json differs from what the policies compile to");
  });

  it("usage and I/O errors exit 2 without a stack trace", () => {
    for (const args of [["frob"], ["check", "no/such/file.policy.ts"], ["compile", "--format", "xml"], [], ["explain"]]) {
      const r = run(args, project({}));
      expect(r.code, args.join(" ")).toBe(2);
      noStack(r.all);
    }
  });

  it("bad policy input is a diagnostic, never a stack trace, and never executed", () => {
    const marker = path.join(tmpdir(), `pruneguard-cli-ran-${process.pid}`);
    const dir = project({
      "policies/a.policy.ts": `require("fs").writeFileSync(${JSON.stringify(marker)}, "x");\nprocess.exit(0);\n${GOOD}`,
      "policies/b.policy.ts": `import x from "./missing.policy.js";\nexport default x;`,
      "policies/c.policy.ts": `export default definePolicy({ name: `,
      "policies/d.policy.ts": `import u from "./util.js";\nexport default u;`,
      "policies/util.ts": `export default 1;`,
    });
    const r = run(["check"], dir);
    expect(r.code).toBe(1);
    for (const code of ["PG1002", "PG1008", "PG1001", "PG1009"]) expect(r.stderr).toContain(code);
    noStack(r.all);
    expect(() => readFileSync(marker)).toThrow();
  });

  it("explain prints a table a reviewer can read", () => {
    const r = run(["explain", "examples/policies/team-search.policy.ts"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("policy team-search (extends org)");
    expect(r.stdout).toMatch(/kind\s+store\s+retention\s+holds\s+modes\s+lossy\s+pins\s+fate/);
    expect(r.stdout).toContain("never prunable");
    expect(r.stdout).toContain("lossy only with flag");
    const org = run(["explain", "examples/policies/org.policy.ts"]);
    expect(org.stdout).toMatch(/scratch .*lossy only with flag \(store notes is read-only/);
    const payments = run(["explain", "examples/policies/team-payments.policy.ts"]);
    expect(payments.stdout).toContain("reversible for 2h after append, then lossy only with flag");
    expect(org.stdout).toMatch(/^ {2}scratch: keeps uuid, gitSha; loses requestId, errorCode, filePath, fileName, sourcePosition, httpStatus, traceId, ticket$/m);
    expect(org.stdout).toMatch(/^ {2}userTurn: no lossy summarize \(lossy forbidden\)$/m);
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

  it("compile and check load the parser only for a policy that changed, the tokenizer only for a tombstone", () => {
    // ts-morph is imported by the incremental build when an entry is stale (incremental.test.ts); the
    // o200k tables cost ~0.3 s to load, and checks.test.ts proves the lazy load still counts (PG2008).
    for (const command of ["compile", "check"]) {
      const all = reached(path.resolve(`compiler/cli/commands/${command}.run.ts`));
      expect([...all].filter((s) => s === "ts-morph" || s.startsWith("gpt-tokenizer"))).toEqual([]);
    }
    expect(readFileSync(path.resolve("compiler/checks/tombstone.ts"), "utf8")).toMatch(/createRequire\(import\.meta\.url\)\("gpt-tokenizer\/encoding\/o200k_base"\)/);
  });

  it("migrate's help defaults are the store's", async () => {
    const light = await import("../../compiler/cli/commands/migrate.js");
    const store = await import("../../src/stores/postgres.js");
    expect(light.MIGRATE_URL_ENV).toBe(store.PG_URL_ENV);
    expect(light.MIGRATE_DEFAULT_SCHEMA).toBe(store.DEFAULT_SCHEMA);
  });
});
