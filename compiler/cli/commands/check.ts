/**
 * `pruneguard check [inputs...]`: exits 1 on any error diagnostic, or when the output folder is stale — it
 * regenerates every file in memory and compares (a drift check for CI, like `drizzle-kit check`).
 */
import * as path from "node:path";
import { compilePolicies } from "../../index.js";
import { emitAll, staleFiles, type StaleFile } from "../../emit/index.js";
import { loadConfig } from "../config.js";
import { ExitCode, type RegisterCommand } from "../context.js";
import { resolveInputs } from "../inputs.js";
import { formatOption, printDiagnostics, type OutputFormat } from "../report.js";

interface CheckFlags {
  readonly out?: string;
  readonly runtimeImport?: string;
  readonly drift: boolean;
  readonly format: OutputFormat;
}

const WHY: Record<StaleFile["state"], string> = {
  missing: "is missing",
  differs: "differs from what the policies compile to",
  orphaned: "was generated from a policy that no longer exists",
};

export const registerCheck: RegisterCommand = (program, cli) => {
  program
    .command("check")
    .description("check policy files and that the output folder is fresh; exit 1 on any error or stale file")
    .argument("[inputs...]", "policy files, folders (their **/*.policy.ts) or globs", [])
    .option("--out <dir>", "the output folder to compare (default: package.json \"pruneguard\".out, else generated)")
    .option("--runtime-import <specifier>", "the runtime module the guards import (default: package.json \"pruneguard\".runtimeImport, else pruneguard)")
    .option("--no-drift", "check the policies only, not the output folder")
    .addOption(formatOption())
    .action(async (inputs: string[], flags: CheckFlags) => {
      const { io } = cli;
      const config = await loadConfig(io.cwd);
      const out = flags.out ?? config.out;
      const r = compilePolicies(await resolveInputs(inputs, io.cwd, config.policies), { cwd: io.cwd });
      const files = emitAll(r.policies, { runtimeImport: flags.runtimeImport ?? config.runtimeImport });
      const stale = flags.drift && !r.hasErrors ? await staleFiles(path.resolve(io.cwd, out), files) : [];
      const shown = (f: StaleFile) => path.posix.join(out.split(path.sep).join("/"), f.path);
      printDiagnostics(io, r, flags.format, flags.drift ? { stale: stale.map((f) => ({ path: shown(f), state: f.state })) } : {});
      if (flags.format === "pretty") {
        for (const f of stale) io.stderr(`${shown(f)} ${WHY[f.state]}\n`);
        if (stale.length > 0) io.stderr(`${stale.length} stale file${stale.length === 1 ? "" : "s"} in ${out}; run \`pruneguard compile\` and commit the result.\n`);
        if (!r.hasErrors && stale.length === 0) {
          const what = `${r.policies.length} polic${r.policies.length === 1 ? "y" : "ies"}`;
          io.stdout(`Checked ${what}: no errors${flags.drift ? `; ${files.length} files in ${out} are fresh` : ""}.\n`);
        }
      }
      cli.exit(r.hasErrors || stale.length > 0 ? ExitCode.diagnostics : ExitCode.ok);
    });
};
