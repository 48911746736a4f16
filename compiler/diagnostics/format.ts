/**
 * Diagnostic formatting, kept apart from the diagnostics themselves: `pretty` prints them the way `tsc`
 * does (`file:line:col - error PG2003: message` and a code frame); `json` prints the same data.
 */
import type { Diagnostic } from "./diagnostic.js";

export interface FormatOptions {
  /** Source text by reported path, for code frames. Files not in it are printed without a frame. */
  readonly sources?: ReadonlyMap<string, string>;
  /** ANSI colours. Off unless asked for. */
  readonly color?: boolean;
}

const paint = (on: boolean, code: string, s: string) => (on ? `\u001b[${code}m${s}\u001b[0m` : s);

/** Control characters other than tab and newline, and the two JavaScript line separators. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * Text from a policy (a file name, a value quoted in a message) as a terminal should print it: an escape
 * sequence in a file name must not repaint or clear the reader's screen, so control characters are shown
 * as `\uXXXX`.
 */
export function printable(s: string): string {
  return s.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function formatDiagnostic(d: Diagnostic, options: FormatOptions = {}): string {
  const color = options.color ?? false;
  const category = paint(color, d.category === "error" ? "91" : "93", d.category);
  const code = paint(color, "90", d.code);
  const where = d.location ? `${paint(color, "96", printable(d.location.file))}:${paint(color, "93", String(d.location.line))}:${paint(color, "93", String(d.location.column))} - ` : "";
  let out = `${where}${category} ${code}: ${printable(d.message)}`;
  const source = d.location ? options.sources?.get(d.location.file) : undefined;
  if (d.location && source !== undefined) out += `\n\n${codeFrame(source, d.location, color, d.category)}`;
  for (const r of d.related) out += `\n  ${printable(r.location.file)}:${r.location.line}:${r.location.column}: ${printable(r.message)}`;
  return out;
}

/** The tsc-style frame: the first line of the span with a `~` underline. */
export function codeFrame(source: string, loc: NonNullable<Diagnostic["location"]>, color = false, category: Diagnostic["category"] = "error"): string {
  const lines = source.split(/\r?\n/);
  // One replacement character per control character, so the underline stays under the right columns.
  const text = (lines[loc.line - 1] ?? "").replace(CONTROL, "\ufffd");
  const gutter = String(loc.line);
  const start = Math.min(loc.column - 1, text.length);
  const end = loc.endLine === loc.line ? Math.max(loc.endColumn - 1, start + 1) : Math.max(text.length, start + 1);
  const underline = " ".repeat(start) + "~".repeat(Math.max(1, end - start));
  return `${paint(color, "7", gutter)} ${text}\n${paint(color, "7", " ".repeat(gutter.length))} ${paint(color, category === "error" ? "91" : "93", underline)}`;
}

export function summarize(ds: readonly Diagnostic[]): { errors: number; warnings: number } {
  let errors = 0;
  let warnings = 0;
  for (const d of ds) d.category === "error" ? errors++ : warnings++;
  return { errors, warnings };
}

/** All diagnostics, a blank line between each, and tsc's summary line. Empty string when there are none. */
export function formatDiagnostics(ds: readonly Diagnostic[], options: FormatOptions = {}): string {
  if (ds.length === 0) return "";
  const { errors, warnings } = summarize(ds);
  const parts = [`Found ${errors} error${errors === 1 ? "" : "s"}`];
  if (warnings > 0) parts.push(`${warnings} warning${warnings === 1 ? "" : "s"}`);
  return `${ds.map((d) => formatDiagnostic(d, options)).join("\n\n")}\n\n${parts.join(" and ")}.\n`;
}

/** The JSON form: the same diagnostics as data, plus the counts. */
export function diagnosticsToJson(ds: readonly Diagnostic[]): { diagnostics: readonly Diagnostic[]; summary: { errors: number; warnings: number } } {
  return { diagnostics: ds, summary: summarize(ds) };
}
