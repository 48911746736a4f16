/**
 * Benchmark 8: untrusted text has bounded cost. Token counting (which every `append` does) on 1 MB of
 * adversarial text — one character repeated, the shape that makes a BPE tokenizer quadratic — against
 * 1 MB of ordinary prose in the same run; and `append` of the adversarial megabyte to a window.
 */
import { ContextWindow, MemoryStore } from "../src/index.js";
import { countTokens } from "../src/tokens.js";
import { compareMicro, type MicroResult } from "./measure.js";
import { fmtMs, goalAtMost, type Benchmark, type Row } from "./report.js";

const MB = 1 << 20;
const PROSE = "The deploy failed with a 502 from the gateway; the retry at 14:02 succeeded after the pool reset. ".repeat(MB / 98 + 1).slice(0, MB);
const ADVERSARIAL = "a".repeat(MB);

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
    ];
  },
};
