/**
 * `pruneguard check [inputs...]`: exits 1 on any error diagnostic, or when the output folder is stale — it
 * regenerates every file in memory and compares (a drift check for CI, like `drizzle-kit check`). Policies
 * the manifest `compile` wrote shows unchanged, with their outputs untouched, are not compiled again;
 * `--force` rechecks them all.
 *
 * This module only registers the command; `check.run.ts` (the compiler) is loaded when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption, rootOption } from "../options.js";
import { helpFooter, type OutputFormat } from "../report.js";

export interface CheckFlags {
  readonly out?: string;
  readonly runtimeImport?: string;
  readonly drift: boolean;
  readonly root?: string;
  readonly format: OutputFormat;
  readonly force?: boolean;
}

export const registerCheck: RegisterCommand = (program, cli) => {
  program
    .command("check")
    .description("check policy files and that the output folder is fresh; exit 1 on any error or stale file")
    .argument("[inputs...]", "policy files, folders (their **/*.policy.ts) or globs", [])
    .option("--out <dir>", "the output folder to compare (default: package.json \"pruneguard\".out, else generated)")
    .option("--runtime-import <specifier>", "the runtime module the guards import (default: package.json \"pruneguard\".runtimeImport, else pruneguard)")
    .option("--no-drift", "check the policies only, not the output folder")
    .addOption(rootOption())
    .option("--force", "ignore the incremental manifest (<out>/.pruneguard-manifest.json): recheck every policy")
    .addOption(formatOption())
    .addHelpText(
      "after",
      helpFooter("0 no errors and every generated file fresh, 1 errors or stale files, 2 usage or I/O error.", [
        "pruneguard check                                     # in CI: the policies, and that generated/ is what they compile to",
        "pruneguard check policies --no-drift",
        "pruneguard check --format json",
      ]),
    )
    .action(async (inputs: string[], flags: CheckFlags) => (await import("./check.run.js")).runCheck(inputs, flags, cli));
};
