// The incremental build compiles through compiler/compile.ts, which does not load the IR's zod schema: a valid
// policy never needs it (ir-parse.test.ts). An invalid one makes validation throw `IrSchemaNeeded`; the build
// loads the schema and compiles the entry again, so it reports zod's PG1011 as a compile through the API
// does. Nothing in this file loads the schema first (compiler/index.ts would).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { buildPolicies } from "../../compiler/incremental/build.js";
import * as validate from "../../compiler/ir/validate.js";

vi.mock("../../compiler/ir/validate.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../compiler/ir/validate.js")>();
  return { ...actual, loadIrSchema: vi.fn(actual.loadIrSchema) };
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-lazy-schema-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "policies"));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, "policies", name), text);
  return dir;
}

const ORG = readFileSync("examples/policies/org.policy.ts", "utf8");

describe("an invalid policy in an incremental build", () => {
  it("loads the schema once it is needed and reports zod's PG1011 where the policy says it", async () => {
    const valid = project({ "org.policy.ts": ORG });
    const ok = await buildPolicies([path.join(valid, "policies/org.policy.ts")], { cwd: valid, outDir: path.join(valid, "generated"), emit: { runtimeImport: "pruneguard" } });
    expect(ok.hasErrors).toBe(false);
    expect(vi.mocked(validate.loadIrSchema)).not.toHaveBeenCalled();

    const text = ORG.replace(/definePolicy\(\{\n {2}name: "org"/, 'definePolicy({\n  name: "Not A Policy Name"');
    expect(text).toContain("Not A Policy Name");
    const dir = project({ "org.policy.ts": text });
    const r = await buildPolicies([path.join(dir, "policies/org.policy.ts")], { cwd: dir, outDir: path.join(dir, "generated"), emit: { runtimeImport: "pruneguard" } });
    expect(vi.mocked(validate.loadIrSchema)).toHaveBeenCalledTimes(1);
    expect(r.hasErrors).toBe(true);
    expect(r.diagnostics.filter((d) => d.code === "PG1011")).toEqual([
      {
        code: "PG1011",
        category: "error",
        message: `name: must be lower-case words separated by '-', like "team-search"`,
        location: { file: "policies/org.policy.ts", line: 11, column: 9, endLine: 11, endColumn: 28 },
        related: [],
      },
    ]);
  });
});
