/**
 * Benchmark 4: `pruneguard compile` against `tsc --noEmit` (TypeScript 7, the repository's
 * `node_modules/.bin/tsc`) on the same generated folders of 1, 10 and 100 policy files of 50 kinds each.
 * The floors (loading ts-morph; the raw parser) and, in benchmark 5, the declarations variant run in the full mode only.
 * Both are whole processes, timed wall-clock with `process.hrtime`, interleaved run by run; the figure
 * is the median over runs. `tsc` type-checks the same files against `pruneguard/dsl`'s declarations.
 */
import * as path from "node:path";
import { median, timeInterleaved, type CommandRun } from "./measure.js";
import { policySource } from "./policies.js";
import { fmtMs, goalAtMost, type Benchmark, type Row } from "./report.js";
import { createWorkspace } from "./workspace.js";

/** The start-up lever: a compile with the compile cache warm (its own folder) vs with it off. */
function compileCacheRow(root: string, cli: string, cwd: string, runs: number): Row {
  const cacheDir = path.join(root, "dist", "bench", ".compile-cache");
  const args = [cli, "compile", "policies", "--out", "out"];
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

export const compilerBench: Benchmark = {
  id: 4,
  title: "pruneguard compile vs tsc --noEmit on 1, 10 and 100 policy files",
  async run(ctx) {
    const sizes = ctx.quick ? [1, 10] : [1, 10, 100];
    const runs = ctx.quick ? 3 : 5;
    const rows: Row[] = [];
    const perSize: Array<{ files: number; compile: number; tsc: number }> = [];
    const cli = path.join(ctx.root, "bin", "pruneguard.js");
    const tsc = path.join(ctx.root, "node_modules", ".bin", "tsc");
    const floor = path.join(ctx.root, "dist", "bench", "floor.js");
    for (const files of sizes) {
      const ws = createWorkspace(ctx.root, `compile-${files}`);
      try {
        for (let f = 0; f < files; f++) {
          const name = `bench-${String(f).padStart(3, "0")}`;
          ws.write(`policies/${name}.policy.ts`, policySource(name, KINDS_PER_FILE));
        }
        ws.tsconfig(["policies"]);
        // At the largest size, also the floors under the compile (see floor.ts), in the same interleaving.
        const largest = !ctx.quick && files === sizes[sizes.length - 1];
        const [compile, check, load, parse] = timeInterleaved(
          [
            { name: `pruneguard compile (${files} files)`, cmd: process.execPath, args: [cli, "compile", "policies", "--out", "out"], cwd: ws.dir },
            { name: `tsc --noEmit (${files} files)`, cmd: tsc, args: ["--noEmit", "-p", "tsconfig.json"], cwd: ws.dir },
            ...(largest
              ? [
                  { name: "load ts-morph", cmd: process.execPath, args: [floor, "load"], cwd: ws.dir },
                  { name: "raw TS parse", cmd: process.execPath, args: [floor, "parse", path.join(ws.dir, "policies")], cwd: ws.dir },
                ]
              : []),
          ],
          runs,
        ) as [CommandRun[], CommandRun[], CommandRun[] | undefined, CommandRun[] | undefined];
        // Node's module compile cache (bin/pruneguard.js turns it on): the same compile with it off.
        if (files === sizes[1]) rows.push(compileCacheRow(ctx.root, cli, ws.dir, runs));
        const c = median(compile.map((r) => r.ms));
        const t = median(check.map((r) => r.ms));
        // Per-run ratios, so each compile is compared with the tsc run next to it.
        const r = median(compile.map((run, i) => run.ms / check[i]!.ms));
        perSize.push({ files, compile: c, tsc: t });
        rows.push({
          bench: 4,
          name: `compile ${files} policy file${files === 1 ? "" : "s"} × ${KINDS_PER_FILE} kinds vs tsc --noEmit`,
          subject: fmtMs(c),
          baseline: fmtMs(t),
          ratio: `${r.toFixed(2)}×`,
          goal: goalAtMost(r, 1),
          detail: `median of ${runs} interleaved runs; compile runs ${compile.map((x) => fmtMs(x.ms)).join(", ")}; tsc runs ${check.map((x) => fmtMs(x.ms)).join(", ")}`,
        });
        ctx.log(`  ${files} files: compile ${fmtMs(c)}, tsc ${fmtMs(t)}`);
        if (load && parse) {
          const l = median(load.map((x) => x.ms));
          const p = median(parse.map((x) => x.ms));
          rows.push({
            bench: 4,
            name: `what limits it (${files} files): node + load ts-morph; raw TS 6 parse + walk`,
            subject: `${fmtMs(l)}; ${fmtMs(p)}`,
            baseline: fmtMs(t),
            ratio: `${median(load.map((x, i) => x.ms / check[i]!.ms)).toFixed(2)}×; ${median(parse.map((x, i) => x.ms / check[i]!.ms)).toFixed(2)}×`,
            goal: null,
            detail: `of the compile's ${fmtMs(c)}: loading ts-morph ${((100 * l) / c).toFixed(0)}%; the raw parser reads and walks the same files in ${fmtMs(p)} (process included), the rest (${fmtMs(c - l)}) is the wrapped-node front end, checks and emit`,
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
