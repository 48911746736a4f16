/**
 * Benchmark 8: untrusted text has bounded cost. Token counting (which every `append` does) on 1 MB of
 * adversarial text — one character repeated, the shape that makes a BPE tokenizer quadratic — against
 * 1 MB of ordinary prose in the same run; and `append` of the adversarial megabyte to a window.
 *
 * Then the per-op cost of `append` for an ordinary 100 KB tool output (a log with timestamps, paths, ids
 * and JSON), against the least any runtime does with it — gpt-tokenizer's own count of the same text —
 * and against appending a tenth of it, which shows the cost is linear.
 */
import { countTokens as tokenizerCount } from "gpt-tokenizer/encoding/o200k_base";
import { ContextWindow, MemoryStore, type SpanRef } from "../src/index.js";
import { countTokens } from "../src/tokens.js";
import { compareMicro, type MicroResult } from "./measure.js";
import { fmtMs, goalAtMost, type Benchmark, type Row } from "./report.js";

const MB = 1 << 20;
const PROSE = "The deploy failed with a 502 from the gateway; the retry at 14:02 succeeded after the pool reset. ".repeat(MB / 98 + 1).slice(0, MB);
const ADVERSARIAL = "a".repeat(MB);
const KB = 1024;

/** A tool output of `bytes` characters: request log lines with ids, paths, timings and a JSON body. */
function toolOutput(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const id = ((i * 2_654_435_761) >>> 0).toString(16).padStart(8, "0");
    const line = i % 5 === 4
      ? JSON.stringify({ step: i, status: i % 7 === 0 ? "retry" : "ok", duration_ms: 100 + ((i * 37) % 900), node: `worker-${i % 4}`, trace: id })
      : `2026-11-13T09:${String(i % 60).padStart(2, "0")}:${String((i * 7) % 60).padStart(2, "0")}.${String(i % 1000).padStart(3, "0")}Z INFO GET /api/v1/items/${i}?page=${i % 9} -> ${i % 11 === 0 ? 503 : 200} in ${(i * 13) % 400}ms req_${id}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n").slice(0, bytes);
}
const OUTPUT_100K = toolOutput(100 * KB);
const OUTPUT_10K = toolOutput(10 * KB);
/** Appends per window before a fresh one: keeps the window (and the store's memory) small. */
const APPENDS_PER_WINDOW = 64;

export const untrustedTextBench: Benchmark = {
  id: 8,
  title: "bounded cost on untrusted text: 1 MB of one repeated character vs 1 MB of prose",
  async run(ctx): Promise<Row[]> {
    let n = 0;
    const win = () =>
      new ContextWindow({ session: `s${++n}`, stores: { log: new MemoryStore({ name: "log" }) }, kinds: { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } } });
    const rounds = ctx.quick ? 2 : 5;
    const { results, ratioToFirst } = await compareMicro(
      [
        { name: "count 1 MB prose", fn: () => countTokens(PROSE) },
        { name: "count 1 MB adversarial", fn: () => countTokens(ADVERSARIAL) },
        { name: "append 1 MB adversarial", fn: async () => void (await win().append({ kind: "tool", text: ADVERSARIAL })) },
      ],
      { rounds, time: ctx.quick ? 300 : 1000 },
    );
    const [prose, adversarial, append] = results as [MicroResult, MicroResult, MicroResult];

    // 100 KB tool output: windows refilled untimed, so a sample is one append.
    const pool = { win: win(), appended: 0 };
    const fresh = () => {
      if (pool.appended >= APPENDS_PER_WINDOW) {
        pool.win = win();
        pool.appended = 0;
      }
      pool.appended++;
    };
    let last: SpanRef<string> | null = null;
    const perOp = await compareMicro(
      [
        { name: "tokenizer count 100 KB", fn: () => tokenizerCount(OUTPUT_100K, { disallowedSpecial: new Set() }) },
        { name: "append 100 KB", fn: async () => void (last = await pool.win.append({ kind: "tool", text: OUTPUT_100K })), options: { beforeEach: fresh } },
        { name: "append 10 KB", fn: async () => void (last = await pool.win.append({ kind: "tool", text: OUTPUT_10K })), options: { beforeEach: fresh } },
      ],
      { rounds, time: ctx.quick ? 300 : 800 },
    );
    if (last === null) throw new Error("benchmark 8: nothing appended");
    const [count100, append100, append10] = perOp.results as [MicroResult, MicroResult, MicroResult];
    const growth = perOp.ratioToFirst[1]! / perOp.ratioToFirst[2]!;
    return [
      {
        bench: 8,
        name: "token count of 1 MB of one repeated character vs 1 MB of prose",
        subject: fmtMs(adversarial.mean),
        baseline: fmtMs(prose.mean),
        ratio: `${ratioToFirst[1]!.toFixed(2)}×`,
        goal: null,
        detail: `median of ${rounds} rounds, ${adversarial.samples} + ${prose.samples} samples`,
      },
      {
        bench: 8,
        name: "append of a 1 MB adversarial span (MemoryStore: count, hash, persist)",
        subject: fmtMs(append.mean),
        baseline: fmtMs(prose.mean),
        ratio: `${ratioToFirst[2]!.toFixed(2)}×`,
        goal: { ...goalAtMost(append.mean / 1000, 1, " s") },
        detail: `p99 ${fmtMs(append.p99)}; the goal is absolute (under 1 s on a 2-core machine), so read it with the machine's load`,
      },
      {
        bench: 8,
        name: "append of a 100 KB tool output (MemoryStore) vs gpt-tokenizer's count of it",
        subject: `${fmtMs(append100.mean)}/op (${fmtMs(append100.mean / 100)}/KB)`,
        baseline: `${fmtMs(count100.mean)}/op`,
        ratio: `${perOp.ratioToFirst[1]!.toFixed(2)}×`,
        goal: null,
        detail: `p50 ${fmtMs(append100.p50)}, p99 ${fmtMs(append100.p99)}; an append makes the text well-formed, counts it (bounded: src/tokens.ts), hashes it and persists it; median of ${rounds} rounds`,
      },
      {
        bench: 8,
        name: "append growth 10 KB → 100 KB (10× the text)",
        subject: `${fmtMs(append100.mean)}/op`,
        baseline: `${fmtMs(append10.mean)}/op (10 KB)`,
        ratio: `${growth.toFixed(2)}×`,
        goal: null,
        detail: `linear is 10×; per KB: ${fmtMs(append100.mean / 100)} at 100 KB, ${fmtMs(append10.mean / 10)} at 10 KB`,
      },
    ];
  },
};
