// A ref belongs to one window: span ids repeat across sessions (span_1 in every one), so a ref of another
// window must never name this window's span of the same id. Run-time half of the compile-time promise
// (test/types/fixtures/window-refs.ts is the other half): refused, audited, nothing pruned, nothing
// rendered; and refs come back by id through the window, checked.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContextWindow, IrreversiblePruneError, ManualClock, MemoryStore, RefError, refSpanId, verifyAuditChain, type SpanRef } from "../../src/index.js";
import { createWindow as orgWindow, openStores as openOrgStores } from "../../generated/org.guard.js";
import { createWindow as paymentsWindow, openStores as openPaymentsStores, resumeWindow as resumePayments } from "../../generated/team-payments.guard.js";
import { immediate } from "./immediate.js";

const kinds = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

function open(session: string, store = new MemoryStore({ name: "log" }), clock = new ManualClock(0)) {
  return { win: new ContextWindow(immediate({ session, clock, stores: { log: store }, kinds })), store, clock };
}

/** The window's audit records refused as another window's ref. */
async function foreignRecords(win: ContextWindow) {
  return (await win.auditLog()).filter((r) => r.reason === "foreign-ref");
}

describe("a ref of another window never prunes anything", () => {
  it("another session's span_1 is refused by tryPrune, prune, applyDirective and summarizeRange; this window's span_1 stays", async () => {
    const a = open("session-a");
    const b = open("session-b");
    const refA = await a.win.append({ kind: "note", text: "a's note" });
    const refB = await b.win.append({ kind: "note", text: "b's own note: nobody asked to prune it" });
    expect(refSpanId(refA)).toBe("span_1");
    expect(refSpanId(refB)).toBe("span_1");
    const before = b.win.render();

    const refused = await b.win.tryPrune({ span: refA, mode: "drop", acceptLossy: true });
    expect(refused).toMatchObject({ status: "rejected", reason: "foreign-ref", spanId: "span_1", kind: null });
    // Both sides named: the ref's session and window, and this one's.
    expect(refused.status === "rejected" && refused.message).toContain(`session "session-a" (window ${a.win.windowId})`);
    expect(refused.status === "rejected" && refused.message).toContain(`session "session-b" (window ${b.win.windowId})`);
    await expect(b.win.prune({ span: refA, mode: "drop", acceptLossy: true })).rejects.toThrow(IrreversiblePruneError);
    expect(await b.win.applyDirective({ op: "prune", span_id: refA, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "foreign-ref" });
    expect(await b.win.summarizeRange({ from: refA, to: refA, digest: "d" })).toMatchObject({ status: "rejected", reason: "foreign-ref" });
    expect(await b.win.applyDirective({ op: "summarize_range", from: refB, to: refA, digest: "d" })).toMatchObject({ status: "rejected", reason: "foreign-ref" });

    // Nothing pruned, nothing rendered: b's span_1 is live and what the model reads is unchanged.
    expect(b.win.span(refB)?.text).toBe("b's own note: nobody asked to prune it");
    expect(b.win.render()).toBe(before);
    // Each refusal audited, with the ref as it was given; no lossy commitment spent.
    const records = await foreignRecords(b.win);
    expect(records).toHaveLength(5);
    for (const r of records) expect(r).toMatchObject({ status: "rejected", spanId: null, kind: null });
    expect(records[0]!.directive).toContain(refA);
    expect(verifyAuditChain(await b.win.auditLog())).toBeNull();
    // a's span is a's, untouched too.
    expect(a.win.span(refA)?.text).toBe("a's note");
    expect(await foreignRecords(a.win)).toEqual([]);
  });

  it("two windows of one session name over different stores: still two windows, each refuses the other's refs", async () => {
    const a = open("s");
    const b = open("s");
    const refA = await a.win.append({ kind: "tool", text: "a" });
    await b.win.append({ kind: "tool", text: "b" });
    expect(a.win.windowId).not.toBe(b.win.windowId);
    expect(await b.win.tryPrune({ span: refA, mode: "drop" })).toMatchObject({ status: "rejected", reason: "foreign-ref" });
    expect(b.win.entries()[0]).toMatchObject({ state: "live" });
  });

  it("a bare id cast to a ref is refused on the code path; the model's directive with the id is the model's own window", async () => {
    const { win } = open("s");
    await win.append({ kind: "tool", text: "output" });
    const cast = "span_1" as SpanRef<"tool">;
    const out = await win.tryPrune({ span: cast, mode: "drop" });
    expect(out).toMatchObject({ status: "rejected", reason: "foreign-ref" });
    expect(out.status === "rejected" && out.message).toContain('take the ref from append() or ref("span_1")');
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ status: "reversible" });
  });

  it("anything else given as a ref is refused as data, never thrown", async () => {
    const { win } = open("s");
    await win.append({ kind: "tool", text: "output" });
    for (const junk of ["", "span_1@zzzzzzzz:s", `span_1@${"0".repeat(8)}:${"x".repeat(5_000)}`, 42, null]) {
      expect(await win.tryPrune({ span: junk as never, mode: "drop" }), String(junk).slice(0, 40)).toMatchObject({ status: "rejected", reason: "foreign-ref" });
    }
    expect(win.entries()[0]).toMatchObject({ state: "live" });
  });

  it("property: whatever refs of several windows are sent to whichever window, only a window's own refs prune", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat(2), fc.nat(2)), { minLength: 1, maxLength: 12 }), fc.boolean(), async (sends, sameSession) => {
        const wins = [0, 1, 2].map((i) => open(sameSession ? "s" : `s${i}`).win);
        const refs = await Promise.all(wins.map((w) => w.append({ kind: "tool", text: "t" })));
        const pruned = new Set<number>();
        for (const [from, to] of sends) {
          const out = await wins[to]!.tryPrune({ span: refs[from]!, mode: "drop" });
          if (from !== to) expect(out).toMatchObject({ status: "rejected", reason: "foreign-ref" });
          else expect(out.status).toBe(pruned.has(to) ? "rejected" : "reversible");
          if (from === to) pruned.add(to);
        }
        for (const [i, w] of wins.entries()) expect(w.entries()[0]!.state).toBe(pruned.has(i) ? "pruned" : "live");
      }),
      { numRuns: 40 },
    );
  });
});

describe("refs come back through the window, checked", () => {
  it("ref(id) gives this window's ref of the span's kind; an unknown id, another kind or another session throws a RefError", async () => {
    const a = open("s");
    const other = open("t");
    const tool = await a.win.append({ kind: "tool", text: "output" });
    await other.win.append({ kind: "tool", text: "elsewhere" });
    expect(a.win.ref("span_1")).toBe(tool);
    expect(a.win.ref("span_1", "tool")).toBe(tool);
    expect(a.win.ref(JSON.parse(JSON.stringify(tool)) as string, "tool")).toBe(tool);
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        expect(err).toBeInstanceOf(RefError);
        return { code: (err as RefError).code, message: (err as RefError).message };
      }
      throw new Error("expected a RefError");
    };
    expect(thrown(() => a.win.ref("span_9"))).toMatchObject({ code: "unknown-span", message: expect.stringContaining("span_9 is not a span of this window") });
    expect(thrown(() => a.win.ref("span_1", "note"))).toMatchObject({ code: "wrong-kind", message: "span_1 is a span of kind tool, not note" });
    expect(thrown(() => a.win.ref(other.win.ref("span_1")))).toMatchObject({ code: "foreign-session", message: expect.stringContaining('session "t"') });
    expect(thrown(() => a.win.ref("not a span"))).toMatchObject({ code: "unknown-span" });
  });

  it("after a resume: every span is reachable by id with no cast, the old window's refs are re-issued, and they prune", async () => {
    const store = new MemoryStore({ name: "log" });
    const clock = new ManualClock(0);
    const first = open("s", store, clock).win;
    const refs = [await first.append({ kind: "tool", text: "one" }), await first.append({ kind: "tool", text: "two" })];
    const saved = JSON.stringify(refs);
    const resumed = await ContextWindow.resume(immediate({ session: "s", clock, stores: { log: store }, kinds }));
    expect(resumed.refs().map(refSpanId)).toEqual(["span_1", "span_2"]);
    const back = (JSON.parse(saved) as string[]).map((r) => resumed.ref(r, "tool"));
    expect(back).toEqual(resumed.refs());
    // The old window's ref itself is refused here: it names the first window.
    expect(await resumed.tryPrune({ span: refs[0]!, mode: "drop" })).toMatchObject({ status: "rejected", reason: "foreign-ref" });
    expect(await resumed.tryPrune({ span: back[0]!, mode: "drop" })).toMatchObject({ status: "reversible" });
    // Reads take a ref of the session from any of its windows: the ids name the same spans.
    expect(await resumed.recall(refs[0]!)).toMatchObject({ status: "found", text: "one" });
    expect(resumed.span(refs[1]!)?.text).toBe("two");
  });
});

describe("generated guards: the issue's own reproduction", () => {
  it("an org window's ref on a payments window answers foreign-ref, and the payments window's span_1 is never tombstoned", async () => {
    const a = orgWindow({ session: "org-1", stores: await openOrgStores({ memory: true }) });
    const b = paymentsWindow({ session: "payments-1", stores: await openPaymentsStores({ memory: true }) });
    const refFromA = await a.append({ kind: "systemHint", text: "be terse" });
    const own = await b.append({ kind: "systemHint", text: "payments rules" });
    // The types refuse this (a ref of another policy); code that casts past them meets the run-time check.
    const out = await b.tryPrune(refFromA as never, { mode: "drop", acceptLossy: true } as never);
    expect(out).toMatchObject({ status: "rejected", reason: "foreign-ref" });
    expect(b.entries()).toEqual([expect.objectContaining({ state: "live", span: expect.objectContaining({ id: refSpanId(own), text: "payments rules" }) })]);
    expect((await b.auditLog()).filter((r) => r.reason === "foreign-ref")).toHaveLength(1);
    expect((await b.auditLog()).filter((r) => r.status === "lossy")).toEqual([]);
  });

  it("a guard's ref(id, kind) and refs() after resumeWindow give typed refs that prune under the policy", async () => {
    const stores = await openPaymentsStores({ memory: true });
    const first = paymentsWindow({ session: "p", stores });
    await first.append({ kind: "toolCall", text: "{}" });
    await first.append({ kind: "auditNote", text: "reviewed" });
    const resumed = await resumePayments({ session: "p", stores });
    expect(resumed.refs()).toHaveLength(2);
    const call = resumed.ref("span_1", "toolCall");
    expect(await resumed.prune(call, { mode: "drop" })).toMatchObject({ status: "reversible" });
    expect(() => resumed.ref("span_2", "toolCall")).toThrow(RefError);
  });
});
