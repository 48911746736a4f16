/**
 * `pruneguard explain [policies...]`: per kind, where its copies live and what every prune of it can become.
 *
 * This module only registers the command; `explain.run.ts` (the compiler) is loaded when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption, rootOption } from "../options.js";
import { helpFooter, type OutputFormat } from "../report.js";

export interface ExplainFlags {
  readonly root?: string;
  readonly format: OutputFormat | "markdown" | "html";
}

export const registerExplain: RegisterCommand = (program, cli) => {
  program
    .command("explain")
    .description("print, per kind, its store, retention, holds, modes, lossy rule and fate (markdown tables, or one HTML page with each kind's fate as a timeline)")
    .argument("[policies...]", "policy files (*.policy.ts), folders (their **/*.policy.ts) or globs; default: as compile")
    .addOption(rootOption())
    .addOption(formatOption(["markdown", "html"], "json prints results and errors as data on stdout; markdown prints tables; html prints one self-contained page"))
    .addHelpText(
      "after",
      helpFooter("0 explained, 1 a policy has errors (they are printed), 2 usage or I/O error.", [
        "pruneguard explain policies/team-search.policy.ts",
        "pruneguard explain policies                          # every policy in the folder",
        "pruneguard explain policies/org.policy.ts --format json",
        "pruneguard explain policies --format html > policies.html   # one page: stores, kinds, fates as timelines, overlays",
      ]),
    )
    .action(async (inputs: string[], flags: ExplainFlags) => (await import("./explain.run.js")).runExplain(inputs, flags, cli));
};
