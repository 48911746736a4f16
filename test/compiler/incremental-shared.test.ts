// Issue 28: the stale entries of one build share their work — a base its overlays extend is validated and
// emitted once, not once per overlay — while each entry's manifest unit stays what a compile of that entry
// alone records; and an output the build read to find its entry stale is not read again to be written.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../compiler/cli/main.js";
import * as guard from "../../compiler/emit/guard.js";
import { compilePolicies, emitAll } from "../../compiler/index.js";
import { buildPolicies } from "../../compiler/incremental/build.js";
import * as validate from "../../compiler/ir/validate.js";
import { contentHash } from "../../src/hash.js";

vi.mock("../../compiler/emit/guard.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../compiler/emit/guard.js")>();
  return { ...actual, emitGuard: vi.fn(actual.emitGuard) };
});
vi.mock("../../compiler/ir/validate.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../compiler/ir/validate.js")>();
  return { ...actual, validatePolicy: vi.fn(actual.validatePolicy) };
});
// The build reads files with `readBoundedSync` (compiler/emit/files.ts): one `openSync` per read, on the
// module `process.getBuiltinModule("node:fs")` returns (files.ts takes it so, not by an import).
const emitGuard = vi.mocked(guard.emitGuard);
const validatePolicy = vi.mocked(validate.validatePolicy);
const opened = vi.spyOn(process.getBuiltinModule("node:fs"), "openSync");
beforeEach(() => vi.clearAllMocks());

const NAMES = ["org", "team-payments", "team-search"];
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function project(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-shared-"));
  dirs.push(dir);
  mkdirSync(path.join(dir, "policies"));
  for (const n of NAMES) writeFileSync(path.join(dir, `policies/${n}.policy.ts`), readFileSync(`examples/policies/${n}.policy.ts`, "utf8"));
  return dir;
}
const entries = (dir: string) => NAMES.map((n) => path.join(dir, `policies/${n}.policy.ts`));
const build = (dir: string, force = false) =>
  buildPolicies(entries(dir), { cwd: dir, outDir: path.join(dir, "generated"), emit: { runtimeImport: "pruneguard" }, force });

describe("stale entries share their work", () => {
  it("with no manifest, the base two overlays extend is validated and emitted once; each unit is its entry's own compile", async () => {
    const dir = project();
    const r = await build(dir);
    expect(r.reused).toBe(0);
    // Three policies (org, and the two overlays that extend it): one validation and one guard each.
    expect(validatePolicy).toHaveBeenCalledTimes(3);
    expect(emitGuard).toHaveBeenCalledTimes(3);
    const full = compilePolicies(entries(dir), { cwd: dir });
    expect(r.diagnostics).toEqual(full.diagnostics);
    expect(r.emitted).toEqual(emitAll(full.policies));
    // Each entry's unit records what a compile of that entry alone reads, emits and reports.
    for (const entry of entries(dir)) {
      const alone = compilePolicies([entry], { cwd: dir });
      const unit = r.manifest!.units[path.relative(dir, entry)]!;
      expect(unit.inputs).toEqual(Object.fromEntries([...alone.sources].map(([p, text]) => [p, contentHash(text)])));
      expect(unit.outputs).toEqual(Object.fromEntries(emitAll(alone.policies).map((f) => [f.path, contentHash(f.contents)])));
      expect(unit.policies).toEqual(alone.policies.map((p) => ({ name: p.name, file: p.file })));
      expect(unit.diagnostics).toEqual(alone.diagnostics);
    }
    // Forced, the same.
    vi.clearAllMocks();
    const forced = await build(dir, true);
    expect(emitGuard).toHaveBeenCalledTimes(3);
    expect(forced.diagnostics).toEqual(full.diagnostics);
  });

  it("a changed base: its overlays are rebuilt with it, sharing it; then the outputs are written without reading them again", async () => {
    const dir = project();
    const cli = (...args: string[]) => main(args, { cwd: dir, color: false, stdout: () => undefined, stderr: () => undefined });
    expect(await cli("compile", "policies")).toBe(0);
    const org = path.join(dir, "policies/org.policy.ts");
    writeFileSync(org, readFileSync(org, "utf8").replace("hours(8)", "hours(9)"));
    vi.clearAllMocks();
    expect(await cli("compile", "policies")).toBe(0);
    expect(emitGuard).toHaveBeenCalledTimes(3);
    // Each output is opened once: to hash it against the manifest. Writing it reads nothing.
    const outputs = emitAll(compilePolicies(entries(dir), { cwd: dir }).policies).map((f) => path.join(dir, "generated", f.path));
    for (const file of outputs) {
      expect(opened.mock.calls.filter(([p]) => p === file), file).toHaveLength(1);
    }
    // And what was written is what a full compile makes; check agrees.
    expect(await cli("check", "policies")).toBe(0);
  });
});
