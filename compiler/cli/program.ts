/**
 * The `pruneguard` command line as a commander program: every command, its options and `--help`. `main.ts`
 * runs it for everything `direct.ts` does not take (help, version, usage errors, every other command).
 *
 * Adding a command: write `commands/<name>.ts` exporting a `RegisterCommand`, add it to `COMMANDS`.
 * Start-up stays cheap because a command module registers its options and help with light imports only
 * (commander, `context.ts`, `options.ts`, `report.ts`) and its action `await import`s the implementation
 * (`commands/<name>.run.ts`): ts-morph, the tokenizer, pg and node:sqlite load only for the command
 * that needs them. test/compiler/cli.test.ts fails if a registration module reaches a heavy dependency.
 */
import { Command, CommanderError } from "commander";
import { registerAudit } from "./commands/audit.js";
import { registerCheck } from "./commands/check.js";
import { registerCompile } from "./commands/compile.js";
import { registerDiff } from "./commands/diff.js";
import { registerExplain } from "./commands/explain.js";
import { registerInit } from "./commands/init.js";
import { registerMigrate } from "./commands/migrate.js";
import { ExitCode, type CliContext, type CliIO, type RegisterCommand } from "./context.js";
import { errorJson, helpFooter, helpWidth, reportFailure, wantsJson } from "./report.js";

export const COMMANDS: readonly RegisterCommand[] = [registerInit, registerCompile, registerCheck, registerExplain, registerDiff, registerMigrate, registerAudit];

export async function runProgram(argv: readonly string[], io: CliIO): Promise<number> {
  let code: number = ExitCode.ok;
  const cli: CliContext = { io, exit: (c) => void (code = c) };
  const program = new Command()
    .name("pruneguard")
    .description("Compile and check pruneguard policies: which span kinds are backed by which stores, and when a prune may be lossy.")
    .version(await version(), "-v, --version")
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      // Commands inherit these: their help, and the footers `helpFooter` lays out, fit the same width.
      getOutHelpWidth: () => helpWidth(io.columns?.stdout),
      getErrHelpWidth: () => helpWidth(io.columns?.stderr),
    })
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      helpFooter(
        "0 clean, 1 diagnostics with errors (check: or stale output; diff: a change loosens a policy; audit --verify: a broken chain), 2 usage or I/O error.",
        [
          "pruneguard init",
          "pruneguard compile policies --out generated",
          "pruneguard check --format json",
          "pruneguard explain policies/team.policy.ts",
          "pruneguard diff --base origin/main --format markdown",
        ],
        [
          "Every command takes --format pretty|json and --help (with its exit codes and examples).",
          "Output fits the terminal, or COLUMNS when set, up to 120 columns (diagnostics: 100); in a pipe or a file, as on a 120-column terminal. A wrapped diagnostic's first line still reads `file:line:col - error PGnnnn: …`; COLUMNS=0 keeps each diagnostic and error on one line.",
        ],
      ),
    );
  for (const register of COMMANDS) register(program, cli);
  if (argv.length === 0) {
    io.stderr(program.helpInformation({ error: true }));
    return ExitCode.usage;
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help") return ExitCode.ok;
      // Commander has printed its message on stderr already.
      if (wantsJson(argv)) io.stdout(errorJson(error.message.replace(/^error: /, "")));
      return ExitCode.usage;
    }
    return reportFailure(io, argv, error);
  }
}

async function version(): Promise<string> {
  try {
    const { readFile } = await import("node:fs/promises");
    const pkg = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}
