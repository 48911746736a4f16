// A folder of policies is listed without the glob library (compiler/cli/inputs.ts `policyFilesIn`), so that
// `compile` and `check` on a folder do not load it: the listing must be the glob's, file for file, or give
// the folder back to the glob.
import fc from "fast-check";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { glob } from "tinyglobby";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_POLICY_GLOB, MAX_LISTED_ENTRIES, POLICY_FILE_GLOB, policyFilesIn, resolveInputs } from "../../compiler/cli/inputs.js";

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

  it("follows a link to a folder inside the project once, lists a linked policy file, and never leaves the project", async () => {
    const outside = tree(["secret/s.policy.ts"]);
    const dir = tree(["a.policy.ts", "elsewhere/b.policy.ts", "shared.ts"]);
    symlinkSync(path.join(dir, "elsewhere"), path.join(dir, "linked"), "dir");
    symlinkSync(path.join(dir, "elsewhere"), path.join(dir, "again"), "dir");
    symlinkSync(path.join(outside, "secret"), path.join(dir, "out"), "dir");
    symlinkSync("/", path.join(dir, "root"), "dir");
    symlinkSync(dir, path.join(dir, "elsewhere", "loop"), "dir");
    symlinkSync(path.join(dir, "shared.ts"), path.join(dir, "c.policy.ts"));
    const listed = policyFilesIn(dir)!.map((f) => path.relative(dir, f)).sort();
    // `again` and `linked` lead to one real folder: walked once. `loop` leads back to the project: walked once more, not forever.
    const mine = listed.filter((f) => !f.startsWith("elsewhere/loop/"));
    expect(mine).toHaveLength(4);
    expect(mine).toEqual(expect.arrayContaining(["a.policy.ts", "c.policy.ts", "elsewhere/b.policy.ts", expect.stringMatching(/^(again|linked)\/b\.policy\.ts$/)]));
    expect(listed.some((f) => f.includes("s.policy.ts") || f.startsWith("root/") || f.startsWith("out/"))).toBe(false);
    expect(await resolveInputs([dir], dir)).toEqual(policyFilesIn(dir)!.map((f) => f.split(path.sep).join("/")).sort());
  });

  it("stops a walk past its bound with a usage error, never an unbounded listing", () => {
    const dir = tree([], Array.from({ length: 30 }, (_, i) => `d${i}`));
    for (let i = 0; i < 30; i++) for (let j = 0; j < 30; j++) symlinkSync(path.join(dir, `d${(i + 1) % 30}`), path.join(dir, `d${i}`, `l${j}`), "dir");
    // 30 folders, each holding 30 links into the next: 930 entries, each real folder walked once.
    expect(policyFilesIn(dir)).toEqual([]);
    expect(() => policyFilesIn(dir, undefined, 500)).toThrow(/more than 500 files and folders under .*name the folders that hold policies/);
    expect(MAX_LISTED_ENTRIES).toBeGreaterThanOrEqual(10_000);
  });

  it("refuses a pattern from package.json that leaves the project, and never follows a link in a glob", async () => {
    const outside = tree(["x.policy.ts"]);
    const dir = tree(["policies/a.policy.ts"]);
    symlinkSync(outside, path.join(dir, "policies", "out"), "dir");
    for (const bad of ["/**/*.policy.ts", "../x/**/*.policy.ts", "policies/../../x.policy.ts", "C:/x.policy.ts"]) {
      await expect(resolveInputs([], dir, [bad])).rejects.toThrow(/leaves the project/);
      await expect(resolveInputs([bad], dir, [], { untrusted: true })).rejects.toThrow(/leaves the project/);
    }
    const listed = await resolveInputs([], dir, ["policies/**/*.policy.ts"]);
    expect(listed.map((f) => path.relative(dir, f))).toEqual(["policies/a.policy.ts"]);
    // A path typed on the command line is the user's own: it may name a folder anywhere.
    expect(await resolveInputs([outside], dir)).toEqual([path.join(outside, "x.policy.ts").split(path.sep).join("/")]);
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
