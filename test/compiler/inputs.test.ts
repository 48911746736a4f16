// A folder of policies is listed without the glob library (compiler/cli/inputs.ts `policyFilesIn`), so that
// `compile` and `check` on a folder do not load it: the listing must be the glob's, file for file, or give
// the folder back to the glob.
import fc from "fast-check";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { glob } from "tinyglobby";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_POLICY_GLOB, POLICY_FILE_GLOB, policyFilesIn, resolveInputs } from "../../compiler/cli/inputs.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tree(files: readonly string[], folders: readonly string[] = []): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-inputs-"));
  dirs.push(dir);
  for (const f of folders) mkdirSync(path.join(dir, f), { recursive: true });
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), "export {};\n");
  }
  return dir;
}

/** What the commands used before: tinyglobby on the folder. */
const globbed = async (dir: string) => (await glob(POLICY_FILE_GLOB, { cwd: dir, absolute: true, ignore: ["**/node_modules/**"] })).sort();

describe("listing a folder of policies", () => {
  it("finds what the glob finds: nested folders, not node_modules, no dot names, exact suffix", async () => {
    const dir = tree(
      [
        "a.policy.ts",
        "sub/b.policy.ts",
        "sub/deeper/c.policy.ts",
        "node_modules/x.policy.ts",
        "sub/node_modules/y.policy.ts",
        ".hidden/d.policy.ts",
        "sub/.e.policy.ts",
        "f.ts",
        "g.policy.tsx",
        "h.POLICY.TS",
        "sub/node_modules.policy.ts",
      ],
      ["empty", "sub/empty"],
    );
    const listed = policyFilesIn(dir)!.sort();
    expect(listed).toEqual(await globbed(dir));
    expect(listed.map((f) => path.relative(dir, f))).toEqual(["a.policy.ts", "sub/b.policy.ts", "sub/deeper/c.policy.ts", "sub/node_modules.policy.ts"]);
  });

  it("gives a folder named like a policy file back to the glob, which lists everything in it", async () => {
    const dir = tree(["a.policy.ts", "dir.policy.ts/z.ts"]);
    expect(policyFilesIn(dir)).toBeUndefined();
    expect((await resolveInputs([dir], dir)).map((f) => path.relative(dir, f))).toEqual(["a.policy.ts", "dir.policy.ts/z.ts"]);
  });

  it("gives a folder with a link in it back to the glob, which resolveInputs then asks", async () => {
    const dir = tree(["a.policy.ts", "elsewhere/b.policy.ts"]);
    symlinkSync(path.join(dir, "elsewhere"), path.join(dir, "linked"), "dir");
    expect(policyFilesIn(dir)).toBeUndefined();
    expect(await resolveInputs([dir], dir)).toEqual((await globbed(dir)).map((f) => f.split(path.sep).join("/")));
  });

  it("lists the default glob's folder the same way", async () => {
    const dir = tree(["policies/org.policy.ts", "policies/teams/a.policy.ts", "policies/node_modules/n.policy.ts", "other/o.policy.ts"]);
    const expected = (await glob(DEFAULT_POLICY_GLOB, { cwd: dir, absolute: true, ignore: ["**/node_modules/**"] })).sort();
    expect(await resolveInputs([], dir)).toEqual(expected.map((f) => f.split(path.sep).join("/")));
    expect(expected).toHaveLength(2);
  });

  it("agrees with the glob on random trees", async () => {
    const segment = fc.constantFrom("a", "b", ".d", "node_modules", "x.policy.ts", "p");
    const leaf = fc.constantFrom("k.policy.ts", ".k.policy.ts", "k.ts", "k.policy.tsx", "node_modules", "policy.ts", "k.policy.ts.bak");
    const file = fc.tuple(fc.array(segment, { maxLength: 3 }), leaf).map(([segments, name]) => [...segments, name].join("/"));
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(file, { maxLength: 8 }), async (files) => {
        // A path that is a file in one entry and a folder in another cannot be made: keep the first.
        const kept: string[] = [];
        for (const f of files) if (!kept.some((k) => k.startsWith(`${f}/`) || f.startsWith(`${k}/`))) kept.push(f);
        const dir = tree(kept);
        const listed = policyFilesIn(dir);
        // Given back (a folder named like a policy file): the glob answers, as before.
        if (listed !== undefined) expect(listed.sort()).toEqual(await globbed(dir));
      }),
      { numRuns: 40 },
    );
  });
});
