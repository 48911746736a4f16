/** A plain-text table for terminals and code review: padded columns, a rule under the header. */
import { wrapHanging, wrapLines } from "../diagnostics/format.js";

/**
 * A cell may hold several lines (`\n`). With `maxWidth`, the widest columns are narrowed until the table
 * fits (never below their header or longest word), and their cells wrap onto continuation lines, so a
 * reviewer's terminal does not wrap them.
 */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[], options: { readonly maxWidth?: number } = {}): string {
  const longest = (cell: string) => most(cell.split("\n").map((l) => l.length));
  const widths = header.map((h, i) => most(rows.map((r) => longest(r[i] ?? "")), h.length));
  if (options.maxWidth !== undefined) fit(widths, header, rows, options.maxWidth);
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  const lines = (cells: readonly string[]): string[] => {
    const wrapped = cells.map((c, i) => c.split("\n").flatMap((l) => wrapLines(l, widths[i] ?? 0)));
    const height = Math.max(1, ...wrapped.map((w) => w.length));
    return Array.from({ length: height }, (_, k) => line(wrapped.map((w) => w[k] ?? "")));
  };
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.flatMap(lines)].join("\n");
}

/** Narrows the widest column, one character at a time, until the columns and their gaps fit `maxWidth`. */
function fit(widths: number[], header: readonly string[], rows: readonly (readonly string[])[], maxWidth: number): void {
  const floor = header.map((h, i) => most(rows.map((r) => longestWord(r[i] ?? "")), h.length));
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  while (total() > maxWidth) {
    let widest = -1;
    for (const [i, w] of widths.entries()) if (w > floor[i]! && (widest < 0 || w > widths[widest]!)) widest = i;
    if (widest < 0) return;
    widths[widest]!--;
  }
}

const longestWord = (text: string): number => most(text.split(/[ \n]/).map((w) => w.length));

/**
 * The largest of `ns` and `least`. Not `Math.max(...ns)`, which passes each as an argument, on the stack:
 * rows, lines and words come from a policy, and a value may hold tens of thousands of them.
 */
export function most(ns: readonly number[], least = 0): number {
  let m = least;
  for (const n of ns) if (n > m) m = n;
  return m;
}

/**
 * `text` wrapped to `width`, continuation lines indented by `indent` spaces more than the first: the
 * compiler's one word wrapper (`wrapHanging`), for lines whose continuation hangs under their own indent.
 */
export function wrapIndented(text: string, width: number, indent: number): string {
  const lead = /^ */.exec(text)![0];
  return wrapHanging(text, width, { indent: `${lead}${" ".repeat(indent)}` });
}
