/**
 * `pruneguard init`: sets a package up for pruneguard so that it type-checks, checks and tests clean as init
 * leaves it — a starting organisation policy and its compiled guards, a test of it, package.json (`"type":
 * "module"`, a test script, the `"pruneguard"` field; a minimal one where there is none), a tsconfig.json for
 * TypeScript 6 and 7, the ignore rule for the compile manifest — and prints the steps of a CI job. It creates
 * only what is missing and never overwrites a file: what exists is kept, and said so, so a second run writes
 * nothing. A project with policies of its own does not get the starting one (nor its guards or test) back.
 * It never writes outside the project or through a symbolic link either (`init.confine.ts`): a repository can
 * plant links where init writes.
 *
 * This module only registers the command; `init.run.ts` is loaded when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption } from "../options.js";
import { helpFooter, type OutputFormat } from "../report.js";

export interface InitFlags {
  readonly name: string;
  readonly policies: string;
  readonly out: string;
  readonly format: OutputFormat;
}

export const registerInit: RegisterCommand = (program, cli) => {
  program
    .command("init")
    .description("set this package up: a starting org policy, its guards and test, package.json, tsconfig.json, .gitignore; prints CI steps")
    .option("--name <policy>", "the policy's name (lower-case words with dashes); its file is <policies>/<name>.policy.ts", "org")
    .option("--policies <dir>", "the folder policies live in", "policies")
    .option("--out <dir>", "the folder compile writes generated code to", "generated")
    .addOption(formatOption([], "json prints what init did, and the settings, as data"))
    .addHelpText(
      "after",
      helpFooter("0 set up (what was missing written, the rest kept), 1 package.json has a \"type\" other than module or a \"pruneguard\" field other than init's (a warning names it), 2 usage or I/O error (a path init would use is a symbolic link or outside the project; then nothing is written).", [
        "pruneguard init                                      # then: npx tsc --noEmit -p . && npx pruneguard check && npm test",
        "pruneguard init --name acme --policies config/policies --format json",
      ]),
    )
    .action(async (flags: InitFlags) => (await import("./init.run.js")).runInit(flags, cli));
};
