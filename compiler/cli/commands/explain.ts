/**
 * `pruneguard explain <policy>`: per kind, where its copies live and what every prune of it can become.
 *
 * This module only registers the command; `explain.run.ts` (the compiler) is loaded when it runs.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption, type OutputFormat } from "../report.js";

export const registerExplain: RegisterCommand = (program, cli) => {
  program
    .command("explain")
    .description("print, per kind, its store, retention, holds, modes, lossy rule and fate")
    .argument("<policy>", "a policy file")
    .addOption(formatOption())
    .action(async (file: string, flags: { format: OutputFormat }) => (await import("./explain.run.js")).runExplain(file, flags, cli));
};
