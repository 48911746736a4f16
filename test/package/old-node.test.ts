/**
 * On a Node below the supported version, pruneguard says so once, in words: importing the runtime throws
 * one error naming the version found, the version needed and how to get it, and the CLI exits 2 with the
 * same message before it loads anything. Before, an agent on Node 20 crashed inside its first SQLite store
 * (`Cannot destructure property 'DatabaseSync' of 'process.getBuiltinModule(...)'`), `pruneguard audit`
 * said `No such built-in module: node:sqlite` and `compile` ran.
 *
 * The end-to-end cases run the built output (`npm test` builds first) on this machine's own Node, found
 * on the PATH outside node_modules (where the repository's Node 24 and 22 are); without an older one they
 * are skipped, and the skip says why.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { SUPPORTED_NODE, unsupportedNode } from "../../src/node-version.js";

const needed = `${SUPPORTED_NODE.major}.${SUPPORTED_NODE.minor}`;

describe("the supported Node version", () => {
  it("is package.json's engines.node", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${needed}`);
  });

  it("is judged by major and minor, and the message names the version found, the one needed and how to get it", () => {
    for (const ok of ["22.13.0", "22.20.1", "23.0.0", "24.21.0", "30.1.2"]) expect(unsupportedNode(ok), ok).toBeNull();
    const message = unsupportedNode("22.12.0")!;
    expect(message).toContain("Node.js 22.12.0 is too old");
    expect(message).toContain(`needs Node.js ${needed} or later`);
    expect(message).toContain("https://nodejs.org/");
    expect(message).toContain("nvm install 22");
    expect(unsupportedNode("20.20.2")).toContain("Node.js 20.20.2 is too old");
    // Not a Node (no version to judge): left to run.
    expect(unsupportedNode(undefined)).toBeNull();
  });
});

/** The first `node` on the PATH outside node_modules, or a usual install path, that is older than supported. */
function olderNode(): { bin: string; version: string } | undefined {
  const dirs = (process.env["PATH"] ?? "").split(path.delimiter).filter((d) => d !== "" && !d.split(path.sep).includes("node_modules"));
  for (const bin of [...dirs.map((d) => path.join(d, "node")), "/usr/bin/node", "/usr/local/bin/node"]) {
    try {
      accessSync(bin, constants.X_OK);
    } catch {
      continue;
    }
    const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim().replace(/^v/, "");
    if (/^\d+\.\d+/.test(version) && unsupportedNode(version) !== null) return { bin, version };
  }
  return undefined;
}

const old = olderNode();
const WHY = old === undefined ? `no Node.js older than ${needed} on the PATH outside node_modules, or in /usr/bin or /usr/local/bin` : "";
if (old === undefined) console.warn(`skipped "on an older Node": ${WHY}`);

(old === undefined ? describe.skip : describe)(`on an older Node${old ? ` (${old.version}, ${old.bin})` : ` [skipped: ${WHY}]`}`, () => {
  const run = (args: readonly string[]) => spawnSync(old!.bin, args, { encoding: "utf8", env: { ...process.env, PRUNEGUARD_COMPILE_CACHE: "off", PRUNEGUARD_REEXEC: "off" } });
  beforeAll(() => {
    for (const built of ["dist/src/index.js", "dist/src/node-version.js", "dist/compiler/cli/main.js"]) {
      expect(existsSync(built), `${built} is missing: run npm run build first`).toBe(true);
    }
  });

  it("importing the runtime throws one clear error, before a SQLite store can fail obscurely", () => {
    const script = `
      for (const entry of ["index", "postgres", "adapters"]) {
        try {
          const m = await import("./dist/src/" + entry + ".js");
          new m.SqliteStore({ name: "a", path: ":memory:" });
          console.log(entry + ": loaded");
        } catch (e) {
          console.log(entry + ": " + e.message);
        }
      }
    `;
    const r = run(["--input-type=module", "-e", script]);
    expect(r.status, r.stderr).toBe(0);
    const message = unsupportedNode(old!.version)!;
    expect(r.stdout.trim().split("\n")).toEqual([`index: ${message}`, `postgres: ${message}`, `adapters: ${message}`]);
    expect(r.stdout).not.toMatch(/DatabaseSync|getBuiltinModule|node:sqlite'/);
  });

  it("the CLI exits 2 with that message, for every command, before loading anything else", () => {
    const message = unsupportedNode(old!.version)!;
    for (const args of [["compile"], ["check"], ["audit", "agent.db"], ["--version"]]) {
      const r = run(["bin/pruneguard.js", ...args]);
      expect(r.status, args.join(" ")).toBe(2);
      // Wrapped as every message the CLI prints (no line over 100 columns in a pipe), continuation lines indented.
      expect(r.stderr.replace(/\n {2}/g, " ")).toBe(`pruneguard: ${message}\n`);
      expect(r.stderr.split("\n").filter((l) => l.length > 100)).toEqual([]);
      expect(r.stdout).toBe("");
    }
    // COLUMNS=0: on one line, as the CLI prints every message then.
    const unwrapped = spawnSync(old!.bin, ["bin/pruneguard.js", "check"], { encoding: "utf8", env: { ...process.env, COLUMNS: "0", PRUNEGUARD_COMPILE_CACHE: "off", PRUNEGUARD_REEXEC: "off" } });
    expect(unwrapped.stderr).toBe(`pruneguard: ${message}\n`);
    // Under --format json the error is data on stdout too, as for every exit 2.
    const json = run(["bin/pruneguard.js", "check", "--format", "json"]);
    expect(json.status).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: { message, exitCode: 2 } });
  });

  it("where the project pins a supported Node (node_modules/node, as this repository does), the CLI runs on it and says so", () => {
    const r = spawnSync(old!.bin, ["bin/pruneguard.js", "--version"], { encoding: "utf8", env: { ...process.env, PRUNEGUARD_COMPILE_CACHE: "off" } });
    expect(r.status).toBe(0);
    expect(r.stderr.replace(/\n {2}/g, " ")).toMatch(/^pruneguard: Node\.js [\d.]+ is too old; running on the project's Node\.js \(.*node_modules\/node\/bin\/node\)\n$/);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
