/**
 * Benchmark 5: what the generated types cost a consumer's type-check. A policy of 10, 500 or 5,000 kinds
 * is compiled with `pruneguard compile` (its real type and guard emitters; a prototype of the same shape
 * when this checkout's compiler does not emit guards), and a consumer with 1,000 `prune` call sites on
 * the generated `createWindow` is type-checked with TypeScript 7 `tsc --noEmit --extendedDiagnostics`,
 * against the same 1,000 calls on a plain `ContextWindow<string>` (untyped: no generated module in the
 * program). Runs are interleaved; figures are medians of tsc's own "Total time", plus its exact
 * instantiation counts.
 */
import { existsSync } from "node:fs";
import * as path from "node:path";
import { median, quantile, runTimed, timeInterleaved, type CommandRun } from "./measure.js";
import { kindName, policySource, requestLiteral } from "./policies.js";
import { prototypeEmit } from "./prototype-emit.js";
import { fmtInt, fmtMs, goalAtMost, type Benchmark, type Row } from "./report.js";
import { createWorkspace } from "./workspace.js";

const CALL_SITES = 1000;

interface Diagnostics {
  readonly totalMs: number;
  readonly checkMs: number;
  readonly instantiations: number;
  readonly types: number;
}

/** Reads tsc's `--extendedDiagnostics` block ("Instantiations:  1234", "Check time:  0.51s"). */
export function parseDiagnostics(out: string): Diagnostics {
  const num = (label: string): number => {
    const m = new RegExp(`^${label}:\\s+([0-9.]+)(s|K)?\\s*$`, "m").exec(out);
    if (!m) throw new Error(`tsc --extendedDiagnostics printed no "${label}":\n${out.slice(0, 2000)}`);
    return Number(m[1]) * (m[2] === "s" ? 1000 : 1);
  };
  return { totalMs: num("Total time"), checkMs: num("Check time"), instantiations: num("Instantiations"), types: num("Types") };
}

/** The kinds the call sites prune: spread over the policy, skipping kinds that can never be pruned. */
function callSites(kinds: number): Array<{ kind: string; request: string }> {
  const out: Array<{ kind: string; request: string }> = [];
  for (let site = 0, k = 0; out.length < CALL_SITES; site++) {
    // A stride coprime with the shape cycle, so every rule shape and most kinds are used.
    k = (k + 7919) % kinds;
    const request = requestLiteral(k, site);
    if (request !== null) out.push({ kind: kindName(k), request });
  }
  return out;
}

function consumer(sites: ReadonlyArray<{ kind: string; request: string }>, typed: string | null): string {
  const head = typed
    ? [`import { createWindow, type Stores } from "./generated/${typed}.guard.js";`, ``, `declare const stores: Stores;`, `const w = createWindow({ session: "s1", stores });`]
    : [`import type { ContextWindow } from "pruneguard";`, ``, `declare const w: ContextWindow<string>;`];
  const body = sites.flatMap(({ kind, request }, i) => [
    `  const r${i} = await w.append({ kind: "${kind}", text: "span ${i}" });`,
    typed ? `  await w.prune(r${i}, ${request});` : `  await w.prune({ span: r${i}, ${request.slice(2)});`,
  ]);
  return [...head, ``, `export async function run(): Promise<void> {`, ...body, `}`, ``].join("\n");
}

export const consumerTypesBench: Benchmark = {
  id: 5,
  title: "consumer type-check: 1,000 prune call sites, generated types vs untyped",
  async run(ctx) {
    const sizes = ctx.quick ? [10, 5000] : [10, 500, 5000];
    // The goal's size gets more runs: its ratio is judged on their median, and their spread is reported.
    const runsAt = (kinds: number): number => (ctx.quick ? 3 : kinds === 5000 ? 9 : 5);
    const cli = path.join(ctx.root, "bin", "pruneguard.js");
    const tsc = path.join(ctx.root, "node_modules", ".bin", "tsc");
    const rows: Row[] = [];
    const measured: Array<{ kinds: number; typed: Diagnostics; untyped: Diagnostics }> = [];
    const sources = new Set<string>();
    for (const kinds of sizes) {
      const ws = createWorkspace(ctx.root, `types-${kinds}`);
      try {
        const name = `bench-k${kinds}`;
        ws.write(`policies/${name}.policy.ts`, policySource(name, kinds));
        // Compile once, untimed: this benchmark is about the consumer's check, not the compiler.
        runTimed({ name: `pruneguard compile (${kinds} kinds)`, cmd: process.execPath, args: [cli, "compile", "policies", "--out", "generated"], cwd: ws.dir });
        if (existsSync(path.join(ws.dir, "generated", `${name}.guard.ts`))) {
          sources.add("real emitter output");
        } else {
          sources.add("prototype (bench/prototype-emit.ts)");
          for (const f of prototypeEmit(name, kinds, "pruneguard")) ws.write(`generated/${f.path}`, f.contents);
        }
        const sites = callSites(kinds);
        ws.write("typed/consumer.ts", consumer(sites, name).replace("./generated/", "../generated/"));
        ws.write("untyped/consumer.ts", consumer(sites, null));
        ws.tsconfig(["consumer.ts"], "typed");
        ws.tsconfig(["consumer.ts"], "untyped");
        // At the largest size, also the same typed consumer against the guard's declarations (`.d.ts`, as a
        // published package ships it), which separates the types' cost from re-checking the guard's source.
        const largest = !ctx.quick && kinds === sizes[sizes.length - 1];
        if (largest) {
          ws.write(
            "decl/tsconfig.json",
            JSON.stringify({
              extends: "../typed/tsconfig.json",
              compilerOptions: { noEmit: false, declaration: true, emitDeclarationOnly: true, outDir: ".", rootDir: "../generated" },
              include: [`../generated/${name}.guard.ts`],
            }),
          );
          runTimed({ name: "tsc --emitDeclarationOnly (guard)", cmd: tsc, args: ["-p", "decl/tsconfig.json"], cwd: ws.dir });
          ws.write("typed-decl/consumer.ts", consumer(sites, name).replace("./generated/", "../decl/"));
          ws.tsconfig(["consumer.ts"], "typed-decl");
        }
        const [typedRuns, untypedRuns, declRuns] = timeInterleaved(
          [
            { name: `tsc typed consumer (${kinds} kinds)`, cmd: tsc, args: ["--noEmit", "--extendedDiagnostics", "-p", "typed/tsconfig.json"], cwd: ws.dir },
            { name: `tsc untyped consumer (${kinds} kinds)`, cmd: tsc, args: ["--noEmit", "--extendedDiagnostics", "-p", "untyped/tsconfig.json"], cwd: ws.dir },
            ...(largest
              ? [{ name: `tsc typed consumer on declarations (${kinds} kinds)`, cmd: tsc, args: ["--noEmit", "--extendedDiagnostics", "-p", "typed-decl/tsconfig.json"], cwd: ws.dir }]
              : []),
          ],
          runsAt(kinds),
        ) as [CommandRun[], CommandRun[], CommandRun[] | undefined];
        const typedD = typedRuns.map((r) => parseDiagnostics(r.stdout));
        const untypedD = untypedRuns.map((r) => parseDiagnostics(r.stdout));
        const med = (ds: Diagnostics[]): Diagnostics => ({
          totalMs: median(ds.map((d) => d.totalMs)),
          checkMs: median(ds.map((d) => d.checkMs)),
          instantiations: ds[0]!.instantiations,
          types: ds[0]!.types,
        });
        const typed = med(typedD);
        const untyped = med(untypedD);
        measured.push({ kinds, typed, untyped });
        const runs = runsAt(kinds);
        const ratios = typedD.map((d, i) => d.totalMs / untypedD[i]!.totalMs);
        const r = median(ratios);
        const spread = `per-run ratios ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}× (quartiles ${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)}×)`;
        const wall = median(typedRuns.map((x, i) => x.ms / untypedRuns[i]!.ms));
        ctx.log(`  ${kinds} kinds: typed ${fmtMs(typed.totalMs)}, untyped ${fmtMs(untyped.totalMs)}`);
        rows.push({
          bench: 5,
          name: `tsc total time, ${kinds} kinds: typed consumer vs untyped`,
          subject: `${fmtMs(typed.totalMs)} (${fmtInt(typed.instantiations)} inst.)`,
          baseline: `${fmtMs(untyped.totalMs)} (${fmtInt(untyped.instantiations)} inst.)`,
          ratio: `${r.toFixed(2)}×`,
          goal: kinds === 5000 ? goalAtMost(r, 1.1) : null,
          detail: `check time ${fmtMs(typed.checkMs)} vs ${fmtMs(untyped.checkMs)}; types ${fmtInt(typed.types)} vs ${fmtInt(untyped.types)}; wall clock ${wall.toFixed(2)}×; median of ${runs} interleaved runs, ${spread}`,
        });
        if (declRuns) {
          const declD = declRuns.map((x) => parseDiagnostics(x.stdout));
          const decl = med(declD);
          const rd = median(declD.map((d, i) => d.totalMs / untypedD[i]!.totalMs));
          rows.push({
            bench: 5,
            name: `same, ${kinds} kinds, guard consumed as declarations (.d.ts)`,
            subject: `${fmtMs(decl.totalMs)} (${fmtInt(decl.instantiations)} inst.)`,
            baseline: `${fmtMs(untyped.totalMs)} (${fmtInt(untyped.instantiations)} inst.)`,
            ratio: `${rd.toFixed(2)}×`,
            goal: null,
            detail: `check time ${fmtMs(decl.checkMs)} vs ${fmtMs(untyped.checkMs)}; the difference to the row above is tsc checking the guard module's source (its bodies), which its declarations leave out`,
          });
        }
      } finally {
        ws.remove();
      }
    }
    // Growth in kinds: what the typed program adds over the untyped one, from the smallest to the largest.
    const lo = measured[measured.length - 2]!;
    const hi = measured[measured.length - 1]!;
    const kindsFactor = hi.kinds / lo.kinds;
    const extra = (m: typeof lo, k: "instantiations" | "checkMs" | "totalMs") => Math.max(1, m.typed[k] - m.untyped[k]);
    const instGrowth = extra(hi, "instantiations") / extra(lo, "instantiations");
    const timeGrowth = extra(hi, "totalMs") / extra(lo, "totalMs");
    rows.push({
      bench: 5,
      name: `growth ${fmtInt(lo.kinds)} → ${fmtInt(hi.kinds)} kinds (${fmtInt(kindsFactor)}×): added instantiations`,
      subject: `${fmtInt(extra(hi, "instantiations"))} added`,
      baseline: `${fmtInt(extra(lo, "instantiations"))} added`,
      ratio: `${instGrowth.toFixed(2)}×`,
      goal: goalAtMost(instGrowth, kindsFactor),
      detail: `added tsc time grew ${timeGrowth.toFixed(2)}× (${fmtMs(extra(lo, "totalMs"))} → ${fmtMs(extra(hi, "totalMs"))}) for ${fmtInt(kindsFactor)}× the kinds; "added" is typed minus untyped at the same size; types from ${[...sources].join(" and ")}`,
    });
    return rows;
  },
};
