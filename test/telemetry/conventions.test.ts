/**
 * The OpenTelemetry semantic conventions the telemetry follows (docs/observability.md, "Semantic
 * conventions"), checked with the real SDK: `gen_ai.conversation.id` on every span; the GenAI conventions'
 * `gen_ai.conversation.compacted` on a compaction point that applied decisions or folded directive calls —
 * a boolean, only ever `true`, absent where compaction is not known to have happened; `error.type` on the
 * span and the metrics of an operation that failed (the same value on both, never on one that succeeded),
 * with no status description; no convention attribute the runtime has no data for (`gen_ai.tool.*`,
 * `gen_ai.operation.name`, `gen_ai.usage.*`); and every attribute emitted listed in the mapping table.
 */
import { readFileSync } from "node:fs";
import type { Attributes } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, StoreError, type KindPolicy, type TelemetryOptions } from "../../src/index.js";
import type { ContextWindowOptions } from "../../src/window/window-options.js";
import type { LookupKey, LookupResult, Persisted, PersistInput } from "../../src/stores/store.js";
import { recording, type Recording } from "./helpers.js";

const HOUR = 3_600_000;
const TEXT = "line of a long tool output that the window holds\n".repeat(40);
/** Large enough that pruning it pays for a compaction point at the smallest threshold (1,024 tokens). */
const LONG = TEXT.repeat(5);
const COMPACTED = "gen_ai.conversation.compacted";

const KINDS = {
  toolResult: { store: "mem", modes: ["drop", "summarize"], lossy: "with-flag" },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
  flakyResult: { store: "flaky", modes: ["drop"], lossy: "with-flag" },
} as const satisfies Record<string, KindPolicy>;
type Kind = keyof typeof KINDS;

const METRICS = [
  "pruneguard.decisions", "pruneguard.decision.duration", "pruneguard.tokens.freed", "pruneguard.lossy.commitments", "pruneguard.recall.answers",
  "pruneguard.compaction.points", "pruneguard.compaction.tokens", "pruneguard.store.failures",
];

/** A memory store whose persist or lookup fails on request. */
class FlakyStore extends MemoryStore {
  failPersist = false;
  failLookup = false;
  override async persist(input: PersistInput): Promise<Persisted> {
    if (this.failPersist) throw new StoreError(this.name, "connection reset");
    return super.persist(input);
  }
  override async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    if (this.failLookup) throw new StoreError(this.name, "connection reset");
    return super.lookup(session, key);
  }
}

let r: Recording;
beforeEach(() => {
  r = recording();
});
afterEach(async () => {
  await r.shutdown();
});

function setup(extra: Omit<Partial<ContextWindowOptions<Kind>>, "telemetry"> & { telemetry?: TelemetryOptions } = {}) {
  const clock = new ManualClock(10 * HOUR);
  const mem = new MemoryStore({ name: "mem", clock });
  const flaky = new FlakyStore({ name: "flaky", clock, handlePrefix: "f" });
  const options: ContextWindowOptions<Kind> = {
    session: "conv-7", clock, stores: { mem, flaky }, auditStore: "mem", kinds: KINDS,
    limits: { lossyBudget: 2, maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 50_000, atTokens: null } },
    telemetry: r.telemetry,
    ...extra,
  };
  return { clock, mem, flaky, options, win: new ContextWindow(options) };
}

/** Every attribute of every span and span event recorded so far. */
const spanAttributes = (): Attributes[] => r.spans().flatMap((s) => [s.attributes, ...s.events.map((e) => e.attributes ?? {})]);

describe("conventions: gen_ai.conversation.id", () => {
  it("every span carries the session id as a string, and no metric carries it", async () => {
    const { win, flaky, options } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.append({ kind: "scratch", text: TEXT });
    flaky.failPersist = true;
    await win.append({ kind: "flakyResult", text: TEXT });
    await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    await win.applyDirective("{not json");
    await win.recall(a);
    await win.search("window holds");
    await win.map();
    await win.compact();
    await win.checkCopies();
    await ContextWindow.resume(options);
    const names = new Set(r.spans().map((s) => s.name));
    for (const name of ["pruneguard.prune", "pruneguard.directive", "pruneguard.recall", "pruneguard.search", "pruneguard.map", "pruneguard.compact",
      "pruneguard.compaction", "pruneguard.check_copies", "pruneguard.resume", "pruneguard.store_failure"]) expect(names, name).toContain(name);
    for (const s of r.spans()) {
      expect(s.attributes["gen_ai.conversation.id"], s.name).toBe("conv-7");
      expect(typeof s.attributes["gen_ai.conversation.id"]).toBe("string");
    }
    for (const m of METRICS) for (const p of await r.points(m)) expect(p.attributes["gen_ai.conversation.id"], m).toBeUndefined();
  });
});

describe("conventions: gen_ai.conversation.compacted", () => {
  it("true (a boolean) on the compaction point that applied a prune, asked for with compact(); not on the decision spans", async () => {
    const { win } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.append({ kind: "toolResult", text: TEXT });
    await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    expect(r.named("pruneguard.compaction")).toEqual([]);
    const compact = await win.compact();
    expect(compact.applied).toBe(1);
    const [point] = r.named("pruneguard.compaction");
    expect(point!.attributes[COMPACTED]).toBe(true);
    expect(typeof point!.attributes[COMPACTED]).toBe("boolean");
    expect(point!.attributes).toMatchObject({ "pruneguard.op": "compaction", "pruneguard.compaction.applied": 1 });
    for (const name of ["pruneguard.prune", "pruneguard.compact"]) expect(r.named(name)[0]!.attributes[COMPACTED], name).toBeUndefined();
    // A compact() that found nothing to rewrite makes no compaction point, so nothing says compacted.
    await win.compact();
    expect(r.named("pruneguard.compaction")).toHaveLength(1);
    expect(r.named("pruneguard.compact")).toHaveLength(2);
  });

  it("true on the compaction point a rendering made, and on each one of \"immediate\" mode", async () => {
    const due = setup({ limits: { compaction: { minFreedTokens: 1_024, atTokens: null } } }).win;
    const a = await due.append({ kind: "toolResult", text: LONG });
    await due.append({ kind: "toolResult", text: TEXT });
    await due.tryPrune({ span: a, mode: "drop" });
    due.render();
    expect(r.named("pruneguard.compaction").map((s) => s.attributes[COMPACTED])).toEqual([true]);

    const immediate = setup({ limits: { compaction: "immediate" } }).win;
    const b = await immediate.append({ kind: "toolResult", text: TEXT });
    const c = await immediate.append({ kind: "scratch", text: TEXT });
    await immediate.tryPrune({ span: b, mode: "drop" });
    await immediate.tryPrune({ span: c, mode: "drop", acceptLossy: true });
    const points = r.named("pruneguard.compaction").slice(1);
    expect(points).toHaveLength(2);
    for (const p of points) expect(p.attributes).toMatchObject({ [COMPACTED]: true, "pruneguard.compaction.applied": 1 });
    // Each is a child of the prune that made it.
    const prunes = r.named("pruneguard.prune").slice(1);
    expect(points.map((p) => p.parentSpanContext?.spanId)).toEqual(prunes.map((p) => p.spanContext().spanId));
  });

  it("true on a compaction point that only folded directive calls away", async () => {
    const { win } = setup();
    await win.append({ kind: "scratch", text: "{}", message: { role: "tool-call", callId: "m1", toolName: "map" } });
    const answer = await win.handleToolCall({ id: "m1", name: "map", arguments: {} });
    expect(answer).not.toBeNull();
    await win.append({ kind: "scratch", text: answer!.text, message: { role: "tool-result", callId: "m1", toolName: "map" } });
    const compact = await win.compact();
    expect(compact).toMatchObject({ applied: 0, folded: 1 });
    expect(r.named("pruneguard.compaction").at(-1)!.attributes).toMatchObject({ [COMPACTED]: true, "pruneguard.compaction.folded": 1 });
  });

  it("absent — never false — on a compaction point that applied and folded nothing (an \"immediate\" rejection notice)", async () => {
    const { win } = setup({ limits: { compaction: "immediate" } });
    const s = await win.append({ kind: "scratch", text: TEXT });
    const rejected = await win.tryPrune({ span: s, mode: "drop" });
    expect(rejected.status).toBe("rejected");
    const points = r.named("pruneguard.compaction");
    expect(points.length).toBeGreaterThan(0);
    for (const p of points) {
      expect(p.attributes["pruneguard.compaction.applied"]).toBe(0);
      expect(p.attributes[COMPACTED]).toBeUndefined();
    }
  });

  it("no span of a whole session ever says false, and only compaction points say true", async () => {
    const { win, options } = setup({ limits: { compaction: "immediate" } });
    const ids = [];
    for (const kind of ["toolResult", "scratch", "toolResult", "toolResult"] as const) ids.push(await win.append({ kind, text: TEXT }));
    await win.tryPrune({ span: ids[0]!, mode: "drop" });
    await win.tryPrune({ span: ids[1]!, mode: "drop" });
    await win.summarizeRange({ from: ids[2]!, to: ids[3]!, digest: "two outputs" });
    await win.recall(ids[0]!);
    await win.compact();
    const before = r.named("pruneguard.compaction").length;
    await ContextWindow.resume({ ...options, limits: { ...options.limits, compaction: { minFreedTokens: 50_000, atTokens: null } } });
    // The resumed window's first rendering is a compaction point that applied nothing: compaction unknown there.
    const resumed = r.named("pruneguard.compaction").slice(before);
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.attributes).toMatchObject({ "pruneguard.compaction.applied": 0, "pruneguard.compaction.folded": 0 });
    expect(resumed[0]!.attributes[COMPACTED]).toBeUndefined();
    for (const a of spanAttributes()) expect(a[COMPACTED]).not.toBe(false);
    const saying = r.spans().filter((s) => s.attributes[COMPACTED] !== undefined);
    expect(saying.length).toBeGreaterThanOrEqual(2);
    for (const s of saying) expect(s.name).toBe("pruneguard.compaction");
  });
});

describe("conventions: error.type, on the span and the metrics of what failed", () => {
  it("a decision that threw: ERROR with no description, error.type its class, the same error.type on its metrics", async () => {
    const { win } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.tryPrune({ span: a, mode: "drop" });
    await win.end();
    await expect(win.tryPrune({ span: a, mode: "drop" })).rejects.toThrow(/has ended/);
    const failed = r.named("pruneguard.prune").at(-1)!;
    expect(failed.status.code).toBe(2);
    expect(failed.status.message ?? "").toBe("");
    expect(failed.attributes["error.type"]).toBe("Error");
    expect(typeof failed.attributes["error.type"]).toBe("string");
    const error = { "pruneguard.op": "prune", "pruneguard.status": "error", "error.type": "Error" };
    expect(await r.sum("pruneguard.decisions", error)).toBe(1);
    expect(await r.sum("pruneguard.decision.duration", error)).toBe(1);
    // What succeeded carries no error.type, on its span or its metrics.
    const ok = r.named("pruneguard.prune")[0]!;
    expect(ok.status.code).toBe(0);
    expect(ok.attributes["error.type"]).toBeUndefined();
    for (const m of ["pruneguard.decisions", "pruneguard.decision.duration"]) {
      for (const p of await r.points(m)) expect(p.attributes["error.type"] !== undefined, m).toBe(p.attributes["pruneguard.status"] === "error");
    }
  });

  it("a copy that could not be persisted: error.type on its span and on the store-failure count; none on failures answered as data", async () => {
    const { win, flaky } = setup();
    flaky.failPersist = true;
    await win.append({ kind: "flakyResult", text: TEXT });
    const span = r.named("pruneguard.store_failure")[0]!;
    expect(span.status).toMatchObject({ code: 2 });
    expect(span.status.message ?? "").toBe("");
    expect(span.attributes["error.type"]).toBe("StoreError");
    expect(await r.sum("pruneguard.store.failures", { "pruneguard.failure": "persist", "error.type": "StoreError" })).toBe(1);
    // A recall whose store failed is an answer (`unavailable`), not an error: no error.type anywhere.
    flaky.failPersist = false;
    const g = await win.append({ kind: "flakyResult", text: TEXT });
    await win.tryPrune({ span: g, mode: "drop" });
    flaky.failLookup = true;
    expect((await win.recall(g)).status).toBe("unavailable");
    const recall = r.named("pruneguard.recall").at(-1)!;
    expect(recall.status.code).toBe(0);
    expect(recall.attributes["error.type"]).toBeUndefined();
    for (const p of await r.points("pruneguard.store.failures")) {
      expect(p.attributes["error.type"] !== undefined).toBe(p.attributes["pruneguard.failure"] === "persist");
    }
  });
});

describe("conventions: nothing the runtime has no data for", () => {
  it("a directive tool call is its decision's span: no gen_ai.tool.*, gen_ai.operation.name or gen_ai.usage.*", async () => {
    const { win } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.handleToolCall({ id: "call_1", name: "prune", arguments: { span_id: a, mode: "drop" } });
    await win.handleToolCall({ id: "call_2", name: "recall", arguments: { span_id: a } });
    await win.handleToolCall({ id: "call_3", name: "prune", arguments: "{broken" });
    await win.compact();
    expect(r.named("pruneguard.prune")).toHaveLength(2);
    for (const attributes of spanAttributes()) {
      const genAi = Object.keys(attributes).filter((k) => k.startsWith("gen_ai."));
      expect(genAi.filter((k) => k !== "gen_ai.conversation.id" && k !== COMPACTED)).toEqual([]);
    }
  });
});

describe("conventions: the mapping table lists every attribute emitted", () => {
  it("every attribute of a span, an event or a metric point appears, in full, in docs/observability.md", async () => {
    const { win, flaky, options } = setup({ telemetry: { ...r.telemetry, queryText: 5 }, limits: { lossyBudget: 2, maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 1_024, atTokens: null } } });
    const ids = [];
    for (const kind of ["toolResult", "scratch", "flakyResult", "toolResult", "toolResult", "toolResult"] as const) ids.push(await win.append({ kind, text: LONG }));
    await win.tryPrune({ span: ids[0]!, mode: "summarize", digest: "an output" });
    await win.tryPrune({ span: ids[1]!, mode: "drop" });
    await win.tryPrune({ span: ids[1]!, mode: "drop", acceptLossy: true });
    await win.summarizeRange({ from: ids[3]!, to: ids[4]!, digest: "two outputs" });
    await win.recall(ids[0]!);
    await win.recall(ids[1]!);
    await win.recall(ids[3]!);
    await win.applyDirective({ op: "recall", span_id: "span_99" });
    await win.search("window holds");
    await win.search({ query: "holds.*", regex: true });
    await win.map();
    win.render();
    await win.compact();
    await win.applyDirective("{not json");
    await win.checkCopies();
    flaky.failPersist = true;
    await win.append({ kind: "flakyResult", text: TEXT });
    flaky.failPersist = false;
    flaky.failLookup = true;
    const f = ids[2]!;
    await win.tryPrune({ span: f, mode: "drop" });
    await win.recall(f);
    await expect(ContextWindow.resume(options)).rejects.toThrow(StoreError); // a resume that throws: error.type
    flaky.failLookup = false;
    await ContextWindow.resume(options);
    await win.end();
    await win.tryPrune({ span: ids[5]!, mode: "drop" }).catch(() => undefined);

    const keys = new Set<string>();
    for (const a of spanAttributes()) for (const k of Object.keys(a)) keys.add(k);
    for (const m of METRICS) for (const p of await r.points(m)) for (const k of Object.keys(p.attributes)) keys.add(k);
    const doc = readFileSync(new URL("../../docs/observability.md", import.meta.url), "utf8");
    const at = doc.indexOf("\n## Semantic conventions\n");
    expect(at).toBeGreaterThan(0);
    const mapping = doc.slice(at);
    expect(keys.size).toBeGreaterThan(40);
    for (const k of keys) {
      expect(k.startsWith("pruneguard.") || ["gen_ai.conversation.id", COMPACTED, "error.type"].includes(k), k).toBe(true);
      expect(mapping, k).toContain(`\`${k}\``);
    }
  });
});
