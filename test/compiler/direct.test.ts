// `compile` and `check` with plain arguments run without commander (compiler/cli/direct.ts). What they print
// and the exit code must be what the commander program gives for the same arguments, and anything the
// direct path does not read exactly as commander would must be left to commander.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIO } from "../../compiler/cli/context.js";
import { parseDirect } from "../../compiler/cli/direct.js";
import { main } from "../../compiler/cli/main.js";
import { runProgram } from "../../compiler/cli/program.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const BAD = `import { definePolicy, store, hours } from "pruneguard/dsl";
export default definePolicy({ name: "bad", stores: { log: store.sqlite({ retention: hours(2) }) }, kinds: { tool: { store: "lgo", modes: ["drop"], lossy: "forbid" } } });
`;

/** A project with the example policies (warnings), one more in `broken/` (an error), and a package.json config in `configured/`. */
function project(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-direct-"));
  dirs.push(dir);
  cpSync("examples/policies", path.join(dir, "policies"), { recursive: true });
  mkdirSync(path.join(dir, "broken"));
  writeFileSync(path.join(dir, "broken/bad.policy.ts"), BAD);
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "p", private: true, type: "module" }));
  return dir;
}

type Run = (argv: readonly string[], io: CliIO) => Promise<number>;

async function capture(run: Run, argv: readonly string[], cwd: string, columns?: number) {
  let stdout = "";
  let stderr = "";
  const io: CliIO = { cwd, color: false, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), ...(columns ? { columns: { stdout: columns, stderr: columns } } : {}) };
  const code = await run(argv, io);
  return { code, stdout, stderr };
}

/** Every file under `dir` with its bytes, the manifest's seal and compiler left out (the same build writes the same). */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = path.relative(dir, path.join(e.parentPath, e.name));
    out[p] = p.endsWith(".pruneguard-manifest.json") ? "(manifest)" : readFileSync(path.join(dir, p), "utf8");
  }
  return out;
}

const CASES: ReadonlyArray<readonly string[]> = [
  ["check", "--no-drift"],
  ["check", "policies", "--out", "generated"],
  ["check", "policies", "--out=generated", "--format", "json"],
  ["check", "--format=json", "policies", "--no-drift", "--force"],
  ["check", "broken"],
  ["check", "broken", "--format", "json"],
  ["check", "missing"],
  ["check", "missing", "--format=json"],
  ["check", "policies", "--root", "nowhere"],
  ["check", "policies", "--runtime-import", "../src/index.js", "--out", "out"],
  ["compile", "policies", "--out", "out"],
  ["compile", "policies", "--out", "out", "--format", "json"],
  ["compile", "policies/org.policy.ts", "policies/team-search.policy.ts", "--out", "one", "--force"],
  ["compile", "broken", "policies", "--out", "out"],
  ["compile", "--out", "generated"],
];

describe("the direct path of compile and check", () => {
  it("takes plain arguments, as commander would read them", () => {
    expect(parseDirect(["check"])).toEqual({ command: "check", inputs: [], flags: { format: "pretty", drift: true } });
    expect(parseDirect(["check", "a", "--out=o", "b", "--no-drift", "--format", "json", "--force", "--root", "r", "--runtime-import", "x"])).toEqual({
      command: "check",
      inputs: ["a", "b"],
      flags: { out: "o", runtimeImport: "x", root: "r", format: "json", force: true, drift: false },
    });
    expect(parseDirect(["compile", "p", "--out", "gen"])).toEqual({ command: "compile", inputs: ["p"], flags: { out: "gen", format: "pretty" } });
  });

  it("leaves everything else to commander", () => {
    const declined = [
      [],
      ["--help"],
      ["--version"],
      ["explain"],
      ["check", "--help"],
      ["check", "-h"],
      ["compile", "--watch"],
      ["compile", "--no-drift"],
      ["check", "--out"],
      ["check", "--out", "--force"],
      ["check", "--out="],
      ["check", "--out", "a", "--out", "b"],
      ["check", "--force", "--force"],
      ["check", "--format", "markdown"],
      ["check", "--unknown"],
      ["check", "--force=true"],
      ["check", ""],
      ["check", "-"],
      ["check", "--", "policies"],
      ["help", "check"],
    ];
    for (const argv of declined) expect(parseDirect(argv), argv.join(" ")).toBeUndefined();
  });

  it("prints, exits and writes what the commander program does, argument for argument", async () => {
    for (const argv of CASES) {
      expect(parseDirect(argv), argv.join(" ")).toBeDefined();
      for (const columns of [undefined, 80]) {
        // Each run in a project of its own: a compile writes, and the second run must not see the first's files.
        const [a, b] = [project(), project()];
        const direct = await capture(main, argv, a, columns);
        const program = await capture(runProgram, argv, b, columns);
        const text = (s: string, dir: string) => s.replaceAll(dir, "<dir>");
        expect({ code: direct.code, stdout: text(direct.stdout, a), stderr: text(direct.stderr, a) }, argv.join(" ")).toEqual({
          code: program.code,
          stdout: text(program.stdout, b),
          stderr: text(program.stderr, b),
        });
        expect(files(a), argv.join(" ")).toEqual(files(b));
      }
    }
  });
});
