/**
 * `Telemetry`, a window's recorder: one span per decision (active while it runs, under the caller's), its
 * metrics once it answered, a span per compaction point and per store failure outside a decision. It reads
 * the tracer and meter it was given, or the global providers' when an SDK registered them; and nothing it
 * records, nor any failure of the SDK it records into, ever changes a decision's answer.
 */
import type { CompactionReport, DirectiveOutcome, ProviderCompactionOutcome } from "../outcome.js";
import type { TelemetryAttributes, TelemetryContext, TelemetryMeter, TelemetrySpan, TelemetryTracer } from "./index.js";
import { describeOutcome, type Described } from "./outcome-attributes.js";
import {
  asSpan, clean, errorType, ignore, instruments, noopTracerProvider, orNull, quietly, STATUS_ERROR, TELEMETRY_SCOPE, type Instruments, type OtelApi,
} from "./otel-plumbing.js";
import { ATTR_ERROR_TYPE, ATTR_GEN_AI_CONVERSATION_COMPACTED, ATTR_GEN_AI_CONVERSATION_ID } from "./semconv.js";

/** What a resume reports: the spans it restored, by state (`window/resume.ts`'s `Restored` is one). */
export interface ResumedCounts {
  readonly entries: readonly unknown[];
  readonly counts: { readonly live: number; readonly pruned: number; readonly tombstones: number; readonly lost: number };
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
    const options = { attributes: { [ATTR_GEN_AI_CONVERSATION_ID]: this.#ctx.session, ...attributes } };
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
      // The recording-errors conventions: `error.type` on the span and on the operation's metrics, the same
      // value on both; no status description (the message may quote content, and the class is error.type).
      const type = errorType(err);
      if (span !== null) {
        quietly(() => span.setAttributes({ [ATTR_ERROR_TYPE]: type }));
        quietly(() => span.setStatus({ code: STATUS_ERROR }));
        quietly(() => span.end());
      }
      const opStatus = { "pruneguard.op": op ?? "unknown", "pruneguard.status": "error", [ATTR_ERROR_TYPE]: type };
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
        "pruneguard.compaction.not_applied": report.notApplied,
        "pruneguard.compaction.tokens_freed": report.freedTokens,
        "pruneguard.compaction.tokens_rewritten": report.rewrittenTokens,
        ...compacted(report),
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

  /**
   * A store failure outside any decision's outcome — a copy that could not be persisted at append
   * (`persist`), a range summary settled after a doubt whose note could not be written (`note`): its own span.
   */
  storeFailure(op: string, store: string | null, err: unknown, failure: "persist" | "note" = "persist"): void {
    const type = errorType(err);
    quietly(() => {
      const tracer = this.#tracer();
      if (tracer === null) return;
      const span = this.#start(tracer, "pruneguard.store_failure", clean({ "pruneguard.op": op, "pruneguard.store": store, "pruneguard.failure": failure, [ATTR_ERROR_TYPE]: type }));
      quietly(() => span.setStatus({ code: STATUS_ERROR }));
      span.end();
    });
    quietly(() => this.#instruments()?.storeFailures.add(1, clean({ "pruneguard.op": op, "pruneguard.store": store, "pruneguard.failure": failure, [ATTR_ERROR_TYPE]: type })));
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

  /**
   * A provider's compaction recorded: what its block covered, pruned through the checks, lost as lossy
   * commitments or kept. Never the block, its summary or its encrypted content.
   */
  providerCompaction(run: () => Promise<ProviderCompactionOutcome>): Promise<ProviderCompactionOutcome> {
    return this.decision("provider_compaction", run, (o) => {
      const compactedNow = o.status === "compacted";
      return {
        op: "provider_compaction", status: o.status,
        attributes: clean({
          "pruneguard.op": "provider_compaction", "pruneguard.status": o.status, "pruneguard.provider": o.provider,
          "pruneguard.span.id": o.spanId ?? undefined, "pruneguard.span.kind": o.spanId === null ? undefined : "summary",
          "pruneguard.provider_compaction.members": o.members.length, "pruneguard.provider_compaction.pruned": o.pruned.length,
          "pruneguard.provider_compaction.kept": o.kept.length, "pruneguard.lossy.count": o.lossy.length,
          // The conventions' compaction flag: from here on the model reads the provider's compacted view.
          ...(compactedNow ? { [ATTR_GEN_AI_CONVERSATION_COMPACTED]: true } : {}),
        }),
        dimensions: { "pruneguard.provider": o.provider },
        tokensFreed: 0,
        lossy: o.lossy.length,
        failures: o.status === "store-error" ? [{ store: this.#ctx.homeStore, failure: "store-error" }] : [],
        recall: null,
      };
    });
  }

  /** A clearing the provider did outside the checks (`clear_tool_uses`), recorded and said to the model. */
  providerClearing(clearing: { readonly provider: string; readonly edit: string; readonly toolUses: number }, run: () => Promise<string>): Promise<string> {
    return this.decision("provider_clearing", run, () => ({
      op: "provider_clearing", status: "recorded",
      attributes: {
        "pruneguard.op": "provider_clearing", "pruneguard.status": "recorded", "pruneguard.provider": clearing.provider,
        "pruneguard.provider.edit": clearing.edit, "pruneguard.provider.cleared_tool_uses": Math.max(0, Math.floor(clearing.toolUses)),
      },
      dimensions: { "pruneguard.provider": clearing.provider },
      tokensFreed: 0, lossy: 0, failures: [], recall: null,
    }));
  }

  /** A decision's outcome as attributes and counts; never its text, digest, directive or query (but `queryText`). */
  describe(o: DirectiveOutcome): Described {
    return describeOutcome(o, this.#ctx, this.#queryText);
  }
}

/**
 * `gen_ai.conversation.compacted: true` for a compaction point that applied decisions (prunes, range
 * summaries: spans replaced by their lines) or folded directive calls away — compaction, as the GenAI
 * conventions define it, known to have been applied. Nothing for one that only rewrote lines (a rejection
 * notice, a lapsed or lost copy, a resumed window's first rendering): the conventions set the attribute
 * only to `true`, and leave it unset when it is not known.
 */
function compacted(report: CompactionReport): TelemetryAttributes {
  return report.applied > 0 || report.folded > 0 ? { [ATTR_GEN_AI_CONVERSATION_COMPACTED]: true } : {};
}
