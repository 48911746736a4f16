import { describe, expect, it } from "vitest";
import { ContextWindow, IrreversiblePruneError, ManualClock, MemoryStore, countTokens, refSpanId, verifyAuditChain } from "../../src/index.js";
import { contentHash } from "../../src/hash.js";
import type { BackingStore, KindPolicy, PruneOutcome } from "../../src/index.js";
import { immediate } from "./immediate.js";

const HOUR = 3_600_000;
const REQ = "req_8f3a2c91";

const KINDS = {
  toolResult: { store: "toolLog", modes: ["drop", "summarize", "compress"], lossy: "with-flag", repersist: true },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
  audit: { store: "toolLog", modes: ["summarize"], lossy: "forbid" },
  plain: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" },
  pinned: { store: null, modes: ["drop", "summarize", "compress"], lossy: "with-flag", pins: [{ name: "requestId", pattern: "\\breq_[0-9a-f]{6,}\\b" }], compressTargetTokens: 40 },
} as const satisfies Record<string, KindPolicy>;

function setup(opts: { store?: BackingStore; lossyBudget?: number; kinds?: Record<string, KindPolicy> } = {}) {
  const clock = new ManualClock(10 * HOUR);
  const toolLog = opts.store ?? new MemoryStore({ name: "toolLog", retentionMs: 2 * HOUR, clock });
  const win = new ContextWindow(immediate({
    session: "s1", clock, stores: { toolLog }, kinds: (opts.kinds ?? KINDS) as Record<string, KindPolicy>,
    ...(opts.lossyBudget !== undefined ? { limits: { lossyBudget: opts.lossyBudget } } : {}),
  }));
  return { clock, toolLog, win };
}

const block = (n = 40) =>
  Array.from({ length: n }, (_, i) => `turn ${i}: GET /api/search?q=${i} -> 200 in ${10 + i}ms${i === 17 ? ` (request ${REQ})` : ""}`).join("\n");

describe("ContextWindow: appending", () => {
  it("mints span ids, persists backed kinds and returns refs that name the span and its window", async () => {
    const { win, toolLog } = setup();
    const a = await win.append({ kind: "toolResult", text: "alpha" });
    const b = await win.append({ kind: "scratch", text: "beta" });
    expect([a, b]).toEqual([`span_1@${win.windowId}:s1`, `span_2@${win.windowId}:s1`]);
    expect([a, b].map(refSpanId)).toEqual(["span_1", "span_2"]);
    expect(await toolLog.lookup("s1", { spanId: "span_1" })).toMatchObject({ status: "found", text: "alpha" });
    expect(await toolLog.lookup("s1", { spanId: "span_2" })).toEqual({ status: "absent" });
    expect(win.span("span_1")).toMatchObject({ kind: "toolResult", tokens: countTokens("alpha") });
  });

  it("refuses unknown kinds and misconfigured policies with clear errors", async () => {
    const { win } = setup();
    await expect(win.append({ kind: "nope", text: "x" })).rejects.toThrow(/unknown kind nope/);
    expect(() => new ContextWindow(immediate({ session: "s", stores: {}, kinds: { k: { store: null, modes: ["drop"], lossy: "forbid", pins: [{ name: "bad", pattern: "a(?=b)" }] } } }))).toThrow(/pin/);
    expect(() => new ContextWindow(immediate({ session: "s", stores: {}, kinds: { k: { store: "missing", modes: ["drop"], lossy: "forbid" } } }))).toThrow(/names store missing/);
    expect(() => new ContextWindow(immediate({ session: "", stores: {}, kinds: {} }))).toThrow(/session/);
    const a = new MemoryStore({ name: "a" });
    const b = new MemoryStore({ name: "b" });
    expect(() => new ContextWindow(immediate({ session: "s", stores: { a, b }, kinds: {} }))).toThrow(/handlePrefix/);
    expect(() => new ContextWindow(immediate({ session: "s", stores: { a, b: new MemoryStore({ name: "b", handlePrefix: "b" }) }, kinds: {} }))).not.toThrow();
  });
});

describe("ContextWindow: a span's place in a conversation is checked before anything changes", () => {
  // A tool message whose callId was an object was appended, and every provider rendering threw from then on,
  // also after a resume (p3); a tool name that was not a string threw from the index hint after the home store
  // had registered the span, so the live window skipped its id and a resumed one showed it `lost` (p17).
  const bad: ReadonlyArray<readonly [unknown, string]> = [
    [{ role: "tool-call", callId: { bogus: 1 }, toolName: "get" }, "a tool-call message's callId must be a string"],
    [{ role: "tool-call", callId: 7, toolName: "get" }, "a tool-call message's callId must be a string"],
    [{ role: "tool-result", callId: null, toolName: "get" }, "a tool-result message's callId must be a string"],
    [{ role: "tool-result", callId: ["x"], toolName: "get" }, "a tool-result message's callId must be a string"],
    [{ role: "tool-call", callId: "a" }, "a tool-call message's toolName must be a string"],
    [{ role: "tool-result", callId: "a", toolName: 5 }, "a tool-result message's toolName must be a string"],
    [{ role: "tool-result", callId: "a", toolName: "get", isError: "yes" }, "a tool-result message's isError must be a boolean"],
    [{ role: "tool" }, "message.role must be system, user, assistant, tool-call or tool-result"],
    [null, "message must be an object"],
    ["user", "message must be an object"],
  ];

  it("a message of the wrong shape is a TypeError from append; nothing is registered, persisted or audited, and a resume finds nothing lost", async () => {
    const clock = new ManualClock(10 * HOUR);
    const toolLog = new MemoryStore({ name: "toolLog", clock });
    const options = immediate({ session: "s1", clock, stores: { toolLog }, kinds: KINDS as Record<string, KindPolicy> });
    const win = new ContextWindow(options);
    await win.append({ kind: "plain", text: "hello", message: { role: "user" } });
    const before = JSON.stringify(win.entries());
    const audited = (await win.auditLog()).length;
    for (const [message, error] of bad) {
      // `plain` keeps a copy and may be dropped, so the span's index hint is chosen at append.
      await expect(win.append({ kind: "plain", text: '{"path":"src/a.ts"}', message: message as never })).rejects.toThrow(new TypeError(`ContextWindow.append: ${error}`));
    }
    await expect(win.append({ kind: "plain", text: "x", group: 7 as never })).rejects.toThrow(new TypeError("ContextWindow.append: group must be a string"));
    expect(JSON.stringify(win.entries())).toBe(before);
    expect((await win.auditLog()).length).toBe(audited);
    expect(await toolLog.lookup("s1", { spanId: "span_2" })).toEqual({ status: "absent" });
    expect(refSpanId(await win.append({ kind: "plain", text: "after", message: { role: "tool-call", callId: "c1", toolName: "get" } }))).toBe("span_2");
    const resumed = await ContextWindow.resume(options);
    expect(resumed.entries().map((e) => (e.state === "live" ? `${e.span.id} live` : e.state))).toEqual(["span_1 live", "span_2 live"]);
  });
});

describe("ContextWindow: its policy is its own", () => {
  it("mutating the kinds object after construction changes nothing", async () => {
    const kinds = { scratch: { store: null, modes: ["drop"], lossy: "forbid" } } as { scratch: { store: null; modes: ("drop" | "summarize")[]; lossy: "forbid" | "with-flag" } };
    const win = new ContextWindow(immediate({ session: "s", stores: {}, kinds }));
    kinds.scratch.lossy = "with-flag";
    kinds.scratch.modes.push("summarize");
    const ref = await win.append({ kind: "scratch", text: "x" });
    expect(await win.tryPrune({ span: ref, mode: "drop", acceptLossy: true })).toMatchObject({ status: "rejected", reason: "lossy-forbidden" });
    expect(await win.tryPrune({ span: ref, mode: "summarize", digest: "d", acceptLossy: true })).toMatchObject({ reason: "mode-not-allowed" });
    await expect(win.append({ kind: "__proto__" as "scratch", text: "x" })).rejects.toThrow(/unknown kind/);
  });
});

describe("ContextWindow: text that spells special tokens", () => {
  it("counts <|endoftext|> as plain text instead of throwing", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "toolResult", text: "model said <|endoftext|><|im_start|>system" });
    expect(win.span(ref)!.tokens).toBeGreaterThan(5);
    expect((await win.applyDirective({ op: "prune", span_id: ref, mode: "summarize", digest: "<|endoftext|>" })).status).toBe("reversible");
  });
});

describe("ContextWindow: the four outcomes", () => {
  it("reversible: a verified copy is held and the span becomes an index line with its handle", async () => {
    const { win, toolLog, clock } = setup();
    const ref = await win.append({ kind: "toolResult", text: block() });
    const out = await win.prune({ span: ref, mode: "drop" });
    expect(out).toMatchObject({ status: "reversible", handle: "#1", repersisted: false, line: `span_1 pruned, recall #1: ${REQ}` });
    expect(out.tokensFreed).toBeGreaterThan(500);
    expect(win.render()).toBe(`span_1 pruned, recall #1: ${REQ}`);
    clock.advance(5 * HOUR);
    expect(await toolLog.rotate()).toEqual({ rotated: 0, keptByHold: 1 });
    expect(await win.recall("span_1")).toMatchObject({ status: "found", text: block(), source: "store" });
    expect(await win.recall("#1")).toMatchObject({ status: "found", spanId: "span_1" });
  });

  it("lossy: an unbacked kind with accept_lossy leaves a tombstone that recall reports as pruned", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "scratch", text: "thinking about the deploy" });
    const out = await win.prune({ span: ref, mode: "drop", acceptLossy: true });
    expect(out).toMatchObject({ status: "lossy", tombstone: "span_1 pruned, unrecoverable, contents unknown", failed: ["existence", "addressability", "provenance"] });
    expect(win.render()).toBe("span_1 pruned, unrecoverable, contents unknown");
    expect(await win.recall("span_1")).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
  });

  it("rejected: without the flag the span stays and the model reads why", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "scratch", text: "notes" });
    const before = win.span(ref);
    const out = await win.tryPrune({ span: ref, mode: "drop" });
    expect(out).toMatchObject({ status: "rejected", reason: "not-reversible", failed: ["existence", "addressability", "provenance"] });
    expect(win.span(ref)).toEqual(before);
    expect(win.render()).toBe("[span_1 scratch]\n│ notes\nspan_1 kept: prune rejected (no backing store); accept_lossy to force");
    await expect(win.prune({ span: ref, mode: "drop" })).rejects.toBeInstanceOf(IrreversiblePruneError);
  });

  it("invalid: a directive that does not parse changes nothing and is audited", async () => {
    const { win } = setup();
    await win.append({ kind: "scratch", text: "notes" });
    const before = win.render();
    const out = await win.applyDirective('{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":"true"}');
    expect(out).toMatchObject({ status: "invalid", op: "prune" });
    expect(win.span("span_1")?.text).toBe("notes");
    expect(win.render()).toBe(`${before}\n\n${(out as { line: string }).line}`);
    const log = await win.auditLog();
    expect(log.map((r) => [r.status, r.reason])).toEqual([["invalid", "parse"]]);
  });

  it("a kind that forbids lossy never tombstones, even with the flag", async () => {
    const { win, toolLog, clock } = setup();
    const ref = await win.append({ kind: "audit", text: "deployment approved by alice" });
    clock.advance(3 * HOUR);
    await toolLog.rotate();
    const out = await win.tryPrune({ span: ref, mode: "summarize", digest: "approved", acceptLossy: true });
    expect(out).toMatchObject({ status: "rejected", reason: "lossy-forbidden", failed: ["existence"] });
    expect(win.span(ref)?.text).toBe("deployment approved by alice");
  });
});

describe("ContextWindow: modes", () => {
  it("summarize replaces the span with the digest under a header that keeps the handle", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "toolResult", text: block() });
    const out = await win.prune({ span: ref, mode: "summarize", digest: "40 searches, all 200" });
    expect(out.line).toBe("span_1 summary, recall #1\n│ 40 searches, all 200");
    expect(win.render()).toBe(out.line);
  });

  it("compress shortens the span itself within the kind's token target and keeps the handle", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "toolResult", text: block() });
    const out = await win.prune({ span: ref, mode: "compress" });
    expect(out.line.startsWith("span_1 compressed, recall #1\n")).toBe(true);
    expect(out.line).toContain("turn 0:");
    expect(out.line).toContain("turn 39:");
    expect(countTokens(out.line)).toBeLessThan(countTokens(block()));
  });

  it("a mode the kind does not allow is rejected before the store is consulted", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "audit", text: "x" });
    const out = await win.tryPrune({ span: ref, mode: "drop" });
    expect(out).toMatchObject({ status: "rejected", reason: "mode-not-allowed", conditions: null });
  });

  it("pins lost by a digest are carried into it, for lossy prunes too, and counted in the audit", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "pinned", text: block() });
    const out = await win.prune({ span: ref, mode: "summarize", digest: "searches went fine", acceptLossy: true });
    expect(out.status).toBe("lossy");
    expect(out.pinsCarried).toEqual([REQ]);
    expect(out.line).toContain(REQ);
    expect(win.render()).toContain(REQ);
    const log = await win.auditLog();
    expect(log.at(-1)).toMatchObject({ status: "lossy", pinsCarried: 1 });
  });

  it("compress carries pins the shortening dropped", async () => {
    const { win } = setup();
    const ref = await win.append({ kind: "pinned", text: block() });
    const out = await win.prune({ span: ref, mode: "compress", acceptLossy: true });
    expect(out.line).toContain(REQ);
  });
});

describe("ContextWindow: holds, rotation and re-persist", () => {
  it("re-persist writes the window's bytes back when the copy rotated out, and says so in the audit", async () => {
    const { win, toolLog, clock } = setup();
    const ref = await win.append({ kind: "toolResult", text: block() });
    clock.advance(3 * HOUR);
    expect((await toolLog.rotate()).rotated).toBe(1);
    const out = await win.prune({ span: ref, mode: "summarize", digest: "fine" });
    expect(out).toMatchObject({ status: "reversible", repersisted: true, handle: "#1" });
    const rec = (await win.auditLog()).at(-1)!;
    expect(rec).toMatchObject({ status: "reversible", repersisted: true, reason: "repersisted:expired" });
    clock.advance(30 * HOUR);
    await toolLog.rotate();
    expect(await win.recall(ref)).toMatchObject({ status: "found", text: block() });
  });

  it("without re-persist, a rotated copy makes the prune lossy-or-rejected, never silently reversible", async () => {
    const { win, toolLog, clock } = setup();
    const ref = await win.append({ kind: "plain", text: block() });
    clock.advance(3 * HOUR);
    await toolLog.rotate();
    const rejected = await win.tryPrune({ span: ref, mode: "drop" });
    expect(rejected).toMatchObject({ status: "rejected", reason: "not-reversible", failed: ["existence"] });
    expect(rejected.status === "rejected" && rejected.line).toBe("span_1 kept: prune rejected (copy expired); accept_lossy to force");
    const lossy = await win.prune({ span: ref, mode: "drop", acceptLossy: true });
    expect(lossy.status).toBe("lossy");
    expect(await win.recall(ref)).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
  });

  it("two windows of one session get distinct span ids from the store; neither overwrites the other's copy", async () => {
    const clock = new ManualClock(0);
    const toolLog = new MemoryStore({ name: "toolLog", clock });
    const first = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog }, kinds: KINDS }));
    const a = await first.append({ kind: "toolResult", text: "the first writer's bytes" });
    const second = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog }, kinds: KINDS }));
    const b = await second.append({ kind: "toolResult", text: "the second writer's bytes" });
    expect([a, b].map(refSpanId)).toEqual(["span_1", "span_2"]);
    expect(await second.tryPrune({ span: b, mode: "drop" })).toMatchObject({ status: "reversible" });
    expect(await first.tryPrune({ span: a, mode: "drop" })).toMatchObject({ status: "reversible" });
    expect(await toolLog.lookup("s", { spanId: "span_1" })).toMatchObject({ text: "the first writer's bytes" });
    expect(await toolLog.lookup("s", { spanId: "span_2" })).toMatchObject({ text: "the second writer's bytes" });
  });

  it("never overwrites a stored copy that differs from the window's bytes, even with re-persist on", async () => {
    const clock = new ManualClock(0);
    const toolLog = new MemoryStore({ name: "toolLog", clock });
    // A record the window did not write sits under the id the window is about to be given.
    await toolLog.persist({ session: "s", spanId: "span_1", kind: "toolResult", text: "someone else's bytes", hash: contentHash("someone else's bytes") });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog }, kinds: KINDS }));
    const ref = await win.append({ kind: "toolResult", text: "other bytes under the same id" });
    expect(refSpanId(ref)).toBe("span_1");
    const out = await win.tryPrune({ span: ref, mode: "drop" });
    // The window never got a handle (persist refused), and the record it finds is not its bytes.
    expect(out).toMatchObject({ status: "rejected", reason: "not-reversible", failed: ["existence", "addressability"] });
    expect(out.status === "rejected" && out.line).toMatch(/stored copy differs/);
    expect(await toolLog.lookup("s", { spanId: "span_1" })).toMatchObject({ text: "someone else's bytes" });
  });

  it("a read-only store cannot re-persist", async () => {
    const clock = new ManualClock(0);
    const toolLog = new MemoryStore({ name: "toolLog", retentionMs: HOUR, clock, writable: false });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog }, kinds: KINDS }));
    const ref = await win.append({ kind: "toolResult", text: "x" });
    expect(await win.tryPrune({ span: ref, mode: "drop" })).toMatchObject({ status: "rejected", failed: ["existence", "addressability"] });
  });

  it("a store that cannot tell pruned from absent makes every prune lossy, re-persist or not", async () => {
    const clock = new ManualClock(0);
    const toolLog = new MemoryStore({ name: "toolLog", retentionMs: HOUR, clock, distinguishesAbsent: false });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog }, kinds: KINDS }));
    const ref = await win.append({ kind: "toolResult", text: "x" });
    expect(await win.tryPrune({ span: ref, mode: "drop" })).toMatchObject({ status: "rejected", failed: ["provenance"] });
    expect(await win.prune({ span: ref, mode: "drop", acceptLossy: true })).toMatchObject({ status: "lossy", failed: ["provenance"] });
  });

  it("end() releases the session's holds so copies age out again", async () => {
    const { win, toolLog, clock } = setup();
    const ref = await win.append({ kind: "toolResult", text: "x" });
    await win.prune({ span: ref, mode: "drop" });
    await win.end();
    clock.advance(3 * HOUR);
    expect(await toolLog.rotate()).toEqual({ rotated: 1, keptByHold: 0 });
    expect(await win.recall(ref)).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
    await expect(win.append({ kind: "scratch", text: "late" })).rejects.toThrow(/ended/);
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ status: "invalid" });
  });
});

describe("ContextWindow: recall never collapses its three answers", () => {
  it("found for live spans, found from the store, pruned-unrecoverable for tombstones and lost copies, unknown otherwise", async () => {
    const { win, toolLog, clock } = setup();
    const live = await win.append({ kind: "scratch", text: "live text" });
    const kept = await win.append({ kind: "toolResult", text: "kept text" });
    const gone = await win.append({ kind: "scratch", text: "gone text" });
    await win.prune({ span: kept, mode: "drop" });
    await win.prune({ span: gone, mode: "drop", acceptLossy: true });
    expect(await win.recall(live)).toMatchObject({ status: "found", text: "live text", source: "window" });
    expect(await win.recall(kept)).toMatchObject({ status: "found", text: "kept text", source: "store" });
    expect(await win.recall(gone)).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
    expect(await win.recall("span_99")).toMatchObject({ status: "unknown", query: "span_99" });
    expect(await win.recall("#42")).toMatchObject({ status: "unknown" });
    // A copy that vanished despite its handle is reported as lost, never as unknown.
    await toolLog.releaseHolds("s1");
    clock.advance(3 * HOUR);
    await toolLog.rotate();
    expect(await win.recall(kept)).toMatchObject({ status: "pruned-unrecoverable", reason: "copy-lost" });
  });

  it("recall of another session's span or handle is unknown", async () => {
    const clock = new ManualClock(0);
    const toolLog = new MemoryStore({ name: "toolLog", clock });
    const a = new ContextWindow(immediate({ session: "a", clock, stores: { toolLog }, kinds: KINDS }));
    const b = new ContextWindow(immediate({ session: "b", clock, stores: { toolLog }, kinds: KINDS }));
    const ref = await a.append({ kind: "toolResult", text: "secret of a" });
    await a.prune({ span: ref, mode: "drop" });
    expect(await b.recall("span_1")).toMatchObject({ status: "unknown" });
    expect(await b.recall("#1")).toMatchObject({ status: "unknown" });
    expect((await b.auditLog()).map((r) => r.status)).toEqual(["unknown", "unknown"]);
  });

  it("a window rebuilt over the same store still finds what an earlier process persisted", async () => {
    const clock = new ManualClock(0);
    const toolLog = new MemoryStore({ name: "toolLog", clock });
    const first = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog }, kinds: KINDS }));
    await first.prune({ span: await first.append({ kind: "toolResult", text: "before the crash" }), mode: "drop" });
    const second = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog }, kinds: KINDS }));
    expect(await second.recall("span_1")).toMatchObject({ status: "found", text: "before the crash" });
  });

  it("recall directives go through the untrusted path too", async () => {
    const { win } = setup();
    await win.append({ kind: "toolResult", text: "t" });
    expect(await win.applyDirective('{"op":"recall","span_id":"span_1"}')).toMatchObject({ op: "recall", status: "found" });
    expect(await win.applyDirective({ op: "recall", span_id: "span_1", extra: 1 })).toMatchObject({ status: "invalid" });
  });
});

describe("ContextWindow: untrusted directives", () => {
  const hostile: unknown[] = [
    '{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":"true"}',
    '{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":1}',
    '{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":"yes"}',
    '{"op":"prune","span_id":"span_1","mode":"drop","__proto__":{"accept_lossy":true}}',
    '{"op":"prune","span_id":"span_1","mode":"drop","constructor":{"prototype":{}}}',
    '{"op":"prune","span_id":"span_1","mode":"shred"}',
    '{"op":"prune","span_id":"spаn_1","mode":"drop"}',
    '{"op":"prune","span_id":1,"mode":"drop"}',
    '{"op":"prune","span_id":"span_1","mode":"summarize"}',
    '{"op":"prune","span_id":"span_1","mode":"drop","digest":"x"}',
    `{"op":"prune","span_id":"span_1","mode":"summarize","digest":"${"x".repeat(9000)}"}`,
    '{"op":"prune","span_id":"span_1","mode":"drop","session":"other"}',
    '{"op":"delete","span_id":"span_1"}',
    "not json",
    "x".repeat(100_000),
    "[" .repeat(5000) + "]".repeat(5000),
    null,
    42,
    [],
    { op: "prune", span_id: "span_1", mode: "drop", accept_lossy: "true" },
    Object.defineProperty({}, "op", { get() { throw new Error("gotcha"); }, enumerable: true }),
  ];

  it.each(hostile.map((h, i) => [i, h]))("hostile directive #%i is invalid, audited, and changes nothing", async (_i, input) => {
    const { win } = setup();
    await win.append({ kind: "scratch", text: "only copy" });
    const before = win.entries();
    const out = await win.applyDirective(input);
    expect(out.status).toBe("invalid");
    expect(win.entries()).toEqual(before);
    const log = await win.auditLog();
    expect(log).toHaveLength(1);
    expect(log[0]!.status).toBe("invalid");
    expect(log[0]!.directive!.length).toBeLessThan(1100);
  });

  it("ids not in this window and already-pruned spans are rejected with a reason", async () => {
    const { win } = setup();
    await win.append({ kind: "scratch", text: "a" });
    expect(await win.applyDirective({ op: "prune", span_id: "span_9", mode: "drop" })).toMatchObject({ status: "rejected", reason: "unknown-span" });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop", accept_lossy: true });
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "already-pruned" });
    expect((await win.auditLog()).map((r) => r.status)).toEqual(["rejected", "lossy", "rejected"]);
  });

  it("accept_lossy counts only as the JSON value true", async () => {
    const { win } = setup();
    await win.append({ kind: "scratch", text: "a" });
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop", accept_lossy: false })).toMatchObject({ status: "rejected" });
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop", accept_lossy: true })).toMatchObject({ status: "lossy" });
  });
});

describe("ContextWindow: lossy budget", () => {
  it("past the session's budget, accept_lossy is rejected with that reason", async () => {
    const { win } = setup({ lossyBudget: 1 });
    const a = await win.append({ kind: "scratch", text: "a" });
    const b = await win.append({ kind: "scratch", text: "b" });
    expect((await win.tryPrune({ span: a, mode: "drop", acceptLossy: true })).status).toBe("lossy");
    expect(await win.tryPrune({ span: b, mode: "drop", acceptLossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
    expect(win.span(b)?.text).toBe("b");
  });
});

describe("ContextWindow: tool call/result groups", () => {
  const kinds = {
    toolCall: { store: null, modes: ["drop"], lossy: "with-flag" },
    toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" },
    locked: { store: "toolLog", modes: ["summarize"], lossy: "forbid" },
  } as const satisfies Record<string, KindPolicy>;

  it("prunes a call and its result together or not at all", async () => {
    const { win } = setup({ kinds });
    const call = await win.append({ kind: "toolCall", text: "search(q)", group: "call_1" });
    const result = await win.append({ kind: "toolResult", text: "results…", group: "call_1" });
    const refused = await win.tryPrune({ span: result, mode: "drop" });
    // The call has no copy; without the flag the whole group stays.
    expect(refused).toMatchObject({ status: "rejected", reason: "group" });
    expect(win.span(call)).toBeDefined();
    expect(win.span(result)).toBeDefined();
    const done = await win.prune({ span: result, mode: "summarize", digest: "3 hits", acceptLossy: true });
    expect(done).toMatchObject({ groupPruned: ["span_1"] });
    expect(win.entries().map((e) => e.state)).toEqual(["tombstone", "pruned"]);
    const log = await win.auditLog();
    expect(log.filter((r) => r.directive !== null)).toHaveLength(2);
  });

  it("a group member whose kind cannot be dropped blocks the group", async () => {
    const { win } = setup({ kinds });
    await win.append({ kind: "locked", text: "approval", group: "g" });
    const result = await win.append({ kind: "toolResult", text: "r", group: "g" });
    expect(await win.tryPrune({ span: result, mode: "drop" })).toMatchObject({ status: "rejected", reason: "group" });
    expect(win.entries().map((e) => e.state)).toEqual(win.entries().map(() => "live"));
  });
});

describe("ContextWindow: operations run one at a time, in call order", () => {
  it("calls made without awaiting run in order, each seeing the window the one before left", async () => {
    const { win } = setup();
    const order: string[] = [];
    const a = win.append({ kind: "toolResult", text: "alpha" }).then((r) => (order.push(`append ${refSpanId(r)}`), r));
    const prune = win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" }).then((o) => (order.push(`prune ${o.status}`), o));
    const again = win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" }).then((o) => (order.push(`again ${o.status}`), o));
    const recall = win.recall("span_1").then((o) => (order.push(`recall ${o.status}`), o));
    await Promise.all([a, prune, again, recall]);
    expect(order).toEqual(["append span_1", "prune reversible", "again rejected", "recall found"]);
    expect(await again).toMatchObject({ status: "rejected", reason: "already-pruned" });
  });

  it("an argument that cannot be read rejects the returned promise; it does not throw, and the window goes on", async () => {
    const { win } = setup();
    const unreadable = { toString: () => { throw new TypeError("no string form"); } };
    const bad = win.recall(unreadable as unknown as string);
    await expect(bad).rejects.toThrow(TypeError);
    expect(refSpanId(await win.append({ kind: "toolResult", text: "alpha" }))).toBe("span_1");
  });
});

describe("ContextWindow: audit", () => {
  it("logs exactly one record per decided span, chained and verifiable", async () => {
    const { win, toolLog } = setup();
    const a = await win.append({ kind: "toolResult", text: "a" });
    const b = await win.append({ kind: "scratch", text: "b" });
    await win.prune({ span: a, mode: "drop" });
    await win.tryPrune({ span: b, mode: "drop" });
    await win.applyDirective("garbage");
    await win.recall(a);
    const log = await toolLog.auditLog("s1");
    expect(log.map((r) => `${r.op}:${r.status}`)).toEqual(["prune:reversible", "prune:rejected", "null:invalid", "recall:found"]);
    expect(verifyAuditChain(log)).toBeNull();
  });
});

describe("ContextWindow: store faults", () => {
  function flaky(inner: BackingStore, failing: Set<string>): BackingStore {
    return new Proxy(inner, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          if (failing.has(String(prop))) return Promise.reject(new Error(`injected ${String(prop)} failure`));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  it("a store that throws mid-prune leaves the window unchanged and the error visible; the audit is retried", async () => {
    const clock = new ManualClock(0);
    const failing = new Set<string>();
    const inner = new MemoryStore({ name: "toolLog", clock });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog: flaky(inner, failing) }, kinds: KINDS }));
    const ref = await win.append({ kind: "toolResult", text: "precious" });
    failing.add("commitPrune").add("appendAudit");
    const out: PruneOutcome = await win.tryPrune({ span: ref, mode: "drop" });
    expect(out).toMatchObject({ status: "rejected", reason: "store-error" });
    expect(out.status === "rejected" && out.message).toMatch(/injected commitPrune failure/);
    expect(win.span(ref)?.text).toBe("precious");
    expect(win.pendingAudit).toBe(1);
    failing.clear();
    await win.prune({ span: ref, mode: "drop" });
    expect(win.pendingAudit).toBe(0);
    expect((await inner.auditLog("s")).map((r) => `${r.status}:${r.reason}`)).toEqual(["rejected:store-error", "reversible:null"]);
  });

  it("a persist failure on append keeps the span; a later prune re-persists it", async () => {
    const clock = new ManualClock(0);
    const failing = new Set(["persist"]);
    const inner = new MemoryStore({ name: "toolLog", clock });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog: flaky(inner, failing) }, kinds: KINDS }));
    const ref = await win.append({ kind: "toolResult", text: "t" });
    failing.clear();
    expect(await win.prune({ span: ref, mode: "drop" })).toMatchObject({ status: "reversible", repersisted: true });
  });

  it("recall of an id this window never saw, while a store is failing, is unavailable rather than unknown", async () => {
    const clock = new ManualClock(0);
    const failing = new Set<string>(["lookup"]);
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog: flaky(new MemoryStore({ name: "toolLog", clock }), failing) }, kinds: KINDS }));
    expect(await win.recall("span_3")).toMatchObject({ status: "unavailable", spanId: "span_3" });
    failing.clear();
    expect(await win.recall("span_3")).toMatchObject({ status: "unknown" });
  });

  it("a rejection caused by a failed persist on append says so", async () => {
    const clock = new ManualClock(0);
    const failing = new Set(["persist"]);
    const inner = new MemoryStore({ name: "toolLog", clock });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog: flaky(inner, failing) }, kinds: KINDS }));
    const ref = await win.append({ kind: "plain", text: "t" });
    const out = await win.tryPrune({ span: ref, mode: "drop" });
    expect(out).toMatchObject({ status: "rejected", failed: ["existence", "addressability"] });
    expect(out.status === "rejected" && out.message).toMatch(/persisting span_1 on append failed: injected persist failure/);
  });

  it("recall against a failing store answers unavailable, not unknown", async () => {
    const clock = new ManualClock(0);
    const failing = new Set<string>();
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { toolLog: flaky(new MemoryStore({ name: "toolLog", clock }), failing) }, kinds: KINDS }));
    const ref = await win.append({ kind: "toolResult", text: "t" });
    await win.prune({ span: ref, mode: "drop" });
    failing.add("lookup");
    expect(await win.recall(ref)).toMatchObject({ status: "unavailable" });
  });
});

describe("render lines stay within their token bounds", () => {
  it("tombstones ≤ 13 and index lines ≤ 12 tokens (o200k_base) for ids up to span_99999 and handles up to #9999", async () => {
    const { tombstoneLine, indexLine } = await import("../../src/render/lines.js");
    for (const id of ["span_1", "span_7", "span_42", "span_999", "span_1234", "span_9999", "span_99999"]) {
      expect(countTokens(tombstoneLine(id)), tombstoneLine(id)).toBeLessThanOrEqual(13);
      for (const h of ["#1", "#42", "#999", "#9999"]) expect(countTokens(indexLine(id, h)), indexLine(id, h)).toBeLessThanOrEqual(12);
    }
    // The usual tombstone wording, "span_7: pruned, unrecoverable, contents unknown", is 13 tokens: ours is no larger.
    expect(countTokens("span_7: pruned, unrecoverable, contents unknown")).toBe(13);
  });
});
