/**
 * OpenTelemetry for the window's decisions: one span per decision (prune, recall, search, map, range
 * summary, compact, resume, checkCopies), one per compaction point and per store failure outside a
 * decision, and metrics (decisions by op and status, tokens freed, lossy commitments, recall answers,
 * decision latency, compaction points, store failures) — through `@opentelemetry/api`, an optional peer
 * dependency the runtime never imports statically.
 *
 * Where the tracer and meter come from (`ContextWindowOptions.telemetry`, docs/observability.md):
 * - not set: at the first window's construction the runtime tries `require("@opentelemetry/api")` once,
 *   from where it is installed. Absent: no telemetry, nothing else is loaded, and a decision costs one
 *   `null` check. Present: each decision asks the API whether an SDK registered a tracer or meter provider
 *   (a few property reads) and records only when one did — so a process that registers its SDK later is
 *   picked up, and one that never does records nothing;
 * - `{ tracer, meter }`: those (an explicit value wins; `null` turns that signal off; a field left out is
 *   taken from the global API as above);
 * - `false`: off, and the API is never looked for.
 *
 * Content never leaves the window through telemetry: no span text, digest, directive or error message is
 * an attribute, and neither is a query, unless `queryText` asks for its first characters. Span ids, kinds,
 * handles, store names, modes, reasons and counts are the attributes. Every decision span is a child of the
 * caller's active span (so a prune shows under the agent step that made it) and is itself active while the
 * decision runs (a compaction point it causes, and a store's own instrumentation, show under it).
 */
import { createRequire } from "node:module";
import * as path from "node:path";
import { SPAN_ID } from "./directive.js";
import { cutUnits } from "./render/framing.js";
import type { DirectiveOutcome } from "./outcome.js";
import type { CompactionReport } from "./outcome.js";

/** An attribute value, as OpenTelemetry takes it. */
export type TelemetryAttributeValue = string | number | boolean | string[] | number[] | boolean[];
export interface TelemetryAttributes {
  [key: string]: TelemetryAttributeValue | undefined;
}

/** The part of an OpenTelemetry `Span` the runtime uses; any `Span` of `@opentelemetry/api` is one. */
export interface TelemetrySpan {
  setAttributes(attributes: TelemetryAttributes): unknown;
  addEvent(name: string, attributes?: TelemetryAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  updateName(name: string): unknown;
  end(): void;
  isRecording(): boolean;
}

/** The part of an OpenTelemetry `Tracer` the runtime uses: `trace.getTracer("pruneguard")` is one. */
export interface TelemetryTracer {
  startSpan(name: string, options?: { attributes?: TelemetryAttributes }, context?: unknown): TelemetrySpan;
}

export interface TelemetryInstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/** The part of an OpenTelemetry `Meter` the runtime uses: `metrics.getMeter("pruneguard")` is one. */
export interface TelemetryMeter {
  createCounter(name: string, options?: TelemetryInstrumentOptions): { add(value: number, attributes?: TelemetryAttributes): void };
  createHistogram(name: string, options?: TelemetryInstrumentOptions): { record(value: number, attributes?: TelemetryAttributes): void };
}

/** `ContextWindowOptions.telemetry`. */
export interface TelemetryOptions {
  /** The tracer decision spans go to; `null`: no spans. Default: the global tracer provider's, when one is registered. */
  readonly tracer?: TelemetryTracer | null;
  /** The meter the instruments are created on; `null`: no metrics. Default: the global meter provider's, when one is registered. */
  readonly meter?: TelemetryMeter | null;
  /**
   * Search spans carry the query's first `queryText` characters as `pruneguard.search.query` (at most
   * `MAX_QUERY_TEXT`). Default 0: a query is content, and is never recorded.
   */
  readonly queryText?: number;
}

/** The most characters of a query `queryText` can ask for. */
export const MAX_QUERY_TEXT = 200;

/** The instrumentation scope: tracer and meter name. */
export const TELEMETRY_SCOPE = "pruneguard";

/** The decision operations a span is named after: `pruneguard.<op>`. */
export type TelemetryOp = "prune" | "recall" | "search" | "map" | "summarize_range" | "compact" | "resume" | "check_copies";

/** What the runtime reads of `@opentelemetry/api` (any 1.x). */
interface OtelApi {
  readonly context: {
    active(): unknown;
    with<R>(context: unknown, fn: () => R): R;
  };
  readonly trace: {
    getTracerProvider(): { getTracer(name: string): TelemetryTracer; getDelegate?(): unknown };
    setSpan(context: unknown, span: TelemetrySpan): unknown;
  };
  readonly metrics: { getMeterProvider(): { getMeter(name: string): TelemetryMeter } };
  createNoopMeter?(): TelemetryMeter;
  ProxyTracerProvider?: new () => { getDelegate(): unknown };
}

const STATUS_ERROR = 2; // SpanStatusCode.ERROR

let api: OtelApi | null | undefined;
/** The provider a proxy answers with when no SDK registered one (this copy's no-op singleton). */
let noopTracerProvider: unknown;

/**
 * `@opentelemetry/api`, loaded once, from where pruneguard is installed; `null` when it is not. Nothing
 * else of OpenTelemetry is ever loaded by the runtime.
 */
/**
 * A peer dependency as the application resolves it: from its entry script, else from the working
 * directory — where an app that sets up OpenTelemetry has `@opentelemetry/api` installed. (Resolving from
 * this module's own URL would need `import.meta`, which TypeScript refuses in files it reads as CommonJS.)
 */
function requireFromApp(name: string): unknown {
  const entry = process.argv[1];
  const base = typeof entry === "string" && entry.length > 0 ? path.resolve(entry) : path.join(process.cwd(), "index.js");
  return createRequire(base)(name);
}

export function loadOtelApi(): OtelApi | null {
  if (api !== undefined) return api;
  try {
    api = requireFromApp("@opentelemetry/api") as OtelApi;
    noopTracerProvider = api.ProxyTracerProvider === undefined ? undefined : new api.ProxyTracerProvider().getDelegate();
  } catch {
    api = null;
  }
  return api;
}

/** The window's facts about one of its spans, for attributes (never its text). */
export interface SpanFacts {
  readonly kind: string;
  readonly store: string | null;
}

/** What a window tells its telemetry about itself. */
export interface TelemetryContext {
  readonly session: string;
  /** The kind and store of a span the window holds or held. */
  span(spanId: string): SpanFacts | undefined;
  /** The store a kind's prunes commit in (`null`: no store). */
  storeOfKind(kind: string): string | null | undefined;
}

/** The window's telemetry, or `null` when there is none: `false`, or nothing to record into. */
export function createTelemetry(setting: TelemetryOptions | false | undefined, ctx: TelemetryContext): Telemetry | null {
  if (setting === false) return null;
  const options = setting ?? {};
  // The global API is needed for a signal left to it, and for context (parenting) in every case.
  const otel = loadOtelApi();
  const tracer = options.tracer !== undefined ? options.tracer : otel === null ? null : undefined;
  const meter = options.meter !== undefined ? options.meter : otel === null ? null : undefined;
  if (tracer === null && meter === null) return null;
  return new Telemetry(ctx, otel, tracer, meter, Math.min(MAX_QUERY_TEXT, Math.max(0, Math.floor(options.queryText ?? 0))));
}

/** Runs one decision under the window's telemetry (or as it is, without one). */
export function decide<T extends DirectiveOutcome>(t: Telemetry | null, op: TelemetryOp | null, run: () => Promise<T>): Promise<T> {
  return t === null ? run() : t.decision(op, run, (out) => t.describe(out));
}

interface Instruments {
  readonly decisions: ReturnType<TelemetryMeter["createCounter"]>;
  readonly duration: ReturnType<TelemetryMeter["createHistogram"]>;
  readonly tokensFreed: ReturnType<TelemetryMeter["createCounter"]>;
  readonly lossy: ReturnType<TelemetryMeter["createCounter"]>;
  readonly recalls: ReturnType<TelemetryMeter["createCounter"]>;
  readonly compactions: ReturnType<TelemetryMeter["createCounter"]>;
  readonly compactionTokens: ReturnType<TelemetryMeter["createCounter"]>;
  readonly storeFailures: ReturnType<TelemetryMeter["createCounter"]>;
}

/** Latency buckets (seconds): a decision on a memory store takes tens of microseconds, on PostgreSQL milliseconds. */
const LATENCY_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

function instruments(meter: TelemetryMeter): Instruments {
  return {
    decisions: meter.createCounter("pruneguard.decisions", { description: "Decisions the window made, by op and status", unit: "{decision}" }),
    duration: meter.createHistogram("pruneguard.decision.duration", {
      description: "How long a decision took, from the start of its check to its answer", unit: "s", advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
    }),
    tokensFreed: meter.createCounter("pruneguard.tokens.freed", { description: "Tokens prunes and range summaries freed from the window", unit: "{token}" }),
    lossy: meter.createCounter("pruneguard.lossy.commitments", { description: "Spans pruned under a tombstone (lossy commitments)", unit: "{span}" }),
    recalls: meter.createCounter("pruneguard.recall.answers", { description: "Recall answers, by status", unit: "{answer}" }),
    compactions: meter.createCounter("pruneguard.compaction.points", { description: "Compaction points: rewrites of what the model reads", unit: "{compaction}" }),
    compactionTokens: meter.createCounter("pruneguard.compaction.tokens", {
      description: "Tokens compaction points freed, and cached tokens they rewrote (pruneguard.compaction.token.type)", unit: "{token}",
    }),
    storeFailures: meter.createCounter("pruneguard.store.failures", { description: "Store calls that failed, by op and store", unit: "{failure}" }),
  };
}

/** A store failure a decision ran into (a span event, and a count). */
interface Failure {
  readonly store: string | null;
  /** `store-error`, `unavailable`, `outcome-unknown`, `audit-pending`, `persist`, or the thrown error's name. */
  readonly failure: string;
}

/** What a resume reports: the spans it restored, by state (`window/resume.ts`'s `Restored` is one). */
export interface ResumedCounts {
  readonly entries: readonly unknown[];
  readonly counts: { readonly live: number; readonly pruned: number; readonly tombstones: number; readonly lost: number };
}

/** A decision's outcome as telemetry reads it: span attributes, and what the metrics count. */
export interface Described {
  readonly op: string;
  readonly status: string;
  readonly attributes: TelemetryAttributes;
  /** Attributes of the decision counter beyond op and status (bounded: kind, reason). */
  readonly dimensions: TelemetryAttributes;
  readonly tokensFreed: number;
  readonly lossy: number;
  readonly failures: readonly Failure[];
  readonly recall: TelemetryAttributes | null;
}

export class Telemetry {
  readonly #ctx: TelemetryContext;
  readonly #api: OtelApi | null;
  /** A tracer given in the options (`null`: none); `undefined`: the global provider's. */
  readonly #fixedTracer: TelemetryTracer | null | undefined;
  readonly #fixedInstruments: Instruments | null | undefined;
  readonly #queryText: number;
  #tracerSource: unknown = undefined;
  #globalTracer: TelemetryTracer | null = null;
  #meterSource: unknown = undefined;
  #globalInstruments: Instruments | null = null;
  /** The decision spans running, innermost last (a window runs one decision at a time; a prune inside an append nests). */
  readonly #running: TelemetrySpan[] = [];

  constructor(ctx: TelemetryContext, otel: OtelApi | null, tracer: TelemetryTracer | null | undefined, meter: TelemetryMeter | null | undefined, queryText: number) {
    this.#ctx = ctx;
    this.#api = otel;
    this.#fixedTracer = tracer;
    let fixed: Instruments | null | undefined = meter === undefined ? undefined : null;
    // A meter that cannot make its instruments records nothing; the window is built all the same.
    if (meter !== undefined && meter !== null) quietly(() => void (fixed = instruments(meter)));
    this.#fixedInstruments = fixed;
    this.#queryText = queryText;
  }

  /** The tracer to record into now, or `null` (no SDK registered, or turned off). */
  #tracer(): TelemetryTracer | null {
    if (this.#fixedTracer !== undefined) return this.#fixedTracer;
    const provider = this.#api!.trace.getTracerProvider();
    // The API's proxy answers with a no-op until an SDK sets its delegate: compare the delegate.
    const source = typeof provider.getDelegate === "function" ? provider.getDelegate() : provider;
    if (source !== this.#tracerSource) {
      // The source is noted once its tracer is had: a provider whose getTracer threw is asked again next time.
      this.#globalTracer = source === noopTracerProvider ? null : provider.getTracer(TELEMETRY_SCOPE);
      this.#tracerSource = source;
    }
    return this.#globalTracer;
  }

  /** The instruments to record into now, or `null`. */
  #instruments(): Instruments | null {
    if (this.#fixedInstruments !== undefined) return this.#fixedInstruments;
    const provider = this.#api!.metrics.getMeterProvider();
    if (provider !== this.#meterSource) {
      const meter = provider.getMeter(TELEMETRY_SCOPE);
      this.#globalInstruments = this.#api!.createNoopMeter !== undefined && meter === this.#api!.createNoopMeter() ? null : instruments(meter);
      this.#meterSource = provider;
    }
    return this.#globalInstruments;
  }

  /** Starts a span under the caller's active context (the API's, when it is loaded). */
  #start(tracer: TelemetryTracer, name: string, attributes: TelemetryAttributes): TelemetrySpan {
    const options = { attributes: { "gen_ai.conversation.id": this.#ctx.session, ...attributes } };
    return this.#api === null ? tracer.startSpan(name, options) : tracer.startSpan(name, options, this.#api.context.active());
  }

  /**
   * One decision: a span around it (active while it runs), and its metrics once it answered. Telemetry never
   * changes an answer: a tracer, span, meter, instrument or context manager that throws is ignored (the
   * decision runs, and answers, as without it), and only the decision's own exception propagates. The
   * decision runs exactly once: a context manager's `with()` gets a callback that starts it at most once,
   * and whatever `with()` does — throws before or after calling it, never calls it, calls it twice, returns
   * something else — the answer is the decision's own promise, started here if `with()` did not.
   */
  async decision<T>(op: string | null, run: () => Promise<T>, describe: (out: T) => Described): Promise<T> {
    let started: Promise<T> | null = null;
    const once = (): Promise<T> => {
      if (started === null) {
        try {
          started = run();
        } catch (err) {
          started = Promise.reject(err as Error);
        }
      }
      return started;
    };
    // Each piece of the SDK fails alone: a tracer that cannot be had still leaves the metrics, and the reverse.
    const tracer = orNull(() => this.#tracer());
    const instruments = orNull(() => this.#instruments());
    if (tracer === null && instruments === null) return once();
    const span = tracer === null ? null : orNull(() => asSpan(this.#start(tracer, op === null ? "pruneguard.directive" : `pruneguard.${op}`, op === null ? {} : { "pruneguard.op": op })));
    const t0 = performance.now();
    if (span !== null) this.#running.push(span);
    let out: T;
    try {
      if (span !== null && this.#api !== null) this.#scoped(this.#api, span, once);
      out = await once();
    } catch (err) {
      const type = errorType(err);
      if (span !== null) {
        quietly(() => span.setAttributes({ "error.type": type }));
        quietly(() => span.setStatus({ code: STATUS_ERROR, message: type }));
        quietly(() => span.end());
      }
      const opStatus = { "pruneguard.op": op ?? "unknown", "pruneguard.status": "error" };
      quietly(() => instruments?.decisions.add(1, opStatus));
      quietly(() => instruments?.duration.record((performance.now() - t0) / 1000, opStatus));
      throw err;
    } finally {
      if (span !== null) this.#running.pop();
    }
    const seconds = (performance.now() - t0) / 1000;
    // An outcome telemetry cannot read is recorded without its details.
    const described = orNull(() => describe(out));
    if (span !== null) {
      if (described !== null) {
        // A directive whose op could not be read keeps the name it started with (`pruneguard.directive`).
        if (described.op !== "unknown" && op !== described.op) quietly(() => span.updateName(`pruneguard.${described.op}`));
        quietly(() => span.setAttributes(described.attributes));
        for (const f of described.failures) quietly(() => span.addEvent("pruneguard.store_failure", clean({ "pruneguard.store": f.store, "pruneguard.failure": f.failure })));
      }
      quietly(() => span.end());
    }
    if (instruments !== null && described !== null) this.#count(instruments, described, seconds);
    return out;
  }

  /**
   * Starts the decision with its span as the active context. What the context manager does is not trusted:
   * it is ignored when it throws, and a promise it returns instead of the decision's is left to settle
   * (handled, so its rejection is not an unhandled one). The caller awaits `once()`, which starts the
   * decision itself when `with()` did not.
   */
  #scoped<T>(api: OtelApi, span: TelemetrySpan, once: () => Promise<T>): void {
    let returned: unknown;
    try {
      const context = api.trace.setSpan(api.context.active(), span);
      returned = api.context.with(context, once);
    } catch {
      return;
    }
    if (returned !== null && (typeof returned === "object" || typeof returned === "function")) {
      quietly(() => {
        const then = (returned as { then?: unknown }).then;
        if (typeof then === "function") (then as (ok: () => void, fail: () => void) => unknown).call(returned, ignore, ignore);
      });
    }
  }

  #count(inst: Instruments, d: Described, seconds: number): void {
    const opStatus = { "pruneguard.op": d.op, "pruneguard.status": d.status };
    quietly(() => inst.decisions.add(1, { ...opStatus, ...d.dimensions }));
    quietly(() => inst.duration.record(seconds, opStatus));
    const kind = d.dimensions["pruneguard.span.kind"];
    if (d.tokensFreed > 0) quietly(() => inst.tokensFreed.add(d.tokensFreed, clean({ "pruneguard.op": d.op, "pruneguard.span.kind": kind })));
    if (d.lossy > 0) quietly(() => inst.lossy.add(d.lossy, clean({ "pruneguard.span.kind": kind })));
    const recall = d.recall;
    if (recall !== null) quietly(() => inst.recalls.add(1, recall));
    for (const f of d.failures) quietly(() => inst.storeFailures.add(1, clean({ "pruneguard.op": d.op, "pruneguard.store": f.store, "pruneguard.failure": f.failure })));
  }

  /** Attributes on the decision running now (what only the middle of a decision knows: the lossy budget left). */
  note(attributes: TelemetryAttributes): void {
    quietly(() => this.#running.at(-1)?.setAttributes(clean(attributes)));
  }

  /** A compaction point: a span under whatever is active (the decision that caused it, or the caller's rendering). */
  compaction(report: CompactionReport, count: number): void {
    // The span and the counts fail apart: a tracer that throws still leaves the metrics.
    quietly(() => this.#compactionSpan(report, count));
    quietly(() => this.#compactionCounts(report));
  }

  #compactionSpan(report: CompactionReport, count: number): void {
    const tracer = this.#tracer();
    if (tracer !== null) {
      this.#start(tracer, "pruneguard.compaction", {
        "pruneguard.op": "compaction",
        "pruneguard.compaction.count": count,
        "pruneguard.compaction.applied": report.applied,
        "pruneguard.compaction.folded": report.folded,
        "pruneguard.compaction.tokens_freed": report.freedTokens,
        "pruneguard.compaction.tokens_rewritten": report.rewrittenTokens,
      }).end();
    }
  }

  #compactionCounts(report: CompactionReport): void {
    const inst = this.#instruments();
    if (inst !== null) {
      inst.compactions.add(1);
      if (report.freedTokens > 0) inst.compactionTokens.add(report.freedTokens, { "pruneguard.compaction.token.type": "freed" });
      if (report.rewrittenTokens > 0) inst.compactionTokens.add(report.rewrittenTokens, { "pruneguard.compaction.token.type": "rewritten" });
    }
  }

  /** A store failure outside any decision (a copy that could not be persisted at append): its own span. */
  storeFailure(op: string, store: string | null, err: unknown): void {
    const type = errorType(err);
    quietly(() => {
      const tracer = this.#tracer();
      if (tracer === null) return;
      const span = this.#start(tracer, "pruneguard.store_failure", clean({ "pruneguard.op": op, "pruneguard.store": store, "pruneguard.failure": "persist", "error.type": type }));
      quietly(() => span.setStatus({ code: STATUS_ERROR, message: type }));
      span.end();
    });
    quietly(() => this.#instruments()?.storeFailures.add(1, clean({ "pruneguard.op": op, "pruneguard.store": store, "pruneguard.failure": "persist" })));
  }

  /** A resume: the spans restored, by state. */
  resume<R extends ResumedCounts>(run: () => Promise<R>): Promise<R> {
    return this.decision("resume", run, (r) => ({
      op: "resume", status: "resumed",
      attributes: {
        "pruneguard.op": "resume", "pruneguard.status": "resumed",
        "pruneguard.resume.spans": r.entries.length,
        "pruneguard.resume.live": r.counts.live, "pruneguard.resume.pruned": r.counts.pruned,
        "pruneguard.resume.tombstones": r.counts.tombstones, "pruneguard.resume.lost": r.counts.lost,
      },
      dimensions: {}, tokensFreed: 0, lossy: 0, failures: [], recall: null,
    }));
  }

  /** `checkCopies()`: how many copies it found lost. */
  checkCopies(run: () => Promise<number>): Promise<number> {
    return this.decision("check_copies", run, (lost) => ({
      op: "check_copies", status: lost > 0 ? "copies-lost" : "ok",
      attributes: { "pruneguard.op": "check_copies", "pruneguard.status": lost > 0 ? "copies-lost" : "ok", "pruneguard.copies.lost": lost },
      dimensions: {}, tokensFreed: 0, lossy: 0, failures: [], recall: null,
    }));
  }

  /** A decision's outcome as attributes and counts; never its text, digest, directive or query (but `queryText`). */
  describe(o: DirectiveOutcome): Described {
    const attributes: TelemetryAttributes = {};
    const dimensions: TelemetryAttributes = {};
    const failures: Failure[] = [];
    let tokensFreed = 0;
    let lossy = 0;
    let recall: TelemetryAttributes | null = null;
    const op = o.op ?? "unknown";
    const facts = (spanId: string) => this.#ctx.span(spanId);
    const spanAttributes = (spanId: string | null | undefined, kind?: string | null) => {
      const id = spanId !== null && spanId !== undefined && SPAN_ID.test(spanId) ? spanId : undefined;
      const k = kind ?? (id === undefined ? undefined : facts(id)?.kind);
      Object.assign(attributes, clean({ "pruneguard.span.id": id, "pruneguard.span.kind": k }));
      if (k !== undefined && k !== null) dimensions["pruneguard.span.kind"] = k;
      return k ?? null;
    };
    switch (o.op) {
      case "prune": {
        if (o.status === "invalid") break;
        const kind = spanAttributes(o.spanId, o.kind);
        const store = kind === null ? null : (this.#ctx.storeOfKind(kind) ?? null);
        Object.assign(attributes, clean({ "pruneguard.mode": o.mode, "pruneguard.store": store }));
        if (o.status === "rejected") {
          attributes["pruneguard.reason"] = o.reason;
          dimensions["pruneguard.reason"] = o.reason;
          if (o.failed.length > 0) attributes["pruneguard.conditions.failed"] = [...o.failed];
          if (o.reason === "store-error" || o.reason === "outcome-unknown") failures.push({ store, failure: o.reason });
          break;
        }
        tokensFreed = Math.max(0, o.tokensFreed);
        lossy = (o.status === "lossy" ? 1 : 0) + o.group.filter((g) => g.status === "lossy").length;
        Object.assign(attributes, {
          "pruneguard.tokens.freed": o.tokensFreed,
          "pruneguard.pins_carried": o.pinsCarried.length,
          "pruneguard.group.size": o.groupPruned.length + 1,
          "pruneguard.grew": o.grew !== null,
          "pruneguard.lossy.count": lossy,
          ...applies(o.applies),
        });
        if (o.status === "reversible") {
          Object.assign(attributes, clean({ "pruneguard.handle": o.handle, "pruneguard.repersisted": o.repersisted, "pruneguard.reversible_until": o.until ?? undefined }));
        } else if (o.failed.length > 0) {
          attributes["pruneguard.conditions.failed"] = [...o.failed];
        }
        break;
      }
      case "recall": {
        if (o.status === "invalid") break;
        const spanId = o.status === "unknown" ? null : o.spanId;
        const kind = spanAttributes(spanId, o.status === "lost" ? o.kind : undefined);
        const store = spanId === null ? null : (facts(spanId)?.store ?? null);
        Object.assign(attributes, clean({ "pruneguard.store": store }));
        const extra: TelemetryAttributes = {};
        if (o.status === "found") extra["pruneguard.recall.source"] = o.source;
        if (o.status === "found" || o.status === "pruned-unrecoverable" || o.status === "unavailable") Object.assign(attributes, clean({ "pruneguard.handle": o.handle }));
        if (o.status === "pruned-unrecoverable") extra["pruneguard.reason"] = o.reason;
        if (o.status === "expanded") attributes["pruneguard.range.members"] = o.members.length;
        if (o.status === "unavailable") failures.push({ store, failure: "unavailable" });
        Object.assign(attributes, extra);
        recall = clean({ "pruneguard.status": o.status, "pruneguard.span.kind": kind, ...extra });
        break;
      }
      case "search": {
        if (o.status === "invalid") break;
        const c = o.coverage;
        const holes = { lossy: 0, "copy-lost": 0, unavailable: 0, elsewhere: 0 };
        const unavailableStores = new Set<string | null>();
        for (const h of c.holes) {
          holes[h.why]++;
          if (h.why === "unavailable") unavailableStores.add(facts(h.spanId)?.store ?? null);
        }
        const coverage = c.truncated || c.unread > 0 ? "partial" : c.holes.length > 0 ? "holes" : "complete";
        dimensions["pruneguard.reason"] = coverage;
        Object.assign(attributes, {
          "pruneguard.reason": coverage,
          "pruneguard.search.regex": o.regex,
          "pruneguard.search.query_chars": o.query.length,
          "pruneguard.search.matches": o.matches.length + o.omitted,
          "pruneguard.search.shown": o.matches.length,
          "pruneguard.search.live": c.live,
          "pruneguard.search.pruned": c.pruned,
          "pruneguard.search.holes": c.holes.length,
          "pruneguard.search.holes.lossy": holes.lossy,
          "pruneguard.search.holes.copy_lost": holes["copy-lost"],
          "pruneguard.search.holes.unavailable": holes.unavailable,
          "pruneguard.search.holes.elsewhere": holes.elsewhere,
          "pruneguard.search.truncated": c.truncated,
          "pruneguard.search.unread": c.unread,
          "pruneguard.search.tokens": o.tokens,
        });
        if (this.#queryText > 0) attributes["pruneguard.search.query"] = cutUnits(o.query, this.#queryText);
        for (const store of unavailableStores) failures.push({ store, failure: "unavailable" });
        break;
      }
      case "map": {
        if (o.status === "invalid") break;
        const counts = { reversible: 0, "reversible-until": 0, "lossy-with-flag": 0, never: 0 };
        let unavailable = 0;
        for (const s of o.spans) {
          counts[s.forecast]++;
          if (s.why === "store unavailable") unavailable++;
        }
        Object.assign(attributes, clean({
          "pruneguard.map.spans": o.spans.length,
          "pruneguard.map.reversible": counts.reversible,
          "pruneguard.map.reversible_until": counts["reversible-until"],
          "pruneguard.map.lossy_with_flag": counts["lossy-with-flag"],
          "pruneguard.map.never": counts.never,
          "pruneguard.window.tokens": o.tokens.used,
          "pruneguard.window.max_tokens": o.tokens.limit ?? undefined,
          "pruneguard.pending.decisions": o.pending?.decisions ?? 0,
          "pruneguard.pending.tokens": o.pending?.pendingTokens,
          "pruneguard.pending.rewrite_tokens": o.pending?.rewriteTokens,
        }));
        if (unavailable > 0) failures.push({ store: null, failure: "unavailable" });
        break;
      }
      case "summarize_range": {
        if (o.status === "invalid") break;
        if (o.status === "rejected") {
          Object.assign(attributes, clean({
            "pruneguard.reason": o.reason, "pruneguard.range.from": SPAN_ID.test(o.from) ? o.from : undefined, "pruneguard.range.to": SPAN_ID.test(o.to) ? o.to : undefined,
          }));
          dimensions["pruneguard.reason"] = o.reason;
          if (o.reason === "store-error") failures.push({ store: null, failure: o.reason });
          break;
        }
        tokensFreed = Math.max(0, o.tokensFreed);
        const stores = [...new Set(o.pruned.map((p) => facts(p.spanId)?.store ?? null))].filter((s): s is string => s !== null);
        Object.assign(attributes, clean({
          "pruneguard.span.id": o.spanId,
          "pruneguard.span.kind": "summary",
          "pruneguard.range.from": o.members[0],
          "pruneguard.range.to": o.members.at(-1),
          "pruneguard.range.members": o.members.length,
          "pruneguard.range.pruned": o.pruned.length,
          "pruneguard.store": stores[0],
          "pruneguard.tokens.freed": o.tokensFreed,
          "pruneguard.pins_carried": o.pinsCarried.length,
          ...applies(o.applies),
        }));
        break;
      }
      case "compact": {
        if (o.status === "invalid") break;
        Object.assign(attributes, {
          "pruneguard.compaction.applied": o.applied,
          "pruneguard.compaction.folded": o.folded,
          "pruneguard.compaction.tokens_freed": o.freedTokens,
          "pruneguard.compaction.tokens_rewritten": o.rewrittenTokens,
        });
        break;
      }
      default:
        break;
    }
    if (o.status === "invalid") attributes["pruneguard.issues"] = o.issues.length;
    attributes["pruneguard.op"] = op;
    attributes["pruneguard.status"] = o.status;
    if (o.auditSeq !== null) attributes["pruneguard.audit.seq"] = o.auditSeq;
    else if (!(o.status === "rejected" && o.reason === "outcome-unknown")) {
      // Not written yet: the audit store failed, and the record waits to be written before the next store call.
      attributes["pruneguard.audit.pending"] = true;
      failures.push({ store: null, failure: "audit-pending" });
    }
    return { op, status: o.status, attributes, dimensions, tokensFreed, lossy, failures, recall };
  }
}

/** When a decision reaches what the model reads. */
function applies(a: { readonly at: "now" } | { readonly at: "next-compaction"; readonly pendingTokens: number; readonly rewriteTokens: number }): TelemetryAttributes {
  return a.at === "now"
    ? { "pruneguard.applies": "now" }
    : { "pruneguard.applies": "next-compaction", "pruneguard.pending.tokens": a.pendingTokens, "pruneguard.pending.rewrite_tokens": a.rewriteTokens };
}

/** The attributes without the absent ones (OpenTelemetry warns on `null` and `undefined`). */
function clean(attributes: { readonly [key: string]: TelemetryAttributeValue | null | undefined }): TelemetryAttributes {
  const out: TelemetryAttributes = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/** A span as `startSpan` returned it, or `null` when it returned none (a broken tracer: nothing to record on). */
function asSpan(span: unknown): TelemetrySpan | null {
  return span !== null && typeof span === "object" ? (span as TelemetrySpan) : null;
}

function ignore(): void {
  // a context manager's own promise: its outcome is not the decision's
}

/** Telemetry's own work that answers something: `null` when it threw. */
function orNull<T>(fn: () => T | null): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

/** Runs telemetry's own work; whatever it throws stays here (an SDK's failure is not the window's). */
function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored: telemetry never changes an answer
  }
}

/** An error's class name: never its message, which may quote what it failed on. */
function errorType(err: unknown): string {
  return err instanceof Error ? err.name || "Error" : typeof err;
}
