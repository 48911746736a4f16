/**
 * Benchmark 4: `pruneguard compile` against `tsc --noEmit` (TypeScript 7, the repository's
 * `node_modules/.bin/tsc`) on the same generated folders of 1, 10, 100 and 1,000 policy files of 50 kinds
 * each (1,000 in the full mode only). Compiles are cold (`--force`: the incremental manifest is ignored);
 * at 10, 100 and 1,000 files (10 in the quick mode) an incremental `check` with no policy changed runs in the
 * same interleaving. The floors (Node with the TS 6 parser loaded as the CLI loads it; that and a parse of
 * every file) run in the full mode only, at 100 files. All are whole processes, timed wall-clock with
 * `process.hrtime`, interleaved run by run; the figure is the median over runs. `tsc` type-checks the same
 * files against `pruneguard/dsl`'s declarations. Goals: a cold compile of 100 files ≤ 2× `tsc`; an
 * incremental check with nothing changed ≤ 0.5× `tsc` at 10 files (at 100 and 1,000 it is reported).
 */
import * as path from "node:path";
import { median, runTimed, timeInterleaved, type Command, type CommandRun } from "./measure.js";
import { policySource } from "./policies.js";
import { fmtInt, fmtMs, goalAtMost, type Benchmark, type Row } from "./report.js";
import { createWorkspace } from "./workspace.js";

/** The start-up lever: a compile with the compile cache warm (its own folder) vs with it off. */
function compileCacheRow(root: string, cli: string, cwd: string, runs: number): Row {
  const cacheDir = path.join(root, "dist", "bench", ".compile-cache");
  const args = [cli, "compile", "policies", "--out", "out", "--force"];
  const [on, off] = timeInterleaved(
    [
      { name: "compile, compile cache on", cmd: process.execPath, args, cwd, env: { PRUNEGUARD_COMPILE_CACHE: cacheDir } },
      { name: "compile, compile cache off", cmd: process.execPath, args, cwd, env: { PRUNEGUARD_COMPILE_CACHE: "off" } },
    ],
    runs,
  ) as [CommandRun[], CommandRun[]];
  const ratio = median(on.map((run, i) => run.ms / off[i]!.ms));
  return {
    bench: 4,
    name: "compile start-up: Node's module compile cache on (warm) vs off",
    subject: fmtMs(median(on.map((r) => r.ms))),
    baseline: fmtMs(median(off.map((r) => r.ms))),
    ratio: `${ratio.toFixed(2)}×`,
    goal: null,
    detail: `median of ${runs} interleaved runs of the same compile; the warm-up run fills the cache`,
  };
}

const KINDS_PER_FILE = 50;

/**
 * The floors under a cold compile, as scripts for `node --input-type=module -e`: Node with the TS 6 parser
 * loaded as the CLI loads it (compiler/frontend/typescript.ts: ts-morph's bundled `typescript.js` on its
 * own, Node's module compile cache in the CLI's folder), and that plus a parse of every policy file as the
 * front end parses it (no parent pointers) and a walk over every node.
 */
function floorScript(root: string, policies: string | null): string {
  return [
    'import module, { createRequire } from "node:module";',
    'import { readdirSync, readFileSync } from "node:fs";',
    'import { tmpdir } from "node:os";',
    'import * as path from "node:path";',
    "const cache = process.env.PRUNEGUARD_COMPILE_CACHE;",
    'if (cache !== "off" && cache !== "0") module.enableCompileCache?.(cache || path.join(tmpdir(), "pruneguard-compile-cache"));',
    `const require = createRequire(${JSON.stringify(path.join(root, "dist", "compiler", "frontend", "typescript.js"))});`,
    'const ts = createRequire(require.resolve("ts-morph"))("@ts-morph/common/dist/typescript.js");',
    ...(policies === null
      ? []
      : [
          `const dir = ${JSON.stringify(policies)};`,
          "let nodes = 0;",
          "const visit = (node) => { nodes++; ts.forEachChild(node, visit); };",
          'for (const f of readdirSync(dir).filter((f) => f.endsWith(".policy.ts"))) visit(ts.createSourceFile(path.join(dir, f), readFileSync(path.join(dir, f), "utf8"), ts.ScriptTarget.ES2022, false));',
          'if (nodes === 0) throw new Error("no policy files");',
        ]),
  ].join("\n");
}

export const compilerBench: Benchmark = {
  id: 4,
  title: "pruneguard compile vs tsc --noEmit on 1, 10, 100 and 1,000 policy files, and an incremental check",
  async run(ctx) {
    const sizes = ctx.quick ? [1, 10] : [1, 10, 100, 1000];
    const incrementalAt = ctx.quick ? [10] : [10, 100, 1000];
    const floorAt = ctx.quick ? null : 100;
    const rows: Row[] = [];
    const perSize: Array<{ files: number; compile: number; tsc: number }> = [];
    const cli = path.join(ctx.root, "bin", "pruneguard.js");
    const tsc = path.join(ctx.root, "node_modules", ".bin", "tsc");
    for (const files of sizes) {
      // A 1,000-file compile takes seconds a run: three runs of it.
      const runs = ctx.quick || files >= 1000 ? 3 : 5;
      const ws = createWorkspace(ctx.root, `compile-${files}`);
      try {
        for (let f = 0; f < files; f++) {
          const name = `bench-${String(f).padStart(3, "0")}`;
          ws.write(`policies/${name}.policy.ts`, policySource(name, KINDS_PER_FILE));
        }
        ws.tsconfig(["policies"]);
        // At 100 files, also the floors under the compile (`floorScript`); at some sizes, an incremental check.
        const floors = files === floorAt;
        const incremental = incrementalAt.includes(files);
        const compileArgs = [cli, "compile", "policies", "--out", "out", "--force"];
        // The compile that writes the manifest the incremental check reads; the timed compiles rewrite it.
        if (incremental) runTimed({ name: "pruneguard compile (manifest)", cmd: process.execPath, args: compileArgs, cwd: ws.dir });
        const commands: Command[] = [
          { name: `pruneguard compile (${files} files)`, cmd: process.execPath, args: compileArgs, cwd: ws.dir },
          { name: `tsc --noEmit (${files} files)`, cmd: tsc, args: ["--noEmit", "-p", "tsconfig.json"], cwd: ws.dir },
        ];
        if (floors) {
          commands.push(
            { name: "load the parser", cmd: process.execPath, args: ["--input-type=module", "-e", floorScript(ctx.root, null)], cwd: ws.dir },
            { name: "parse", cmd: process.execPath, args: ["--input-type=module", "-e", floorScript(ctx.root, path.join(ws.dir, "policies"))], cwd: ws.dir },
          );
        }
        if (incremental) {
          commands.push(
            { name: "check, nothing changed", cmd: process.execPath, args: [cli, "check", "policies", "--out", "out"], cwd: ws.dir },
            // The incremental check's floor: Node starting and exiting with nothing to do.
            { name: "node, empty program", cmd: process.execPath, args: ["-e", "0"], cwd: ws.dir },
          );
        }
        const results = timeInterleaved(commands, runs);
        const of = (name: string): CommandRun[] | undefined => results[commands.findIndex((c) => c.name === name)];
        const [compile, check] = results as [CommandRun[], CommandRun[]];
        const load = of("load the parser");
        const parse = of("parse");
        const unchanged = of("check, nothing changed");
        const bare = of("node, empty program");
        // Node's module compile cache (bin/pruneguard.js turns it on): the same compile with it off.
        if (files === sizes[1]) rows.push(compileCacheRow(ctx.root, cli, ws.dir, runs));
        const c = median(compile.map((r) => r.ms));
        const t = median(check.map((r) => r.ms));
        // Per-run ratios, so each compile is compared with the tsc run next to it.
        const r = median(compile.map((run, i) => run.ms / check[i]!.ms));
        perSize.push({ files, compile: c, tsc: t });
        rows.push({
          bench: 4,
          name: `compile ${fmtInt(files)} policy file${files === 1 ? "" : "s"} × ${KINDS_PER_FILE} kinds (cold) vs tsc --noEmit`,
          subject: fmtMs(c),
          baseline: fmtMs(t),
          ratio: `${r.toFixed(2)}×`,
          goal: files === 100 ? goalAtMost(r, 2) : null,
          detail: `median of ${runs} interleaved runs; compile runs ${compile.map((x) => fmtMs(x.ms)).join(", ")}; tsc runs ${check.map((x) => fmtMs(x.ms)).join(", ")}`,
        });
        ctx.log(`  ${files} files: compile ${fmtMs(c)}, tsc ${fmtMs(t)}`);
        if (load && parse) {
          const l = median(load.map((x) => x.ms));
          const p = median(parse.map((x) => x.ms));
          rows.push({
            bench: 4,
            name: `what limits it (${files} files): node + the TS 6 parser loaded; + parse and walk every file`,
            subject: `${fmtMs(l)}; ${fmtMs(p)}`,
            baseline: fmtMs(t),
            ratio: `${median(load.map((x, i) => x.ms / check[i]!.ms)).toFixed(2)}×; ${median(parse.map((x, i) => x.ms / check[i]!.ms)).toFixed(2)}×`,
            goal: null,
            detail: `of the compile's ${fmtMs(c)}: Node with the parser loaded as the CLI loads it (ts-morph's typescript.js alone, compile cache warm) ${((100 * l) / c).toFixed(0)}%; the parser reads, parses and walks the same files in ${fmtMs(p)} (process and load included); the rest (${fmtMs(c - p)}) is the static evaluation, validation, checks, emit and writes`,
          });
        }
        if (unchanged) {
          const u = median(unchanged.map((x) => x.ms));
          const ru = median(unchanged.map((x, i) => x.ms / check[i]!.ms));
          rows.push({
            bench: 4,
            name: `incremental check, no policy changed (${fmtInt(files)} files) vs tsc --noEmit`,
            subject: fmtMs(u),
            baseline: fmtMs(t),
            ratio: `${ru.toFixed(2)}×`,
            goal: files === 10 ? goalAtMost(ru, 0.5) : null,
            detail: `\`pruneguard check\` after a compile wrote the manifest: every entry's inputs and outputs are hashed and found unchanged, nothing is parsed; median of ${runs} interleaved runs: ${unchanged.map((x) => fmtMs(x.ms)).join(", ")}`
              + (bare ? `; its floor, Node starting with nothing to do: ${fmtMs(median(bare.map((x) => x.ms)))} (${median(bare.map((x, i) => x.ms / check[i]!.ms)).toFixed(2)}× tsc)` : ""),
          });
        }
      } finally {
        ws.remove();
      }
    }
    // Growth: how each grows from the smallest folder to the largest, and the cost of each added file.
    const first = perSize[0]!;
    const last = perSize[perSize.length - 1]!;
    const grow = (k: "compile" | "tsc") => last[k] / first[k];
    const perFile = (k: "compile" | "tsc") => Math.max(0, last[k] - first[k]) / (last.files - first.files);
    rows.push({
      bench: 4,
      name: `growth ${first.files} → ${last.files} files (${last.files / first.files}× the input)`,
      subject: `×${grow("compile").toFixed(2)} (+${fmtMs(perFile("compile"))}/file)`,
      baseline: `×${grow("tsc").toFixed(2)} (+${fmtMs(perFile("tsc"))}/file)`,
      ratio: `${(grow("compile") / grow("tsc")).toFixed(2)}×`,
      goal: null,
      detail: `fixed cost (1 file): compile ${fmtMs(first.compile)}, tsc ${fmtMs(first.tsc)}; ${perSize.map((p) => `${p.files}: ${fmtMs(p.compile)} vs ${fmtMs(p.tsc)}`).join(", ")}`,
    });
    return rows;
  },
};
