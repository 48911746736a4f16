/**
 * The floors under `pruneguard compile`, run as child processes by benchmark 4 so they are timed like it:
 *
 *   node dist/bench/floor.js load            loads ts-morph and nothing else
 *   node dist/bench/floor.js parse <dir>     parses every *.policy.ts in <dir> with the TypeScript parser
 *                                            ts-morph bundles (raw nodes, no ts-morph wrappers) and walks
 *                                            every node once
 *
 * Both enable Node's module compile cache in the folder `bin/pruneguard.js` uses, so the load is what the
 * CLI pays. The gap between these and the compile is what the static evaluation and the later phases cost.
 */
import { readdirSync, readFileSync } from "node:fs";
import module from "node:module";
import { tmpdir } from "node:os";
import * as path from "node:path";

const cache = process.env["PRUNEGUARD_COMPILE_CACHE"];
if (cache !== "off" && cache !== "0") module.enableCompileCache?.(cache || path.join(tmpdir(), "pruneguard-compile-cache"));

const [mode, dir] = process.argv.slice(2);
if (mode === "load") {
  await import("ts-morph");
} else if (mode === "parse" && dir !== undefined) {
  const { ts } = await import("@ts-morph/common");
  let nodes = 0;
  const visit = (node: import("@ts-morph/common").ts.Node): void => {
    nodes++;
    ts.forEachChild(node, visit);
  };
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".policy.ts"))) {
    const file = path.join(dir, f);
    visit(ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true));
  }
  if (nodes === 0) throw new Error(`no policy files in ${dir}`);
} else {
  process.stderr.write("usage: floor.js load | parse <dir>\n");
  process.exitCode = 2;
}
