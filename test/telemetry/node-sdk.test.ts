/**
 * With the OpenTelemetry Node SDK registered (`new NodeSDK(...).start()`, as a service does at start-up), a
 * window built without any telemetry option records into it: its prunes, recalls and searches are spans with
 * their outcomes and no content, under the agent's own spans, and the metrics reach the SDK's reader. A
 * window built before the SDK started is picked up too (the API is asked at every decision whether a
 * provider is registered).
 */
import { trace } from "@opentelemetry/api";
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow, MemoryStore } from "../../src/index.js";

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor({ exporter });
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });

function window(session: string) {
  const toolLog = new MemoryStore({ name: "toolLog" });
  return new ContextWindow({
    session, stores: { toolLog },
    kinds: { toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" }, scratch: { store: null, modes: ["drop"], lossy: "with-flag" } },
  });
}

// Built before the SDK starts, as a module-level singleton would be.
const early = window("early");

const sdk = new NodeSDK({
  serviceName: "agent-under-test",
  spanProcessors: [processor],
  metricReaders: [reader],
  logRecordProcessors: [],
  instrumentations: [],
});
sdk.start();
afterAll(() => sdk.shutdown());

describe("with the Node SDK registered", () => {
  it("a session's prunes, recalls and searches appear as spans with their outcomes and no content, under the agent's step", async () => {
    const win = window("s-node");
    const secret = "the body says req_7f3a9c2e41 failed on db-primary-7";
    const a = await win.append({ kind: "toolResult", text: secret });
    const b = await win.append({ kind: "scratch", text: secret });
    await trace.getTracer("agent").startActiveSpan("agent step", async (step) => {
      await win.applyDirective({ op: "prune", span_id: a, mode: "summarize", digest: "db-primary-7 timed out" });
      await win.applyDirective({ op: "prune", span_id: b, mode: "drop" });
      await win.applyDirective({ op: "recall", span_id: a });
      await win.applyDirective({ op: "search", query: "req_7f3a9c2e41" });
      step.end();
    });
    // The SDK's resource detectors are asynchronous: spans are exported once they have settled.
    await processor.forceFlush();
    const spans = exporter.getFinishedSpans();
    const step = spans.find((s) => s.name === "agent step")!;
    const ours = spans.filter((s) => s.instrumentationScope.name === "pruneguard");
    expect(ours.map((s) => [s.name, s.attributes["pruneguard.status"]])).toEqual([
      ["pruneguard.prune", "reversible"], ["pruneguard.prune", "rejected"], ["pruneguard.recall", "found"], ["pruneguard.search", "match"],
    ]);
    for (const s of ours) {
      expect(s.parentSpanContext?.spanId).toBe(step.spanContext().spanId);
      expect(s.attributes["gen_ai.conversation.id"]).toBe("s-node");
      expect(s.resource.attributes["service.name"]).toBe("agent-under-test");
    }
    const text = JSON.stringify(ours.map((s) => ({ a: s.attributes, e: s.events.map((e) => e.attributes) })));
    for (const content of ["req_7f3a9c2e41", "db-primary-7", "body says"]) expect(text).not.toContain(content);
    await reader.forceFlush();
    const metrics = metricExporter.getMetrics().at(-1)!.scopeMetrics.find((s) => s.scope.name === "pruneguard")!.metrics;
    const decisions = metrics.find((m) => m.descriptor.name === "pruneguard.decisions")!;
    expect(decisions.dataPoints.map((p) => [p.attributes["pruneguard.op"], p.attributes["pruneguard.status"], p.value]).sort()).toEqual(
      [["prune", "reversible", 1], ["prune", "rejected", 1], ["recall", "found", 1], ["search", "match", 1]].sort(),
    );
    expect(metrics.map((m) => m.descriptor.name)).toEqual(expect.arrayContaining(["pruneguard.decision.duration", "pruneguard.recall.answers", "pruneguard.tokens.freed"]));
  });

  it("a window built before the SDK started records too", async () => {
    const a = await early.append({ kind: "toolResult", text: "x" });
    await early.tryPrune({ span: a, mode: "drop" });
    await processor.forceFlush();
    expect(exporter.getFinishedSpans().filter((s) => s.attributes["gen_ai.conversation.id"] === "early").map((s) => s.name)).toEqual(["pruneguard.prune"]);
  });
});
