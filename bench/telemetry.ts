/**
 * Benchmark 12: what OpenTelemetry costs per directive. Subject: `applyDirective` (an untrusted prune →
 * reversible drop on a memory store, as in benchmark 1) on a window recording into the real SDK — a
 * `TracerProvider` with a `BatchSpanProcessor` (what the Node SDK puts in front of an exporter) into an
 * `InMemorySpanExporter` (emptied between batches, untimed), a `MeterProvider` with its reader, and the
 * `AsyncLocalStorage` context manager, so every
 * directive starts, fills and ends a span, becomes the active context while it runs, and updates the
 * metrics. Baselines, in the same bench: the same directive with `telemetry: false` (the API never
 * looked at), and with the API installed but no SDK registered (each decision asks the API whether a
 * provider was registered, and records nothing).
 */
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, InMemorySpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import { BATCH, WindowPool } from "./directive.js";
import { compareMicro, type MicroResult, type MicroTask } from "./measure.js";
import { fmtMs, fmtOps, type Benchmark, type Row } from "./report.js";


export const telemetryBench: Benchmark = {
  id: 12,
  title: "a directive with OpenTelemetry recording vs none",
  async run(ctx) {
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    const exporter = new InMemorySpanExporter();
    // A batch processor, as the Node SDK sets up for an exporter (a simple one exports each span on its own, ~6 µs more).
    const provider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: 8192, scheduledDelayMillis: 200 })] });
    const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const directives = Array.from({ length: BATCH }, (_, i) => JSON.stringify({ op: "prune", span_id: `span_${i + 1}`, mode: "drop" }));
    const pools = {
      off: new WindowPool({ telemetry: false }),
      idle: new WindowPool({}),
      recording: new WindowPool({ telemetry: { tracer: provider.getTracer("pruneguard"), meter: meterProvider.getMeter("pruneguard") } }),
    };
    const last: Record<string, string> = {};
    const task = (name: string, pool: WindowPool): MicroTask => ({
      name,
      fn: async () => {
        last[name] = (await pool.window.applyDirective(directives[pool.take()]!)).status;
      },
      options: {
        beforeEach: async () => {
          if (await pool.ready()) exporter.reset();
        },
      },
    });
    const tasks = [task("telemetry off", pools.off), task("API, no SDK", pools.idle), task("recording SDK", pools.recording)];
    const rounds = ctx.quick ? 2 : 5;
    let results: MicroResult[];
    let ratioToFirst: number[];
    try {
      ({ results, ratioToFirst } = await compareMicro(tasks, { rounds, time: ctx.quick ? 120 : 400 }));
    } finally {
      await provider.shutdown();
      await meterProvider.shutdown();
      contextManager.disable();
      context.disable();
    }
    for (const t of tasks) if (last[t.name] !== "reversible") throw new Error(`benchmark 12: expected reversible outcomes, got ${last[t.name]} (${t.name})`);
    const [off, idle, recording] = results as [MicroResult, MicroResult, MicroResult];
    return [
      {
        bench: 12,
        name: "directive → reversible drop, recording OpenTelemetry SDK vs telemetry off",
        subject: `${fmtMs(recording.mean)}/op (${fmtOps(recording.hz)})`,
        baseline: `${fmtMs(off.mean)}/op (${fmtOps(off.hz)})`,
        ratio: `${ratioToFirst[2]!.toFixed(2)}×`,
        goal: null,
        detail: `≈ ${fmtMs(recording.mean - off.mean)} per directive for one span (≈ 20 attributes) and 3 metric updates; p50 ${fmtMs(recording.p50)} vs ${fmtMs(off.p50)}; median of ${rounds} rounds`,
      },
      {
        bench: 12,
        name: "directive → reversible drop, API installed and no SDK registered vs telemetry off",
        subject: `${fmtMs(idle.mean)}/op (${fmtOps(idle.hz)})`,
        baseline: `${fmtMs(off.mean)}/op`,
        ratio: `${ratioToFirst[1]!.toFixed(2)}×`,
        goal: null,
        detail: `each decision asks the API whether a tracer or meter provider was registered, and records nothing; p50 ${fmtMs(idle.p50)} vs ${fmtMs(off.p50)}`,
      },
    ] satisfies Row[];
  },
};

