/**
 * The published packages, installed the way a stranger would: `.ci/pack.mjs` packs the runtime
 * (`pruneguard`) and the CLI (`pruneguard-cli`) from this build; each goes into an empty project outside
 * the repository (so nothing resolves through the repository's own node_modules), from the tarball, with
 * its dependencies from the registry.
 *
 * - runtime: a strict `tsc` with `skipLibCheck: false` type-checks a file importing `pruneguard` and
 *   `pruneguard/dsl`, the output runs a reversible prune, and the project holds neither ts-morph nor a
 *   database driver nor the CLI's dependencies;
 * - CLI: `pruneguard compile` turns a policy into a guard that the project's `tsc` accepts, and a policy test
 *   importing `pruneguard-cli/testing` type-checks and runs with no test runner installed. The CLI carries no
 *   runtime of its own: it depends on `pruneguard` at its own version, which npm installs once, beside the
 *   project's.
 * - the documented setup (docs/adopting.md): in an empty folder, one `npm install` of both packages,
 *   TypeScript and @types/node, then `npx pruneguard init` and nothing else, after which `tsc --noEmit` passes
 *   under TypeScript 7 and 6, `pruneguard check` passes and `npm test` runs the policy test init wrote; a
 *   second init writes nothing. Each step is a process run to its end: no step is timed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const devVersion = (name: string) => JSON.parse(execFileSync("npm", ["pkg", "get", `devDependencies.${name}`], { cwd: root, encoding: "utf8" })) as string;
const typescriptVersion = devVersion("typescript");
let work: string;
let runtimeTgz: string;
let cliTgz: string;

/** A command that must succeed; its output is the failure message when it does not. */
function run(cmd: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(cmd, [...args], { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", npm_config_audit: "false", npm_config_fund: "false" } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function project(name: string, tarballs: readonly string[]): string {
  const dir = path.join(work, name);
  run("mkdir", ["-p", dir], work);
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", ...tarballs, `typescript@${typescriptVersion}`], dir);
  writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, exactOptionalPropertyTypes: true, skipLibCheck: false, types: [], outDir: "out" },
      include: ["*.ts", "generated/*.ts"],
    }),
  );
  return dir;
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), "pruneguard-package-"));
  [runtimeTgz, cliTgz] = run(process.execPath, [path.join(root, ".ci", "pack.mjs"), path.join(work, "tarballs")], root).trim().split("\n") as [string, string];
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the runtime package", () => {
  it("type-checks strictly with skipLibCheck false, runs, and installs no compiler or driver", () => {
    const dir = project("agent", [runtimeTgz]);
    writeFileSync(
      path.join(dir, "index.ts"),
      `import { ContextWindow, MemoryStore } from "pruneguard";
import { definePolicy, hours, store } from "pruneguard/dsl";

export const policy = definePolicy({
  name: "agent",
  stores: { log: store.sqlite({ retention: hours(2) }) },
  kinds: { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } },
});
const win = new ContextWindow({
  session: "s",
  stores: { log: new MemoryStore({ name: "log" }) },
  kinds: { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } },
});
const ref = await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
const outcome = await win.prune({ span: ref, mode: "drop" });
console.log(JSON.stringify({ status: outcome.status, recall: (await win.recall(ref)).status }));
`,
    );
    run(path.join(dir, "node_modules", ".bin", "tsc"), ["-p", "."], dir);
    expect(JSON.parse(run(process.execPath, ["out/index.js"], dir))).toEqual({ status: "reversible", recall: "found" });
    const installed = readdirSync(path.join(dir, "node_modules"));
    for (const absent of ["ts-morph", "@ts-morph", "commander", "chokidar", "tinyglobby", "pg", "better-sqlite3", "@opentelemetry"]) {
      expect(installed, `${absent} was installed with the runtime`).not.toContain(absent);
    }
    expect(existsSync(path.join(dir, "node_modules", "pruneguard", "LICENSE"))).toBe(true);
    expect(existsSync(path.join(dir, "node_modules", "pruneguard", "docs", "architecture.md"))).toBe(true);
  });
});

describe("the CLI package", () => {
  it("compiles a policy into a guard the project's tsc accepts", () => {
    const dir = project("platform", [runtimeTgz, cliTgz]);
    run("mkdir", ["-p", "policies"], dir);
    writeFileSync(
      path.join(dir, "policies", "org.policy.ts"),
      `import { definePolicy, hours, store } from "pruneguard/dsl";
export default definePolicy({
  name: "org",
  stores: { log: store.sqlite({ retention: hours(2) }) },
  kinds: {
    tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
    scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
  },
});
`,
    );
    const bin = path.join(dir, "node_modules", ".bin", "pruneguard");
    // One runtime in the project: the CLI's dependency is the project's own copy, and the CLI ships none.
    expect(existsSync(path.join(dir, "node_modules", "pruneguard-cli", "node_modules", "pruneguard")), "a second pruneguard under pruneguard-cli").toBe(false);
    expect(readdirSync(path.join(dir, "node_modules", "pruneguard-cli", "dist"))).toEqual(["compiler"]);
    expect(run(bin, ["--version"], dir).trim()).toMatch(/^\d+\.\d+\.\d+/);
    run(bin, ["compile", "policies", "--out", "generated"], dir);
    // The outputs, and the incremental build's manifest beside them.
    expect(readdirSync(path.join(dir, "generated")).sort()).toEqual([".pruneguard-manifest.json", "org.guard.ts", "org.ir.json", "org.types.ts"]);
    // Nothing changed: the second compile reuses the policy (the manifest's fingerprint resolves in an installed package).
    // (Piped, the summary wraps as on a 120-column terminal: its words are compared.)
    expect(run(bin, ["compile", "policies", "--out", "generated"], dir).replace(/\n +/g, " ")).toContain("1 of 1 policy unchanged since the last compile");
    writeFileSync(
      path.join(dir, "use.ts"),
      `import { createWindow } from "./generated/org.guard.js";
import { MemoryStore } from "pruneguard";
const win = createWindow({ session: "s", stores: { log: new MemoryStore({ name: "log" }) } });
const ref = await win.append({ kind: "scratch", text: "notes" });
// @ts-expect-error a kind without a store is pruned only with acceptLossy written in the code
await win.prune({ span: ref, mode: "drop" });
`,
    );
    run(path.join(dir, "node_modules", ".bin", "tsc"), ["-p", "."], dir);

    // No `pg` here (an optional peer): the PostgreSQL commands say what to install, not Node's module error.
    expect(existsSync(path.join(dir, "node_modules", "pg"))).toBe(false);
    const env = { ...process.env, NO_COLOR: "1", PRUNEGUARD_PG_URL: "" };
    const noUrl = spawnSync(bin, ["migrate"], { cwd: dir, encoding: "utf8", env });
    expect([noUrl.status, noUrl.stderr.replace(/\n +/g, " ").trim()]).toEqual([2, "pruneguard: migrate: no server URL; pass --url or set PRUNEGUARD_PG_URL"]);
    for (const args of [["migrate", "--url", "postgres://127.0.0.1:1/x"], ["audit", "--url", "postgres://127.0.0.1:1/x", "--session", "s1"]]) {
      const r = spawnSync(bin, args, { cwd: dir, encoding: "utf8", env });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.replace(/\n +/g, " ").trim()).toBe(
        "pruneguard: the PostgreSQL store needs the package `pg`, an optional peer dependency that is not installed: run `npm install pg`",
      );
    }
  });

  it("exports pruneguard-cli/testing: a policy test type-checks strictly and runs, with no test runner installed", () => {
    // The project the test above installed the two tarballs into and compiled a policy in.
    const dir = path.join(work, "platform");
    writeFileSync(
      path.join(dir, "policy-test.ts"),
      `import { compilePolicy, hours, PolicyExpectationError } from "pruneguard-cli/testing";
const org = compilePolicy("policies/org.policy.ts");
org.expectReversible("tool");
let failed = "";
try {
  org.expectFateAt("scratch", hours(1), "reversible");
} catch (err) {
  if (err instanceof PolicyExpectationError) failed = err.counterexample?.actual ?? "";
}
const run = await org.session([{ append: "tool", text: "GET /deploy -> 500 req_8f3a2c91", as: "a" }, { advance: hours(3) }, { prune: "a", mode: "drop" }]);
console.log(JSON.stringify({ failed, status: run.outcomes[0]?.status, rendered: run.rendered }));
`,
    );
    run(path.join(dir, "node_modules", ".bin", "tsc"), ["-p", "."], dir);
    expect(JSON.parse(run(process.execPath, ["out/policy-test.js"], dir))).toEqual({ failed: "lossy-with-flag", status: "reversible", rendered: "span_1 pruned, recall #1: req_8f3a2c91" });
    // The one entry point: the compiler's modules are not importable by path.
    const deep = spawnSync(process.execPath, ["--input-type=module", "-e", 'await import("pruneguard-cli/dist/compiler/index.js")'], { cwd: dir, encoding: "utf8" });
    expect(deep.status).not.toBe(0);
    expect(deep.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
    for (const absent of ["vitest", "jest", "mocha"]) expect(existsSync(path.join(dir, "node_modules", absent)), absent).toBe(false);
  });
});

describe("the documented setup, from an empty folder", () => {
  /** Every file of the project but what npm installed, with its bytes and modification time. */
  function snapshot(dir: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const rel of readdirSync(dir, { recursive: true }).map(String).sort()) {
      if (rel === "node_modules" || rel.startsWith(`node_modules${path.sep}`) || rel === "package-lock.json") continue;
      const st = statSync(path.join(dir, rel));
      out[rel] = st.isDirectory() ? "dir" : `${st.mtimeMs} ${readFileSync(path.join(dir, rel), "base64")}`;
    }
    return out;
  }

  it("npm install, then pruneguard init: tsc (7 and 6), check and the policy test pass; a second init changes nothing", { timeout: 900_000 }, () => {
    const dir = path.join(work, "adopter");
    mkdirSync(dir);
    // docs/adopting.md's installs, in one npm run (npm makes package.json): the two packages, TypeScript and
    // Node's types at this repository's versions, and TypeScript 6 under another name, to check the tsconfig
    // init writes with it too.
    run("npm", ["install", "--no-audit", "--no-fund", runtimeTgz, cliTgz, `typescript@${typescriptVersion}`, `@types/node@${devVersion("@types/node")}`, "typescript6@npm:typescript@6.0.3"], dir);
    expect(readdirSync(dir).sort()).toEqual(["node_modules", "package-lock.json", "package.json"]);
    expect(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).type).toBeUndefined();

    const init = run("npx", ["--yes=false", "pruneguard", "init"], dir);
    expect(init).toMatch(/^added {3}package\.json: "type": "module", a test script, "pruneguard": /m);
    expect(init).not.toContain("Install what these files import");
    expect(init.split("\n").filter((l) => l.length > 120)).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual([".gitignore", "generated", "node_modules", "package-lock.json", "package.json", "policies", "test", "tsconfig.json"]);

    expect(run("npx", ["--yes=false", "tsc", "--version"], dir)).toContain(typescriptVersion);
    run("npx", ["--yes=false", "tsc", "--noEmit", "-p", "."], dir);
    const ts6 = path.join(dir, "node_modules", "typescript6", "bin", "tsc");
    expect(run(process.execPath, [ts6, "--version"], dir)).toMatch(/Version 6\./);
    run(process.execPath, [ts6, "--noEmit", "-p", "."], dir);
    expect(run("npx", ["--yes=false", "pruneguard", "check"], dir)).toContain("Checked 1 policy: no errors; 3 files in generated are fresh.");
    const test = run("npm", ["test"], dir);
    expect(test).toMatch(/^. pass 4$/m);
    expect(test).toMatch(/^. fail 0$/m);

    const before = snapshot(dir);
    const again = run("npx", ["--yes=false", "pruneguard", "init"], dir);
    expect(snapshot(dir)).toEqual(before);
    expect([...again.matchAll(/^kept {4}(\S+) \(exists\)/gm)].map((m) => m[1])).toEqual([
      "policies/org.policy.ts",
      "generated/",
      "test/org.policy.test.ts",
      "package.json",
      "tsconfig.json",
      ".gitignore",
    ]);
  });
});
