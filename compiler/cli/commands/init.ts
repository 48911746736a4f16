/**
 * `pruneguard init`: sets a package up for pruneguard — a starting organisation policy, the `"pruneguard"`
 * field of package.json, the ignore rule for the compile manifest — and prints what to add to tsconfig and
 * CI. It never overwrites anything: what exists is left as it is, and said so. It never writes outside the
 * project or through a symbolic link either (`init.confine.ts`): a repository can plant links where init writes.
 *
 * This module only registers the command; `init.run.ts` is loaded when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption, helpFooter, type OutputFormat } from "../report.js";

export interface InitFlags {
  readonly name: string;
  readonly policies: string;
  readonly out: string;
  readonly format: OutputFormat;
}

export const registerInit: RegisterCommand = (program, cli) => {
  program
    .command("init")
    .description("set this package up: a starting org policy, the package.json \"pruneguard\" field, the manifest's ignore rule; prints tsconfig and CI settings")
    .option("--name <policy>", "the policy's name (lower-case words with dashes); its file is <policies>/<name>.policy.ts", "org")
    .option("--policies <dir>", "the folder policies live in", "policies")
    .option("--out <dir>", "the folder compile writes generated code to", "generated")
    .addOption(formatOption([], "json prints what init did, and the settings, as data"))
    .addHelpText(
      "after",
      helpFooter("0 everything is set up (written now, or already there as init would write it), 1 something that exists differs and was left alone (it is named), 2 usage or I/O error (no package.json here, or a path init would use is a symbolic link or outside the project; then nothing is written).", [
        "pruneguard init                                      # then: pruneguard compile && pruneguard check",
        "pruneguard init --name acme --policies config/policies --format json",
      ]),
    )
    .action(async (flags: InitFlags) => (await import("./init.run.js")).runInit(flags, cli));
};
