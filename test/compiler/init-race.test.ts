// `pruneguard init` against a tree that changes under it: a folder swapped for a link, or a link planted where
// a file goes, between init's checks and its write. `openSync` is wrapped so the swap happens at the one moment
// no check can see it coming (just before the file is opened), without any timing. Seen failing with the
// re-check after the open removed from init.confine.ts (`#writeOpened`): init exited 0 with the policy written
// into the outside folder; and with the re-check before the rename removed (`replace`): init exited 0.
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { runCli as run } from "./helpers.js";

/** Runs once, before the first `openSync` of a file whose name ends with `suffix`. */
const hook = vi.hoisted(() => ({ suffix: "", beforeOpen: undefined as ((file: string) => void) | undefined }));
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const openSync = ((file: fs.PathLike, ...rest: unknown[]) => {
    const once = hook.beforeOpen;
    if (once !== undefined && typeof file === "string" && file.endsWith(hook.suffix)) {
      hook.beforeOpen = undefined;
      once(file);
    }
    return (real.openSync as (...a: unknown[]) => number)(file, ...rest);
  }) as typeof real.openSync;
  return { ...real, default: { ...real, openSync }, openSync };
});

const made: string[] = [];
afterEach(() => {
  hook.beforeOpen = undefined;
});
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function layout(): { root: string; outside: string } {
  const base = fs.mkdtempSync(path.join(tmpdir(), "pruneguard-init-race-"));
  made.push(base);
  const root = path.join(base, "project");
  const outside = path.join(base, "outside");
  fs.mkdirSync(path.join(outside, "policies"), { recursive: true });
  fs.writeFileSync(path.join(outside, "package.json"), '{ "name": "someone-else" }\n');
  fs.mkdirSync(path.join(root, "policies"), { recursive: true });
  fs.writeFileSync(path.join(root, "package.json"), '{ "name": "agents" }\n');
  return { root, outside };
}

const listing = (dir: string) => fs.readdirSync(dir, { recursive: true }).map(String).sort();

describe("init when the tree changes between its checks and its writes", () => {
  it("the policies folder swapped for a link to an outside folder just before the open: the file made there is removed, exit 2", async () => {
    const { root, outside } = layout();
    const before = listing(outside);
    hook.suffix = "org.policy.ts";
    hook.beforeOpen = () => {
      fs.renameSync(path.join(root, "policies"), path.join(root, "policies.moved"));
      fs.symlinkSync(path.join(outside, "policies"), path.join(root, "policies"));
    };
    const r = await run(["init"], root);
    expect(hook.beforeOpen).toBeUndefined();
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain("its folder policies is a symbolic link to a folder outside the project root; init stopped");
    expect(listing(outside)).toEqual(before);
  });

  it("a link planted where package.json is, while init writes its replacement: the link is neither followed nor replaced, exit 2", async () => {
    const { root, outside } = layout();
    // The policy is there already, so the only temporary file init opens is package.json's.
    fs.writeFileSync(path.join(root, "policies/org.policy.ts"), (await import("../../compiler/cli/init-template.js")).starterPolicy("org"));
    hook.suffix = ".tmp";
    hook.beforeOpen = () => {
      fs.rmSync(path.join(root, "package.json"));
      fs.symlinkSync(path.join(outside, "package.json"), path.join(root, "package.json"));
    };
    const r = await run(["init"], root);
    expect(hook.beforeOpen).toBeUndefined();
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain("package.json is a symbolic link to a file outside the project root; init stopped");
    expect(fs.readFileSync(path.join(outside, "package.json"), "utf8")).toBe('{ "name": "someone-else" }\n');
    expect(fs.lstatSync(path.join(root, "package.json")).isSymbolicLink()).toBe(true);
    // Its temporary file is gone too.
    expect(listing(root).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});
