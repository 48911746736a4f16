// Incremental builds: an entry is reused only when its inputs (its file and every base, by content), the
// compiler, the options and its outputs on disk are what the manifest recorded; whatever is reused or
// rebuilt, the diagnostics and the output bytes are those of a full compile.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../compiler/cli/main.js";
import { compilePolicies, emitAll } from "../../compiler/index.js";
import { buildPolicies } from "../../compiler/incremental/build.js";
import { MANIFEST_FILE, writeManifest, type Manifest } from "../../compiler/incremental/manifest.js";
import { manifestKey } from "../../compiler/incremental/seal.js";
import { contentHash } from "../../src/hash.js";

const ORG = readFileSync("examples/policies/org.policy.ts", "utf8");
const PAYMENTS = readFileSync("examples/policies/team-payments.policy.ts", "utf8");
const SEARCH = readFileSync("examples/policies/team-search.policy.ts", "utf8");

function project(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-incremental-"));
  mkdirSync(path.join(dir, "policies"));
  writeFileSync(path.join(dir, "policies/org.policy.ts"), ORG);
  writeFileSync(path.join(dir, "policies/team-payments.policy.ts"), PAYMENTS);
  writeFileSync(path.join(dir, "policies/team-search.policy.ts"), SEARCH);
  return dir;
}

const entries = (dir: string) => ["org", "team-payments", "team-search"].map((n) => `${dir}/policies/${n}.policy.ts`);

/** Runs the CLI in-process in `dir`; returns exit code and output. */
async function cli(dir: string, ...args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { cwd: dir, color: false, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

const build = (dir: string, force = false) =>
  buildPolicies(entries(dir), { cwd: dir, outDir: path.join(dir, "generated"), emit: { runtimeImport: "pruneguard" }, force });

describe("incremental compile", () => {
  it("reuses every unchanged entry, with the diagnostics and output bytes of a full compile", async () => {
    const dir = project();
    expect((await cli(dir, "compile")).code).toBe(0);
    const again = await build(dir);
    expect({ reused: again.reused, emitted: again.emitted.length }).toEqual({ reused: 3, emitted: 0 });
    const full = compilePolicies(entries(dir), { cwd: dir });
    expect(again.diagnostics).toEqual(full.diagnostics);
    // The example policies' warnings, replayed from the manifest.
    expect(new Set(again.diagnostics.map((d) => d.code))).toEqual(new Set(["PG3005", "PG3001", "PG3007"]));
    expect(again.outputs).toEqual(emitAll(full.policies).map((f) => f.path));
    for (const f of emitAll(full.policies)) expect(readFileSync(path.join(dir, "generated", f.path), "utf8")).toBe(f.contents);
    // The pretty output of an incremental check is that of a forced one, code frames included.
    const [incremental, forced] = [await cli(dir, "check"), await cli(dir, "check", "--force")];
    expect(incremental).toEqual(forced);
    expect(incremental.code).toBe(0);
    expect(incremental.stderr).toContain("PG3001");
  });

  it("a changed base invalidates every overlay that extends it; a changed overlay leaves its base alone", async () => {
    const dir = project();
    await cli(dir, "compile");
    writeFileSync(path.join(dir, "policies/team-search.policy.ts"), `${SEARCH}\n// edited\n`);
    const overlay = await build(dir);
    expect(overlay.reused).toBe(2);
    writeFileSync(path.join(dir, "policies/org.policy.ts"), ORG.replace("hours(8)", "hours(9)"));
    const base = await build(dir);
    expect(base.reused).toBe(0);
    // The base's new session length reaches the overlays' outputs, and the build reports what a full one does.
    const full = compilePolicies(entries(dir), { cwd: dir });
    expect(base.diagnostics).toEqual(full.diagnostics);
    expect(base.emitted.map(({ path, contents }) => ({ path, contents }))).toEqual(emitAll(full.policies));
    // Every output was read once to find the entries stale; the build says what it found, so it is not read again.
    for (const f of base.emitted) expect(f.disk, f.path).toBe(readFileSync(path.join(dir, "generated", f.path), "utf8") === f.contents ? "same" : "differs");
    expect((await cli(dir, "check")).code).toBe(1);
    expect((await cli(dir, "compile")).code).toBe(0);
    expect((await cli(dir, "check")).code).toBe(0);
  });

  it("a hand-edited or deleted output makes its entry stale: check reports it, compile restores it", async () => {
    const dir = project();
    await cli(dir, "compile");
    const file = path.join(dir, "generated/team-search.types.ts");
    const good = readFileSync(file, "utf8");
    writeFileSync(file, good.replace("export type", "export  type"));
    const r = await cli(dir, "check");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("generated/team-search.types.ts differs from what the policies compile to");
    expect((await cli(dir, "compile")).code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(good);
  });

  it("another runtime import, --force, or a manifest from another compiler reuse nothing", async () => {
    const dir = project();
    await cli(dir, "compile");
    expect((await build(dir)).reused).toBe(3);
    expect((await build(dir, true)).reused).toBe(0);
    const other = await buildPolicies(entries(dir), { cwd: dir, outDir: path.join(dir, "generated"), emit: { runtimeImport: "../src/index.js" } });
    expect(other.reused).toBe(0);
    const manifestFile = path.join(dir, "generated", MANIFEST_FILE);
    const text = readFileSync(manifestFile, "utf8");
    const manifest = JSON.parse(text.slice(text.indexOf("\n") + 1)) as Manifest;
    await writeManifest(path.join(dir, "generated"), { ...manifest, compiler: "0".repeat(64) }, manifestKey(dir)!);
    expect((await build(dir)).reused).toBe(0);
    writeFileSync(manifestFile, "{ not json");
    expect((await build(dir)).reused).toBe(0);
  });

  it("an error anywhere falls back to one full compile: a name two entries share is reported as without a manifest", async () => {
    const dir = project();
    await cli(dir, "compile");
    writeFileSync(path.join(dir, "policies/copy.policy.ts"), ORG);
    const all = [...entries(dir), `${dir}/policies/copy.policy.ts`].sort();
    const r = await buildPolicies(all, { cwd: dir, outDir: path.join(dir, "generated"), emit: { runtimeImport: "pruneguard" } });
    const full = compilePolicies(all, { cwd: dir });
    expect(r.hasErrors).toBe(true);
    expect(r.diagnostics).toEqual(full.diagnostics);
    expect(r.diagnostics.map((d) => d.code)).toContain("PG2005");
    expect(r.manifest).toBeUndefined();
  });
});

// Finding 25.1: the manifest sits where a pull request can plant one, so it is untrusted input.
describe("a planted manifest", () => {
  const SECRET = "PRUNEGUARD_TEST_SECRET=hunter2";

  /** A project with a secret beside it, outside the root, and a compiled, incremental state. */
  async function planted() {
    const outer = mkdtempSync(path.join(tmpdir(), "pruneguard-planted-"));
    writeFileSync(path.join(outer, "secret.txt"), `${SECRET}\n`);
    const dir = path.join(outer, "repo");
    mkdirSync(path.join(dir, "policies"), { recursive: true });
    writeFileSync(path.join(dir, "policies/org.policy.ts"), ORG);
    writeFileSync(path.join(dir, "policies/team-search.policy.ts"), SEARCH);
    expect((await cli(dir, "compile", "policies")).code).toBe(0);
    return { outer, dir, manifestFile: path.join(dir, "generated", MANIFEST_FILE) };
  }

  /** The unit the real compile recorded, as the manifest's JSON. */
  function recorded(manifestFile: string) {
    const text = readFileSync(manifestFile, "utf8");
    return JSON.parse(text.slice(text.indexOf("\n") + 1)) as Manifest;
  }

  /**
   * The attack as found: the org entry, still fresh, replays a warning located in `file`, and the overlay's
   * entry lists `file` as an input, so that an unguarded build reads it for code frames.
   */
  function leaking(m: Manifest, file: string): Manifest {
    const units = { ...m.units };
    const location = { file, line: 1, column: 1, endLine: 1, endColumn: 10 };
    const warning = { code: "PG3001", category: "warning" as const, message: "planted", location, related: [] };
    const org = units["policies/org.policy.ts"]!;
    const search = units["policies/team-search.policy.ts"]!;
    units["policies/org.policy.ts"] = { ...org, diagnostics: [warning] };
    units["policies/team-search.policy.ts"] = { ...search, inputs: { ...search.inputs, [file]: "0".repeat(64) } };
    return { ...m, units };
  }

  it("an unsealed manifest is not read: check never prints a file outside the root, and compiles in full", async () => {
    const { dir, manifestFile } = await planted();
    const m = recorded(manifestFile);
    // Planted as the JSON alone, and with a seal made with another key.
    for (const text of [JSON.stringify(leaking(m, "../secret.txt")), `${"a".repeat(64)}\n${JSON.stringify(leaking(m, "../secret.txt"))}\n`]) {
      writeFileSync(manifestFile, text);
      const r = await cli(dir, "check", "policies");
      expect(r.stdout + r.stderr).not.toContain("hunter2");
      expect(r.stderr).not.toContain("planted");
      expect(r).toEqual(await cli(dir, "check", "policies", "--force"));
    }
  });

  it("an unsealed manifest cannot describe a policy with errors as clean", async () => {
    const { dir, manifestFile } = await planted();
    const m = recorded(manifestFile);
    const broken = ORG.replace('lossy: "with-flag"', 'lossy: "sometimes"');
    expect(broken).not.toBe(ORG);
    writeFileSync(path.join(dir, "policies/org.policy.ts"), broken);
    const entry = "policies/org.policy.ts";
    const claim = { ...m, units: { ...m.units, [entry]: { ...m.units[entry]!, inputs: { [entry]: contentHash(broken) } } } };
    writeFileSync(manifestFile, `${"b".repeat(64)}\n${JSON.stringify(claim)}\n`);
    expect((await cli(dir, "check", "policies")).code).toBe(1);
  });

  it("even sealed, a unit is reused only when its claims are the compiler's own: inputs in the root, diagnostics in its inputs", async () => {
    const { outer, dir, manifestFile } = await planted();
    const m = recorded(manifestFile);
    const key = manifestKey(dir)!;
    expect(key).toBeDefined();
    const entriesOf = ["org", "team-search"].map((n) => path.join(dir, `policies/${n}.policy.ts`));
    const options = { cwd: dir, outDir: path.join(dir, "generated"), emit: { runtimeImport: "pruneguard" } };
    for (const file of ["../secret.txt", path.join(outer, "secret.txt"), "/proc/self/environ", "policies/../../secret.txt"]) {
      await writeManifest(path.join(dir, "generated"), leaking(m, file), key);
      const r = await buildPolicies(entriesOf, options);
      expect(r.reused).toBe(0);
      expect([...r.sources.keys()].sort()).toEqual(["policies/org.policy.ts", "policies/team-search.policy.ts"]);
      expect([...r.sources.values()].join("\n")).not.toContain("hunter2");
      expect(r.diagnostics.map((d) => d.message)).not.toContain("planted");
    }
    // Outputs outside the output folder are refused the same way.
    const entry = "policies/org.policy.ts";
    const unit = m.units[entry]!;
    await writeManifest(path.join(dir, "generated"), { ...m, units: { ...m.units, [entry]: { ...unit, outputs: { ...unit.outputs, "../../secret.txt": "0".repeat(64) } } } }, key);
    expect((await buildPolicies(entriesOf, options)).reused).toBe(1);
    // The real one is still reused.
    await writeManifest(path.join(dir, "generated"), m, key);
    expect((await buildPolicies(entriesOf, options)).reused).toBe(2);
  });

  it("links planted in the output folder are never followed: not read, not written through", async () => {
    const { outer, dir, manifestFile } = await planted();
    const guard = path.join(dir, "generated/org.guard.ts");
    rmSync(guard);
    symlinkSync(path.join(outer, "secret.txt"), guard);
    rmSync(manifestFile);
    symlinkSync("/dev/zero", manifestFile);
    const r = await cli(dir, "check", "policies");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("generated/org.guard.ts differs");
    expect(r.stdout + r.stderr).not.toContain("hunter2");
    expect((await cli(dir, "compile", "policies")).code).toBe(0);
    expect(readFileSync(path.join(outer, "secret.txt"), "utf8")).toBe(`${SECRET}\n`);
    expect(lstatSync(guard).isSymbolicLink()).toBe(false);
    expect(lstatSync(manifestFile).isSymbolicLink()).toBe(false);
    expect((await cli(dir, "check", "policies")).code).toBe(0);
  });

  it("a key inside the project root is never used: nothing is read from or written to a manifest", async () => {
    const { dir, manifestFile } = await planted();
    rmSync(manifestFile);
    const before = process.env.PRUNEGUARD_CACHE_DIR;
    process.env.PRUNEGUARD_CACHE_DIR = path.join(dir, ".cache");
    try {
      expect(manifestKey(dir)).toBeUndefined();
      expect((await cli(dir, "compile", "policies")).code).toBe(0);
      expect(existsSync(manifestFile)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.PRUNEGUARD_CACHE_DIR;
      else process.env.PRUNEGUARD_CACHE_DIR = before;
    }
  });
});

// The tsconfig that let an extensionless import resolve decides the verdict as much as the policy's bytes:
// under NodeNext the same import is PG1021. It is an input of the entries that depended on it, and only of them.
describe("the module resolution an extensionless import depended on", () => {
  const ESM = JSON.stringify({ name: "policies", type: "module" });
  const BUNDLER = JSON.stringify({ compilerOptions: { module: "esnext", moduleResolution: "bundler" } });
  const NODENEXT = JSON.stringify({ compilerOptions: { module: "NodeNext" } });
  const EXTENSIONLESS = SEARCH.replace('from "./org.policy.js"', 'from "./org.policy"');

  /** The example project in `<outer>/repo`, with a bundler tsconfig and the overlay importing `./org.policy`. */
  function bundlerProject() {
    expect(EXTENSIONLESS).not.toBe(SEARCH);
    const outer = mkdtempSync(path.join(tmpdir(), "pruneguard-resolution-"));
    const dir = path.join(outer, "repo");
    mkdirSync(path.join(dir, "policies"), { recursive: true });
    writeFileSync(path.join(dir, "package.json"), ESM);
    writeFileSync(path.join(dir, "tsconfig.json"), BUNDLER);
    writeFileSync(path.join(dir, "policies/org.policy.ts"), ORG);
    writeFileSync(path.join(dir, "policies/team-payments.policy.ts"), PAYMENTS);
    writeFileSync(path.join(dir, "policies/team-search.policy.ts"), EXTENSIONLESS);
    return { outer, dir };
  }

  const recorded = (dir: string) => {
    const text = readFileSync(path.join(dir, "generated", MANIFEST_FILE), "utf8");
    return JSON.parse(text.slice(text.indexOf("\n") + 1)) as Manifest;
  };

  it("a tsconfig switched from bundler to NodeNext: the entry is compiled again and reports PG1021", async () => {
    const { dir } = bundlerProject();
    expect((await cli(dir, "compile")).code).toBe(0);
    // Only the entry whose import depended on it records the tsconfig (bundler reads no package.json).
    const inputs = Object.fromEntries(Object.entries(recorded(dir).units).map(([entry, u]) => [entry, Object.keys(u.inputs).sort()]));
    expect(inputs).toEqual({
      "policies/org.policy.ts": ["policies/org.policy.ts"],
      "policies/team-payments.policy.ts": ["policies/org.policy.ts", "policies/team-payments.policy.ts"],
      "policies/team-search.policy.ts": ["policies/org.policy.ts", "policies/team-search.policy.ts", "tsconfig.json"],
    });
    const again = await build(dir);
    expect({ reused: again.reused, configs: again.configs }).toEqual({ reused: 3, configs: ["tsconfig.json"] });
    // Code frames never show a configuration file.
    expect([...again.sources.keys()].sort()).toEqual(["policies/org.policy.ts", "policies/team-payments.policy.ts", "policies/team-search.policy.ts"]);

    writeFileSync(path.join(dir, "tsconfig.json"), NODENEXT);
    const switched = await build(dir);
    const full = compilePolicies(entries(dir), { cwd: dir });
    expect(switched.diagnostics).toEqual(full.diagnostics);
    expect(switched.diagnostics.filter((d) => d.category === "error").map((d) => `${d.location?.file}:${d.location?.line}:${d.location?.column} ${d.code}`)).toEqual([
      "policies/team-search.policy.ts:6:35 PG1021",
    ]);
    // What `--watch` watches: the tsconfig and, under NodeNext, the package.json that made the file an ES module.
    expect(switched.configs).toEqual(["package.json", "tsconfig.json"]);
    const check = await cli(dir, "check");
    expect(check.code).toBe(1);
    expect(check.stderr).toContain("PG1021");
    expect(check).toEqual(await cli(dir, "check", "--force"));
    expect((await cli(dir, "compile")).code).toBe(1);

    // Back to bundler, the outputs on disk (which the failed compile left alone) are reused again.
    writeFileSync(path.join(dir, "tsconfig.json"), BUNDLER);
    expect((await build(dir)).reused).toBe(3);
  });

  it("no extensionless import: no tsconfig is an input, and a changed one leaves every entry reused", async () => {
    const { dir } = bundlerProject();
    writeFileSync(path.join(dir, "policies/team-search.policy.ts"), SEARCH);
    expect((await cli(dir, "compile")).code).toBe(0);
    for (const u of Object.values(recorded(dir).units)) expect(Object.keys(u.inputs).every((p) => p.endsWith(".policy.ts"))).toBe(true);
    writeFileSync(path.join(dir, "tsconfig.json"), NODENEXT);
    const r = await build(dir);
    expect({ reused: r.reused, configs: r.configs, codes: r.diagnostics.map((d) => d.code).filter((c) => c === "PG1021") }).toEqual({ reused: 3, configs: [], codes: [] });
  });

  it("even sealed, a recorded configuration file is reused only when it is a tsconfig or package.json inside the root", async () => {
    const { outer, dir } = bundlerProject();
    expect((await cli(dir, "compile")).code).toBe(0);
    const m = recorded(dir);
    const key = manifestKey(dir)!;
    const entry = "policies/team-search.policy.ts";
    const unit = m.units[entry]!;
    const plant = (inputs: Record<string, string>, diagnostics = unit.diagnostics) =>
      writeManifest(path.join(dir, "generated"), { ...m, units: { ...m.units, [entry]: { ...unit, inputs: { ...unit.inputs, ...inputs }, diagnostics } } }, key);
    // Each file is there with the recorded hash, so only the claim itself can make the unit stale.
    writeFileSync(path.join(outer, "tsconfig.json"), BUNDLER);
    writeFileSync(path.join(dir, "notes.json"), BUNDLER);
    const hash = contentHash(BUNDLER);
    expect(unit.inputs["tsconfig.json"]).toBe(hash);
    for (const file of ["../tsconfig.json", path.join(outer, "tsconfig.json"), "policies/../../tsconfig.json", "notes.json"]) {
      await plant({ [file]: hash });
      const r = await build(dir);
      expect({ file, reused: r.reused }).toEqual({ file, reused: 2 });
    }
    // A diagnostic located in a configuration file would show it in a code frame.
    const location = { file: "tsconfig.json", line: 1, column: 1, endLine: 1, endColumn: 10 };
    await plant({}, [{ code: "PG3001", category: "warning", message: "planted", location, related: [] }]);
    expect((await build(dir)).reused).toBe(2);
    // The real one is still reused.
    await writeManifest(path.join(dir, "generated"), m, key);
    expect((await build(dir)).reused).toBe(3);
  });

  it("a tsconfig.json that is a link is followed by the front end within the root, never by the reuse check", async () => {
    const { dir } = bundlerProject();
    writeFileSync(path.join(dir, "tsconfig.shared.json"), BUNDLER);
    rmSync(path.join(dir, "tsconfig.json"));
    symlinkSync("tsconfig.shared.json", path.join(dir, "tsconfig.json"));
    expect((await cli(dir, "compile")).code).toBe(0);
    const r = await build(dir);
    expect(r.reused).toBe(2);
    expect(r.emitted.every((f) => f.disk === "same")).toBe(true);
    expect(r.diagnostics).toEqual(compilePolicies(entries(dir), { cwd: dir }).diagnostics);
    writeFileSync(path.join(dir, "tsconfig.shared.json"), NODENEXT);
    expect((await build(dir)).diagnostics.map((d) => d.code)).toContain("PG1021");
  });
});
