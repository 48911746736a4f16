// The policy test `pruneguard init` writes for Node's own runner runs, through the `test` script init puts in
// package.json, on every Node `engines` allows (>=22.13): Node strips TypeScript's types by default only
// from 22.18, so on 22.13–22.17 a bare `node --test test/org.policy.test.ts` stops at the file's extension;
// the script passes `--experimental-strip-types`, which later versions still accept.
//
// The project is init's, in a temporary folder; `pruneguard-cli/testing` is a one-line package re-exporting
// this build's dist/compiler/testing.js (test/package/install.test.ts installs the packed tarballs instead).
// It runs on the repository's Node 24 and Node 22 (the `node` and `node22` devDependencies), and on every
// Node binary named in PRUNEGUARD_TEST_NODES (path-delimited): the 22.13–22.17 case needs one from there,
// and is skipped, saying so, without it.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeTestScript } from "../../compiler/cli/init-template.js";
import { runCli } from "./helpers.js";

const ROOT = process.cwd();
const TESTING = path.join(ROOT, "dist/compiler/testing.js");
const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-init-node-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A Node binary and its version. */
interface Node {
  readonly bin: string;
  readonly version: readonly [number, number, number];
}

function node(bin: string): Node | undefined {
  if (!existsSync(bin)) return undefined;
  const m = /^v(\d+)\.(\d+)\.(\d+)/.exec(spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout ?? "");
  return m ? { bin, version: [Number(m[1]), Number(m[2]), Number(m[3])] } : undefined;
}

const nodes = [process.execPath, path.join(ROOT, "node_modules/node22/bin/node"), ...(process.env["PRUNEGUARD_TEST_NODES"] ?? "").split(path.delimiter).filter((b) => b !== "")]
  .map(node)
  .filter((n): n is Node => n !== undefined);
const shown = (n: Node) => `Node ${n.version.join(".")} (${n.bin})`;
/** 22.13–22.17: supported, and no type stripping unless asked for. */
const unstripped = nodes.filter((n) => n.version[0] === 22 && n.version[1] >= 13 && n.version[1] < 18);
if (unstripped.length === 0) console.warn("skipped the policy test on Node 22.13–22.17: name one in PRUNEGUARD_TEST_NODES");

/** `script` run by a shell in the project, with `n` first on the PATH, as `npm test` would run it. */
function runScript(script: string, n: Node): { status: number | null; output: string } {
  const env = { ...process.env, PATH: `${path.dirname(n.bin)}${path.delimiter}${process.env["PATH"] ?? ""}`, NO_COLOR: "1" };
  const r = spawnSync("sh", ["-c", script], { cwd: dir, env, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

let script: string;
beforeAll(async () => {
  expect(existsSync(TESTING), `${TESTING} is missing: run npm run build first`).toBe(true);
  writeFileSync(path.join(dir, "package.json"), '{ "name": "agents", "type": "module" }\n');
  const init = await runCli(["init"], dir);
  expect(init.code, init.all).toBe(0);
  script = (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { scripts: { test: string } }).scripts.test;
  const cli = path.join(dir, "node_modules", "pruneguard-cli");
  mkdirSync(cli, { recursive: true });
  writeFileSync(path.join(cli, "package.json"), '{ "name": "pruneguard-cli", "type": "module", "exports": { "./testing": "./testing.js" } }\n');
  writeFileSync(path.join(cli, "testing.js"), `export * from ${JSON.stringify(pathToFileURL(TESTING).href)};\n`);
});

describe("init's policy test, run by its package.json script", () => {
  it("is the script nodeTestScript gives, asking for type stripping", () => {
    expect(script).toBe(nodeTestScript("test/org.policy.test.ts"));
    expect(script).toBe("node --experimental-strip-types --test test/org.policy.test.ts");
  });

  for (const n of nodes) {
    it(`passes on ${shown(n)}`, () => {
      const r = runScript(script, n);
      expect(r.status, r.output).toBe(0);
      expect(r.output).toMatch(/^. pass 4$/m);
      expect(r.output).toMatch(/^. fail 0$/m);
    });
  }

  (unstripped.length === 0 ? it.skip : it)("without the flag, fails on Node 22.13–22.17: what the flag is for", () => {
    for (const n of unstripped) {
      const r = runScript("node --test test/org.policy.test.ts", n);
      expect(r.status, shown(n)).not.toBe(0);
      expect(r.output, shown(n)).toMatch(/ERR_UNKNOWN_FILE_EXTENSION|Unknown file extension "\.ts"/);
    }
  });
});
