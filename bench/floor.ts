/**
 * The floors under `pruneguard compile`, run as child processes by benchmark 4 so they are timed like it:
 *
 *   node dist/bench/floor.js load            loads ts-morph and nothing else
 *   node dist/bench/floor.js parse <dir>     parses every *.policy.ts in <dir> with the TypeScript parser
 *                                            ts-morph bundles (raw nodes, no ts-morph wrappers) and walks
 *                                            every node once
 *
 * The gap between these and the compile is what the front end's wrapped-node walk and the later phases cost.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";

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
