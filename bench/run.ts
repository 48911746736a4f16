/**
 * `npm run bench [-- --quick] [-- --only 1,2]`: every figure of BENCHMARKS.md, each a ratio to a baseline
 * measured in the same run. Progress goes to stderr; the report (Markdown) to stdout. Exit 0 when every
 * benchmark ran (a missed goal is a figure, not a failure), 1 when one crashed.
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { compilerBench } from "./compiler.js";
import { consumerTypesBench } from "./consumer-types.js";
import { directiveBench } from "./directive.js";
import { economyBench } from "./economy.js";
import { pinsBench } from "./pins.js";
import { postgresBench } from "./postgres.js";
import { postgresLoadBench } from "./postgres-load.js";
import { searchBench } from "./search.js";
import { sqliteBench } from "./sqlite.js";
import { sqliteDriverBench } from "./sqlite-driver.js";
import { telemetryBench } from "./telemetry.js";
import { tokensBench } from "./tokens.js";
import { untrustedTextBench } from "./untrusted-text.js";
import { describeMachine } from "./machine.js";
import { formatDetails, formatTable, isSkipped, type BenchContext, type Benchmark, type Row } from "./report.js";

const BENCHMARKS: readonly Benchmark[] = [directiveBench, sqliteBench, postgresBench, compilerBench, consumerTypesBench, tokensBench, sqliteDriverBench, untrustedTextBench, pinsBench, searchBench, economyBench, telemetryBench, postgresLoadBench];

interface Args {
  readonly quick: boolean;
  readonly only: ReadonlySet<number> | null;
}

function parseArgs(argv: readonly string[]): Args {
  let quick = false;
  let only: Set<number> | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--quick") quick = true;
    else if (a === "--only" || a.startsWith("--only=")) {
      const v = a === "--only" ? argv[++i] : a.slice("--only=".length);
      only = new Set((v ?? "").split(",").map(Number).filter((n) => Number.isInteger(n)));
    } else throw new Error(`unknown argument ${a} (expected --quick, --only 1,2)`);
  }
  return { quick, only };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  // dist/bench/run.js → the repository root.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const started = process.hrtime.bigint();
  const ctx: BenchContext = { quick: args.quick, root, log: (l) => void process.stderr.write(`[bench] ${l}\n`) };
  const rows: Row[] = [];
  let crashed = false;
  for (const b of BENCHMARKS) {
    if (args.only !== null && !args.only.has(b.id)) continue;
    const t0 = process.hrtime.bigint();
    ctx.log(`${b.id}. ${b.title}${args.quick ? " (quick)" : ""}`);
    try {
      rows.push(...(await b.run(ctx)));
    } catch (err) {
      crashed = true;
      const message = err instanceof Error ? err.message : String(err);
      ctx.log(`${b.id} failed: ${err instanceof Error ? (err.stack ?? message) : message}`);
      rows.push({ bench: b.id, name: b.title, skipped: `failed: ${message.split("\n")[0]}` });
    }
    ctx.log(`${b.id} done in ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)} s`);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const out = [
    `# pruneguard benchmarks${args.quick ? " (quick)" : ""}`,
    "",
    `Machine: ${describeMachine(root)}`,
    "",
    formatTable(rows),
    "",
    formatDetails(rows),
    "",
    `${rows.filter((r) => !isSkipped(r)).length} figures, ${rows.filter(isSkipped).length} skipped, in ${seconds.toFixed(1)} s.`,
    "",
  ];
  process.stdout.write(out.join("\n"));
  return crashed ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
