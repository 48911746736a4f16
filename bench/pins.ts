/**
 * Benchmark 9: pin matching on a megabyte of adversarial text. Pins run on re2js (RE2 semantics, no
 * backtracking), so their cost is linear in the text whatever the pattern. Two figures:
 * - every preset over 1 MB of near-miss lines (hex without digits, `req_` without a value, slashes
 *   without an extension …), and over the same on one line, against the same patterns on V8's
 *   backtracking RegExp with the same scan loop: what the linear-time guarantee costs on patterns
 *   that were already safe;
 * - a custom pin that backtracks catastrophically (`(?:(?:\w|\d)\.?)+@corp\.example`) over 1 MB of
 *   digits on re2js, against V8 on 24 digits (each further digit doubles V8's time; at 38 it takes
 *   seconds, at 50 it does not finish).
 */
import { presetPins } from "../dsl/pins.js";
import { findPins } from "../src/pin-carry.js";
import type { PinPattern } from "../src/types.js";
import { median } from "./measure.js";
import { fmtMs, ratio, type BenchContext, type Benchmark, type Row } from "./report.js";

const MB = 1_000_000;
const PRESETS: readonly PinPattern[] = Object.values(presetPins);
const REDOS = "(?:(?:\\w|\\d)\\.?)+@corp\\.example";

/**
 * `size` characters of lines of runs that almost match some preset (hex without digits, `req_`
 * without a value, slashes without an extension …), with a line of real identifiers every 16 lines.
 * `lineChars` 0 makes it one line, like a minified JSON body.
 */
export function adversarialText(size = MB, lineChars = 160): string {
  const units = ["abcdef", "0123456789", "req_", "/a", "A-", 'File "', "a.", "E_", "x".repeat(64), "SQLSTATE ", "HTTP/1.1 "];
  const ids = "req_8f3a2c91 E_UPSTREAM_503 src/handler.ts(4,3) 9fceb02";
  const eol = lineChars === 0 ? " " : "\n";
  const width = lineChars === 0 ? 2_000 : lineChars;
  const parts: string[] = [];
  let length = 0;
  for (let k = 0; length < size; k++) {
    const unit = units[k % units.length]!;
    const line = k % 16 === 15 ? ids : unit.repeat(Math.max(1, Math.floor(width / unit.length)));
    parts.push(line, eol);
    length += line.length + 1;
  }
  return parts.join("").slice(0, size);
}

/**
 * The baseline: the same patterns on V8's RegExp, with the scan loop `findPins` uses (first
 * participating group, resume at its end or one character before the match's end).
 */
function findPinsNative(text: string, patterns: readonly PinPattern[]): string[] {
  const seen = new Set<string>();
  for (const p of patterns) {
    const re = new RegExp(p.pattern, "gu");
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const g = m.findIndex((v, i) => i > 0 && v !== undefined);
      const id = m.length === 1 ? m[0] : g > 0 ? m[g]! : null;
      if (id !== null && id.length > 0) seen.add(id);
      const end = m.index + m[0].length;
      const idEnd = g > 0 ? m.index + m[0].indexOf(m[g]!) + m[g]!.length : m.index;
      re.lastIndex = m.length === 1 ? Math.max(end, m.index + 1) : Math.max(idEnd, end - 1, m.index + 1);
    }
  }
  return [...seen];
}

function time(fn: () => unknown): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Median wall-clock of `runs` interleaved runs of each function, after one untimed run of each. */
function interleaved(fns: ReadonlyArray<() => unknown>, runs: number): number[] {
  for (const fn of fns) fn();
  const times: number[][] = fns.map(() => []);
  for (let r = 0; r < runs; r++) {
    const order = r % 2 === 0 ? fns.map((_, i) => i) : fns.map((_, i) => fns.length - 1 - i);
    for (const i of order) times[i]!.push(time(fns[i]!));
  }
  return times.map(median);
}

export const pinsBench: Benchmark = {
  id: 9,
  title: "pin matching on 1 MB of adversarial text",
  async run(ctx: BenchContext): Promise<Row[]> {
    const runs = ctx.quick ? 2 : 5;
    const text = adversarialText();
    const [re2, native] = interleaved([() => findPins(text, PRESETS), () => findPinsNative(text, PRESETS)], runs);
    const oneLine = adversarialText(MB, 0);
    const [re2OneLine, nativeOneLine] = interleaved([() => findPins(oneLine, PRESETS), () => findPinsNative(oneLine, PRESETS)], runs);
    // The literal at the end makes the engine scan every digit instead of skipping a text without it.
    const digits = `${"1".repeat(MB)}-@corp.example`;
    const [redos, nativeRedos] = interleaved(
      [() => findPins(digits, [{ name: "redos", pattern: REDOS }]), () => findPinsNative(`${"1".repeat(24)}-@corp.example`, [{ name: "redos", pattern: REDOS }])],
      runs,
    );
    return [
      {
        bench: 9,
        name: "all presets, 1 MB of near-miss lines (re2js)",
        subject: fmtMs(re2!),
        baseline: `${fmtMs(native!)} (same patterns and scan on V8 RegExp)`,
        ratio: ratio(re2!, native!),
        goal: null,
        detail: `${PRESETS.length} presets, 160-character lines: ${(MB / 1000 / re2!).toFixed(2)} MB/s on re2js, ${(MB / 1000 / native!).toFixed(1)} MB/s on V8`,
      },
      {
        bench: 9,
        name: "all presets, 1 MB on one line (re2js)",
        subject: fmtMs(re2OneLine!),
        baseline: `${fmtMs(nativeOneLine!)} (same patterns and scan on V8 RegExp)`,
        ratio: ratio(re2OneLine!, nativeOneLine!),
        goal: null,
        detail: `no newline to split at, so every search runs on the NFA: ${(MB / 1000 / re2OneLine!).toFixed(2)} MB/s on re2js`,
      },
      {
        bench: 9,
        name: "catastrophic custom pin, 1 MB of digits (re2js)",
        subject: fmtMs(redos!),
        baseline: `${fmtMs(nativeRedos!)} (V8 RegExp on 24 digits)`,
        ratio: ratio(redos!, nativeRedos!),
        goal: null,
        detail: `\`${REDOS}\`: re2js scans 1,000,000 digits; V8 needs ${fmtMs(nativeRedos!)} for 24 and doubles per digit`,
      },
    ];
  },
};
