// The compiler's fingerprint (issue 28): a build-time constant, trusted only while the code it hashed is
// untouched, so an edited emitter still invalidates every cached policy.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUILT_FINGERPRINT, builtFingerprint, computeFingerprint, writeBuiltFingerprint } from "../../compiler/incremental/fingerprint.js";

const compute = (root: string) => computeFingerprint(root).fingerprint;

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** A built tree in miniature: the three code folders, an emitter among them. */
function tree(): string {
  const root = mkdtempSync(path.join(tmpdir(), "pruneguard-fingerprint-"));
  roots.push(root);
  for (const [file, text] of Object.entries({
    "compiler/emit/guard.js": "export const emitGuard = () => 'v1';\n",
    "compiler/index.js": "export {};\n",
    "compiler/incremental/fingerprint.js": "export {};\n",
    "compiler/index.d.ts": "export {};\n",
    "dsl/index.js": "export const dsl = 1;\n",
    "src/hash.js": "export const h = 1;\n",
  })) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

/** Replaces the recorded fingerprint, so a test can tell the record was used (nothing was hashed). */
function plant(root: string, fingerprint: string): void {
  const file = path.join(root, BUILT_FINGERPRINT);
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), fingerprint }));
}

describe("compiler fingerprint", () => {
  it("the build records the fingerprint a compile would compute, and a compile uses the record without computing it", () => {
    const root = tree();
    expect(builtFingerprint(root)).toBeUndefined();
    const code = writeBuiltFingerprint(root);
    expect(code).toBe(compute(root));
    expect(builtFingerprint(root)).toBe(code);
    // The packages whose output reaches generated files are among what it guards.
    const recorded = JSON.parse(readFileSync(path.join(root, BUILT_FINGERPRINT), "utf8")) as { files: Array<[string, number, number]> };
    expect(recorded.files.map(([f]) => f).filter((f) => f.endsWith("package.json")).map((f) => path.basename(path.dirname(f))).sort()).toEqual(["gpt-tokenizer", "re2js", "ts-morph", "zod"]);
    plant(root, "recorded");
    expect(builtFingerprint(root)).toBe("recorded");
  });

  it("an edited emitter is hashed again, even with the same size and an emit that skipped the build step", () => {
    const root = tree();
    const before = writeBuiltFingerprint(root);
    plant(root, "recorded");
    const guard = path.join(root, "compiler/emit/guard.js");
    writeFileSync(guard, "export const emitGuard = () => 'v2';\n");
    expect(builtFingerprint(root)).toBeUndefined();
    expect(compute(root)).not.toBe(before);
    // Only the time moved (a rebuild writing the same bytes): still not trusted.
    const again = writeBuiltFingerprint(root);
    plant(root, "recorded");
    utimesSync(guard, new Date(), new Date(Date.now() + 5_000));
    expect(builtFingerprint(root)).toBeUndefined();
    expect(compute(root)).toBe(again);
  });

  it("a removed module, or a record that cannot be read, means hashing", () => {
    const root = tree();
    writeBuiltFingerprint(root);
    rmSync(path.join(root, "dsl/index.js"));
    expect(builtFingerprint(root)).toBeUndefined();
    for (const text of ["", "{", "null", '{"fingerprint":"x","files":[]}', '{"fingerprint":"x","files":[[1,2,3]]}']) {
      writeFileSync(path.join(root, BUILT_FINGERPRINT), text);
      expect(builtFingerprint(root), text).toBeUndefined();
    }
  });

  it("declarations and the record itself are not code", () => {
    const root = tree();
    const code = writeBuiltFingerprint(root);
    writeFileSync(path.join(root, "compiler/index.d.ts"), "export declare const changed: 1;\n");
    expect(compute(root)).toBe(code);
    expect(builtFingerprint(root)).toBe(code);
  });
});
