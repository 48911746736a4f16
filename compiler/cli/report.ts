/**
 * Printing a compilation's diagnostics in the chosen format, and errors; shared by every command. Nothing here
 * loads commander (its options are built in `options.ts`): `compile` and `check` print through this module
 * on the path that never loads commander (`direct.ts`).
 */
import type { AddHelpTextContext } from "commander";
import type { CompileResult } from "../index.js";
import { diagnosticsToJson, formatDiagnostics, MAX_WIDTH, MIN_WIDTH, printable, wrapHanging, wrapLines } from "../diagnostics/format.js";
import { CliError, ExitCode, type CliIO } from "./context.js";

/**
 * The widest line of the CLI's text (explain, diff, audit, init, `--help`): what a code review pane or a
 * terminal shows without wrapping. A narrower terminal, or a narrower `COLUMNS`, narrows it.
 */
export const TEXT_WIDTH = 120;

/** `--help` where no width is known (a pipe): commander's own default. */
const HELP_WIDTH = 80;

/**
 * The width text printed on `stream` is laid out in: the stream's columns (`CliIO.columns`) up to
 * `TEXT_WIDTH`, and `TEXT_WIDTH` when there are none (absent, or `COLUMNS=0`: a table or explain's layout
 * needs some width); never under `MIN_WIDTH`.
 */
export function textWidth(io: CliIO, stream: "stdout" | "stderr" = "stdout"): number {
  const columns = io.columns?.[stream];
  return columns === undefined || columns === 0 ? TEXT_WIDTH : Math.max(MIN_WIDTH, Math.min(columns, TEXT_WIDTH));
}

/** The width `--help` is wrapped at on a stream of `columns`: up to `TEXT_WIDTH`, commander's 80 when there are none. */
export function helpWidth(columns: number | undefined): number {
  return columns === undefined || columns === 0 ? HELP_WIDTH : Math.min(columns, TEXT_WIDTH);
}

/**
 * The width diagnostics, errors and one-line messages are wrapped at on `stream`: its columns up to
 * `MAX_WIDTH` (in a pipe, a file or a CI log, `processIO` gives a 120-column terminal's, so 100). 0 when
 * there are none (absent, `COLUMNS=0`) or they are under `MIN_WIDTH`: each message then stays on one line.
 * Either way a diagnostic's first line is its `file:line:col - error PGnnnn: ` header and the start of its
 * message, for grep and CI problem matchers.
 */
export function messageWidth(io: CliIO, stream: "stdout" | "stderr" = "stderr"): number {
  const columns = io.columns?.[stream];
  return columns === undefined || columns < MIN_WIDTH ? 0 : Math.min(columns, MAX_WIDTH);
}

/**
 * A message (an error, a summary, a note) for `stream`, wrapped as diagnostics are: at `messageWidth`,
 * continuation lines indented by two spaces, a quoted `code span` kept whole.
 */
export function fitMessage(io: CliIO, text: string, stream: "stdout" | "stderr" = "stderr"): string {
  return wrapHanging(text, messageWidth(io, stream), { indent: "  ", codeSpans: true });
}

export type OutputFormat = "pretty" | "json";

/**
 * The end of every command's `--help`: what its exit codes mean, any notes, and examples to copy, laid out
 * at the width commander wraps the rest of the help at (`helpWidth`).
 */
export function helpFooter(exitCodes: string, examples: readonly string[], notes: readonly string[] = []): (context: AddHelpTextContext) => string {
  return ({ error, command }) => {
    const output = command.configureOutput();
    const width = (error ? output.getErrHelpWidth?.() : output.getOutHelpWidth?.()) ?? HELP_WIDTH;
    return [
      "",
      wrapHanging(`Exit codes: ${exitCodes}`, width, { indent: "  " }),
      ...notes.map((n) => wrapHanging(n, width, { indent: "" })),
      "",
      "Examples:",
      ...examples.flatMap((e) => exampleLines(e, width)),
    ].join("\n");
  };
}

/**
 * An example command as lines of at most `width` columns: on one line when it fits; else its `# comment`
 * goes on a line of its own above it, and a command still too long is continued with ` \` (a shell reads it
 * as one line), so every example stays copyable.
 */
export function exampleLines(example: string, width: number): string[] {
  if (2 + example.length <= width) return [`  ${example}`];
  const m = /^(.*?\S)\s+# (.*)$/.exec(example);
  const command = m ? m[1]! : example;
  const out = m ? wrapLines(m[2]!, width - 4).map((l) => `  # ${l}`) : [];
  const parts = wrapLines(command, width - 6, { first: width - 4 });
  out.push(...parts.map((p, i) => `${i === 0 ? "  " : "    "}${p}${i < parts.length - 1 ? " \\" : ""}`));
  return out;
}

/** `--format json` (or `--format=json`) anywhere in the arguments: errors are then JSON on stdout too. */
export function wantsJson(argv: readonly string[]): boolean {
  return argv.some((a, i) => a === "--format=json" || (a === "--format" && argv[i + 1] === "json"));
}

/** The JSON an error (exit 2) prints on stdout under `--format json`: one stable shape for every command. */
export function errorJson(message: string): string {
  return `${JSON.stringify({ error: { message, exitCode: 2 } }, null, 2)}\n`;
}

/**
 * A command that threw: one line on stderr (`pruneguard: …`, with `internal error: ` unless it is a
 * `CliError`), the same as JSON on stdout under `--format json`, exit code 2. Never a stack trace.
 */
export function reportFailure(io: CliIO, argv: readonly string[], error: unknown): ExitCode {
  // A missing optional peer (`pg`) says what to install; it is the user's setup, not the CLI's bug.
  const expected = error instanceof CliError || (error instanceof Error && error.name === "MissingPeerError");
  const message = `${expected ? "" : "internal error: "}${error instanceof Error ? error.message : String(error)}`;
  // A message may quote what a pull request planted (a pattern, a path): no escape sequence reaches the terminal.
  io.stderr(`${fitMessage(io, `pruneguard: ${printable(message)}`)}\n`);
  if (wantsJson(argv)) io.stdout(errorJson(message));
  return ExitCode.usage;
}

export function printDiagnostics(io: CliIO, result: Pick<CompileResult, "diagnostics" | "sources">, format: OutputFormat, extra: Record<string, unknown> = {}): void {
  if (format === "json") {
    io.stdout(`${JSON.stringify({ ...diagnosticsToJson(result.diagnostics), ...extra }, null, 2)}\n`);
    return;
  }
  const text = formatDiagnostics(result.diagnostics, { sources: result.sources, color: io.color, width: messageWidth(io) });
  if (text) io.stderr(text);
}
