/**
 * `pruneguard diff <old> <new>` (files or folders of policies), or `pruneguard diff --base <rev> [paths...]`
 * (the old side read from git at that revision, without checking it out): per policy and kind, what
 * changed and what it does to each kind's fate over the session, each change marked by the overlay rule
 * as loosening, tightening or neutral. Exit 1 when anything loosens, so CI can gate a pull request on it.
 *
 * This module only registers the command; `diff.run.ts` (the compiler, git) is loaded when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption, rootOption } from "../options.js";
import { helpFooter, type OutputFormat } from "../report.js";

export interface DiffFlags {
  readonly base?: string;
  readonly root?: string;
  readonly rename?: readonly string[];
  readonly format: OutputFormat | "markdown";
}

export const registerDiff: RegisterCommand = (program, cli) => {
  program
    .command("diff")
    .description("compare two versions of the policies: what changed, what it does to each kind's fate, and whether it loosens (exit 1)")
    .argument("[sides...]", "<old> <new>: policy files or folders; with --base, the paths to compare (default: as compile)")
    .option("--base <rev>", "read the old side from git at this revision (git show <rev>:<path>; nothing is checked out), the new side from the working tree")
    .option(
      "--rename <old=new>",
      "pair a renamed policy (org=acme) or kind (org.userTurn=acme.turn) with its old version; repeatable. Unstated renames are paired by what they back; an unpaired added kind that permits a lossy commitment a removed kind refused loosens",
      (value: string, previous: readonly string[] = []) => [...previous, value],
    )
    .addOption(rootOption())
    .addOption(formatOption(["markdown"], "json prints the comparison and errors as data on stdout; markdown prints a table for a pull-request comment"))
    .addHelpText(
      "after",
      helpFooter("0 nothing loosens (tightening and neutral changes are still reported), 1 some change loosens a policy (a kind renamed or moved is compared with the one it replaces), 2 usage or I/O error, or a side that does not compile.", [
        "pruneguard diff policies-v1/org.policy.ts policies/org.policy.ts",
        "pruneguard diff --base origin/main                   # the policies of this branch against the target branch",
        "pruneguard diff --base origin/main policies --format markdown > diff.md   # a pull-request comment",
        "pruneguard diff --base origin/main --rename org=acme --rename org.userTurn=acme.turn   # a policy and a kind renamed",
      ]),
    )
    .action(async (sides: string[], flags: DiffFlags) => (await import("./diff.run.js")).runDiff(sides, flags, cli));
};
