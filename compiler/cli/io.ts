/** The process's streams as a `CliIO`: what `bin/pruneguard.js` runs every command with. */
import { outputColumns } from "../diagnostics/format.js";
import type { CliIO } from "./context.js";

/**
 * Whether to print ANSI colours: `FORCE_COLOR` wins (`0` or `false` turns colour off, anything else on),
 * then a non-empty `NO_COLOR` turns it off, else colour when diagnostics go to a terminal.
 */
export function colorEnabled(env: Readonly<Record<string, string | undefined>>, isTTY: boolean): boolean {
  const force = env["FORCE_COLOR"];
  if (force !== undefined) return force !== "0" && force !== "false";
  if (env["NO_COLOR"] !== undefined && env["NO_COLOR"] !== "") return false;
  return isTTY;
}

export const processIO = (): CliIO => ({
  cwd: process.cwd(),
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  color: colorEnabled(process.env, process.stderr.isTTY === true),
  // `COLUMNS` when set (a CI log or a test can ask for a width; 0 for none), else each stream's terminal
  // width, else (a pipe, `| tee`, a file) a 120-column terminal's: no line of a CI log is wider.
  columns: { stdout: outputColumns(process.stdout), stderr: outputColumns(process.stderr) },
});
