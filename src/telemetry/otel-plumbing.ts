/**
 * Telemetry's plumbing: `@opentelemetry/api` loaded once from where the application installed it (or
 * `null`), the no-op tracer provider its proxy answers with until an SDK registers one, the instruments
 * the metrics are recorded into, and the small helpers that keep telemetry's own failures from ever
 * changing a decision's answer (`quietly`, `orNull`, `clean`, …).
 */
import { createRequire } from "node:module";
import * as path from "node:path";
import type { TelemetryAttributes, TelemetryAttributeValue, TelemetryMeter, TelemetrySpan, TelemetryTracer } from "./index.js";

/** The instrumentation scope: tracer and meter name. */
export const TELEMETRY_SCOPE = "pruneguard";

/** What the runtime reads of `@opentelemetry/api` (any 1.x). */
export interface OtelApi {
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

export const STATUS_ERROR = 2; // SpanStatusCode.ERROR

let api: OtelApi | null | undefined;
/**
 * The provider a proxy answers with when no SDK registered one (this copy's no-op singleton); set by
 * `loadOtelApi`.
 */
export let noopTracerProvider: unknown;

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

/**
 * `@opentelemetry/api`, loaded once, from where pruneguard is installed; `null` when it is not. Nothing
 * else of OpenTelemetry is ever loaded by the runtime.
 */
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

export interface Instruments {
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

export function instruments(meter: TelemetryMeter): Instruments {
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

/** The attributes without the absent ones (OpenTelemetry warns on `null` and `undefined`). */
export function clean(attributes: { readonly [key: string]: TelemetryAttributeValue | null | undefined }): TelemetryAttributes {
  const out: TelemetryAttributes = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/** A span as `startSpan` returned it, or `null` when it returned none (a broken tracer: nothing to record on). */
export function asSpan(span: unknown): TelemetrySpan | null {
  return span !== null && typeof span === "object" ? (span as TelemetrySpan) : null;
}

export function ignore(): void {
  // a context manager's own promise: its outcome is not the decision's
}

/** Telemetry's own work that answers something: `null` when it threw. */
export function orNull<T>(fn: () => T | null): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

/** Runs telemetry's own work; whatever it throws stays here (an SDK's failure is not the window's). */
export function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored: telemetry never changes an answer
  }
}

/** An error's class name: never its message, which may quote what it failed on. */
export function errorType(err: unknown): string {
  return err instanceof Error ? err.name || "Error" : typeof err;
}
