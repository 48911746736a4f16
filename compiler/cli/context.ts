/** What every command gets: where to write, where it runs, and how to say the exit code. */
import type { Command } from "commander";

export interface CliIO {
  readonly cwd: string;
  stdout(text: string): void;
  stderr(text: string): void;
  /** ANSI colours on stdout/stderr. */
  readonly color: boolean;
  /**
   * The width each stream's output should fit. `processIO` always gives one: `COLUMNS` when set, else the
   * terminal's width, else (a pipe, a file, a CI log) a 120-column terminal's. `0` (`COLUMNS=0`) or absent
   * (a test's captured output): no width, so each diagnostic and error message stays on one line, text is
   * kept within 120 columns and `--help` within commander's 80.
   */
  readonly columns?: { readonly stdout?: number | undefined; readonly stderr?: number | undefined };
}

export interface CliContext {
  readonly io: CliIO;
  /** Records the command's exit code (0 clean, 1 diagnostics with errors, 2 usage or I/O error). */
  exit(code: ExitCode): void;
}

export const ExitCode = { ok: 0, diagnostics: 1, usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A usage or I/O problem: printed as one line, exit code 2, never a stack trace. */
export class CliError extends Error {
  override readonly name = "CliError";
}

/** A command module registers itself on the program; adding a command is one file and one line in main.ts. */
export type RegisterCommand = (program: Command, cli: CliContext) => void;
