// The pretty printer wraps a long message on a terminal, and leaves it on one line anywhere else.
import { describe, expect, it } from "vitest";
import { formatDiagnostic, formatDiagnostics } from "../../compiler/index.js";
import { MAX_WIDTH, terminalWidth, wrapText } from "../../compiler/diagnostics/format.js";
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

  it("wraps at the terminal's width up to MAX_WIDTH, and not at all when not printing to a terminal", () => {
    expect(terminalWidth(undefined)).toBe(0);
    expect(terminalWidth({ isTTY: false, columns: 80 })).toBe(0);
    expect(terminalWidth({ columns: 80 })).toBe(0);
    expect(terminalWidth({ isTTY: true, columns: 80 })).toBe(80);
    expect(terminalWidth({ isTTY: true, columns: 240 })).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: true })).toBe(MAX_WIDTH);
    expect(terminalWidth({ isTTY: true, columns: 20 })).toBe(0);
  });
});
