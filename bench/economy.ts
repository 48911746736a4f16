/**
 * Benchmark 11: the economy of a session. A coding agent's trajectory of real tool outputs
 * (`trajectory.ts`: file reads, greps, git logs over this repository) is replayed through a window and a
 * `Transcript` under several model behaviours, at three lengths (about 40, 130 and 520 tool calls, and the 130
 * with every output cut at 2,000 characters, where each prune frees little); every
 * request the model would send is rendered with `toAnthropic` and priced against the request before it,
 * the way providers cache prompt prefixes: the blocks a request shares with the previous one from the start
 * are cache reads, the rest is written (Anthropic: read 0.1×, write 1.25× the input price) or sent uncached
 * (OpenAI: cached input at 0.10× — the GPT-5 family's discount — and at 0.25×, GPT-4.1's; uncached 1×).
 * Output tokens are left out: they are what the model says, the same in every behaviour but for the prune
 * calls themselves.
 *
 * Baselines, in the same run: the same trajectory with a model that never prunes (a pruneguard window), and
 * the same conversation rendered plainly (tool calls and raw outputs, no span headers, no gutter) — what
 * the framing costs shows as the never-pruning window against the plain one. Goals (issue 34): a model that
 * prunes every turn, its prune calls sent with its next tool call, pays ≤ 0.5× never pruning from 130 calls
 * on and ≤ 1× at 40; no behaviour pays more than never pruning at any length; the peak window at 520 calls
 * is ≤ 1.2× the peak at 130; every span pruned recalls byte-identical; and every identifier found only in
 * pruned outputs comes back with one search and one recall. A model that ignores the runtime's advice is shown
 * with no goal, with the least its own extra requests cost.
 */
import { ContextWindow, ManualClock, MemoryStore, toAnthropic, Transcript, countTokens, type CompactionPolicy } from "../src/index.js";
import type { KindPolicy } from "../src/policy/kinds.js";
import { compareMicro } from "./measure.js";
import { fmtMs, goalAtMost, type Benchmark, type Figure, type Row } from "./report.js";
import { makeTrajectory, type ToolStep } from "./trajectory.js";

const KINDS = {
  turn: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  toolCall: { store: "log", modes: ["drop"], lossy: "with-flag" },
  toolResult: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
} as const satisfies Record<string, KindPolicy>;

/** Prices per input token, relative to the uncached input price: a cache read, and a write (or an uncached token). */
export const PRICES = {
  anthropic: { read: 0.1, write: 1.25 },
  /** OpenAI, cached input at 0.10× (the GPT-5 family). */
  openai: { read: 0.1, write: 1 },
  /** OpenAI, cached input at 0.25× (GPT-4.1). */
  openai25: { read: 0.25, write: 1 },
} as const;
type PriceSet = keyof typeof PRICES;
const PRICE_SETS = Object.keys(PRICES) as PriceSet[];

/** How a scripted model prunes. `keep`: tool results it keeps live; older ones it drops. */
export type Behaviour =
  | { readonly name: string; readonly prune: "never" }
  /** Every turn: drops what fell out of the last `keep`, in a step of its own or with its next tool call. */
  /**
   * Every turn: drops what fell out of the last `keep`, in a step of its own or with its next tool call. It
   * heeds the runtime's advice (as the tool descriptions teach) unless `ignoresAdvice`: told there is no need
   * to prune yet, it sends no prune until its context passes the size the answer named.
   */
  | { readonly name: string; readonly prune: "every-turn"; readonly keep: number; readonly bundled: boolean; readonly ignoresAdvice?: boolean }
  /** Issues the same drops only once they free at least `minTokens` at once (a model that batches). */
  | { readonly name: string; readonly prune: "batched"; readonly keep: number; readonly minTokens: number }
  /** Drops the oldest results once the window passes `highTokens`, down to `lowTokens`. */
  | { readonly name: string; readonly prune: "pressure"; readonly highTokens: number; readonly lowTokens: number };

export interface SessionCost {
  readonly requests: number;
  readonly peakTokens: number;
  /** The share of the peak window that was index lines, folds and tombstones (what pruning left behind). */
  readonly indexShare: number;
  /** The same share in the session's last request. */
  readonly indexShareEnd: number;
  /**
   * What the requests the model spent on prune calls alone cost at least (a step of its own: the request after
   * the prune calls, which a model that bundles them never sends, priced as if all of it were read from the
   * cache), per price set: the model's choice, not the runtime's.
   */
  readonly ownSteps: Readonly<Record<PriceSet, number>>;
  /** Sum over requests of input tokens, priced. */
  readonly anthropic: number;
  readonly openai: number;
  readonly openai25: number;
  /** The share of the Anthropic cost that was cache writes. */
  readonly writeShare: number;
  readonly prunes: number;
  /** Pruned spans whose recall gave back the bytes appended, of those pruned. */
  readonly recalled: number;
  /** Identifiers found only in pruned outputs (every one), and how many one search and one recall brought back. */
  readonly identifiers: { readonly sampled: number; readonly found: number };
}

/**
 * Replays `steps` under `behaviour` on a window with `compaction` (the runtime's setting; `"immediate"`
 * rewrites at every decision) and prices every request.
 */
export async function replaySession(steps: readonly ToolStep[], behaviour: Behaviour, compaction: CompactionPolicy | "immediate" | null): Promise<SessionCost> {
  const clock = new ManualClock(Date.UTC(2026, 11, 3, 9, 0));
  const log = new MemoryStore({ name: "log", clock, retentionMs: null });
  const win = new ContextWindow({ session: "economy", clock, stores: { log }, kinds: KINDS, limits: { maxLengthMs: 8 * 3_600_000, compaction } });
  const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
  await t.user(OPENING);

  const pricer = new Pricer();
  let indexShare = 0;
  /** What pruning left in the window: index lines, folds, tombstones. */
  const indexTokens = () => win.entries().reduce((n, e) => n + (e.state === "live" ? 0 : pricer.tokens(e.text)), 0);
  /** The model reads the window: one request, priced against the one before. */
  const request = (): number => {
    const peak = pricer.peakTokens;
    const total = pricer.price(anthropicBlocks(toAnthropic(win)));
    if (total > peak) indexShare = indexTokens() / total;
    return total;
  };
  const ownSteps: Record<PriceSet, number> = { anthropic: 0, openai: 0, openai25: 0 };

  /** Tool results in order, with their text, and whether the model has dropped them. */
  const results: Array<{ spanId: string; text: string; tokens: number; dropped: boolean }> = [];
  let nextCall = 0;
  const callId = () => `toolu_${String(nextCall++).padStart(4, "0")}`;
  const pruneUse = (spanId: string) => ({ type: "tool_use", id: callId(), name: "prune", input: { span_id: spanId, mode: "drop" } });
  const run = (step: ToolStep) => () => step.output;

  /** The results the behaviour drops now. */
  const toDrop = (): typeof results => {
    const live = results.filter((r) => !r.dropped);
    switch (behaviour.prune) {
      case "never":
        return [];
      case "every-turn":
        return live.slice(0, Math.max(0, live.length - behaviour.keep));
      case "batched": {
        const old = live.slice(0, Math.max(0, live.length - behaviour.keep));
        return old.reduce((n, r) => n + r.tokens, 0) >= behaviour.minTokens ? old : [];
      }
      case "pressure": {
        const total = pricer.requests === 0 ? 0 : live.reduce((n, r) => n + r.tokens, 0);
        if (total < behaviour.highTokens) return [];
        const out: typeof results = [];
        let left = total;
        for (const r of live) {
          if (left <= behaviour.lowTokens) break;
          out.push(r);
          left -= r.tokens;
        }
        return out;
      }
    }
  };

  /** The size from which the runtime last said pruning pays, while the model heeds that advice. */
  let paysFrom: number | null = null;
  const heeds = behaviour.prune === "every-turn" && behaviour.ignoresAdvice !== true;
  const readAdvice = (answers: readonly { readonly text: string; readonly directive: unknown }[]) => {
    if (!heeds || !answers.some((a) => a.directive !== null)) return;
    const m = answers.map((a) => /no need to prune yet: [^\n]*pruning pays from ~([0-9.]+)(k?)/.exec(a.text)).find((x) => x !== null);
    paysFrom = m ? Number(m[1]) * (m[2] === "k" ? 1000 : 1) : null;
  };
  for (const step of steps) {
    const context = request();
    const drops = paysFrom !== null && context < paysFrom ? [] : toDrop();
    for (const r of drops) r.dropped = true;
    const prunes = drops.map((r) => pruneUse(r.spanId));
    const use = { type: "tool_use", id: callId(), name: step.tool, input: step.input };
    const bundled = behaviour.prune !== "every-turn" || behaviour.bundled;
    if (prunes.length > 0 && !bundled) {
      readAdvice(await t.handleToolCalls(await t.appendAnthropic({ content: prunes })));
      // The least such a request costs: its whole input read from the cache (a rewrite it carries would
      // otherwise come with the next request).
      const tokens = request();
      for (const set of PRICE_SETS) ownSteps[set] += tokens * PRICES[set].read;
    }
    const calls = await t.appendAnthropic({ content: bundled ? [...prunes, use] : [use] });
    readAdvice(await t.handleToolCalls(calls, run(step)));
    const last = win.entries().findLast((e) => e.state === "live" && e.span.message?.role === "tool-result" && e.span.message.toolName === step.tool);
    if (last?.state === "live") results.push({ spanId: last.span.id, text: step.output, tokens: last.span.tokens, dropped: false });
    clock.advance(20_000);
  }
  const last = request();
  const indexShareEnd = indexTokens() / last;

  // Every span the model dropped recalls the bytes that were appended.
  let recalled = 0;
  const dropped = results.filter((r) => r.dropped);
  for (const r of dropped) {
    const answer = await win.recall(r.spanId);
    if (answer.status === "found" && answer.text === r.text) recalled++;
  }
  return { ...pricer.cost(), indexShare, indexShareEnd, ownSteps, prunes: dropped.length, recalled, identifiers: await identifiersFound(win, dropped.map((r) => r.text)) };
}

/**
 * Identifiers that exist only in pruned outputs — every one of them — and how many the model gets back with
 * one search (for the identifier) and one recall (of the first match).
 */
async function identifiersFound(win: ContextWindow<keyof typeof KINDS>, pruned: readonly string[]): Promise<SessionCost["identifiers"]> {
  if (pruned.length === 0) return { sampled: 0, found: 0 };
  const live = win.entries().map((e) => (e.state === "live" ? e.span.text : e.text)).join("\n");
  const only = new Set<string>();
  for (const text of pruned) for (const m of text.matchAll(/\b[A-Za-z_][A-Za-z0-9_]{11,40}\b/g)) if (!live.includes(m[0])) only.add(m[0]);
  const sample = [...only];
  let found = 0;
  for (const id of sample) {
    const hit = await win.search(id);
    if (hit.status !== "match") continue;
    const first = hit.matches[0]!;
    const answer = await win.recall(first.handle ?? first.spanId);
    if (answer.status === "found" && answer.text.includes(id)) found++;
  }
  return { sampled: sample.length, found };
}

/** A request as Anthropic blocks, each a string: what the cache compares, block by block from the start. */
function anthropicBlocks(prompt: ReturnType<typeof toAnthropic>): string[] {
  return [
    ...(prompt.system === undefined ? [] : [`system:${typeof prompt.system === "string" ? prompt.system : JSON.stringify(prompt.system)}`]),
    ...prompt.messages.flatMap((m) => m.content.map((b) => `${m.role}:${JSON.stringify(b)}`)),
  ];
}

/** Prices each request against the one before, as providers cache prompt prefixes, under every price set. */
class Pricer {
  #previous: readonly string[] = [];
  readonly #tokens = new Map<string, number>();
  requests = 0;
  peakTokens = 0;
  #writes = 0;
  readonly #costs: Record<PriceSet, number> = { anthropic: 0, openai: 0, openai25: 0 };

  tokens(text: string): number {
    let n = this.#tokens.get(text);
    if (n === undefined) this.#tokens.set(text, (n = countTokens(text)));
    return n;
  }

  /** One request; returns its input tokens. */
  price(blocks: readonly string[]): number {
    let shared = 0;
    while (shared < blocks.length && shared < this.#previous.length && blocks[shared] === this.#previous[shared]) shared++;
    let read = 0;
    let written = 0;
    blocks.forEach((b, i) => (i < shared ? (read += this.tokens(b)) : (written += this.tokens(b))));
    this.#previous = blocks;
    this.requests++;
    this.peakTokens = Math.max(this.peakTokens, read + written);
    for (const set of PRICE_SETS) this.#costs[set] += read * PRICES[set].read + written * PRICES[set].write;
    this.#writes += written * PRICES.anthropic.write;
    return read + written;
  }

  cost(): Pick<SessionCost, "requests" | "peakTokens" | "writeShare" | PriceSet> {
    return { requests: this.requests, peakTokens: this.peakTokens, writeShare: this.#writes / this.#costs.anthropic, ...this.#costs };
  }
}

/**
 * The same conversation rendered plainly — the user's turn, then each tool call and its raw output, as a
 * client without pruneguard sends it — and priced the same way: what the framing costs.
 */
export function replayPlain(steps: readonly ToolStep[]): SessionCost {
  const pricer = new Pricer();
  const blocks: string[] = [`user:${JSON.stringify({ type: "text", text: OPENING })}`];
  steps.forEach((step, i) => {
    pricer.price([...blocks]);
    const id = `toolu_${String(i).padStart(4, "0")}`;
    blocks.push(`assistant:${JSON.stringify({ type: "tool_use", id, name: step.tool, input: step.input })}`);
    blocks.push(`user:${JSON.stringify({ type: "tool_result", tool_use_id: id, content: step.output })}`);
  });
  pricer.price([...blocks]);
  return { ...pricer.cost(), indexShare: 0, indexShareEnd: 0, ownSteps: { anthropic: 0, openai: 0, openai25: 0 }, prunes: 0, recalled: 0, identifiers: { sampled: 0, found: 0 } };
}

const OPENING = "Read this repository and explain how a prune is checked, held and audited, with the files and functions involved.";

export const BEHAVIOURS: readonly Behaviour[] = [
  { name: "never prunes", prune: "never" },
  { name: "prunes every turn, in steps of their own", prune: "every-turn", keep: 8, bundled: false },
  { name: "prunes every turn, in steps of their own, ignoring the runtime's advice", prune: "every-turn", keep: 8, bundled: false, ignoresAdvice: true },
  { name: "prunes every turn, with its next tool call", prune: "every-turn", keep: 8, bundled: true },
  { name: "batches: prunes once 25k tokens are free", prune: "batched", keep: 8, minTokens: 25_000 },
  { name: "prunes under pressure (above 60k, down to 30k)", prune: "pressure", highTokens: 60_000, lowTokens: 30_000 },
];

/**
 * The trajectories: a short task, a working session, a day's run — and the working session with outputs cut
 * at 2,000 characters, where each prune frees little.
 */
interface TrajectorySpec {
  readonly calls: number;
  readonly maxChars?: number;
}
const TRAJECTORIES: readonly TrajectorySpec[] = [{ calls: 40 }, { calls: 130 }, { calls: 130, maxChars: 2_000 }, { calls: 520 }];
const QUICK_TRAJECTORIES: readonly TrajectorySpec[] = [{ calls: 40 }, { calls: 60 }];
const label = (t: TrajectorySpec) => `${t.calls} calls${t.maxChars === undefined ? "" : `, outputs cut at ${t.maxChars.toLocaleString("en")} characters`}`;

const priced = (c: SessionCost) => PRICE_SETS.map((set) => c[set]);
const ratiosOf = (c: Readonly<Record<PriceSet, number>>, base: SessionCost) => PRICE_SETS.map((set) => c[set] / base[set]);
const ratios = (c: SessionCost, base: SessionCost) => ratiosOf(c, base);
const fmt = (xs: readonly number[]) => `Anthropic ${xs[0]!.toFixed(2)}× / OpenAI ${xs[1]!.toFixed(2)}× (cached 0.10) / ${xs[2]!.toFixed(2)}× (0.25)`;

export const economyBench: Benchmark = {
  id: 11,
  title: "the economy of a session: cost of a replayed trajectory against never pruning, at three lengths",
  async run(ctx) {
    const rows: Row[] = [];
    const peaks = new Map<number, number>();
    for (const spec of ctx.quick ? QUICK_TRAJECTORIES : TRAJECTORIES) {
      const length = spec.calls;
      const steps = makeTrajectory(ctx.root, length, spec.maxChars);
      const outputTokens = steps.reduce((n, s) => n + countTokens(s.output), 0);
      ctx.log(`trajectory: ${steps.length} tool calls, ${outputTokens} tokens of output`);
      const plain = replayPlain(steps);
      const base = await replaySession(steps, BEHAVIOURS[0]!, null);
      // What the framing costs: the never-pruning window against the same conversation rendered plainly.
      const framing = ratios(base, plain);
      rows.push({
        bench: 11,
        name: `never prunes, against a plain rendering — ${label(spec)}`,
        subject: `${base.requests} requests, peak ${Math.round(base.peakTokens / 1000)}k, ${fmt(framing)}`,
        baseline: `plain rendering: peak ${Math.round(plain.peakTokens / 1000)}k`,
        ratio: `${Math.max(...framing).toFixed(2)}×`,
        goal: null,
        detail: `what span headers and the gutter cost a session that never prunes; priced ${priced(plain).map((x) => Math.round(x / 1000)).join(" / ")}k plain`,
      });
      const modes: ReadonlyArray<readonly [string, "immediate" | null]> = length === 130 && spec.maxChars === undefined ? [["default compaction", null], ["immediate (no deferral)", "immediate"]] : [["default compaction", null]];
      for (const [mode, compaction] of modes) {
        const never = compaction === null ? base : await replaySession(steps, BEHAVIOURS[0]!, compaction);
        for (const b of BEHAVIOURS.slice(1)) {
          const c = await replaySession(steps, b, compaction);
          const r = ratios(c, never);
          const worst = Math.max(...r);
          const againstPlain = Math.max(...ratios(c, plain));
          const bundled = b.prune === "every-turn" && b.bundled;
          if (bundled && compaction === null && spec.maxChars === undefined) peaks.set(length, c.peakTokens);
          // Goals hold with the default compaction at the full lengths; a quick run reports none.
          const target = bundled && length >= 130 && spec.maxChars === undefined ? 0.5 : 1;
          rows.push({
            bench: 11,
            name: `${b.name} — ${label(spec)}, ${mode}`,
            subject: `${c.requests} requests, peak ${Math.round(c.peakTokens / 1000)}k (index ${(100 * c.indexShare).toFixed(0)}% at the peak, ${(100 * c.indexShareEnd).toFixed(0)}% at the end), ${fmt(r)}`,
            baseline: `never prunes: ${never.requests} requests, peak ${Math.round(never.peakTokens / 1000)}k`,
            ratio: `${worst.toFixed(2)}×`,
            // A model that ignores the runtime's advice is shown for what it costs, with no goal.
            goal: compaction === null && !ctx.quick && !(b.prune === "every-turn" && b.ignoresAdvice === true) ? goalAtMost(Number(worst.toFixed(2)), target) : null,
            detail: `${againstPlain.toFixed(2)}× a plain rendering that never prunes; peak ${(c.peakTokens / never.peakTokens).toFixed(2)}× never pruning; cache writes ${(100 * c.writeShare).toFixed(0)}% of the Anthropic cost; ${c.recalled} of ${c.prunes} pruned spans recall byte-identical; ${c.identifiers.found} of ${c.identifiers.sampled} identifiers found only in pruned outputs come back with one search and one recall`
              + (c.ownSteps.anthropic > 0 ? `; the ${c.requests - never.requests} requests it spent on prune calls alone cost at least ${fmt(ratiosOf(c.ownSteps, never))} never pruning (their input at the cache-read price) — without them it pays at most ${fmt(PRICE_SETS.map((set) => (c[set] - c.ownSteps[set]) / never[set]))}` : ""),
          });
        }
      }
    }
    const [p130, p520] = [peaks.get(130), peaks.get(520)];
    if (p130 !== undefined && p520 !== undefined) {
      rows.push({
        bench: 11,
        name: "peak window, pruning every turn with its next tool call: 520 calls against 130",
        subject: `peak ${Math.round(p520 / 1000)}k at 520 calls`,
        baseline: `peak ${Math.round(p130 / 1000)}k at 130 calls`,
        ratio: `${(p520 / p130).toFixed(2)}×`,
        goal: goalAtMost(Number((p520 / p130).toFixed(2)), 1.2),
        detail: "the index folds (fold.ts): four times the session, about the same window",
      });
    }
    rows.push(...(await compactionLoopRows(ctx.quick)));
    return rows;
  },
};

/** A window of `pruned` dropped spans and a few live ones, compacted once: what a long session leaves. */
async function longWindow(pruned: number): Promise<ContextWindow<"tool">> {
  const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
  const win = new ContextWindow({
    session: "long", clock, stores: { log: new MemoryStore({ name: "log", clock, retentionMs: null }) },
    kinds: { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } }, limits: { maxLengthMs: 48 * 3_600_000 },
  });
  for (let i = 0; i < pruned + 8; i++) {
    const ref = await win.append({ kind: "tool", text: `output ${i}: ${"ok ".repeat(20)}` });
    if (i < pruned) await win.prune({ span: ref, mode: "drop" });
  }
  await win.compact();
  return win;
}

/**
 * Figure 11, last row: a compact() with nothing to apply — the model may call it in a loop — costs the same at
 * 8,000 pruned spans as at 1,000 (it was 0.6–0.8 s at 8,000 before index folding and unchanged-view reuse).
 */
export async function compactionLoopRows(quick: boolean): Promise<Row[]> {
  const sizes = quick ? [250, 1_000] : [1_000, 8_000];
  const small = await longWindow(sizes[0]!);
  const large = await longWindow(sizes[1]!);
  const { results, ratioToFirst } = await compareMicro(
    [
      { name: "compact(), small", fn: () => small.compact() },
      { name: "compact(), large", fn: () => large.compact() },
      { name: "render(), small", fn: () => small.render() },
      { name: "render(), large", fn: () => large.render() },
    ],
    { rounds: quick ? 2 : 5, time: quick ? 150 : 400 },
  );
  const [cs, cl, rs, rl] = results;
  const n = (k: number) => k.toLocaleString("en");
  return [{
    bench: 11,
    name: `compact() in a loop, nothing pending: ${n(sizes[1]!)} pruned spans against ${n(sizes[0]!)}`,
    subject: `${fmtMs(cl!.mean)} per call at ${n(sizes[1]!)}`,
    baseline: `${fmtMs(cs!.mean)} at ${n(sizes[0]!)}`,
    ratio: `${ratioToFirst[1]!.toFixed(2)}×`,
    goal: quick ? null : goalAtMost(Number(ratioToFirst[1]!.toFixed(2)), 1.5),
    detail: `a rendering takes ${fmtMs(rl!.mean)} at ${n(sizes[1]!)} (${large.entries().length} positions shown after folding), ${fmtMs(rs!.mean)} at ${n(sizes[0]!)}; each compact() is audited (unchanged) and makes no compaction point`,
  }];
}
