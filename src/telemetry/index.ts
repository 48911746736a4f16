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
 *
 * This file holds the public types (what a tracer, meter and span must offer, and the option), what a window
 * tells its telemetry, `createTelemetry` and `decide`. Loading the API, the instruments and the helpers that
 * keep telemetry's failures its own are in `otel-plumbing.ts`; the recording of decision spans and
 * metrics (`Telemetry`) in `decision-spans.ts`; reading an outcome as attributes in
 * `outcome-attributes.ts`; the OpenTelemetry semantic-convention attribute names the runtime emits
 * (`gen_ai.conversation.id`, `gen_ai.conversation.compacted`, `error.type`), with their sources, in
 * `semconv.ts` — every other attribute is `pruneguard.*` (docs/observability.md maps them all).
 */
import type { DirectiveOutcome } from "../outcome.js";
import { loadOtelApi } from "./otel-plumbing.js";
import { Telemetry } from "./decision-spans.js";

export { loadOtelApi, TELEMETRY_SCOPE } from "./otel-plumbing.js";
export { Telemetry, type ResumedCounts } from "./decision-spans.js";
export type { Described } from "./outcome-attributes.js";

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

/** The decision operations a span is named after: `pruneguard.<op>`. */
export type TelemetryOp =
  | "prune" | "recall" | "search" | "map" | "summarize_range" | "compact" | "resume" | "check_copies"
  /** A provider's compaction recorded (`providerCompacted`), and a clearing it did outside the checks (`providerCleared`). */
  | "provider_compaction" | "provider_clearing";

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
  /** The name of the store that keeps the session's audit chain (where a provider's compaction is recorded). */
  readonly homeStore: string;
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
