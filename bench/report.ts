/**
 * What a benchmark reports: figures, each a subject measured against a baseline in the same run, so
 * the ratio means something on a shared, noisy machine even when the absolute numbers drift.
 */

/** A goal on a figure's ratio (or, for counts, on its value), and whether this run met it. */
export interface Goal {
  /** As the issue states it: `≤ 5×`, `≥ 0.5×`, `≤ 2`. */
  readonly text: string;
  readonly met: boolean;
}

export interface Figure {
  /** Benchmark number (1–6) and a short name of what is measured. */
  readonly bench: number;
  readonly name: string;
  /** The subject's absolute figure, formatted with its unit. */
  readonly subject: string;
  /** The baseline's absolute figure, formatted, and what the baseline is. */
  readonly baseline: string;
  /** Subject over baseline (or a count, for counts), as printed: `3.10×`, `2.00`. */
  readonly ratio: string;
  readonly goal: Goal | null;
  /** Extra absolute numbers worth printing (percentiles, counts), one line. */
  readonly detail?: string;
}

/** A benchmark that could not run here (no server, no emitter), with the reason printed in its place. */
export interface Skipped {
  readonly bench: number;
  readonly name: string;
  readonly skipped: string;
}

export type Row = Figure | Skipped;

export function isSkipped(row: Row): row is Skipped {
  return "skipped" in row;
}

export interface BenchContext {
  /** `--quick`: fewer sizes and rounds, for CI. */
  readonly quick: boolean;
  /** Progress lines (stderr), so stdout stays the report. */
  readonly log: (line: string) => void;
  /** The repository root (where package.json is). */
  readonly root: string;
}

/** A benchmark: its number, its title, and a function that measures and returns its rows. */
export interface Benchmark {
  readonly id: number;
  readonly title: string;
  run(ctx: BenchContext): Promise<Row[]>;
}

export function ratio(subject: number, baseline: number): string {
  return `${(subject / baseline).toFixed(2)}×`;
}

export function goalAtMost(value: number, limit: number, unit = "×"): Goal {
  return { text: `≤ ${limit}${unit}`, met: value <= limit };
}

export function goalAtLeast(value: number, limit: number, unit = "×"): Goal {
  return { text: `≥ ${limit}${unit}`, met: value >= limit };
}

/** Durations: `412 ns`, `3.2 µs`, `1.25 ms`, `1.04 s`. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0.001) return `${(ms * 1e6).toFixed(0)} ns`;
  if (ms < 1) return `${(ms * 1e3).toFixed(ms < 0.01 ? 2 : 1)} µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

export function fmtOps(opsPerSec: number): string {
  if (opsPerSec >= 1e6) return `${(opsPerSec / 1e6).toFixed(2)} M ops/s`;
  if (opsPerSec >= 1e4) return `${(opsPerSec / 1e3).toFixed(1)} k ops/s`;
  return `${opsPerSec.toFixed(0)} ops/s`;
}

/** A throughput figure: the subject's and the baseline's operations per second, and their ratio. */
export function throughputFigure(bench: number, name: string, subjectHz: number, baselineHz: number, ratioValue: number, goal: Goal | null, detail?: string): Figure {
  return {
    bench,
    name,
    subject: fmtOps(subjectHz),
    baseline: fmtOps(baselineHz),
    ratio: `${ratioValue.toFixed(2)}×`,
    goal,
    ...(detail === undefined ? {} : { detail }),
  };
}

export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** The report as a Markdown table: the same text goes to the terminal and into BENCHMARKS.md. */
export function formatTable(rows: readonly Row[]): string {
  const header = ["#", "figure", "subject", "baseline", "ratio", "goal", "met"];
  const lines = rows.map((r) =>
    isSkipped(r)
      ? [String(r.bench), r.name, `skipped: ${r.skipped}`, "", "", "", "—"]
      : [String(r.bench), r.name, r.subject, r.baseline, r.ratio, r.goal?.text ?? "", r.goal === null ? "" : r.goal.met ? "yes" : "**no**"],
  );
  const cell = (s: string) => s.replace(/\|/g, "\\|");
  return [header, header.map(() => "---"), ...lines].map((l) => `| ${l.map(cell).join(" | ")} |`).join("\n");
}

/** The details lines under the table (absolute numbers that do not fit a cell). */
export function formatDetails(rows: readonly Row[]): string {
  return rows
    .filter((r): r is Figure => !isSkipped(r) && r.detail !== undefined)
    .map((r) => `- ${r.bench} ${r.name}: ${r.detail}`)
    .join("\n");
}
