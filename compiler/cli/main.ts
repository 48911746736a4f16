/**
 * The `pruneguard` command line. `bin/pruneguard.js` calls `main(argv)` and exits with what it returns:
 * 0 clean, 1 diagnostics with errors, 2 usage or I/O error. No input ever produces a stack trace.
 *
 * `compile` and `check` with plain arguments (inputs and the options they document) run directly
 * (`direct.ts`), without loading commander or any other command: a `check` with nothing to do is mostly
 * Node's start-up, and commander and the registrations were a third of the rest (BENCHMARKS.md, figure 4).
 * Everything else — `--help`, `--version`, a usage error, any other command — is the commander program
 * (`program.ts`), loaded when needed; the direct path declines anything it does not take exactly as
 * commander would.
 */
import type { CliIO } from "./context.js";
import { parseDirect, runDirect } from "./direct.js";
import { processIO } from "./io.js";

export { colorEnabled } from "./io.js";

export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  const direct = parseDirect(argv);
  if (direct !== undefined) return runDirect(direct, argv, io);
  return (await import("./program.js")).runProgram(argv, io);
}
