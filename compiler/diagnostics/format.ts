/**
 * Diagnostic formatting, kept apart from the diagnostics themselves: `pretty` prints them the way `tsc`
 * does (`file:line:col - error PG2003: message` and a code frame); `json` prints the same data.
 *
 * A message can run to a few hundred characters (what is wrong, why, and what to write instead). It is
 * wrapped at word boundaries to the output's width (at most `MAX_WIDTH`), continuation lines indented, so it
 * is not left to the terminal to break words, and no line of a CI log is a few hundred columns wide; a
 * quoted `code span` is kept on one line when it fits. The width is `COLUMNS` when it is set (so a CI log or
 * a test can ask for one), else the terminal's; anywhere else (a pipe, a CI log, a file) it is that of a
 * `DEFAULT_COLUMNS` terminal. Wrapping never moves the header: the first line of a diagnostic is always
 * `file:line:col - error PGnnnn: ` and the start of its message, which is what grep and a CI problem matcher
 * read. `COLUMNS=0` asks for no wrapping at all: each message on its one line.
 *
 * This module also holds the compiler's one implementation of word wrapping (`wrapLines`, `wrapHanging`):
 * the CLI's text, tables and `--help` footers, and the comments of generated code, wrap with it.
 */
import type { styleText } from "node:util";
import type { Diagnostic } from "./diagnostic.js";

export interface FormatOptions {
  /** Source text by reported path, for code frames. Files not in it are printed without a frame. */
  readonly sources?: ReadonlyMap<string, string>;
  /** ANSI colours. Off unless asked for. */
  readonly color?: boolean;
  /**
   * The column messages are wrapped at; `0` never wraps. Default: `terminalWidth(process.stderr)`, where
   * the CLI prints diagnostics: `COLUMNS`, else the terminal's width, else `DEFAULT_COLUMNS`, up to
   * `MAX_WIDTH`; no wrapping for `COLUMNS=0`.
   */
  readonly width?: number;
}

/** The widest a wrapped message is, on however wide a terminal: prose is hard to read in longer lines. */
export const MAX_WIDTH = 100;

/** Narrower than this, wrapping would put a word or two on each line: it is not done. */
export const MIN_WIDTH = 40;

/**
 * The columns output is laid out for when neither `COLUMNS` nor a terminal says (a pipe, `| tee`, a file, a
 * CI log): a 120-column terminal's, so that no line of a log is wider.
 */
export const DEFAULT_COLUMNS = 120;

/** Continuation lines of a wrapped message start with this. */
const INDENT = "  ";

/** The environment variables output width is read from. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * The width `COLUMNS` asks for: a whole number, else `undefined` (unset, empty, or not a number). As for
 * `ls` and Python's `shutil.get_terminal_size`, it wins over the terminal's own width; as for GNU `ls`,
 * `COLUMNS=0` means no limit: messages are not wrapped.
 */
export function columnsFromEnv(env: Env = process.env): number | undefined {
  const raw = env["COLUMNS"]?.trim();
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

/**
 * The columns output to `stream` may use: `COLUMNS` when set (`0`: no limit), else the terminal's width,
 * else (a pipe, a file, a terminal that does not say) `DEFAULT_COLUMNS`.
 */
export function outputColumns(stream: { readonly isTTY?: boolean; readonly columns?: number } | undefined, env: Env = process.env): number {
  const terminal = stream?.isTTY === true && stream.columns !== undefined && stream.columns > 0 ? stream.columns : undefined;
  return columnsFromEnv(env) ?? terminal ?? DEFAULT_COLUMNS;
}

/**
 * The width to wrap diagnostics at when printing to `stream`: its `outputColumns` (`COLUMNS`, the
 * terminal's width, else `DEFAULT_COLUMNS`) up to `MAX_WIDTH`; 0 (no wrapping) for `COLUMNS=0`, or a width
 * under `MIN_WIDTH`.
 */
export function terminalWidth(stream: { readonly isTTY?: boolean; readonly columns?: number } | undefined, env: Env = process.env): number {
  const columns = outputColumns(stream, env);
  return columns < MIN_WIDTH ? 0 : Math.min(columns, MAX_WIDTH);
}

export interface WrapOptions {
  /** Columns the first line may use (default `width`): less when it follows a header on the same line. */
  readonly first?: number;
  /** Keep a backtick-quoted `code span`, and the text glued to it, on one line when it fits one. */
  readonly codeSpans?: boolean;
}

/**
 * `text` broken into lines of at most `width` columns (the first of at most `options.first`), greedily, at
 * spaces only: a word longer than a line gets a line of its own and overflows it rather than being cut, so
 * nothing a reader may copy (a path, a URL, an identifier) is split. Line breaks already in the text are
 * kept; a line that fits is returned as it is, spaces and all; lines end without trailing spaces. A width of
 * 0 or less returns the text's lines as they are.
 */
export function wrapLines(text: string, width: number, options: WrapOptions = {}): string[] {
  const paragraphs = text.split("\n");
  if (width <= 0) return paragraphs;
  const out: string[] = [];
  for (const paragraph of paragraphs) {
    let room = out.length === 0 ? (options.first ?? width) : width;
    if (paragraph.length <= room) {
      out.push(paragraph);
      continue;
    }
    let line = "";
    let started = false;
    for (const unit of options.codeSpans ? units(paragraph, width) : paragraph.split(" ")) {
      if (started && line.length + 1 + unit.length > room) {
        out.push(line.trimEnd());
        room = width;
        line = unit;
      } else line = started ? `${line} ${unit}` : unit;
      // A leading space (an empty unit) starts nothing: the first word is placed whatever its length.
      started = line !== "";
    }
    // A trailing space leaves an empty last unit: no empty line for it.
    if (line !== "" || out.length === 0) out.push(line.trimEnd());
  }
  return out;
}

/**
 * `text` wrapped to `width` columns with a hanging indent: its first line starts at column `start` (after a
 * header printed before it) and keeps the text's own leading spaces; every later line, and every line after
 * a line break in the text, starts with `indent`. A width of 0 or less returns the text as it is.
 */
export function wrapHanging(text: string, width: number, options: { readonly indent?: string; readonly start?: number; readonly codeSpans?: boolean } = {}): string {
  if (width <= 0) return text;
  const indent = options.indent ?? INDENT;
  const lead = /^ */.exec(text)![0];
  const lines = wrapLines(text.slice(lead.length), width - indent.length, { first: width - (options.start ?? 0) - lead.length, codeSpans: options.codeSpans === true });
  return `${lead}${lines.join(`\n${indent}`)}`;
}

/**
 * A diagnostic's message wrapped at `width` columns, its first line starting at column `start` (after the
 * `file:line:col - error PGnnnn: ` header), later lines indented by `INDENT`. Breaks only at spaces, and
 * not inside a backtick-quoted span that fits on a line; a word longer than a line overflows it. Line
 * breaks already in the text are kept. `width` 0 returns the text as it is.
 */
export function wrapText(text: string, width: number, start = 0): string {
  return wrapHanging(text, width, { indent: INDENT, start, codeSpans: true });
}

/**
 * The units a line may break between: words, with a backtick span (spaces and all) and the text glued to it
 * (`` (`x`, ``) one unit; a unit longer than `room` that has spaces is broken at them after all.
 */
function units(paragraph: string, room: number): string[] {
  const out: string[] = [];
  let unit = "";
  let quoted = false;
  // Word by word (a character loop built each unit one concatenation at a time): the space before a word
  // belongs to the unit when a backtick span is open, and the span's state flips with each backtick.
  const words = paragraph.split(" ");
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (i > 0 && quoted) unit += ` ${word}`;
    else {
      if (unit !== "") out.push(unit);
      unit = word;
    }
    for (let at = word.indexOf("`"); at >= 0; at = word.indexOf("`", at + 1)) quoted = !quoted;
  }
  if (unit !== "") out.push(unit);
  return out.flatMap((u) => (u.length > room && u.includes(" ") ? u.split(" ").filter((w) => w !== "") : [u]));
}

/** The colours of a diagnostic, by their names in `util.inspect.colors`. */
type Style = Parameters<typeof styleText>[0];

/**
 * `s` in `style` when colour is on. Whether it is on is the caller's decision (the CLI's `colorEnabled`:
 * `FORCE_COLOR`, `NO_COLOR`, whether stderr is a terminal), so `styleText` is told not to check a stream
 * itself: by default it would look at stdout, where diagnostics do not go.
 */
const paint = (on: boolean, style: Style, s: string): string => (on ? util().styleText(style, s, { validateStream: false }) : s);

/**
 * `node:util`, taken when colour is first asked for: imported as an ES module at load, its facade reads every
 * export, `TextDecoder` and `diff` among them, which costs a `check` with nothing to do more than its
 * own work on a small project (BENCHMARKS.md, figure 4).
 */
const util = (): typeof import("node:util") => process.getBuiltinModule("node:util");

/**
 * Control characters other than tab and newline, the two JavaScript line separators, and the invisible and
 * bidirectional formatting characters (a U+202E in a quoted name reverses what the reader sees after it).
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/**
 * Text from a policy (a file name, a value quoted in a message) as a terminal should print it: an escape
 * sequence in a file name must not repaint or clear the reader's screen, nor an invisible character hide
 * or reorder text, so such characters are shown as `\uXXXX`.
 */
export function printable(s: string): string {
  return s.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function formatDiagnostic(d: Diagnostic, options: FormatOptions = {}): string {
  const color = options.color ?? false;
  const category = paint(color, d.category === "error" ? "redBright" : "yellowBright", d.category);
  const code = paint(color, "gray", d.code);
  const where = d.location ? `${paint(color, "cyanBright", printable(d.location.file))}:${paint(color, "yellowBright", String(d.location.line))}:${paint(color, "yellowBright", String(d.location.column))} - ` : "";
  const header = `${d.location ? `${printable(d.location.file)}:${d.location.line}:${d.location.column} - ` : ""}${d.category} ${d.code}: `;
  const width = options.width ?? terminalWidth(process.stderr);
  let out = `${where}${category} ${code}: ${wrapText(printable(d.message), width, header.length)}`;
  const source = d.location ? options.sources?.get(d.location.file) : undefined;
  if (d.location && source !== undefined) out += `\n\n${codeFrame(source, d.location, color, d.category)}`;
  // A related location's line is wrapped like the message, under it.
  for (const r of d.related) out += `\n${wrapHanging(`  ${printable(r.location.file)}:${r.location.line}:${r.location.column}: ${printable(r.message)}`, width, { indent: "    ", codeSpans: true })}`;
  return out;
}

/** The tsc-style frame: the first line of the span with a `~` underline. */
/** The most characters of a source line a code frame shows: a longer line is shown around the location, cut with `…`. */
export const MAX_FRAME_TEXT = 100;

/** The last source split into lines: the diagnostics of one file share it (10,000 of them on one file split it once). */
let splitCache: { readonly source: string; readonly lines: readonly string[] } | undefined;

function sourceLines(source: string): readonly string[] {
  if (splitCache?.source !== source) splitCache = { source, lines: source.split(/\r?\n/) };
  return splitCache.lines;
}

export function codeFrame(source: string, loc: NonNullable<Diagnostic["location"]>, color = false, category: Diagnostic["category"] = "error"): string {
  const line = sourceLines(source)[loc.line - 1] ?? "";
  const gutter = String(loc.line);
  let start = Math.min(loc.column - 1, line.length);
  let end = loc.endLine === loc.line ? Math.max(loc.endColumn - 1, start + 1) : Math.max(line.length, start + 1);
  // A long line (a minified or planted one) is shown around the location: a frame stays one screen line, and
  // thousands of diagnostics on one long line cost thousands of short frames, not thousands of copies of it.
  let from = 0;
  let to = line.length;
  if (line.length > MAX_FRAME_TEXT) {
    from = Math.max(0, Math.min(start - 20, line.length - MAX_FRAME_TEXT));
    to = Math.min(line.length, from + MAX_FRAME_TEXT);
  }
  const before = from > 0 ? "…" : "";
  // One replacement character per control character, so the underline stays under the right columns.
  const text = `${before}${line.slice(from, to).replace(CONTROL, "\ufffd")}${to < line.length ? "…" : ""}`;
  start = start - from + before.length;
  end = Math.min(end, to) - from + before.length;
  const underline = " ".repeat(start) + "~".repeat(Math.max(1, end - start));
  return `${paint(color, "inverse", gutter)} ${text}\n${paint(color, "inverse", " ".repeat(gutter.length))} ${paint(color, category === "error" ? "redBright" : "yellowBright", underline)}`;
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
