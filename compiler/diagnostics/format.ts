/**
 * Diagnostic formatting, kept apart from the diagnostics themselves: `pretty` prints them the way `tsc`
 * does (`file:line:col - error PG2003: message` and a code frame); `json` prints the same data.
 *
 * A message can run to a few hundred characters (what is wrong, why, and what to write instead). On a
 * terminal it is wrapped at word boundaries to the terminal's width (at most `MAX_WIDTH`), continuation
 * lines indented, so it is not left to the terminal to break words; a quoted `code span` is kept on one line
 * when it fits. Anywhere else (a pipe, a CI log, a file) each diagnostic's message stays on its one line,
 * for grep and for tools that read the first line.
 */
import type { Diagnostic } from "./diagnostic.js";

export interface FormatOptions {
  /** Source text by reported path, for code frames. Files not in it are printed without a frame. */
  readonly sources?: ReadonlyMap<string, string>;
  /** ANSI colours. Off unless asked for. */
  readonly color?: boolean;
  /**
   * The column messages are wrapped at; `0` never wraps. Default: `terminalWidth(process.stderr)`, where
   * the CLI prints diagnostics: the terminal's width up to `MAX_WIDTH`, or no wrapping when it is not a terminal.
   */
  readonly width?: number;
}

/** The widest a wrapped message is, on however wide a terminal: prose is hard to read in longer lines. */
export const MAX_WIDTH = 100;

/** Narrower than this, wrapping would put a word or two on each line: it is not done. */
const MIN_WIDTH = 40;

/** Continuation lines of a wrapped message start with this. */
const INDENT = "  ";

/** The width to wrap at when printing to `stream`: its columns up to `MAX_WIDTH` on a terminal, else 0 (no wrapping). */
export function terminalWidth(stream: { readonly isTTY?: boolean; readonly columns?: number } | undefined): number {
  if (stream?.isTTY !== true) return 0;
  const columns = stream.columns ?? MAX_WIDTH;
  return columns < MIN_WIDTH ? 0 : Math.min(columns, MAX_WIDTH);
}

/**
 * `text` wrapped at `width` columns, its first line starting at column `start` (after the
 * `file:line:col - error PGnnnn: ` header), later lines indented by `INDENT`. Breaks only at spaces, and
 * not inside a backtick-quoted span that fits on a line; a word longer than a line overflows it. Line
 * breaks already in the text are kept. `width` 0 returns the text as it is.
 */
export function wrapText(text: string, width: number, start = 0): string {
  if (width <= 0) return text;
  const room = width - INDENT.length;
  return text
    .split("\n")
    .map((paragraph, p) => {
      const lines: string[] = [];
      let line = "";
      let used = p === 0 ? start : INDENT.length;
      for (const word of words(paragraph, room)) {
        const add = line === "" ? word : ` ${word}`;
        if (line !== "" && used + add.length > width) {
          lines.push(line);
          line = word;
          used = INDENT.length + word.length;
        } else {
          line += add;
          used += add.length;
        }
      }
      lines.push(line);
      return lines.join(`\n${INDENT}`);
    })
    .join(`\n${INDENT}`);
}

/**
 * The units a line may break between: words, with a backtick span (spaces and all) and the text glued to it
 * (`` (`x`, ``) one unit; a unit longer than `room` that has spaces is broken at them after all.
 */
function words(paragraph: string, room: number): string[] {
  const units: string[] = [];
  let unit = "";
  let quoted = false;
  for (const ch of paragraph) {
    if (ch === "`") quoted = !quoted;
    if (ch === " " && !quoted) {
      if (unit !== "") units.push(unit);
      unit = "";
    } else unit += ch;
  }
  if (unit !== "") units.push(unit);
  return units.flatMap((u) => (u.length > room && u.includes(" ") ? u.split(" ").filter((w) => w !== "") : [u]));
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
  const header = `${d.location ? `${printable(d.location.file)}:${d.location.line}:${d.location.column} - ` : ""}${d.category} ${d.code}: `;
  const width = options.width ?? terminalWidth(process.stderr);
  let out = `${where}${category} ${code}: ${wrapText(printable(d.message), width, header.length)}`;
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
