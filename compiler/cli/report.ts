/** Printing a compilation's diagnostics in the chosen format; shared by every command. */
import { Option } from "commander";
import type { CompileResult } from "../index.js";
import { diagnosticsToJson, formatDiagnostics } from "../diagnostics/format.js";
import type { CliIO } from "./context.js";

export type OutputFormat = "pretty" | "json";

export const formatOption = () => new Option("--format <format>", "output format").choices(["pretty", "json"]).default("pretty");

export function printDiagnostics(io: CliIO, result: Pick<CompileResult, "diagnostics" | "sources">, format: OutputFormat, extra: Record<string, unknown> = {}): void {
  if (format === "json") {
    io.stdout(`${JSON.stringify({ ...diagnosticsToJson(result.diagnostics), ...extra }, null, 2)}\n`);
    return;
  }
  const text = formatDiagnostics(result.diagnostics, { sources: result.sources, color: io.color });
  if (text) io.stderr(text);
}
