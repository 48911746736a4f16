/** `pruneguard check [inputs...]`: exits 1 on any error diagnostic, or when `--out` holds stale output. */
import * as path from "node:path";
import { compilePolicies } from "../../index.js";
import { emitAll, staleFiles } from "../../emit/index.js";
import { ExitCode, type RegisterCommand } from "../context.js";
import { resolveInputs } from "../inputs.js";
import { formatOption, printDiagnostics, type OutputFormat } from "../report.js";

export const registerCheck: RegisterCommand = (program, cli) => {
  program
    .command("check")
    .description("check policy files; exit 1 on any error (and on stale output with --out)")
    .argument("[inputs...]", "policy files, folders (their **/*.policy.ts) or globs", [])
    .option("--out <dir>", "also fail when this output directory is missing or stale")
    .addOption(formatOption())
    .action(async (inputs: string[], flags: { out?: string; format: OutputFormat }) => {
      const { io } = cli;
      const r = compilePolicies(await resolveInputs(inputs, io.cwd), { cwd: io.cwd });
      const stale = flags.out !== undefined && !r.hasErrors ? await staleFiles(path.resolve(io.cwd, flags.out), emitAll(r.policies)) : [];
      printDiagnostics(io, r, flags.format, flags.out === undefined ? {} : { stale });
      if (flags.format === "pretty") {
        for (const f of stale) io.stderr(`${flags.out}/${f} is stale; run \`pruneguard compile --out ${flags.out}\`\n`);
        if (!r.hasErrors && stale.length === 0) io.stdout(`Checked ${r.policies.length} polic${r.policies.length === 1 ? "y" : "ies"}: no errors.\n`);
      }
      cli.exit(r.hasErrors || stale.length > 0 ? ExitCode.diagnostics : ExitCode.ok);
    });
};
