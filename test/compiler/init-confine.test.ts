// `pruneguard init` never writes outside the project, nor through a symbolic link (issue 35): a repository
// whose .gitignore, package.json, policies folder, policy file or a folder above it is a link is refused
// with exit 2, naming the path and why, before anything is written — the link's target and the project are
// byte-identical afterwards. Seen failing before the fix: init exited 0 and appended to the outside
// .gitignore, rewrote the outside package.json and wrote org.policy.ts into the outside folder.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { starterPolicy } from "../../compiler/cli/init-template.js";
import { runCli as run } from "./helpers.js";

const PKG = '{\n  "name": "agents",\n  "type": "module"\n}\n';
const OUTSIDE_PKG = '{ "name": "someone-else", "private": true }\n';
const OUTSIDE_IGNORE = "secrets/\n";
const OUTSIDE_POLICY = "// someone else's policy\n";
const OUTSIDE_TSCONFIG = '{ "compilerOptions": { "module": "SECRET-OUTSIDE-MODULE" } }\n';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A project folder and, beside it, a folder outside the project holding what links may point at. */
function layout(): { root: string; outside: string } {
  const base = mkdtempSync(path.join(tmpdir(), "pruneguard-init-confine-"));
  made.push(base);
  const root = path.join(base, "project");
  const outside = path.join(base, "outside");
  mkdirSync(root);
  mkdirSync(path.join(outside, "policies"), { recursive: true });
  writeFileSync(path.join(outside, "package.json"), OUTSIDE_PKG);
  writeFileSync(path.join(outside, "gitignore"), OUTSIDE_IGNORE);
  writeFileSync(path.join(outside, "policies/other.policy.ts"), OUTSIDE_POLICY);
  writeFileSync(path.join(outside, "org.policy.ts"), OUTSIDE_POLICY);
  writeFileSync(path.join(outside, "tsconfig.json"), OUTSIDE_TSCONFIG);
  return { root, outside };
}

/** Every entry under `dir`: its kind and bytes, or a link's target, so "unchanged" means byte-identical and nothing added. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      const rel = path.relative(dir, p);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[rel] = `link ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[rel] = "dir";
        walk(p);
      } else out[rel] = `file ${st.mode.toString(8)} ${readFileSync(p, "base64")}`;
    }
  };
  walk(dir);
  return out;
}

async function refused(root: string, outside: string, args: string[] = []) {
  const before = { root: snapshot(root), outside: snapshot(outside) };
  const r = await run(["init", ...args], root);
  expect(r.code, r.all).toBe(2);
  expect(snapshot(outside)).toEqual(before.outside);
  expect(snapshot(root)).toEqual(before.root);
  expect(r.stdout).toBe("");
  return r;
}

describe("pruneguard init writes only inside the project, never through a link", () => {
  it("a .gitignore linked outside: refused, the outside file byte-identical, nothing written", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    symlinkSync(path.join(outside, "gitignore"), path.join(root, ".gitignore"));
    const r = await refused(root, outside);
    expect(r.stderr).toContain(".gitignore is a symbolic link to a file outside the project root");
    expect(r.stderr).toContain("nothing was written");
  });

  it("a package.json linked outside: refused, the outside JSON not rewritten", async () => {
    const { root, outside } = layout();
    symlinkSync(path.join(outside, "package.json"), path.join(root, "package.json"));
    const r = await refused(root, outside);
    expect(r.stderr).toContain("package.json is a symbolic link to a file outside the project root");
  });

  it("a policies folder linked outside: refused, no policy written into the outside folder", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    symlinkSync(path.join(outside, "policies"), path.join(root, "policies"));
    const r = await refused(root, outside);
    expect(r.stderr).toContain("policies/org.policy.ts: its folder policies is a symbolic link to a folder outside the project root");
  });

  it("a policy file linked outside, or a dangling link where it goes: refused", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    mkdirSync(path.join(root, "policies"));
    symlinkSync(path.join(outside, "org.policy.ts"), path.join(root, "policies/org.policy.ts"));
    expect((await refused(root, outside)).stderr).toContain("policies/org.policy.ts is a symbolic link to a file outside the project root");

    const dangling = layout();
    writeFileSync(path.join(dangling.root, "package.json"), PKG);
    mkdirSync(path.join(dangling.root, "policies"));
    symlinkSync(path.join(dangling.outside, "new.policy.ts"), path.join(dangling.root, "policies/org.policy.ts"));
    expect((await refused(dangling.root, dangling.outside)).stderr).toContain("policies/org.policy.ts is a symbolic link to nothing (a dangling link)");
  });

  it("a link in a folder above the policies folder: refused", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    symlinkSync(outside, path.join(root, "config"));
    const r = await refused(root, outside, ["--policies", "config/policies"]);
    expect(r.stderr).toContain("config/policies/org.policy.ts: its folder config is a symbolic link to a folder outside the project root");
  });

  it("a link that stays inside the project is refused too: init writes through no link at all", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    mkdirSync(path.join(root, "shared"));
    symlinkSync(path.join(root, "shared"), path.join(root, "policies"));
    const r = await refused(root, outside);
    expect(r.stderr).toContain("its folder policies is a symbolic link to a folder inside the project root");
  });

  it("a --policies folder outside the project: refused, relative or absolute", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    expect((await refused(root, outside, ["--policies", "../outside/policies"])).stderr).toContain("../outside/policies/org.policy.ts is outside the project root");
    expect((await refused(root, outside, ["--policies", path.join(outside, "new")])).stderr).toContain("is outside the project root");
  });

  it("a folder where a file goes, or a file where a folder goes: refused before anything is written", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    mkdirSync(path.join(root, ".gitignore"));
    writeFileSync(path.join(root, "config"), "");
    const r = await refused(root, outside, ["--policies", "config/policies"]);
    expect(r.stderr).toContain(".gitignore is not a regular file");
    expect(r.stderr).toContain("config/policies/org.policy.ts: its folder config is not a folder");
  });

  it("names every refused path in one message, and says so in JSON", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    symlinkSync(path.join(outside, "gitignore"), path.join(root, ".gitignore"));
    symlinkSync(path.join(outside, "policies"), path.join(root, "policies"));
    const before = snapshot(outside);
    const r = await run(["init", "--format", "json"], root);
    expect(r.code).toBe(2);
    const message = (JSON.parse(r.stdout) as { error: { message: string } }).error.message;
    expect(message).toContain(".gitignore is a symbolic link");
    expect(message).toContain("its folder policies is a symbolic link");
    expect(snapshot(outside)).toEqual(before);
  });

  it("a tsconfig.json linked outside is not read: init still sets the project up and says why it gave no advice from it", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG);
    symlinkSync(path.join(outside, "tsconfig.json"), path.join(root, "tsconfig.json"));
    const before = snapshot(outside);
    const r = await run(["init"], root);
    expect(r.code, r.all).toBe(0);
    expect(r.all).not.toContain("SECRET-OUTSIDE-MODULE");
    expect(r.stdout).toContain("tsconfig.json was not read: it is a symbolic link to a file outside the project root");
    expect(snapshot(outside)).toEqual(before);
    expect(lstatSync(path.join(root, "tsconfig.json")).isSymbolicLink()).toBe(true);
    const json = JSON.parse((await run(["init", "--format", "json"], root)).stdout) as { tsconfigNotRead?: string };
    expect(json.tsconfigNotRead).toBe("it is a symbolic link to a file outside the project root");
  });

  it("a normal project still initialises, and a rewritten file keeps its mode", async () => {
    const { root, outside } = layout();
    writeFileSync(path.join(root, "package.json"), PKG, { mode: 0o640 });
    writeFileSync(path.join(root, ".gitignore"), "node_modules\n", { mode: 0o600 });
    const r = await run(["init", "--policies", "config/policies"], root);
    expect(r.code, r.all).toBe(0);
    expect(readFileSync(path.join(root, "config/policies/org.policy.ts"), "utf8")).toBe(starterPolicy("org"));
    expect(lstatSync(path.join(root, "package.json")).mode & 0o777).toBe(0o640);
    expect(lstatSync(path.join(root, ".gitignore")).mode & 0o777).toBe(0o600);
    // No temporary file is left beside what init rewrote (and wrote: the guards, the test, tsconfig.json).
    expect(readdirSync(root).sort()).toEqual([".gitignore", "config", "generated", "package.json", "test", "tsconfig.json"]);
    expect(snapshot(outside)).toEqual(snapshot(layout().outside));
  });
});

// The class of bug, not one reproduction: any mix of links (out of the project, inside it, dangling),
// files where folders go and folders where files go, at every path init reads or writes. Whatever init
// answers, nothing outside the project changes; and it writes anything at all only when no path it
// touches is a link, each written path then a regular file in a real folder of the project.
type Entry = "absent" | "regular" | "link-out" | "link-in" | "dangling" | "wrong-type";
const entry = fc.constantFrom<Entry>("absent", "regular", "link-out", "link-in", "dangling", "wrong-type");

describe("property: init never changes anything outside the project, nor writes when it touches a link", () => {
  it("holds for generated layouts", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          pkg: fc.constantFrom<Entry>("regular", "regular", "link-out", "link-in", "absent"),
          ignore: entry,
          tsconfig: entry,
          folders: fc.array(entry, { minLength: 1, maxLength: 3 }),
          policy: entry,
        }),
        async (l) => {
          const { root, outside } = layout();
          mkdirSync(path.join(root, "elsewhere"));
          writeFileSync(path.join(root, "elsewhere/file"), PKG);
          // Makes `rel` what `e` says; returns whether init must refuse it (a link, or the wrong type).
          const place = (rel: string, e: Entry, as: "file" | "dir", outsideTarget: string): boolean => {
            const p = path.join(root, rel);
            const text = rel === "package.json" ? PKG : rel.endsWith(".policy.ts") ? starterPolicy("org") : "node_modules\n";
            if (e === "regular") as === "file" ? writeFileSync(p, text) : mkdirSync(p);
            else if (e === "link-out") symlinkSync(path.join(outside, outsideTarget), p);
            else if (e === "link-in") symlinkSync(path.join(root, as === "file" ? "elsewhere/file" : "elsewhere"), p);
            else if (e === "dangling") symlinkSync(path.join(outside, "nothing-here"), p);
            else if (e === "wrong-type") as === "file" ? mkdirSync(p) : writeFileSync(p, "");
            return e !== "absent" && e !== "regular";
          };
          // No package.json is no refusal: init writes a minimal one.
          let refuse = place("package.json", l.pkg, "file", "package.json");
          refuse = place(".gitignore", l.ignore, "file", "gitignore") || refuse;
          place("tsconfig.json", l.tsconfig, "file", "tsconfig.json");
          const folders = l.folders.map((_, i) => `d${i}`);
          let chainReal = true;
          for (let i = 0; i < folders.length && chainReal; i++) {
            const e = l.folders[i]!;
            if (place(folders.slice(0, i + 1).join("/"), e, "dir", "policies")) refuse = true;
            chainReal = e === "regular";
          }
          const policies = folders.join("/");
          if (chainReal && place(`${policies}/org.policy.ts`, l.policy, "file", "org.policy.ts")) refuse = true;

          const before = { root: snapshot(root), outside: snapshot(outside) };
          const r = await run(["init", "--policies", policies], root);
          expect(snapshot(outside)).toEqual(before.outside);
          if (refuse) {
            expect(r.code, r.all).toBe(2);
            expect(snapshot(root)).toEqual(before.root);
            return;
          }
          expect(r.code, r.all).toBe(0);
          for (const rel of ["package.json", ".gitignore", `${policies}/org.policy.ts`]) expect(lstatSync(path.join(root, rel)).isFile()).toBe(true);
          expect(readFileSync(path.join(root, `${policies}/org.policy.ts`), "utf8")).toBe(starterPolicy("org"));
          expect(snapshot(path.join(root, "elsewhere"))).toEqual({ file: before.root["elsewhere/file"] });
          expect(r.all).not.toContain("SECRET-OUTSIDE-MODULE");
        },
      ),
      { numRuns: Number(process.env["PRUNEGUARD_FUZZ_RUNS"] ?? 60) },
    );
  });
});

describe("property: a --policies path is confined by where it leads, however it is spelled", () => {
  it("one that climbs out of the project (.., an absolute path) is refused with nothing written; one inside is written", async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fc.constantFrom("..", ".", "p", "q", "project"), { minLength: 1, maxLength: 5 }), async (absolute, segments) => {
        const { root, outside } = layout();
        writeFileSync(path.join(root, "package.json"), PKG);
        const base = path.dirname(root);
        const policies = absolute ? path.join(base, ...segments) : segments.join("/");
        const lands = path.resolve(root, policies);
        const inside = lands === root || lands.startsWith(`${root}${path.sep}`);
        const before = { root: snapshot(root), outside: snapshot(outside) };
        const r = await run(["init", "--policies", policies], root);
        expect(snapshot(outside)).toEqual(before.outside);
        expect(readdirSync(base).sort()).toEqual(["outside", "project"]);
        if (!inside) {
          expect(r.code, r.all).toBe(2);
          expect(r.stderr).toContain("is outside the project root");
          expect(snapshot(root)).toEqual(before.root);
        } else {
          expect(r.code, r.all).toBe(0);
          expect(readFileSync(path.join(lands, "org.policy.ts"), "utf8")).toBe(starterPolicy("org"));
        }
      }),
      { numRuns: Number(process.env["PRUNEGUARD_FUZZ_RUNS"] ?? 40) },
    );
  });
});
