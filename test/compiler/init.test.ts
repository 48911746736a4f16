// `pruneguard init` in process (helpers.ts `runCli`): in an empty package it writes a policy that compiles
// clean, its guards and a test of it, package.json's type, test script and field, a tsconfig.json and the
// ignore rule, after which check passes with no other step; it never overwrites a file, so a second run
// writes nothing and says what it kept, and a project whose policies were renamed does not get the starting
// one back. (test/package/install.test.ts runs the same from the packed tarballs, with tsc and the test.)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { policyTest, starterPolicy, tsconfigFile } from "../../compiler/cli/init-template.js";
import { rewriteLoses } from "../../compiler/cli/commands/init.run.js";
import { compilePolicies } from "../../compiler/index.js";
import { runCli as run } from "./helpers.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-init-"));
  made.push(dir);
  return dir;
}

/** An empty package: a folder with a package.json and nothing else. */
function emptyPackage(pkg = '{\n    "name": "agents",\n    "type": "module"\n}\n'): string {
  const dir = folder();
  writeFileSync(path.join(dir, "package.json"), pkg);
  return dir;
}

/** Every file under `dir` with its bytes and modification time: equal snapshots mean nothing was written. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const st = statSync(path.join(dir, rel));
    out[rel] = st.isDirectory() ? "dir" : `${st.mtimeMs} ${readFileSync(path.join(dir, rel), "base64")}`;
  }
  return out;
}

const read = (dir: string, rel: string) => readFileSync(path.join(dir, rel), "utf8");

/** No line of init's output is wider than 120 columns. */
function expectNarrow(stdout: string): void {
  const wide = stdout.split("\n").filter((l) => l.length > 120);
  expect(wide, "lines over 120 columns").toEqual([]);
}

describe("pruneguard init", () => {
  it("in an empty package: writes the policy, its guards and test, package.json, tsconfig.json and .gitignore; check passes as is", async () => {
    const dir = emptyPackage();
    const init = await run(["init"], dir);
    expect(init.code, init.all).toBe(0);
    expect(init.stdout).toMatch(/^written policies\/org\.policy\.ts: a starting organisation policy$/m);
    expect(init.stdout).toMatch(/^written generated\/: the starting policy compiled: org\.guard\.ts, org\.ir\.json, org\.types\.ts$/m);
    expect(init.stdout).toMatch(/^written test\/org\.policy\.test\.ts: a test of the starting policy, in node:test$/m);
    expect(init.stdout).toMatch(/^added {3}package\.json: a test script, "pruneguard": \{"policies":\["policies"\],"out":"generated"\}$/m);
    expect(init.stdout).toMatch(/^written tsconfig\.json: NodeNext, strict, "types": \["node"\], no emit; it checks policies, generated,/m);
    expect(init.stdout).toMatch(/^written \.gitignore: ignores node_modules\/ and \.pruneguard-manifest\.json/m);
    // What to install, the CI steps (printed, not written), and what to run next.
    expect(init.stdout).toContain("  npm install pruneguard\n  npm install --save-dev pruneguard-cli typescript @types/node\n");
    expect(init.stdout).toContain("CI (printed, not written)");
    expect(init.stdout).toContain("npx pruneguard diff --base origin/${{ github.base_ref }} --format markdown");
    expect(init.stdout).toContain("Next: npx tsc --noEmit -p . && npx pruneguard check && npm test");
    expect(existsSync(path.join(dir, ".github"))).toBe(false);
    expectNarrow(init.stdout);

    // package.json keeps its own indentation (four spaces) and key order, with the script and field added last.
    expect(read(dir, "package.json")).toBe(
      '{\n    "name": "agents",\n    "type": "module",\n    "scripts": {\n        "test": "node --experimental-strip-types --test test/org.policy.test.ts"\n    },\n' +
        '    "pruneguard": {\n        "policies": [\n            "policies"\n        ],\n        "out": "generated"\n    }\n}\n',
    );
    expect(read(dir, "policies/org.policy.ts")).toBe(starterPolicy("org"));
    expect(read(dir, "test/org.policy.test.ts")).toBe(policyTest("org", "policies/org.policy.ts", "test/org.policy.test.ts", "node:test"));
    expect(read(dir, "tsconfig.json")).toBe(tsconfigFile(["policies", "generated", "test/org.policy.test.ts"]));
    expect(JSON.parse(read(dir, "tsconfig.json"))).toEqual({
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: true, types: ["node"], noEmit: true },
      include: ["policies", "generated", "test/org.policy.test.ts"],
    });
    expect(read(dir, ".gitignore")).toContain("\n.pruneguard-manifest.json\n");
    expect(readdirSync(path.join(dir, "generated")).sort()).toEqual(["org.guard.ts", "org.ir.json", "org.types.ts"]);

    // No compile step: the guards init wrote are what check compiles the policy to.
    const check = await run(["check"], dir);
    expect(check.code, check.all).toBe(0);
    expect(check.stdout).toContain("3 files in generated are fresh");
  });

  it("a second run writes nothing, says what it kept, and exits 0", async () => {
    const dir = emptyPackage();
    expect((await run(["init"], dir)).code).toBe(0);
    const before = snapshot(dir);
    const again = await run(["init"], dir);
    expect(again.code, again.all).toBe(0);
    expect(snapshot(dir)).toEqual(before);
    const kept = [...again.stdout.matchAll(/^kept {4}(\S+) \(exists\)/gm)].map((m) => m[1]);
    expect(kept).toEqual(["policies/org.policy.ts", "generated/", "test/org.policy.test.ts", "package.json", "tsconfig.json", ".gitignore"]);
    expect(again.stdout).not.toMatch(/^(written|added)/m);
    expect(again.stdout).toContain("Next: npx tsc --noEmit -p . && npx pruneguard check && npm test");
    expectNarrow(again.stdout);
    const json = JSON.parse((await run(["init", "--format", "json"], dir)).stdout) as { actions: Array<{ status: string }>; warnings: string[] };
    expect(json.actions.map((a) => a.status)).toEqual(["kept", "kept", "kept", "kept", "kept", "kept"]);
    expect(json.warnings).toEqual([]);
    expect(snapshot(dir)).toEqual(before);
  });

  it("does not bring back a starting policy the project renamed: no policy, guards or test, and check still passes", async () => {
    const dir = emptyPackage();
    expect((await run(["init"], dir)).code).toBe(0);
    // The team makes the policy its own: another name, in another file, its test removed, recompiled.
    renameSync(path.join(dir, "policies/org.policy.ts"), path.join(dir, "policies/acme.policy.ts"));
    writeFileSync(path.join(dir, "policies/acme.policy.ts"), read(dir, "policies/acme.policy.ts").replace('name: "org"', 'name: "acme"'));
    rmSync(path.join(dir, "test/org.policy.test.ts"));
    expect((await run(["compile"], dir)).code).toBe(0);
    expect((await run(["check"], dir)).code).toBe(0);
    const before = snapshot(dir);

    const again = await run(["init"], dir);
    expect(again.code, again.all).toBe(0);
    expect(snapshot(dir)).toEqual(before);
    expect(again.stdout).toMatch(/^skipped policies\/org\.policy\.ts: the project has policies \(policies\/acme\.policy\.ts\); the starting policy goes/m);
    expect(again.stdout).toMatch(/^skipped test\/org\.policy\.test\.ts: it tests the starting policy, which this project does not have$/m);
    expect(again.stdout).toMatch(/^kept {4}generated\/ \(exists\): pruneguard compile keeps it up to date$/m);
    expectNarrow(again.stdout);
    const check = await run(["check"], dir);
    expect(check.code, check.all).toBe(0);

    // So does a policy of the team's own under the old name, and one in a folder package.json names.
    const edited = emptyPackage('{ "name": "agents", "type": "module", "pruneguard": { "policies": ["config"], "out": "generated" } }');
    mkdirSync(path.join(edited, "config"));
    writeFileSync(path.join(edited, "config/team.policy.ts"), starterPolicy("team"));
    const r = await run(["init", "--policies", "config"], edited);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(/^skipped config\/org\.policy\.ts: the project has policies \(config\/team\.policy\.ts\)/m);
    expect(r.stdout).toMatch(/^skipped generated\/: pruneguard compile writes it$/m);
    expect(r.stdout).toContain("Next: npx pruneguard compile && npx tsc --noEmit -p . && npx pruneguard check\n");
    expect(existsSync(path.join(edited, "config/org.policy.ts"))).toBe(false);
    expect(existsSync(path.join(edited, "test"))).toBe(false);
    expect(JSON.parse(read(edited, "tsconfig.json")).include).toEqual(["config", "generated"]);
  });

  it("keeps a policy file that exists, whatever it says, and writes no test or guards for it", async () => {
    const dir = emptyPackage();
    mkdirSync(path.join(dir, "policies"));
    writeFileSync(path.join(dir, "policies/org.policy.ts"), "// ours\n");
    const r = await run(["init"], dir);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(/^kept {4}policies\/org\.policy\.ts \(exists\)$/m);
    expect(r.stdout).toMatch(/^skipped test\/org\.policy\.test\.ts: it tests the starting policy, policies\/org\.policy\.ts is not that policy any more$/m);
    expect(read(dir, "policies/org.policy.ts")).toBe("// ours\n");
    expect(existsSync(path.join(dir, "generated"))).toBe(false);
  });

  describe("package.json's type", () => {
    it("no package.json: a minimal one, a module with the test script and the field", async () => {
      const dir = folder();
      const r = await run(["init"], dir);
      expect(r.code, r.all).toBe(0);
      expect(r.stdout).toMatch(/^written package\.json: a minimal one: "type": "module", a test script and "pruneguard":/m);
      expect(JSON.parse(read(dir, "package.json"))).toEqual({
        name: path.basename(dir).toLowerCase(),
        private: true,
        type: "module",
        scripts: { test: "node --experimental-strip-types --test test/org.policy.test.ts" },
        pruneguard: { policies: ["policies"], out: "generated" },
      });
      expect((await run(["check"], dir)).code).toBe(0);
      const before = snapshot(dir);
      expect((await run(["init"], dir)).code).toBe(0);
      expect(snapshot(dir)).toEqual(before);
    });

    it("no type set: adds \"type\": \"module\" after the name, and replaces npm's placeholder test script", async () => {
      const dir = emptyPackage('{\n  "name": "agents",\n  "version": "1.0.0",\n  "main": "index.js",\n  "scripts": {\n    "test": "echo \\"Error: no test specified\\" && exit 1"\n  }\n}\n');
      const r = await run(["init"], dir);
      expect(r.code, r.all).toBe(0);
      expect(r.stdout).toMatch(/^added {3}package\.json: "type": "module", a test script \(for npm's placeholder\), "pruneguard":/m);
      const pkg = JSON.parse(read(dir, "package.json")) as Record<string, unknown>;
      expect(Object.keys(pkg)).toEqual(["name", "version", "type", "main", "scripts", "pruneguard"]);
      expect(pkg["type"]).toBe("module");
      expect(pkg["scripts"]).toEqual({ test: "node --experimental-strip-types --test test/org.policy.test.ts" });
    });

    it("\"type\": \"module\" already: kept; a test script of the package's own is kept, with a note", async () => {
      const dir = emptyPackage('{ "name": "agents", "type": "module", "scripts": { "test": "mocha" } }\n');
      const r = await run(["init"], dir);
      expect(r.code, r.all).toBe(0);
      expect(r.stdout).toMatch(/^added {3}package\.json: "pruneguard": /m);
      expect(r.stdout).toContain("note: npm test does not run test/org.policy.test.ts: package.json has a test script of its own;");
      expect(r.stdout).toContain("Next: npx tsc --noEmit -p . && npx pruneguard check && node --experimental-strip-types --test test/org.policy.test.ts");
      expect(JSON.parse(read(dir, "package.json"))).toMatchObject({ type: "module", scripts: { test: "mocha" } });
    });

    it("\"type\": \"commonjs\": left as it is, with a warning saying what to change and why, and exit 1", async () => {
      const text = '{ "name": "agents", "type": "commonjs" }\n';
      const dir = emptyPackage(text);
      const r = await run(["init"], dir);
      expect(r.code, r.all).toBe(1);
      expect(r.stdout).toContain('warning: package.json has "type": "commonjs", which init left as it is.');
      expect(r.stdout.replace(/\n +/g, " ")).toContain('node --test stops at the test\'s first import. Change it to "type": "module"');
      expectNarrow(r.stdout);
      expect(JSON.parse(read(dir, "package.json"))).toMatchObject({ type: "commonjs" });
      const json = JSON.parse((await run(["init", "--format", "json"], dir)).stdout) as { packageType: string; warnings: string[] };
      expect(json.packageType).toBe("commonjs");
      expect(json.warnings).toHaveLength(1);
    });
  });

  it("a package.json as `npm init -y` writes it: its \"commonjs\" becomes \"module\" while the project has no code; with code, it stays", async () => {
    const dir = folder();
    execFileSync("npm", ["init", "-y"], { cwd: dir, stdio: "ignore" });
    const npm = JSON.parse(read(dir, "package.json")) as Record<string, unknown>;
    const r = await run(["init"], dir);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout.replace(/\n +/g, " ")).toContain("Then commit policies/, generated/, test/, package.json, package-lock.json, tsconfig.json and .gitignore.");
    const after = JSON.parse(read(dir, "package.json")) as Record<string, unknown>;
    expect(after).toMatchObject({ type: "module", scripts: { test: "node --experimental-strip-types --test test/org.policy.test.ts" } });
    // The other members, and their order, are npm's.
    expect(Object.keys(after)).toEqual([...Object.keys(npm), "pruneguard"]);
    expect(read(dir, ".gitignore").split("\n")[0]).toBe("node_modules/");
    if (npm["type"] === "commonjs") {
      // An npm that writes "commonjs" (npm 11): with the file `main` names, the project has code, and the type stays.
      const withCode = folder();
      writeFileSync(path.join(withCode, "package.json"), JSON.stringify(npm, null, 2));
      writeFileSync(path.join(withCode, "index.js"), "module.exports = 1;\n");
      const k = await run(["init"], withCode);
      expect(k.code, k.all).toBe(1);
      expect(k.stdout).toContain('warning: package.json has "type": "commonjs", which init left as it is.');
      expect(JSON.parse(read(withCode, "package.json"))).toMatchObject({ type: "commonjs" });
    }
  });

  it("never overwrites tsconfig.json: it is kept byte for byte, and the settings it lacks are named", async () => {
    const dir = emptyPackage();
    const ours = '{\n  // ours\n  "compilerOptions": { "module": "nodenext", "moduleResolution": "NodeNext", "strict": true, "skipLibCheck": false, },\n  "include": ["src"],\n}\n';
    writeFileSync(path.join(dir, "tsconfig.json"), ours);
    const r = await run(["init"], dir);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, "tsconfig.json")).toBe(ours);
    expect(r.stdout).toMatch(/^kept {4}tsconfig\.json \(exists\): it lacks 2 of the settings init writes \(below\)$/m);
    expect(r.stdout).toContain('  "skipLibCheck": true (is false): ');
    expect(r.stdout).toContain('  "types": ["node"]: TypeScript 6 and 7 load no @types by default');
    expect(r.stdout).toContain('  and its "include" should name policies, generated, test/org.policy.test.ts');
    expectNarrow(r.stdout);
    const json = JSON.parse((await run(["init", "--format", "json"], dir)).stdout) as { actions: Array<{ file: string; status: string }>; tsconfig: Array<{ option: string; ok: boolean; has: unknown }> };
    expect(json.actions.map((a) => [a.file, a.status])).toEqual([
      ["policies/org.policy.ts", "kept"],
      ["generated/", "kept"],
      ["test/org.policy.test.ts", "kept"],
      ["package.json", "kept"],
      ["tsconfig.json", "kept"],
      [".gitignore", "kept"],
    ]);
    expect(json.tsconfig.map((t) => [t.option, t.ok, t.has])).toEqual([
      ["module", true, "nodenext"],
      ["moduleResolution", true, "NodeNext"],
      ["strict", true, true],
      ["skipLibCheck", false, false],
      ["types", false, null],
    ]);
  });

  it("writes the test for vitest when the package has it, and leaves its test script to it", async () => {
    const dir = emptyPackage('{ "name": "agents", "type": "module", "devDependencies": { "vitest": "^3" }, "scripts": { "test": "vitest run" } }\n');
    const r = await run(["init"], dir);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, "test/org.policy.test.ts")).toBe(policyTest("org", "policies/org.policy.ts", "test/org.policy.test.ts", "vitest"));
    expect(JSON.parse(read(dir, "package.json")).scripts).toEqual({ test: "vitest run" });
    expect(r.stdout).toContain("&& npx vitest run test/org.policy.test.ts\n");
  });

  it("a \"pruneguard\" field of the package's own is kept, with a warning, exit 1", async () => {
    const dir = emptyPackage('{ "name": "agents", "type": "module", "pruneguard": { "policies": ["config/policies"] } }');
    writeFileSync(path.join(dir, ".gitignore"), "node_modules");
    const r = await run(["init"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toContain('warning: package.json has a "pruneguard" field already ({"policies":["config/policies"]}), which init left as it is;');
    expect(JSON.parse(read(dir, "package.json")).pruneguard).toEqual({ policies: ["config/policies"] });
    // Guards for a field that points elsewhere would be compiled to the wrong place: compile decides.
    expect(r.stdout).toMatch(/^skipped generated\/: package\.json's "pruneguard" field differs/m);
    // An ignore file is added to, on a line of its own, never rewritten.
    expect(r.stdout).toMatch(/^added {3}\.gitignore: a rule for \.pruneguard-manifest\.json/m);
    expect(read(dir, ".gitignore")).toBe("node_modules\n# pruneguard compile's incremental cache (local to this machine)\n.pruneguard-manifest.json\n");
  });

  it("writes the documented policy, test and tsconfig: the ones docs/adopting.md shows", () => {
    const text = starterPolicy("org");
    expect(text).toMatch(/^\/\*\*\n \* The organisation's pruning policy/);
    const r = compilePolicies({ files: { "org.policy.ts": text } });
    expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([]);
    expect(r.policies[0]?.kinds.map((k) => k.name)).toEqual(["toolResult", "toolCall", "userTurn", "scratch"]);
    const doc = readFileSync("docs/adopting.md", "utf8");
    const blocks = (lang: string) => [...doc.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1]!);
    expect(blocks("ts")).toContain(text);
    // The test as init writes it for vitest; for node:test only the runner's import differs.
    const vitest = policyTest("org", "policies/org.policy.ts", "test/org.policy.test.ts", "vitest");
    expect(blocks("ts")).toContain(vitest);
    expect(policyTest("org", "policies/org.policy.ts", "test/org.policy.test.ts", "node:test")).toBe(vitest.replace('from "vitest"', 'from "node:test"'));
    expect(blocks("json")).toContain(tsconfigFile(["policies", "generated", "test/org.policy.test.ts"]));
  });

  it("names the policy and its folders as asked; usage and I/O errors exit 2", async () => {
    const dir = emptyPackage();
    const r = await run(["init", "--name", "acme-agents", "--policies", "config/policies", "--out", "src/generated"], dir);
    expect(r.code, r.all).toBe(0);
    expect(read(dir, "config/policies/acme-agents.policy.ts")).toContain('name: "acme-agents"');
    expect(read(dir, "test/acme-agents.policy.test.ts")).toContain('const acmeAgents = compilePolicy("config/policies/acme-agents.policy.ts");');
    expect(JSON.parse(read(dir, "package.json")).pruneguard).toEqual({ policies: ["config/policies"], out: "src/generated" });
    expect(existsSync(path.join(dir, "src/generated/acme-agents.guard.ts"))).toBe(true);
    expect((await run(["check"], dir)).code).toBe(0);

    expect((await run(["init", "--name", "Acme"], emptyPackage())).code).toBe(2);
    const broken = emptyPackage("{ not json");
    const bad = await run(["init", "--format", "json"], broken);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toEqual({ error: { message: "package.json is not valid JSON; init left it alone", exitCode: 2 } });
    expect(readdirSync(broken)).toEqual(["package.json"]);
  });
});

describe("package.json values init would change by writing the file back", () => {
  it("leaves a file with a number a double does not hold, or a key given twice, byte for byte, and says what to add", async () => {
    for (const [text, why] of [
      ['{\n  "name": "agents",\n  "build": 12345678901234567890\n}\n', /has the number "12345678901234567890"/],
      ['{\n  "name": "agents",\n  "limit": 1e400\n}\n', /has the number "1e400"/],
      ['{\n  "name": "agents",\n  "ratio": 0.1000000000000000000001\n}\n', /has the number/],
      ['{\n  "name": "agents",\n  "name": "other"\n}\n', /names a key twice/],
    ] as const) {
      const dir = emptyPackage(text);
      const r = await run(["init"], dir);
      expect(r.code).toBe(1);
      expect(read(dir, "package.json")).toBe(text);
      expect(r.stdout.replace(/\s+/g, " ")).toMatch(why);
      expect(r.stdout.replace(/\s+/g, " ")).toContain('Add by hand: "type": "module"');
    }
  });

  it("writes one whose numbers only change spelling (1.0, 1E3, -0)", async () => {
    const dir = emptyPackage('{\n  "name": "agents",\n  "a": 1.0,\n  "b": 1E3,\n  "c": -0,\n  "d": "x\\"y:"\n}\n');
    const r = await run(["init"], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(read(dir, "package.json"))).toMatchObject({ a: 1, b: 1000, c: 0, d: 'x"y:', type: "module" });
  });

  it("rewriteLoses: exact decimals, keys counted outside strings", () => {
    expect(rewriteLoses('{"a":[1,2.50,3e2],"b":{"c":"d:e"}}', JSON.parse('{"a":[1,2.50,3e2],"b":{"c":"d:e"}}'))).toBeNull();
    expect(rewriteLoses('{"a":{"x":1},"b":{"x":2,"x":3}}', JSON.parse('{"a":{"x":1},"b":{"x":2,"x":3}}'))).toMatch(/twice/);
    expect(rewriteLoses('{"a":9007199254740993}', JSON.parse('{"a":9007199254740993}'))).toMatch(/9007199254740993/);
  });
});
