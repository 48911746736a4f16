/**
 * `pruneguard compile [inputs...] [--out generated] [--runtime-import pruneguard] [--watch]`: policies →
 * diagnostics → output files (IR JSON, types and guard per policy). Generated files no policy emits any
 * more are removed. Policies unchanged since the last compile (same inputs, compiler and options, outputs
 * untouched, per `<out>/.pruneguard-manifest.json`) are not compiled again; `--force` compiles them all.
 *
 * This module only registers the command; `compile.run.ts` (the compiler, the file watcher) is loaded
 * when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption, rootOption } from "../options.js";
import { helpFooter, type OutputFormat } from "../report.js";

export interface CompileFlags {
  readonly out?: string;
  readonly runtimeImport?: string;
  readonly root?: string;
  readonly format: OutputFormat;
  readonly watch?: boolean;
  readonly force?: boolean;
}

export const registerCompile: RegisterCommand = (program, cli) => {
  program
    .command("compile")
    .description("compile policy files to IR, branded types and guard modules")
    .argument("[inputs...]", "policy files, folders (their **/*.policy.ts) or globs", [])
    .option("--out <dir>", "output directory (default: package.json \"pruneguard\".out, else generated)")
    .option("--runtime-import <specifier>", "the module generated guards import the runtime from (default: package.json \"pruneguard\".runtimeImport, else pruneguard)")
    .addOption(rootOption())
    .addOption(formatOption())
    .option("--watch", "recompile when a policy file changes")
    .option("--force", "ignore the incremental manifest (<out>/.pruneguard-manifest.json): recompile every policy")
    .addHelpText(
      "after",
      helpFooter("0 written (warnings allowed), 1 the policies have errors and nothing was written, 2 usage or I/O error.", [
        "pruneguard compile                                   # package.json \"pruneguard\" config, else policies/**/*.policy.ts → generated/",
        "pruneguard compile policies --out generated --runtime-import pruneguard",
        "pruneguard compile --watch",
      ]),
    )
    .action(async (inputs: string[], flags: CompileFlags) => (await import("./compile.run.js")).runCompile(inputs, flags, cli));
};
