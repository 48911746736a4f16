/** Printing a compilation's diagnostics in the chosen format; shared by every command. */
import { Option } from "commander";
import type { CompileResult } from "../index.js";
import { diagnosticsToJson, formatDiagnostics } from "../diagnostics/format.js";
import type { CliIO } from "./context.js";

export type OutputFormat = "pretty" | "json";

/**
 * `--format pretty|json`, the same on every command; with `json`, errors (exit 2) are JSON on stdout too.
 * A command with more renderings (`diff`: markdown; `explain`: markdown, html) lists them after these two.
 */
export const formatOption = (more: readonly string[] = [], what = "json prints results and errors as data on stdout") =>
  new Option("--format <format>", `output format; ${what}`).choices(["pretty", "json", ...more]).default("pretty");

/** `--root <dir>`: the only folder policy files are read from. */
export const rootOption = () =>
  new Option("--root <dir>", 'the project root: no policy file, import or link outside it is read (default: package.json "pruneguard".root, else the working directory)');

/** The end of every command's `--help`: what its exit codes mean, and examples to copy. */
export function helpFooter(exitCodes: string, examples: readonly string[]): string {
  return ["", `Exit codes: ${exitCodes}`, "", "Examples:", ...examples.map((e) => `  ${e}`)].join("\n");
}

/** `--format json` (or `--format=json`) anywhere in the arguments: errors are then JSON on stdout too. */
export function wantsJson(argv: readonly string[]): boolean {
  return argv.some((a, i) => a === "--format=json" || (a === "--format" && argv[i + 1] === "json"));
}

/** The JSON an error (exit 2) prints on stdout under `--format json`: one stable shape for every command. */
export function errorJson(message: string): string {
  return `${JSON.stringify({ error: { message, exitCode: 2 } }, null, 2)}\n`;
}

export function printDiagnostics(io: CliIO, result: Pick<CompileResult, "diagnostics" | "sources">, format: OutputFormat, extra: Record<string, unknown> = {}): void {
  if (format === "json") {
    io.stdout(`${JSON.stringify({ ...diagnosticsToJson(result.diagnostics), ...extra }, null, 2)}\n`);
    return;
  }
  const text = formatDiagnostics(result.diagnostics, { sources: result.sources, color: io.color });
  if (text) io.stderr(text);
}
