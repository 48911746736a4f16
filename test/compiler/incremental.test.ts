// Incremental builds: an entry is reused only when its inputs (its file and every base, by content), the
// compiler, the options and its outputs on disk are what the manifest recorded; whatever is reused or
// rebuilt, the diagnostics and the output bytes are those of a full compile.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../compiler/cli/main.js";
import { compilePolicies, emitAll } from "../../compiler/index.js";
import { buildPolicies } from "../../compiler/incremental/build.js";
import { MANIFEST_FILE } from "../../compiler/incremental/manifest.js";

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
    expect(new Set(again.diagnostics.map((d) => d.code))).toEqual(new Set(["PG3005", "PG3001"]));
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
    expect(base.emitted).toEqual(emitAll(full.policies));
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
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { compiler: string };
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, compiler: "0".repeat(64) }));
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
