/**
 * Every decision in OpenTelemetry, checked with the real SDK (`@opentelemetry/sdk-trace`,
 * `@opentelemetry/sdk-metrics`, in-memory exporters; `AsyncLocalStorageContextManager` for context): the
 * attributes of each decision type, parenting under the caller's active span (also for a call queued behind
 * another), compaction points and store failures, the metrics, the absence of content (span text, digests,
 * queries) unless `queryText` asks for a query's first characters, and no tracer call at all when telemetry
 * is off or no SDK is registered. `absent.test.ts` runs a session with the API unresolvable;
 * `node-sdk.test.ts` with the Node SDK registered globally.
 */
import { createRequire } from "node:module";
import { trace, type Attributes } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, StoreError, refSpanId, type KindPolicy, type TelemetryOptions } from "../../src/index.js";
import type { ContextWindowOptions } from "../../src/window/window-options.js";
import type { LookupKey, LookupResult, Persisted, PersistInput, PruneCommit, PruneTransaction } from "../../src/stores/store.js";
import { OutcomeUnknownError } from "../../src/errors.js";
import { everything, recording, type Recording } from "./helpers.js";

const HOUR = 3_600_000;
/** Markers of content: none may reach a span, an event or a metric. */
const BODY = "SECRETBODY42";
const DIGEST = "DIGESTSECRET9";
const QUERY = "req_querysecret7";
const TEXT = `HTTP/1.1 500 from the billing service (${BODY})\n` + "line of a long tool output that the window holds\n".repeat(30) + `request ${QUERY}\n`;

const KINDS = {
  toolResult: { store: "mem", modes: ["drop", "summarize"], lossy: "with-flag" },
  shortLived: { store: "short", modes: ["drop"], lossy: "with-flag" },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
  flakyResult: { store: "flaky", modes: ["drop"], lossy: "with-flag" },
} as const satisfies Record<string, KindPolicy>;
type Kind = keyof typeof KINDS;

const METRICS = [
  "pruneguard.decisions", "pruneguard.decision.duration", "pruneguard.tokens.freed", "pruneguard.lossy.commitments", "pruneguard.recall.answers",
  "pruneguard.compaction.points", "pruneguard.compaction.tokens", "pruneguard.store.failures",
];

/** A memory store whose calls fail on request. */
class FlakyStore extends MemoryStore {
  readonly failing = new Set<"persist" | "lookup" | "commitPrune" | "searchCopies">();
  override async persist(input: PersistInput): Promise<Persisted> {
    if (this.failing.has("persist")) throw new StoreError(this.name, "connection reset");
    return super.persist(input);
  }
  override async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    if (this.failing.has("lookup")) throw new StoreError(this.name, "connection reset");
    return super.lookup(session, key);
  }
  override async commitPrune(txn: PruneTransaction): Promise<PruneCommit> {
    if (this.failing.has("commitPrune")) throw new StoreError(this.name, "connection reset");
    return super.commitPrune(txn);
  }
  override async searchCopies(...args: Parameters<MemoryStore["searchCopies"]>): ReturnType<MemoryStore["searchCopies"]> {
    if (this.failing.has("searchCopies")) throw new StoreError(this.name, "connection reset");
    return super.searchCopies(...args);
  }
}

let r: Recording;
beforeEach(() => {
  r = recording();
});
afterEach(async () => {
  await r.shutdown();
});

/** A window on three stores; `telemetry` defaults to the recording's tracer and meter (`undefined`: left to the global API). */
function setup(extra: Omit<Partial<ContextWindowOptions<Kind>>, "telemetry"> & { telemetry?: TelemetryOptions | false | undefined } = {}) {
  const { telemetry, ...rest } = extra;
  const t = "telemetry" in extra ? telemetry : r.telemetry;
  const clock = new ManualClock(10 * HOUR);
  const mem = new MemoryStore({ name: "mem", clock });
  const short = new MemoryStore({ name: "short", clock, holds: false, retentionMs: HOUR, handlePrefix: "s" });
  const flaky = new FlakyStore({ name: "flaky", clock, handlePrefix: "f" });
  const options: ContextWindowOptions<Kind> = {
    session: "sess-1", clock, stores: { mem, short, flaky }, auditStore: "mem", kinds: KINDS,
    limits: { lossyBudget: 2, maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 1_024, atTokens: null } },
    ...rest,
    ...(t === undefined ? {} : { telemetry: t }),
  };
  return { clock, mem, short, flaky, options, win: new ContextWindow(options) };
}

const attrs = (name: string, i = -1): Attributes => {
  const spans = r.named(name);
  const s = spans.at(i);
  if (s === undefined) throw new Error(`no span ${name} (spans: ${r.spans().map((x) => x.name).join(", ")})`);
  return s.attributes;
};

describe("telemetry: one span per decision, with its outcome", () => {
  it("prune: reversible (with when it applies), reversible until a time, lossy (with the budget left) and rejected", async () => {
    const { win } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    const b = await win.append({ kind: "shortLived", text: TEXT });
    const c = await win.append({ kind: "scratch", text: TEXT });
    const reversible = await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    expect(reversible.status).toBe("reversible");
    expect(attrs("pruneguard.prune")).toMatchObject({
      "gen_ai.conversation.id": "sess-1", "pruneguard.op": "prune", "pruneguard.status": "reversible", "pruneguard.span.id": refSpanId(a),
      "pruneguard.span.kind": "toolResult", "pruneguard.mode": "drop", "pruneguard.store": "mem", "pruneguard.handle": "#1",
      "pruneguard.repersisted": false, "pruneguard.group.size": 1, "pruneguard.grew": false, "pruneguard.lossy.count": 0,
      "pruneguard.applies": "next-compaction", "pruneguard.audit.seq": 1,
    });
    expect(attrs("pruneguard.prune")["pruneguard.tokens.freed"]).toBe(reversible.status === "reversible" ? reversible.tokensFreed : NaN);
    expect(attrs("pruneguard.prune")["pruneguard.reversible_until"]).toBeUndefined();

    const until = await win.tryPrune({ span: b, mode: "drop" });
    expect(until).toMatchObject({ status: "reversible" });
    expect(attrs("pruneguard.prune")).toMatchObject({ "pruneguard.store": "short", "pruneguard.handle": "s#1", "pruneguard.reversible_until": until.status === "reversible" ? until.until! : NaN });

    const rejected = await win.applyDirective({ op: "prune", span_id: c, mode: "drop" });
    expect(rejected).toMatchObject({ status: "rejected" });
    expect(attrs("pruneguard.prune")).toMatchObject({ "pruneguard.status": "rejected", "pruneguard.reason": rejected.status === "rejected" ? rejected.reason : "", "pruneguard.span.kind": "scratch" });
    expect(attrs("pruneguard.prune")["pruneguard.store"]).toBeUndefined();

    const lossy = await win.applyDirective({ op: "prune", span_id: c, mode: "drop", accept_lossy: true });
    expect(lossy.status).toBe("lossy");
    expect(attrs("pruneguard.prune")).toMatchObject({ "pruneguard.status": "lossy", "pruneguard.lossy.count": 1, "pruneguard.lossy_budget.left": 1 });

    // The metrics say the same.
    expect(await r.sum("pruneguard.decisions", { "pruneguard.op": "prune", "pruneguard.status": "reversible" })).toBe(2);
    expect(await r.sum("pruneguard.decisions", { "pruneguard.op": "prune", "pruneguard.status": "rejected" })).toBe(1);
    expect(await r.sum("pruneguard.lossy.commitments", { "pruneguard.span.kind": "scratch" })).toBe(1);
    expect(await r.sum("pruneguard.tokens.freed", { "pruneguard.op": "prune", "pruneguard.span.kind": "toolResult" })).toBeGreaterThan(300);
    expect(await r.sum("pruneguard.decision.duration", { "pruneguard.op": "prune" })).toBe(4);
  });

  it("a compaction point that does not apply a decision whose copy lapsed counts it (not_applied), on its span and the compact directive's", async () => {
    const { win, clock } = setup({ limits: { lossyBudget: 2, maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 20_000, atTokens: null } } });
    const a = await win.append({ kind: "shortLived", text: TEXT });
    expect(await win.applyDirective({ op: "prune", span_id: a, mode: "drop" })).toMatchObject({ status: "reversible" });
    clock.advance(2 * HOUR); // the store kept the copy for an hour, without a hold
    const compact = await win.applyDirective({ op: "compact" });
    expect(compact).toMatchObject({ status: "compacted", applied: 0, notApplied: 1 });
    expect(attrs("pruneguard.compaction")).toMatchObject({ "pruneguard.compaction.applied": 0, "pruneguard.compaction.not_applied": 1 });
    expect(attrs("pruneguard.compact")).toMatchObject({ "pruneguard.compaction.not_applied": 1 });
  });

  it("a prune that waits for the next compaction point says so; the compaction point is a span of its own", async () => {
    const { win } = setup({ limits: { compaction: { minFreedTokens: 20_000, atTokens: null } } });
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.append({ kind: "toolResult", text: TEXT });
    await win.applyDirective({ op: "prune", span_id: a, mode: "summarize", digest: `the billing 500 ${DIGEST}` });
    expect(attrs("pruneguard.prune")).toMatchObject({ "pruneguard.applies": "next-compaction", "pruneguard.mode": "summarize" });
    expect(attrs("pruneguard.prune")["pruneguard.pending.tokens"]).toBeGreaterThan(0);
    expect(attrs("pruneguard.prune")["pruneguard.pending.rewrite_tokens"]).toBeGreaterThan(0);
    const points = r.named("pruneguard.compaction").length;
    const compact = await win.compact();
    expect(compact.applied).toBe(1);
    const compactSpan = r.named("pruneguard.compact").at(-1)!;
    const point = r.named("pruneguard.compaction").at(-1)!;
    expect(r.named("pruneguard.compaction").length).toBe(points + 1);
    expect(point.attributes).toMatchObject({
      "pruneguard.compaction.applied": 1, "pruneguard.compaction.tokens_freed": compact.freedTokens, "pruneguard.compaction.tokens_rewritten": compact.rewrittenTokens,
    });
    expect(compact.rewrittenTokens).toBeGreaterThan(0);
    // The compaction point the compact directive made is under the directive's span.
    expect(point.parentSpanContext?.spanId).toBe(compactSpan.spanContext().spanId);
    expect(compactSpan.attributes).toMatchObject({ "pruneguard.status": "compacted", "pruneguard.compaction.applied": 1 });
    expect(await r.sum("pruneguard.compaction.points")).toBeGreaterThanOrEqual(1);
    expect(await r.sum("pruneguard.compaction.tokens", { "pruneguard.compaction.token.type": "rewritten" })).toBeGreaterThanOrEqual(compact.rewrittenTokens);
  });

  it("recall: found, pruned-unrecoverable, unknown, unavailable and (after a restart) lost", async () => {
    const { win, flaky, options } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    const c = await win.append({ kind: "scratch", text: TEXT });
    const f = await win.append({ kind: "flakyResult", text: TEXT });
    await win.tryPrune({ span: a, mode: "drop" });
    await win.tryPrune({ span: c, mode: "drop", acceptLossy: true });
    await win.tryPrune({ span: f, mode: "drop" });
    await win.recall(a);
    expect(attrs("pruneguard.recall")).toMatchObject({ "pruneguard.status": "found", "pruneguard.recall.source": "store", "pruneguard.span.id": refSpanId(a), "pruneguard.span.kind": "toolResult", "pruneguard.store": "mem", "pruneguard.handle": "#1" });
    await win.recall(c);
    expect(attrs("pruneguard.recall")).toMatchObject({ "pruneguard.status": "pruned-unrecoverable", "pruneguard.reason": "lossy", "pruneguard.span.kind": "scratch" });
    await win.applyDirective({ op: "recall", span_id: "span_99" });
    expect(attrs("pruneguard.recall")).toMatchObject({ "pruneguard.status": "unknown" });
    expect(attrs("pruneguard.recall")["pruneguard.span.id"]).toBeUndefined();
    flaky.failing.add("lookup");
    await win.recall(f);
    const unavailable = r.named("pruneguard.recall").at(-1)!;
    expect(unavailable.attributes).toMatchObject({ "pruneguard.status": "unavailable", "pruneguard.store": "flaky" });
    expect(unavailable.events.map((e) => [e.name, e.attributes])).toEqual([["pruneguard.store_failure", { "pruneguard.store": "flaky", "pruneguard.failure": "unavailable" }]]);
    flaky.failing.clear();
    // A restart: the unbacked live span is lost; resume counts what it restored, by state.
    const live = await win.append({ kind: "scratch", text: "a note only this process has" });
    const resumed = await ContextWindow.resume(options);
    expect(attrs("pruneguard.resume")).toMatchObject({
      "pruneguard.status": "resumed", "pruneguard.resume.spans": 4, "pruneguard.resume.live": 0, "pruneguard.resume.pruned": 2,
      "pruneguard.resume.tombstones": 1, "pruneguard.resume.lost": 1, "gen_ai.conversation.id": "sess-1",
    });
    await resumed.recall(live);
    expect(attrs("pruneguard.recall")).toMatchObject({ "pruneguard.status": "lost", "pruneguard.span.kind": "scratch" });
    for (const status of ["found", "pruned-unrecoverable", "unknown", "unavailable", "lost"]) {
      expect(await r.sum("pruneguard.recall.answers", { "pruneguard.status": status }), status).toBe(1);
    }
    expect(await r.sum("pruneguard.store.failures", { "pruneguard.op": "recall", "pruneguard.store": "flaky" })).toBe(1);
  });

  it("search: matches, holes, tokens; the query only with queryText, and only its first characters", async () => {
    const { win, flaky } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    const c = await win.append({ kind: "scratch", text: TEXT });
    const f = await win.append({ kind: "flakyResult", text: TEXT });
    await win.append({ kind: "toolResult", text: TEXT });
    await win.tryPrune({ span: a, mode: "drop" });
    await win.tryPrune({ span: c, mode: "drop", acceptLossy: true });
    await win.tryPrune({ span: f, mode: "drop" });
    flaky.failing.add("searchCopies");
    const found = await win.search(QUERY);
    expect(found.status).toBe("match");
    const s = attrs("pruneguard.search");
    expect(s).toMatchObject({
      "pruneguard.status": "match", "pruneguard.reason": "holes", "pruneguard.search.regex": false, "pruneguard.search.matches": 2,
      "pruneguard.search.live": 1, "pruneguard.search.pruned": 1, "pruneguard.search.holes": 2, "pruneguard.search.holes.lossy": 1,
      "pruneguard.search.holes.unavailable": 1, "pruneguard.search.truncated": false, "pruneguard.search.query_chars": QUERY.length,
    });
    expect(s["pruneguard.search.tokens"]).toBe(found.status === "invalid" ? NaN : found.tokens);
    expect(s["pruneguard.search.query"]).toBeUndefined();
    expect(r.named("pruneguard.search").at(-1)!.events.map((e) => e.attributes)).toEqual([{ "pruneguard.store": "flaky", "pruneguard.failure": "unavailable" }]);
    await win.applyDirective({ op: "search", query: "nowhere_to_be_found", regex: false });
    expect(attrs("pruneguard.search")).toMatchObject({ "pruneguard.status": "no-match", "pruneguard.search.matches": 0 });

    const withQuery = setup({ telemetry: { ...r.telemetry, queryText: 8 } }).win;
    await withQuery.append({ kind: "toolResult", text: TEXT });
    await withQuery.search(QUERY);
    expect(attrs("pruneguard.search")["pruneguard.search.query"]).toBe(QUERY.slice(0, 8));
  });

  it("map, range summary, invalid directives and checkCopies", async () => {
    const { win, mem } = setup();
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await win.append({ kind: i === 3 ? "scratch" : "toolResult", text: TEXT }));
    await win.map();
    expect(attrs("pruneguard.map")).toMatchObject({
      "pruneguard.status": "mapped", "pruneguard.map.spans": 4, "pruneguard.map.reversible": 3, "pruneguard.map.lossy_with_flag": 1, "pruneguard.map.never": 0,
    });
    expect(attrs("pruneguard.map")["pruneguard.window.tokens"]).toBeGreaterThan(0);
    const range = await win.summarizeRange({ from: ids[0]!, to: ids[2]!, digest: `three calls ${DIGEST}` });
    expect(range.status).toBe("summarized");
    expect(attrs("pruneguard.summarize_range")).toMatchObject({
      "pruneguard.status": "summarized", "pruneguard.range.from": refSpanId(ids[0]!), "pruneguard.range.to": refSpanId(ids[2]!), "pruneguard.range.members": 3,
      "pruneguard.range.pruned": 3, "pruneguard.store": "mem", "pruneguard.span.kind": "summary",
    });
    await win.summarizeRange({ from: ids[3]!, to: ids[3]!, digest: "x" });
    expect(attrs("pruneguard.summarize_range")).toMatchObject({ "pruneguard.status": "rejected" });
    expect(attrs("pruneguard.summarize_range")["pruneguard.reason"]).toBeTypeOf("string");
    await win.applyDirective(`{"op":"prune","span_id":"${BODY}","mode":"drop"`);
    const invalid = r.spans().at(-1)!;
    expect(invalid.name).toBe("pruneguard.directive");
    expect(invalid.attributes).toMatchObject({ "pruneguard.op": "unknown", "pruneguard.status": "invalid", "pruneguard.issues": 1 });
    await win.applyDirective({ op: "recall", span_id: 7 });
    expect(r.spans().at(-1)!.name).toBe("pruneguard.recall");
    expect(r.spans().at(-1)!.attributes).toMatchObject({ "pruneguard.status": "invalid" });
    // A copy deleted behind the runtime's back: checkCopies finds it, and a compaction point follows under it.
    await mem.rotate(); // holds keep the copies
    expect(await win.checkCopies()).toBe(0);
    expect(attrs("pruneguard.check_copies")).toMatchObject({ "pruneguard.status": "ok", "pruneguard.copies.lost": 0 });
  });

  it("a provider's compaction and clearing: what the block covered, counted by provider, never its content", async () => {
    const { win } = setup({ limits: { lossyBudget: 2, maxLengthMs: 8 * HOUR, compaction: "immediate", providerCompaction: "allow" } });
    for (let i = 0; i < 2; i++) await win.append({ kind: "toolResult", text: TEXT });
    await win.append({ kind: "scratch", text: `note ${BODY}` });
    const summary = `two logs read ${DIGEST}`;
    const out = await win.providerCompacted({
      provider: "anthropic", block: { type: "compaction", content: summary, encrypted_content: "ENCRYPTEDSECRET", signature: "sig" }, summary, failed: false,
    });
    expect(out.status).toBe("compacted");
    expect(out.pruned.length).toBeGreaterThanOrEqual(2);
    expect(attrs("pruneguard.provider_compaction")).toMatchObject({
      "pruneguard.op": "provider_compaction", "pruneguard.status": "compacted", "pruneguard.provider": "anthropic",
      "pruneguard.span.id": out.spanId!, "pruneguard.span.kind": "summary", "pruneguard.provider_compaction.members": out.members.length,
      "pruneguard.provider_compaction.pruned": out.pruned.length, "pruneguard.provider_compaction.kept": out.kept.length,
      "pruneguard.lossy.count": out.lossy.length, "gen_ai.conversation.compacted": true, "gen_ai.conversation.id": "sess-1",
    });
    // A failed compaction changed nothing: its span says so, and does not claim the view is compacted.
    const failed = await win.providerCompacted({ provider: "anthropic", block: { type: "compaction", content: null }, summary: null, failed: true });
    expect(failed.status).toBe("failed");
    expect(attrs("pruneguard.provider_compaction")).toMatchObject({ "pruneguard.status": "failed", "pruneguard.provider_compaction.pruned": 0 });
    expect(attrs("pruneguard.provider_compaction")["gen_ai.conversation.compacted"]).toBeUndefined();
    await win.providerCleared({ provider: "anthropic", edit: "clear_tool_uses_20250919", toolUses: 3, tokens: 900 });
    expect(attrs("pruneguard.provider_clearing")).toMatchObject({
      "pruneguard.status": "recorded", "pruneguard.provider": "anthropic", "pruneguard.provider.edit": "clear_tool_uses_20250919", "pruneguard.provider.cleared_tool_uses": 3,
    });
    expect(await r.sum("pruneguard.decisions", { "pruneguard.op": "provider_compaction", "pruneguard.provider": "anthropic" })).toBe(2);
    expect(await r.sum("pruneguard.decisions", { "pruneguard.op": "provider_clearing", "pruneguard.status": "recorded" })).toBe(1);
    expect(await r.sum("pruneguard.lossy.commitments")).toBe(out.lossy.length);
    const recorded = JSON.stringify(r.spans().map((x) => [x.attributes, x.events]));
    for (const secret of [DIGEST, BODY, "ENCRYPTEDSECRET"]) expect(recorded).not.toContain(secret);
  });

  it("store failures: a copy that could not be persisted, a prune whose store failed, an audit record left waiting", async () => {
    const { win, flaky } = setup();
    flaky.failing.add("persist");
    const f = await win.append({ kind: "flakyResult", text: TEXT });
    expect(attrs("pruneguard.store_failure")).toMatchObject({ "pruneguard.op": "append", "pruneguard.store": "flaky", "pruneguard.failure": "persist", "error.type": "StoreError" });
    expect(r.named("pruneguard.store_failure")[0]!.status.code).toBe(2);
    flaky.failing.clear();
    const g = await win.append({ kind: "flakyResult", text: TEXT });
    flaky.failing.add("commitPrune");
    await win.tryPrune({ span: g, mode: "drop" });
    const prune = r.named("pruneguard.prune").at(-1)!;
    expect(prune.attributes).toMatchObject({ "pruneguard.status": "rejected", "pruneguard.reason": "store-error", "pruneguard.store": "flaky" });
    expect(prune.events.map((e) => e.attributes)).toEqual([{ "pruneguard.store": "flaky", "pruneguard.failure": "store-error" }]);
    expect(await r.sum("pruneguard.store.failures", { "pruneguard.store": "flaky" })).toBe(2);
    expect(refSpanId(f)).toBe("span_1");
  });

  it("a range summary whose note could not be written: the summary stands, the outcome says so, an event and a count name the home store", async () => {
    const { win, mem } = setup();
    for (let i = 0; i < 3; i++) await win.append({ kind: "toolResult", text: TEXT });
    mem.noteReplacement = () => Promise.reject(new StoreError("mem", "disk full"));
    const summarized = await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_3", digest: "three outputs" });
    expect(summarized).toMatchObject({ status: "summarized", noteError: "store mem: disk full" });
    const span = r.named("pruneguard.summarize_range").at(-1)!;
    expect(span.attributes["pruneguard.status"]).toBe("summarized");
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([["pruneguard.store_failure", { "pruneguard.store": "mem", "pruneguard.failure": "note" }]]);
    expect(await r.sum("pruneguard.store.failures", { "pruneguard.op": "summarize_range", "pruneguard.store": "mem", "pruneguard.failure": "note" })).toBe(1);
    // Noted as usual: no field, no event.
    mem.noteReplacement = MemoryStore.prototype.noteReplacement.bind(mem);
    for (let i = 0; i < 3; i++) await win.append({ kind: "toolResult", text: TEXT });
    const ok = await win.applyDirective({ op: "summarize_range", from: "span_4", to: "span_6", digest: "three more" });
    expect(ok).toMatchObject({ status: "summarized" });
    expect(ok).not.toHaveProperty("noteError");
    expect(r.named("pruneguard.summarize_range").at(-1)!.events).toEqual([]);
  });

  it("a range summary settled after its commit answer was lost, whose note then failed: a store failure span 'note'", async () => {
    const { win, mem } = setup();
    for (let i = 0; i < 4; i++) await win.append({ kind: "toolResult", text: TEXT });
    const commitPrune = mem.commitPrune.bind(mem);
    let lose = true;
    let sayable = false;
    mem.commitPrune = async (txn) => {
      const commit = await commitPrune(txn);
      if (!lose) return commit;
      lose = false;
      throw new OutcomeUnknownError("mem", "connection lost after COMMIT", async () => {
        if (!sayable) throw new Error("the store still cannot say");
        return commit;
      });
    };
    mem.noteReplacement = () => Promise.reject(new StoreError("mem", "disk full"));
    expect(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_3", digest: "three outputs" })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
    expect(r.named("pruneguard.store_failure")).toHaveLength(0);
    sayable = true;
    // The next directive over the run reads back, applies the summary, and its note fails: no outcome says so, telemetry does.
    await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    expect(win.entries()[0]).toMatchObject({ state: "summary" });
    const failure = r.named("pruneguard.store_failure");
    expect(failure).toHaveLength(1);
    expect(failure[0]!.attributes).toMatchObject({ "pruneguard.op": "summarize_range", "pruneguard.store": "mem", "pruneguard.failure": "note" });
    expect(await r.sum("pruneguard.store.failures", { "pruneguard.op": "summarize_range", "pruneguard.failure": "note" })).toBe(1);
  });
});

describe("telemetry: trace context", () => {
  it("a decision is a child of the caller's active span, also when it waited behind another call", async () => {
    const { win } = setup();
    const a = await win.append({ kind: "toolResult", text: TEXT });
    const b = await win.append({ kind: "toolResult", text: TEXT });
    const agent = r.provider.getTracer("agent");
    const step = (name: string, fn: () => Promise<unknown>) =>
      agent.startActiveSpan(name, async (s) => {
        try {
          await fn();
        } finally {
          s.end();
        }
        return s.spanContext().spanId;
      });
    // Two steps at once: the second prune queues behind the first, and must still show under its own step.
    const [one, two] = await Promise.all([
      step("agent step 1", () => win.applyDirective({ op: "prune", span_id: a, mode: "drop" })),
      step("agent step 2", () => win.tryPrune({ span: b, mode: "drop" })),
    ]);
    const prunes = r.named("pruneguard.prune");
    expect(prunes.map((p) => p.attributes["pruneguard.span.id"])).toEqual([a, b].map(refSpanId));
    expect(prunes.map((p) => p.parentSpanContext?.spanId)).toEqual([one, two]);
    expect(prunes[0]!.spanContext().traceId).toBe(r.named("agent step 1")[0]!.spanContext().traceId);
    // Outside any span: a root span of its own trace.
    await win.recall(a);
    expect(r.named("pruneguard.recall")[0]!.parentSpanContext).toBeUndefined();
  });

  it("a compaction point made by rendering is under the span that rendered", async () => {
    const { win } = setup();
    for (let i = 0; i < 12; i++) await win.append({ kind: "toolResult", text: TEXT });
    for (let i = 1; i <= 12; i++) await win.tryPrune({ span: win.ref(`span_${i}`), mode: "drop" });
    const before = r.named("pruneguard.compaction").length;
    const render = r.provider.getTracer("agent").startActiveSpan("render request", (s) => {
      win.render();
      s.end();
      return s.spanContext().spanId;
    });
    const made = r.named("pruneguard.compaction").slice(before);
    expect(made).toHaveLength(1);
    expect(made[0]!.parentSpanContext?.spanId).toBe(render);
    expect(made[0]!.attributes["pruneguard.compaction.applied"]).toBe(12);
  });
});

describe("telemetry: no content", () => {
  it("no span text, digest, directive or query reaches a span, an event or a metric", async () => {
    const { win, flaky } = setup();
    const ids = [];
    for (const kind of ["toolResult", "scratch", "flakyResult", "toolResult", "shortLived"] as const) ids.push(await win.append({ kind, text: TEXT }));
    await win.applyDirective({ op: "prune", span_id: ids[0], mode: "summarize", digest: `${DIGEST} and ${BODY}` });
    await win.applyDirective({ op: "prune", span_id: ids[1], mode: "drop", accept_lossy: true });
    await win.applyDirective({ op: "prune", span_id: ids[2], mode: "drop", digest: DIGEST });
    await win.applyDirective(`{"op":"prune","span_id":"span_3","mode":"${BODY}"}`);
    await win.applyDirective({ op: "search", query: QUERY });
    await win.applyDirective({ op: "search", query: `${QUERY}|${BODY}`, regex: true });
    await win.recall(ids[0]!);
    await win.recall(`${BODY}`);
    await win.map();
    await win.summarizeRange({ from: ids[3]!, to: ids[4]!, digest: `${DIGEST} range` });
    flaky.failing.add("persist");
    await win.append({ kind: "flakyResult", text: TEXT });
    await win.compact();
    await win.handleToolCall({ name: "prune", arguments: `{"span_id":"${BODY}"` });
    const all = await everything(r, METRICS);
    expect(r.spans().length).toBeGreaterThan(12);
    for (const secret of [BODY, DIGEST, QUERY, "querysecret", "billing", "HTTP/1.1", "connection reset"]) expect(all, secret).not.toContain(secret);
  });
});

describe("telemetry: nothing is called when it is off", () => {
  it("telemetry: false never asks a tracer or a meter, even with an SDK registered globally", async () => {
    const getTracer = vi.fn(r.provider.getTracer.bind(r.provider));
    expect(trace.setGlobalTracerProvider({ getTracer })).toBe(true);
    const { win } = setup({ telemetry: false });
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    await win.recall(a);
    await win.search(QUERY);
    await win.compact();
    win.render();
    expect(getTracer).not.toHaveBeenCalled();
    expect(r.spans()).toEqual([]);
    // The same session with telemetry left to the global provider: it is asked, and records.
    const auto = setup({ telemetry: undefined }).win;
    const b = await auto.append({ kind: "toolResult", text: TEXT });
    await auto.tryPrune({ span: b, mode: "drop" });
    expect(getTracer.mock.calls.map((c) => c[0])).toEqual(["pruneguard"]);
    expect(r.named("pruneguard.prune")).toHaveLength(1);
  });

  it("with the API installed and no SDK registered, no tracer is asked for and nothing records", async () => {
    // The copy of the API the runtime loads (its CommonJS build, resolved from the runtime's own folder).
    const api = createRequire(new URL("../../src/telemetry/index.ts", import.meta.url))("@opentelemetry/api") as typeof import("@opentelemetry/api");
    const delegateTracer = vi.spyOn(api.ProxyTracerProvider.prototype, "getTracer");
    const startSpan = vi.spyOn(api.ProxyTracer.prototype, "startSpan");
    const { win } = setup({ telemetry: undefined });
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    await win.recall(a);
    await win.compact();
    expect(delegateTracer).not.toHaveBeenCalled();
    expect(startSpan).not.toHaveBeenCalled();
    expect(r.spans()).toEqual([]);
    delegateTracer.mockRestore();
    startSpan.mockRestore();
  });

  it("a tracer given without a meter records spans and no metrics; null turns a signal off", async () => {
    const { win } = setup({ telemetry: { tracer: r.telemetry.tracer, meter: null } });
    const a = await win.append({ kind: "toolResult", text: TEXT });
    await win.tryPrune({ span: a, mode: "drop" });
    expect(r.named("pruneguard.prune")).toHaveLength(1);
    expect(await r.points("pruneguard.decisions")).toEqual([]);
    const metricsOnly = setup({ telemetry: { tracer: null, meter: r.telemetry.meter } }).win;
    const b = await metricsOnly.append({ kind: "toolResult", text: TEXT });
    await metricsOnly.tryPrune({ span: b, mode: "drop" });
    expect(r.named("pruneguard.prune")).toHaveLength(1);
    expect(await r.sum("pruneguard.decisions", { "pruneguard.op": "prune" })).toBe(1);
  });

  it("a tracer or meter that throws changes no answer", async () => {
    const broken = () => {
      throw new Error("exporter down");
    };
    const tracer = { startSpan: broken };
    const meter = { createCounter: () => ({ add: broken }), createHistogram: () => ({ record: broken }) };
    for (const telemetry of [{ tracer, meter: null }, { tracer: null, meter }, { tracer: r.telemetry.tracer, meter }]) {
      const { win } = setup({ telemetry });
      const a = await win.append({ kind: "toolResult", text: TEXT });
      expect((await win.applyDirective({ op: "prune", span_id: a, mode: "drop" })).status).toBe("reversible");
      expect((await win.recall(a)).status).toBe("found");
      expect((await win.compact()).status).toBe("compacted");
      win.render();
    }
  });

  it("bad telemetry options fail closed at construction, naming the field", () => {
    expect(() => setup({ telemetry: { tracer: {} as never } })).toThrow(/telemetry/);
    expect(() => setup({ telemetry: { queryText: 500 } })).toThrow(/telemetry/);
    expect(() => setup({ telemetry: true as never })).toThrow(/telemetry/);
  });
});
