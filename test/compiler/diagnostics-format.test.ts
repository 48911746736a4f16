// The pretty printer wraps a long message at the output's width (COLUMNS, a terminal's, else a 120-column
// terminal's), and leaves it on one line for COLUMNS=0 (width 0); the compiler's one word wrapper, which the
// CLI's text and generated comments share too.
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { formatDiagnostic, formatDiagnostics } from "../../compiler/index.js";
import { codeFrame, columnsFromEnv, DEFAULT_COLUMNS, MAX_FRAME_TEXT, MAX_WIDTH, outputColumns, terminalWidth, wrapHanging, wrapLines, wrapText } from "../../compiler/diagnostics/format.js";
import { compileOne } from "./helpers.js";

/** A helper call: PG1006 with a suggestion, one of the longest messages (about 250 characters). */
const HELPER = `const toolKind = () => ({ store: "toolLog", modes: ["drop"], lossy: "forbid" } as const);
export default definePolicy({
  name: "p",
  stores: { toolLog: store.sqlite({ retention: hours(2), holds: true }) },
  kinds: { toolResult: toolKind() },
});
`;

describe("wrapping diagnostics", () => {
  const r = compileOne(HELPER);
  const d = r.diagnostics[0]!;

  it("wraps a long message at the width, continuation lines indented, and loses no word", () => {
    expect(d.message.length).toBeGreaterThan(200);
    const printed = formatDiagnostic({ ...d, related: [] }, { width: 100 });
    const lines = printed.split("\n");
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(lines[0]).toMatch(/^p\.policy\.ts:6:24 - error PG1006: `toolKind\(\.\.\.\)` is not a DSL call/);
    for (const line of lines.slice(1)) expect(line).toMatch(/^ {2}\S/);
    expect(lines.join(" ").replace(/\s+/g, " ")).toBe(`p.policy.ts:6:24 - error PG1006: ${d.message}`);
  });

  it("keeps a quoted span that fits on one line whole", () => {
    const printed = formatDiagnostic(d, { width: 100 });
    expect(printed).toContain('`const toolKind = { store: "toolLog", modes: ["drop"], lossy: "forbid" } as const;`');
  });

  it("breaks a quoted span longer than a line at its spaces, and lets one word overflow rather than break it", () => {
    const span = `\`${"word ".repeat(20).trim()}\``;
    const wrapped = wrapText(`before ${span} after`, 40);
    for (const line of wrapped.split("\n")) expect(line.length).toBeLessThanOrEqual(40);
    expect(wrapped.replace(/\n {2}/g, " ")).toBe(`before ${span} after`);
    expect(wrapText(`short ${"x".repeat(60)} end`, 40)).toBe(`short\n  ${"x".repeat(60)}\n  end`);
  });

  it("keeps the code frame and related lines as they are", () => {
    const printed = formatDiagnostic(d, { width: 60, sources: r.sources });
    expect(printed).toContain("\n\n6   kinds: { toolResult: toolKind() },\n                         ~~~~~~~~~~\n  p.policy.ts:2:7: `toolKind` is declared here");
  });

  it("width 0 leaves every message on its one line", () => {
    const printed = formatDiagnostics(r.diagnostics, { width: 0 });
    expect(printed.split("\n")[0]).toBe(`p.policy.ts:6:24 - error PG1006: ${d.message}`);
  });

  it("wraps at the terminal's width up to MAX_WIDTH, and where there is no terminal as a 120-column one would", () => {
    const env = {};
    expect(DEFAULT_COLUMNS).toBe(120);
    expect(terminalWidth(undefined, env)).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: false, columns: 80 }, env)).toBe(MAX_WIDTH);
    expect(terminalWidth({ columns: 80 }, env)).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: true, columns: 80 }, env)).toBe(80);
    expect(terminalWidth({ isTTY: true, columns: 240 }, env)).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: true }, env)).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: true, columns: 0 }, env)).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: true, columns: 20 }, env)).toBe(0);
  });

  it("COLUMNS, when a whole number, is the width anywhere, a pipe too, and wins over the terminal's; COLUMNS=0 never wraps", () => {
    expect(terminalWidth(undefined, { COLUMNS: "120" })).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: false }, { COLUMNS: "72" })).toBe(72);
    expect(terminalWidth({ isTTY: true, columns: 200 }, { COLUMNS: "60" })).toBe(60);
    expect(terminalWidth({ isTTY: false }, { COLUMNS: "20" })).toBe(0);
    for (const zero of ["0", " 0 ", "00"]) {
      expect(columnsFromEnv({ COLUMNS: zero }), zero).toBe(0);
      expect(outputColumns({ isTTY: false }, { COLUMNS: zero }), zero).toBe(0);
      expect(terminalWidth({ isTTY: true, columns: 200 }, { COLUMNS: zero }), zero).toBe(0);
    }
    for (const junk of ["", "-5", "80px", "1e2", "8.5"]) {
      expect(columnsFromEnv({ COLUMNS: junk }), junk).toBeUndefined();
      expect(terminalWidth({ isTTY: false }, { COLUMNS: junk }), junk).toBe(MAX_WIDTH);
    }
    expect(outputColumns({ isTTY: false }, { COLUMNS: "132" })).toBe(132);
    expect(outputColumns({ isTTY: true, columns: 90 }, {})).toBe(90);
    expect(outputColumns({ isTTY: false, columns: 90 }, {})).toBe(DEFAULT_COLUMNS);
    expect(outputColumns(undefined, {})).toBe(DEFAULT_COLUMNS);
  });

  it("colour comes from util.styleText, and only when asked for", () => {
    const colored = formatDiagnostic({ ...d, related: [] }, { width: 0, color: true });
    expect(colored).toContain("\u001b[91merror\u001b[39m \u001b[90mPG1006\u001b[39m");
    expect(stripVTControlCharacters(colored)).toBe(formatDiagnostic({ ...d, related: [] }, { width: 0 }));
    expect(formatDiagnostic(d, { width: 0, sources: r.sources })).not.toContain("\u001b");
  });
});

describe("the one word wrapper (wrapLines, wrapHanging)", () => {
  it("breaks greedily at spaces, never inside a word, and keeps a line that fits as it is", () => {
    expect(wrapLines("aaa bbb ccc ddd", 7)).toEqual(["aaa bbb", "ccc ddd"]);
    expect(wrapLines("a  b", 10)).toEqual(["a  b"]);
    expect(wrapLines("short https://example.com/a/very/long/path end", 10)).toEqual(["short", "https://example.com/a/very/long/path", "end"]);
    expect(wrapLines("one\ntwo three", 5)).toEqual(["one", "two", "three"]);
    expect(wrapLines("no wrapping at all", 0)).toEqual(["no wrapping at all"]);
    // No line ends with the space it was broken at.
    for (const line of wrapLines("aaaa  bbbb cccc  ", 5)) expect(line).not.toMatch(/ $/);
  });

  it("takes a narrower first line, for text that follows a header", () => {
    expect(wrapLines("aaa bbb ccc", 11, { first: 4 })).toEqual(["aaa", "bbb ccc"]);
    expect(wrapHanging("  lead: aaa bbb ccc ddd", 14, { indent: "      " })).toBe("  lead: aaa\n      bbb ccc\n      ddd");
    expect(wrapHanging("x ".repeat(30).trim(), 20, { start: 15, indent: "> " }).split("\n").map((l, i) => (i === 0 ? 15 : 0) + l.length).every((n) => n <= 20)).toBe(true);
  });
});

describe("code frames of long lines", () => {
  it("show a long line around the location, cut with …, with the underline under it", () => {
    const line = `${"a".repeat(500)}BAD${"b".repeat(500)}`;
    const frame = codeFrame(line, { file: "p.policy.ts", line: 1, column: 501, endLine: 1, endColumn: 504 });
    const [text, under] = frame.split("\n") as [string, string];
    expect(text.length).toBeLessThanOrEqual(2 + MAX_FRAME_TEXT + 2);
    expect(text).toMatch(/^1 …a+BADb+…$/);
    expect(text.indexOf("BAD")).toBe(under.indexOf("~~~"));
    expect(under.trimStart()).toBe("~~~");
    // Near either end, one ellipsis only.
    expect(codeFrame(line, { file: "p", line: 1, column: 1, endLine: 1, endColumn: 2 }).split("\n")[0]).toMatch(/^1 a+…$/);
    expect(codeFrame(line, { file: "p", line: 1, column: 1003, endLine: 1, endColumn: 1004 }).split("\n")[0]).toMatch(/^1 …b+$/);
  });

  it("keep thousands of diagnostics on one long line to short frames (a 100 KB line crashed the printer)", () => {
    const line = "x,".repeat(50_000);
    const ds = Array.from({ length: 10_000 }, (_, i) => ({
      code: "PG1001", category: "error" as const, message: "m", related: [],
      location: { file: "p.policy.ts", line: 1, column: 1 + 10 * i, endLine: 1, endColumn: 2 + 10 * i },
    }));
    const text = formatDiagnostics(ds, { sources: new Map([["p.policy.ts", line]]), width: 0 });
    expect(text.length).toBeLessThan(10_000 * 300);
    expect(Math.max(...text.split("\n").map((l) => l.length))).toBeLessThanOrEqual(2 + 1 + MAX_FRAME_TEXT + 2 + 40);
  });
});
