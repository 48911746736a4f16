/**
 * Benchmark 1: an untrusted directive (the model's JSON text) → outcome, on the memory store.
 *
 * Subject: `ContextWindow.applyDirective` on a live, persisted span — parse, check, hold, audit record
 * (hash-chained), window rewrite. Baselines, in the same bench: the bare zod `safeParse` of the same
 * directive text (`JSON.parse` + the directive schema, the least any runtime must do with untrusted
 * output), and a naive executor that parses and deletes the span with no check.
 */
import { ContextWindow, DEFAULT_LIMITS, directiveSchema, MemoryStore, parseDirective, type ContextWindowOptions, type SpanRef } from "../src/index.js";
import { GENESIS_HASH, sealAudit, type AuditDraft } from "../src/audit.js";
import { DEFAULT_HINT_TOKENS, hintSuffixTokens, indexHint } from "../src/hint.js";
import { indexLineTokens } from "../src/render/lines.js";
import { compareMicro, type MicroResult, type MicroTask } from "./measure.js";
import { fmtMs, fmtOps, goalAtMost, ratio, type Benchmark, type Row } from "./report.js";

/** Spans appended per window: a fresh window per batch keeps the window's size (and cost) constant. */
export const BATCH = 256;
export const TEXT = "HTTP/1.1 200 OK\n" + '{"step":7,"status":"ok","duration_ms":312,"node":"worker-3"}\n'.repeat(12);

/** The hint a drop of TEXT gets. */
const HINT = indexHint({ text: TEXT }, DEFAULT_HINT_TOKENS);
const HINT_TOKENS = HINT === null ? 0 : hintSuffixTokens(HINT);

/** A typical reversible-drop audit draft, as the guard writes it. */
const DRAFT: AuditDraft = {
  op: "prune", status: "reversible", spanId: "span_7", kind: "toolResult", mode: "drop",
  conditions: { existence: true, addressability: true, provenance: true }, handle: "#7", repersisted: false,
  acceptLossy: false, reason: null, pinsCarried: 0, directive: '{"op":"prune","span_id":"span_7","mode":"drop"}',
};

export const directiveBench: Benchmark = {
  id: 1,
  title: "untrusted directive → outcome (memory store)",
  async run(ctx) {
    const schema = directiveSchema();
    const directives = Array.from({ length: BATCH }, (_, i) => JSON.stringify({ op: "prune", span_id: `span_${i + 1}`, mode: "drop" }));

    // Subject state: a window with BATCH live spans, refilled (untimed, in beforeEach) when used up.
    const untrusted = new WindowPool();
    // The same directives on windows whose index lines carry no hint, to show what the hint costs.
    const noHints = new WindowPool({ indexHintTokens: 0 });
    // The same prune on the typed path (no parse), to show what the parse step costs inside the subject.
    const typed = new WindowPool();
    let lastStatus = "";
    let lastTyped = "";
    let lastNoHint = "";

    // Naive executor state: a map of spans, refilled the same way.
    const naive = new Map<string, string>();
    let naiveNext = BATCH;
    const naiveRefill = () => {
      for (let i = 0; i < BATCH; i++) naive.set(`span_${i + 1}`, TEXT);
      naiveNext = 0;
    };

    let parseNext = 0;
    let seq = 0;
    // What ContextWindow passes to parseDirective: DEFAULT_LIMITS merged with its options, a new object.
    const windowLimits = { ...DEFAULT_LIMITS };
    // The floor: what any checked, audited prune must do, with nothing of the window around it — parse the
    // directive (the window's parse), find the span, seal one hash-chained record naming it, count its index
    // line and mark it gone.
    const floorSpans = new Map<string, { hash: string; gone: boolean }>();
    for (let i = 0; i < BATCH; i++) floorSpans.set(`span_${i + 1}`, { hash: `h${i}`, gone: false });
    let floorPrev = GENESIS_HASH;
    let floorNext = 0;
    // Appends with and without the hint chosen at append (where a prune no longer pays for it).
    const appendPool = new WindowPool();
    const appendNoHint = new WindowPool({ indexHintTokens: 0 });
    const tasks: MicroTask[] = [
      {
        name: "zod safeParse",
        fn: () => {
          const r = schema.safeParse(JSON.parse(directives[parseNext++ % BATCH]!));
          if (!r.success) throw new Error("baseline directive did not parse");
        },
      },
      {
        name: "applyDirective",
        fn: async () => {
          const o = await untrusted.window.applyDirective(directives[untrusted.take()]!);
          lastStatus = o.status;
        },
        options: { beforeEach: async () => void (await untrusted.ready()) },
      },
      {
        name: "naive parse + delete",
        fn: () => {
          const r = schema.safeParse(JSON.parse(directives[naiveNext++]!));
          if (r.success && r.data.op === "prune") naive.delete(r.data.span_id);
        },
        options: { beforeEach: () => void (naiveNext >= BATCH ? naiveRefill() : undefined) },
      },
      {
        name: "tryPrune",
        fn: async () => {
          const o = await typed.window.tryPrune({ span: typed.refs[typed.take()]!, mode: "drop" });
          lastTyped = o.status;
        },
        options: { beforeEach: async () => void (await typed.ready()) },
      },
      // Components of the subject, to say where its time goes (BENCHMARKS.md, "what limits it").
      {
        name: "parseDirective, window limits",
        fn: () => void parseDirective(directives[parseNext++ % BATCH]!, windowLimits),
      },
      { name: "sealAudit", fn: () => void sealAudit(DRAFT, { seq: ++seq, at: 0, session: "s1", store: "mem", prevHash: GENESIS_HASH }) },
      { name: "index line tokens", fn: () => void indexLineTokens(`span_${(seq++ % 999) + 1}`, "#42", HINT) },
      { name: "index-line hint", fn: () => void indexHint({ text: TEXT }, DEFAULT_HINT_TOKENS) },
      {
        name: "applyDirective, hints off",
        fn: async () => {
          lastNoHint = (await noHints.window.applyDirective(directives[noHints.take()]!)).status;
        },
        options: { beforeEach: async () => void (await noHints.ready()) },
      },
      {
        name: "floor: parse + seal + index line",
        fn: () => {
          const text = directives[floorNext++ % BATCH]!;
          const parsed = parseDirective(text, windowLimits);
          if (!parsed.ok || parsed.directive.op !== "prune") throw new Error("floor directive did not parse");
          const id = parsed.directive.span_id;
          const span = floorSpans.get(id)!;
          const rec = sealAudit({ ...DRAFT, spanId: id, spanHash: span.hash, directive: text }, { seq: ++seq, at: 0, session: "s1", store: "mem", prevHash: floorPrev });
          floorPrev = rec.hash;
          span.gone = indexLineTokens(id, `#${floorNext}`, HINT, HINT_TOKENS) > 0;
        },
      },
      { name: "append, hint chosen", fn: () => appendPool.appendOne(), options: { beforeEach: () => appendPool.readyForAppend() } },
      { name: "append, hints off", fn: () => appendNoHint.appendOne(), options: { beforeEach: () => appendNoHint.readyForAppend() } },
    ];
    const rounds = ctx.quick ? 2 : 5;
    const { results, ratioToFirst } = await compareMicro(tasks, { rounds, time: ctx.quick ? 120 : 400 });
    if (lastStatus !== "reversible" || lastTyped !== "reversible" || lastNoHint !== "reversible") {
      throw new Error(`benchmark 1: expected reversible outcomes, got ${lastStatus}, ${lastTyped} and ${lastNoHint}`);
    }
    const [parse, apply, naiveR, typedR, windowParse, seal, tokens, hint, noHint, floor, appendHint, appendPlain] = results as [
      MicroResult, MicroResult, MicroResult, MicroResult, MicroResult, MicroResult, MicroResult, MicroResult, MicroResult, MicroResult, MicroResult, MicroResult,
    ];
    const floorRatio = ratioToFirst[9]!;
    const applyRatio = ratioToFirst[1]!;
    const naiveRatio = ratioToFirst[2]!;
    const rows: Row[] = [
      {
        bench: 1,
        name: "directive → reversible drop vs bare zod safeParse",
        subject: `${fmtMs(apply.mean)}/op (${fmtOps(apply.hz)})`,
        baseline: `${fmtMs(parse.mean)}/op (${fmtOps(parse.hz)})`,
        ratio: `${applyRatio.toFixed(2)}×`,
        goal: goalAtMost(applyRatio, 5),
        detail: `p50 ${fmtMs(apply.p50)} vs ${fmtMs(parse.p50)}, p99 ${fmtMs(apply.p99)} vs ${fmtMs(parse.p99)}; median of ${rounds} rounds, ${apply.samples} + ${parse.samples} samples`,
      },
      {
        bench: 1,
        name: "directive → reversible drop vs its floor (parse + one sealed record + index line)",
        subject: `${fmtMs(apply.mean)}/op`,
        baseline: `${fmtMs(floor.mean)}/op (${floorRatio.toFixed(2)}× the bare parse)`,
        ratio: `${(applyRatio / floorRatio).toFixed(2)}×`,
        goal: goalAtMost(applyRatio / floorRatio, 1.25),
        detail: `the floor, timed: parseDirective, a Map lookup, sealAudit of the record and the index line's token count — what any checked, audited prune does; p50 ${fmtMs(apply.p50)} vs ${fmtMs(floor.p50)}; `
          + `the index-line hint is chosen at append: an append costs ${fmtMs(appendHint.mean)} with it and ${fmtMs(appendPlain.mean)} with hints off (+${fmtMs(Math.max(0, appendHint.mean - appendPlain.mean))}, ${ratio(appendHint.mean, appendPlain.mean)}), p50 ${fmtMs(appendHint.p50)} vs ${fmtMs(appendPlain.p50)}`,
      },
      {
        bench: 1,
        name: "directive → reversible drop vs naive parse + delete",
        subject: `${fmtMs(apply.mean)}/op`,
        baseline: `${fmtMs(naiveR.mean)}/op (${fmtOps(naiveR.hz)})`,
        ratio: `${(applyRatio / naiveRatio).toFixed(2)}×`,
        goal: null,
        detail: `naive executor vs bare parse: ${naiveRatio.toFixed(2)}× (${ratio(naiveR.mean, parse.mean)} by medians)`,
      },
      {
        bench: 1,
        name: "same prune on the typed path (no parse) vs bare zod safeParse",
        subject: `${fmtMs(typedR.mean)}/op (${fmtOps(typedR.hz)})`,
        baseline: `${fmtMs(parse.mean)}/op`,
        ratio: `${ratioToFirst[3]!.toFixed(2)}×`,
        goal: null,
        detail: `applyDirective − tryPrune ≈ ${fmtMs(apply.mean - typedR.mean)}/op spent parsing inside the window, vs ${fmtMs(parse.mean)} for the bare parse`,
      },
      {
        bench: 1,
        name: "where the time goes: parseDirective with the window's limits object",
        subject: `${fmtMs(windowParse.mean)}/op`,
        baseline: `${fmtMs(parse.mean)}/op`,
        ratio: `${ratioToFirst[4]!.toFixed(2)}×`,
        goal: null,
        detail: `a limits object other than DEFAULT_LIMITS rebuilds the zod schema on every call; one audit record (sealAudit) ${fmtMs(seal.mean)} (${ratioToFirst[5]!.toFixed(2)}×), the index line's token count ${fmtMs(tokens.mean)} (${ratioToFirst[6]!.toFixed(2)}×), its hint (indexHint on the span) ${fmtMs(hint.mean)} (${ratioToFirst[7]!.toFixed(2)}×)`,
      },
      {
        bench: 1,
        name: "same directive, index-line hints off (indexHintTokens: 0) vs bare zod safeParse",
        subject: `${fmtMs(noHint.mean)}/op (${fmtOps(noHint.hz)})`,
        baseline: `${fmtMs(parse.mean)}/op`,
        ratio: `${ratioToFirst[8]!.toFixed(2)}×`,
        goal: null,
        detail: `the hint is found by scanning the span's first 2,000 characters when it is appended (src/hint.ts), so the prune only reads it; p50 ${fmtMs(noHint.p50)}`,
      },
    ];
    return rows;
  },
};

/** Windows of BATCH live spans on a fresh memory store; `ready()` (untimed) refills when used up. */
/** Windows of `BATCH` live tool results, refilled when used up (untimed); benchmarks 1 and 12 prune from them. */
export class WindowPool {
  #window: ContextWindow<"toolResult"> | null = null;
  refs: Array<SpanRef<"toolResult">> = [];
  #next = BATCH;
  #session = 0;
  readonly #options: Pick<ContextWindowOptions<"toolResult">, "indexHintTokens" | "telemetry">;

  constructor(options: Pick<ContextWindowOptions<"toolResult">, "indexHintTokens" | "telemetry"> = {}) {
    this.#options = options;
  }

  get window(): ContextWindow<"toolResult"> {
    return this.#window!;
  }

  /** The index of the next live span (span ids are `span_${index + 1}`). */
  take(): number {
    return this.#next++;
  }

  /** For timing appends: a fresh, empty window once `BATCH` spans were appended to this one (untimed). */
  readyForAppend(): void {
    if (this.#window !== null && this.#next < BATCH) return;
    this.#window = this.#newWindow();
    this.#next = 0;
  }

  /** Appends one span (the timed part of an append benchmark). */
  async appendOne(): Promise<void> {
    this.#next++;
    await this.#window!.append({ kind: "toolResult", text: TEXT });
  }

  #newWindow(): ContextWindow<"toolResult"> {
    const mem = new MemoryStore({ name: "mem" });
    return new ContextWindow({
      session: `s${++this.#session}`,
      stores: { mem },
      kinds: { toolResult: { store: "mem", modes: ["drop", "summarize"], lossy: "with-flag" } },
      ...this.#options,
    });
  }

  /** Refills the window when its spans are used up; `true` when it did. */
  async ready(): Promise<boolean> {
    if (this.#next < BATCH) return false;
    const win = this.#newWindow();
    this.refs = [];
    for (let i = 0; i < BATCH; i++) this.refs.push(await win.append({ kind: "toolResult", text: TEXT }));
    this.#window = win;
    this.#next = 0;
    return true;
  }
}
