// The front end reads only inside the project root: a policy file or import outside it, or a symbolic link
// leaving it, is a diagnostic, and nothing of a file that is not a policy is ever echoed.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compilePolicies, formatDiagnostics } from "../../compiler/index.js";

const GOOD = `import { definePolicy } from "pruneguard/dsl";
export default definePolicy({ name: "org", stores: {}, kinds: { a: { store: null, modes: ["drop"], lossy: "with-flag" } } });
`;
const SECRET = "root:x:0:0:SECRET-FIRST-LINE:/root:/bin/bash\nsecond line\n";

const outside = mkdtempSync(path.join(tmpdir(), "pruneguard-outside-"));
const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-root-"));
afterAll(() => {
  rmSync(outside, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});
writeFileSync(path.join(outside, "passwd"), SECRET);
writeFileSync(path.join(outside, "org.policy.ts"), GOOD);
mkdirSync(path.join(dir, "policies"));
writeFileSync(path.join(dir, "policies/org.policy.ts"), GOOD);
writeFileSync(path.join(dir, "notes.txt"), SECRET);
symlinkSync(path.join(outside, "passwd"), path.join(dir, "policies/passwd.policy.ts"));
symlinkSync(path.join(dir, "notes.txt"), path.join(dir, "policies/notes.policy.ts"));
symlinkSync(path.join(outside, "org.policy.ts"), path.join(dir, "policies/linked.policy.ts"));
writeFileSync(path.join(dir, "policies/escape.policy.ts"), `import { extendPolicy } from "pruneguard/dsl";\nimport org from "../../${path.basename(outside)}/org.policy.js";\nexport default extendPolicy(org, { name: "team" });\n`);

const compile = (file: string, root?: string) => compilePolicies([file], { cwd: dir, ...(root === undefined ? {} : { root }) });
const printed = (r: ReturnType<typeof compile>) => formatDiagnostics(r.diagnostics, { sources: r.sources });

describe("reads confined to the project root", () => {
  it("a *.policy.ts symlink to a file outside the root is a diagnostic, and the file is never read", () => {
    const r = compile("policies/passwd.policy.ts");
    const d = r.diagnostics.find((x) => x.code === "PG1018");
    expect(d?.location).toMatchObject({ file: "policies/passwd.policy.ts", line: 1, column: 1 });
    expect(d?.message).toContain("outside the project root");
    expect(printed(r)).not.toContain("SECRET");
    expect(printed(r)).not.toContain("passwd\n");
    expect([...r.sources.values()].join("")).not.toContain("SECRET");
  });
  it("a symlink inside the root to a file that is not a policy is not read either", () => {
    const r = compile("policies/notes.policy.ts");
    expect(r.diagnostics.map((d) => d.code)).toEqual(["PG1019"]);
    expect(printed(r)).not.toContain("SECRET");
  });
  it("a relative import that climbs out of the root is a diagnostic at the import", () => {
    const r = compile("policies/escape.policy.ts");
    const d = r.diagnostics.find((x) => x.code === "PG1018");
    expect(d?.location).toMatchObject({ file: "policies/escape.policy.ts", line: 2, column: 17 });
  });
  it("a symlinked policy inside a wider root is read; the root is configurable", () => {
    expect(compile("policies/linked.policy.ts").diagnostics.map((d) => d.code)).toEqual(["PG1018"]);
    const wide = compile("policies/linked.policy.ts", path.dirname(outside));
    expect(wide.hasErrors).toBe(false);
    expect(wide.policies.map((p) => p.name)).toEqual(["org"]);
  });
  it("a file that is not named *.policy.ts is not read, even when asked for by name", () => {
    const r = compile("notes.txt");
    expect(r.diagnostics.map((d) => [d.code, d.location?.file, d.location?.line])).toEqual([["PG1020", "notes.txt", 1]]);
    expect(printed(r)).not.toContain("SECRET");
    expect(r.sources.size).toBe(0);
  });
  it("a plain policy inside the root compiles", () => {
    expect(compile("policies/org.policy.ts").diagnostics).toEqual([]);
  });
});
