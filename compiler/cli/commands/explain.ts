/**
 * `pruneguard explain [policies...]`: per kind, where its copies live and what every prune of it can become.
 *
 * This module only registers the command; `explain.run.ts` (the compiler) is loaded when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption, helpFooter, rootOption, type OutputFormat } from "../report.js";

export interface ExplainFlags {
  readonly root?: string;
  readonly format: OutputFormat;
}

export const registerExplain: RegisterCommand = (program, cli) => {
  program
    .command("explain")
    .description("print, per kind, its store, retention, holds, modes, lossy rule and fate")
    .argument("[policies...]", "policy files (*.policy.ts), folders (their **/*.policy.ts) or globs; default: as compile")
    .addOption(rootOption())
    .addOption(formatOption())
    .addHelpText(
      "after",
      helpFooter("0 explained, 1 a policy has errors (they are printed), 2 usage or I/O error.", [
        "pruneguard explain policies/team-search.policy.ts",
        "pruneguard explain policies                          # every policy in the folder",
        "pruneguard explain policies/org.policy.ts --format json",
      ]),
    )
    .action(async (inputs: string[], flags: ExplainFlags) => (await import("./explain.run.js")).runExplain(inputs, flags, cli));
};
