// `pruneguard init` in process (helpers.ts `runCli`): in an empty package it writes a policy that compiles
// clean, the package.json field and the ignore rule, after which compile and check pass; it overwrites
// nothing, says what it left alone, and exits 1 then.
import { existsSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { starterPolicy } from "../../compiler/cli/init-template.js";
import { compilePolicies } from "../../compiler/index.js";
import { runCli as run } from "./helpers.js";

/** An empty package: a folder with a package.json and nothing else. */
function emptyPackage(pkg = '{\n    "name": "agents",\n    "type": "module"\n}\n'): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-init-"));
  writeFileSync(path.join(dir, "package.json"), pkg);
  return dir;
}

describe("pruneguard init", () => {
  it("in an empty package: init, then compile, then check pass", async () => {
    const dir = emptyPackage();
    const init = await run(["init"], dir);
    expect(init.code, init.all).toBe(0);
    expect(init.stdout).toMatch(/^written +policies\/org\.policy\.ts: a starting organisation policy$/m);
    expect(init.stdout).toMatch(/^added +package\.json: "pruneguard": \{"policies":\["policies"\],"out":"generated"\}/m);
    expect(init.stdout).toMatch(/^written +\.gitignore: ignores \.pruneguard-manifest\.json/m);
    // What to add to tsconfig and CI.
    expect(init.stdout).toContain('set  "skipLibCheck": true');
    expect(init.stdout).toContain('set  "module": "NodeNext"');
    expect(init.stdout).toContain("npx pruneguard diff --base origin/${{ github.base_ref }} --format markdown");
    // package.json keeps its own indentation (four spaces) and key order, with the field added last.
    expect(readFileSync(path.join(dir, "package.json"), "utf8")).toBe(
      '{\n    "name": "agents",\n    "type": "module",\n    "pruneguard": {\n        "policies": [\n            "policies"\n        ],\n        "out": "generated"\n    }\n}\n',
    );
    expect(readFileSync(path.join(dir, ".gitignore"), "utf8")).toContain("\n.pruneguard-manifest.json\n");
    const compile = await run(["compile"], dir);
    expect(compile.code, compile.all).toBe(0);
    expect(compile.stderr).not.toMatch(/warning|error/);
    expect(existsSync(path.join(dir, "generated/org.guard.ts"))).toBe(true);
    const check = await run(["check"], dir);
    expect(check.code, check.all).toBe(0);
  });

  it("writes a documented policy that compiles with no diagnostic at all, the one docs/adopting.md shows", () => {
    const text = starterPolicy("org");
    expect(text).toMatch(/^\/\*\*\n \* The organisation's pruning policy/);
    const r = compilePolicies({ files: { "org.policy.ts": text } });
    expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([]);
    expect(r.policies[0]?.kinds.map((k) => k.name)).toEqual(["toolResult", "toolCall", "userTurn", "scratch"]);
    const doc = readFileSync("docs/adopting.md", "utf8");
    const blocks = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
    expect(blocks).toContain(text);
  });

  it("a second run finds everything as it would write it, and exits 0", async () => {
    const dir = emptyPackage();
    expect((await run(["init"], dir)).code).toBe(0);
    const again = await run(["init"], dir);
    expect(again.code, again.all).toBe(0);
    expect(again.stdout.match(/^already there/gm)).toHaveLength(3);
  });

  it("overwrites nothing: an existing policy or field is left alone and named, and init exits 1", async () => {
    const dir = emptyPackage('{ "name": "agents", "pruneguard": { "policies": ["config/policies"] } }');
    mkdirSync(path.join(dir, "policies"));
    writeFileSync(path.join(dir, "policies/org.policy.ts"), "// ours\n");
    writeFileSync(path.join(dir, ".gitignore"), "node_modules");
    const r = await run(["init"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toMatch(/^left alone +policies\/org\.policy\.ts: it exists; init writes a starting organisation policy only where there is none$/m);
    expect(r.stdout).toMatch(/^left alone +package\.json: it has a "pruneguard" field already \(\{"policies":\["config\/policies"\]\}\)/m);
    expect(readFileSync(path.join(dir, "policies/org.policy.ts"), "utf8")).toBe("// ours\n");
    expect(readFileSync(path.join(dir, "package.json"), "utf8")).toBe('{ "name": "agents", "pruneguard": { "policies": ["config/policies"] } }');
    // An ignore file is added to, on a line of its own, never rewritten.
    expect(r.stdout).toMatch(/^added +\.gitignore: a rule for \.pruneguard-manifest\.json/m);
    expect(readFileSync(path.join(dir, ".gitignore"), "utf8")).toBe("node_modules\n# pruneguard compile's incremental cache (local to this machine)\n.pruneguard-manifest.json\n");
    // The package's package.json says nothing of "type": "module": init says what the guards need.
    expect(r.stdout).toContain('package.json has no "type": "module"');
  });

  it("reads tsconfig.json (comments and all) and says which settings are missing", async () => {
    const dir = emptyPackage();
    writeFileSync(path.join(dir, "tsconfig.json"), '{\n  // ours\n  "compilerOptions": { "module": "nodenext", "moduleResolution": "NodeNext", "strict": true, "skipLibCheck": false, },\n}\n');
    const r = await run(["init", "--format", "json"], dir);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { actions: Array<{ file: string; status: string }>; tsconfig: Array<{ option: string; ok: boolean; has: unknown }> };
    expect(json.actions.map((a) => [a.file, a.status])).toEqual([
      ["policies/org.policy.ts", "written"],
      ["package.json", "added"],
      [".gitignore", "written"],
    ]);
    expect(json.tsconfig.map((t) => [t.option, t.ok, t.has])).toEqual([
      ["module", true, "nodenext"],
      ["moduleResolution", true, "NodeNext"],
      ["strict", true, true],
      ["skipLibCheck", false, false],
    ]);
  });

  it("names the policy and its folders as asked; usage and I/O errors exit 2", async () => {
    const dir = emptyPackage();
    const r = await run(["init", "--name", "acme", "--policies", "config/policies", "--out", "src/generated"], dir);
    expect(r.code, r.all).toBe(0);
    expect(readFileSync(path.join(dir, "config/policies/acme.policy.ts"), "utf8")).toContain('name: "acme"');
    expect(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).pruneguard).toEqual({ policies: ["config/policies"], out: "src/generated" });
    expect((await run(["compile"], dir)).code).toBe(0);
    expect(existsSync(path.join(dir, "src/generated/acme.guard.ts"))).toBe(true);
    expect((await run(["check"], dir)).code).toBe(0);

    const none = await run(["init"], mkdtempSync(path.join(tmpdir(), "pruneguard-init-")));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no package.json in");
    expect((await run(["init", "--name", "Acme"], emptyPackage())).code).toBe(2);
    const broken = emptyPackage("{ not json");
    const bad = await run(["init", "--format", "json"], broken);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toEqual({ error: { message: "package.json is not valid JSON; init left it alone", exitCode: 2 } });
    expect(existsSync(path.join(broken, "policies"))).toBe(false);
  });
});
