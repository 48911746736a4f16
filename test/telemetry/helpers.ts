/** An OpenTelemetry SDK recording in memory, as the telemetry tests and the benchmark use it. */
import { context, trace, type Attributes } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  AggregationTemporality, DataPointType, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type DataPoint, type Histogram,
} from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace";

export interface Recording {
  readonly provider: TracerProvider;
  readonly meterProvider: MeterProvider;
  readonly exporter: InMemorySpanExporter;
  /** The options a window records into: `{ tracer, meter }`. */
  readonly telemetry: { tracer: ReturnType<TracerProvider["getTracer"]>; meter: ReturnType<MeterProvider["getMeter"]> };
  /** Ended spans, in the order they ended. */
  spans(): ReadableSpan[];
  named(name: string): ReadableSpan[];
  /** One metric's data points as of now (cumulative). */
  points(metric: string): Promise<Array<DataPoint<number | Histogram>>>;
  /** The sum of a counter's points whose attributes include `match`. */
  sum(metric: string, match?: Attributes): Promise<number>;
  shutdown(): Promise<void>;
}

/** A context manager (AsyncLocalStorage), a tracer provider with an in-memory exporter and a meter provider with an in-memory reader. */
export function recording(): Recording {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const points = async (metric: string) => {
    await reader.forceFlush();
    const last = metricExporter.getMetrics().at(-1);
    const found = last?.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === metric);
    return (found?.dataPoints ?? []) as Array<DataPoint<number | Histogram>>;
  };
  return {
    provider, meterProvider, exporter,
    telemetry: { tracer: provider.getTracer("pruneguard"), meter: meterProvider.getMeter("pruneguard") },
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    points,
    sum: async (metric, match = {}) =>
      (await points(metric))
        .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
        .reduce((n, p) => n + (typeof p.value === "number" ? p.value : p.value.count), 0),
    shutdown: async () => {
      await provider.shutdown();
      await meterProvider.shutdown();
      contextManager.disable();
      context.disable();
      trace.disable();
    },
  };
}

export { DataPointType };

/** Everything a recording holds, as one text: names, attributes, events, metric attributes. */
export async function everything(r: Recording, metrics: readonly string[]): Promise<string> {
  const spans = r.spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })), status: s.status }));
  const points = await Promise.all(metrics.map(async (m) => (await r.points(m)).map((p) => p.attributes)));
  return JSON.stringify({ spans, points });
}
