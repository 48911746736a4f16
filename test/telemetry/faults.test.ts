/**
 * Telemetry never changes an outcome (issue 35): a tracer, span, meter, instrument or context manager that
 * throws — before doing its work or after it — that does its work twice, hides its result, returns a
 * rejected promise, or (a context manager's `with()`) never runs the decision or runs it twice, leaves every
 * call answering as it does with telemetry off: the same outcome (or the same exception, from the decision
 * itself), the decision run exactly once, and the same audit log, one record per decision.
 *
 * The walk numbers every telemetry call a session makes (test/telemetry/faulty.ts: the real SDK behind
 * numbered wrappers, and a numbered `AsyncLocalStorageContextManager` as the global context manager), then
 * replays the session with call N misbehaving, for every N and every fault; the property does the same for
 * generated sessions of every operation. Seen to fail before the fix: a `with()` that threw after running a
 * prune made `applyDirective` throw although the prune committed, one that threw first made it throw without
 * pruning, one that never called back answered `undefined`, and one that called back twice audited a second,
 * `already-pruned`, decision.
 */
import { context, metrics, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, refSpanId, StoreError, type KindPolicy, type TelemetryOptions } from "../../src/index.js";
import type { LookupKey, LookupResult, PruneCommit, PruneTransaction } from "../../src/stores/store.js";
import type { ContextWindowOptions } from "../../src/window/window-options.js";
import { fuzzRuns, soaking, timeoutFor } from "../reliability/helpers.js";
import { FAULTS, FaultyTelemetry, installContextManager, type Fault, type TelemetryFaultPlan } from "./faulty.js";
import { recording, type Recording } from "./helpers.js";

const HOUR = 3_600_000;

const KINDS = {
  tool: { store: "mem", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
  plain: { store: "short", modes: ["drop", "summarize"], lossy: "with-flag" },
  locked: { store: "mem", modes: ["summarize"], lossy: "forbid" },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const satisfies Record<string, KindPolicy>;
type Kind = keyof typeof KINDS;
const KIND_NAMES = Object.keys(KINDS) as Kind[];

const TEXTS = [
  "HTTP/1.1 500 from billing, request req_7f3a\n" + "a line of tool output the window holds\n".repeat(150),
  "connected to db-primary-3 after 2 retries\n" + "another line of a long tool result\n".repeat(25),
  "short note",
];
const QUERIES = ["req_7f3a", "db-primary", "nothing-like-this", "/req_[0-9a-f]+/"];

/** One call a session makes; targets index the spans appended so far (none yet: an id no span has). */
type Op =
  | { readonly op: "append"; readonly kind: Kind; readonly text: number }
  | { readonly op: "applyDirective" | "tryPrune" | "prune"; readonly target: number; readonly mode: "drop" | "summarize"; readonly lossy: boolean }
  | { readonly op: "recall" | "directiveRecall"; readonly target: number }
  | { readonly op: "search"; readonly query: number }
  | { readonly op: "summarizeRange"; readonly from: number; readonly to: number }
  | { readonly op: "map" | "compact" | "directiveCompact" | "invalid" | "checkCopies" | "render" | "rotate" | "resume" | "outage" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("append" as const), kind: fc.constantFrom(...KIND_NAMES), text: fc.nat(TEXTS.length - 1) }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constantFrom("applyDirective" as const, "tryPrune" as const, "prune" as const), target: fc.nat(9), mode: fc.constantFrom("drop" as const, "summarize" as const), lossy: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom("recall" as const, "directiveRecall" as const), target: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("search" as const), query: fc.nat(QUERIES.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("summarizeRange" as const), from: fc.nat(9), to: fc.nat(9) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom("map" as const, "compact" as const, "directiveCompact" as const, "invalid" as const, "checkCopies" as const, "render" as const, "rotate" as const, "resume" as const, "outage" as const) }) },
);

/** A session that makes every kind of call: each operation, on spans of every fate, and a restart. */
const EVERY_OP: readonly Op[] = [
  { op: "append", kind: "tool", text: 0 },
  { op: "append", kind: "plain", text: 1 },
  { op: "append", kind: "scratch", text: 2 },
  { op: "append", kind: "locked", text: 1 },
  { op: "append", kind: "tool", text: 1 },
  { op: "applyDirective", target: 0, mode: "drop", lossy: false },
  { op: "applyDirective", target: 0, mode: "drop", lossy: false },
  { op: "tryPrune", target: 2, mode: "drop", lossy: false },
  { op: "prune", target: 2, mode: "drop", lossy: false },
  { op: "prune", target: 2, mode: "drop", lossy: true },
  { op: "recall", target: 0 },
  { op: "directiveRecall", target: 2 },
  { op: "search", query: 0 },
  { op: "search", query: 3 },
  { op: "map" },
  { op: "rotate" },
  { op: "tryPrune", target: 1, mode: "drop", lossy: true },
  { op: "append", kind: "plain", text: 0 },
  { op: "tryPrune", target: 5, mode: "drop", lossy: false },
  { op: "outage" },
  { op: "recall", target: 5 },
  { op: "outage" },
  { op: "applyDirective", target: 1, mode: "drop", lossy: false },
  { op: "summarizeRange", from: 3, to: 4 },
  { op: "recall", target: 3 },
  { op: "compact" },
  { op: "invalid" },
  { op: "checkCopies" },
  { op: "render" },
  { op: "resume" },
  { op: "directiveCompact" },
  { op: "recall", target: 1 },
];

/** What a session showed: each call's answer (or the exception it threw), then the audit log and the window. */
interface Transcript {
  readonly answers: unknown[];
  readonly audit: unknown;
  readonly entries: unknown;
  readonly rendered: string;
}

/** The `short` store, failing every call of the operation after an `outage`. */
class FlakyStore extends MemoryStore {
  down = false;
  override async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    if (this.down) throw new StoreError(this.name, "connection reset");
    return super.lookup(session, key);
  }
  override async commitPrune(txn: PruneTransaction): Promise<PruneCommit> {
    if (this.down) throw new StoreError(this.name, "connection reset");
    return super.commitPrune(txn);
  }
  override async searchCopies(...args: Parameters<MemoryStore["searchCopies"]>): ReturnType<MemoryStore["searchCopies"]> {
    if (this.down) throw new StoreError(this.name, "connection reset");
    return super.searchCopies(...args);
  }
}

/** `telemetry` undefined: left to the global API. */
function sessionOptions(telemetry: TelemetryOptions | false | undefined): ContextWindowOptions<Kind> {
  const clock = new ManualClock(10 * HOUR);
  return {
    session: "s-faults", clock, auditStore: "mem", kinds: KINDS, ...(telemetry === undefined ? {} : { telemetry }),
    stores: { mem: new MemoryStore({ name: "mem", clock }), short: new FlakyStore({ name: "short", clock, holds: false, retentionMs: HOUR, handlePrefix: "s" }) },
    limits: { lossyBudget: 2, compaction: { minFreedTokens: 1_024, atTokens: null } },
  };
}

/** Runs `script` in a fresh session; window ids (random per window) are replaced by a placeholder, and hashes left out. */
async function runSession(script: readonly Op[], telemetry: TelemetryOptions | false | undefined): Promise<Transcript> {
  const options = sessionOptions(telemetry);
  const clock = options.clock as ManualClock;
  let win = new ContextWindow(options);
  const ids: string[] = [];
  const refs: string[] = [];
  const answers: unknown[] = [];
  const windows = [win.windowId];
  // A record's hash covers its directive, which names the (random) window: the chain itself is not compared.
  const plain = (v: unknown) =>
    JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === "hash" || k === "prevHash" ? undefined : typeof x === "string" ? windows.reduce((s, w) => s.replaceAll(w, "<window>"), x) : x)) ?? "null") as unknown;
  const ref = (i: number) => refs.length === 0 ? "span_99" : refs[i % refs.length]!;
  const id = (i: number) => ids.length === 0 ? "span_99" : ids[i % ids.length]!;
  const short = options.stores["short"] as FlakyStore;
  for (const step of script) {
    try {
      answers.push(plain(await call(step)));
    } catch (err) {
      const e = err as Error & { outcome?: unknown };
      answers.push({ threw: e.name, message: plain(e.message), outcome: plain(e.outcome ?? null) });
    }
    short.down = step.op === "outage";
  }
  return { answers, audit: plain(await win.auditLog()), entries: plain(win.entries()), rendered: plain(win.render()) as string };

  async function call(step: Op): Promise<unknown> {
    switch (step.op) {
      case "append": {
        const r = await win.append({ kind: step.kind, text: TEXTS[step.text]! });
        refs.push(r);
        ids.push(refSpanId(r));
        return r;
      }
      case "applyDirective":
        return win.applyDirective({ op: "prune", span_id: ref(step.target), mode: step.mode, ...(step.mode === "summarize" ? { digest: "what it said" } : {}), ...(step.lossy ? { accept_lossy: true } : {}) });
      case "tryPrune":
      case "prune": {
        const request = { span: ref(step.target) as never, mode: step.mode, ...(step.mode === "summarize" ? { digest: "what it said" } : {}), ...(step.lossy ? { acceptLossy: true } : {}) };
        return step.op === "prune" ? win.prune(request) : win.tryPrune(request);
      }
      case "recall":
        return win.recall(ref(step.target));
      case "directiveRecall":
        return win.applyDirective({ op: "recall", span_id: id(step.target) });
      case "search":
        return win.search(QUERIES[step.query]!);
      case "map":
        return win.map();
      case "summarizeRange":
        return win.summarizeRange({ from: id(Math.min(step.from, step.to)), to: id(Math.max(step.from, step.to)), digest: "the run, in a line" });
      case "compact":
        return win.compact();
      case "directiveCompact":
        return win.applyDirective(JSON.stringify({ op: "compact" }));
      case "invalid":
        return win.applyDirective("{ not json");
      case "checkCopies":
        return win.checkCopies();
      case "render":
        return win.render({ map: true });
      case "rotate": {
        clock.advance(3 * HOUR);
        for (const store of Object.values(options.stores)) await store.rotate();
        return null;
      }
      case "outage":
        return null;
      case "resume": {
        win = await ContextWindow.resume(options);
        windows.push(win.windowId);
        refs.splice(0, refs.length, ...ids.map((i) => win.ref(i, "tool" as Kind)));
        return win.render();
      }
    }
  }
}

let r: Recording;
let f: FaultyTelemetry;
let uninstall: () => void;
beforeEach(() => {
  r = recording();
  f = new FaultyTelemetry();
  uninstall = installContextManager(f);
});
afterEach(async () => {
  uninstall();
  await r.shutdown();
});

/** Telemetry into the real SDK, through the numbered wrappers. */
const faulty = (): TelemetryOptions => ({ tracer: f.tracer(r.telemetry.tracer), meter: f.meter(r.telemetry.meter) });

/** The session with `plan` armed, from a fresh count. */
async function withPlan(script: readonly Op[], plan: TelemetryFaultPlan): Promise<Transcript> {
  f.calls.length = 0;
  f.tripped = 0;
  f.plan = plan;
  try {
    return await runSession(script, faulty());
  } finally {
    f.plan = { at: Number.POSITIVE_INFINITY, fault: "throw-before", persistent: false };
  }
}

const PRUNE: readonly Op[] = [{ op: "append", kind: "tool", text: 0 }, { op: "applyDirective", target: 0, mode: "drop", lossy: false }, { op: "applyDirective", target: 0, mode: "drop", lossy: false }];

describe("a context manager's with() cannot change a decision", () => {
  let baseline: Transcript;
  beforeEach(async () => {
    baseline = await runSession(PRUNE, false);
    expect(baseline.answers[1]).toMatchObject({ op: "prune", status: "reversible" });
    expect(baseline.answers[2]).toMatchObject({ status: "rejected", reason: "already-pruned" });
  });

  // The first with() is the first prune's: the fault lands on the decision that commits.
  for (const fault of FAULTS) {
    it(`${fault}: the prune commits once, answers reversible, and is audited once`, async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => void unhandled.push(reason);
      process.on("unhandledRejection", onUnhandled);
      let got: Transcript;
      try {
        got = await withPlan(PRUNE, { at: 1, fault, persistent: false, only: "context.with" });
        // Node reports an unhandled rejection once the microtasks of the turn that made it have run.
        await new Promise((resolve) => setImmediate(resolve));
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
      expect(unhandled).toEqual([]);
      expect(f.tripped).toBe(1);
      expect(got.answers[1]).toMatchObject({ op: "prune", status: "reversible" });
      expect(got.answers[2]).toMatchObject({ status: "rejected", reason: "already-pruned" });
      expect(got).toEqual(baseline);
      expect((got.audit as Array<{ op: string }>).filter((a) => a.op === "prune")).toHaveLength(2);
    });
  }

  it("a with() that runs the decision later, after returning, does not run it a second time", async () => {
    // Such a manager gives the decision no context: it ran already, outside it.
    const win = new ContextWindow(sessionOptions(faulty()));
    let later: (() => unknown) | null = null;
    context.disable();
    context.setGlobalContextManager({
      active: () => ROOT_CONTEXT,
      with: (_ctx: unknown, fn: () => unknown) => void (later = fn),
      bind: (_c: unknown, t: unknown) => t,
      enable() { return this; },
      disable() { return this; },
    } as never);
    const a = await win.append({ kind: "tool", text: TEXTS[0]! });
    const out = await win.applyDirective({ op: "prune", span_id: a, mode: "drop" });
    expect(out).toMatchObject({ status: "reversible" });
    expect(later).not.toBeNull();
    await (later as unknown as () => Promise<unknown>)();
    expect((await win.auditLog()).filter((x) => x.op === "prune")).toHaveLength(1);
  });
});

describe("telemetry that fails at any call changes no outcome", () => {
  it("the harness records: a fault-free session with telemetry answers as without, and makes every kind of call", async () => {
    const baseline = await runSession(EVERY_OP, false);
    const counted = await withPlan(EVERY_OP, { at: Number.POSITIVE_INFINITY, fault: "throw-before", persistent: false });
    expect(counted).toEqual(baseline);
    for (const name of ["tracer.startSpan", "span.setAttributes", "span.end", "span.addEvent", "span.updateName", "instrument.add", "instrument.record", "context.active", "context.setValue", "context.with", "meter.createCounter"]) {
      expect(f.calls, name).toContain(name);
    }
    expect(r.named("pruneguard.prune").length).toBeGreaterThan(3);
    expect(r.named("pruneguard.resume")).toHaveLength(1);
  });

  it("every call of a session, failing (once, and from then on), leaves every answer and the audit log as with telemetry off", async () => {
    const baseline = await runSession(EVERY_OP, false);
    await withPlan(EVERY_OP, { at: Number.POSITIVE_INFINITY, fault: "throw-before", persistent: false });
    const names = [...f.calls];
    expect(names.length).toBeGreaterThan(100);
    for (let at = 1; at <= names.length; at++) {
      // Every way at every call is a soak's work (PRUNEGUARD_FUZZ_RUNS); by default each call fails one way,
      // the ways taking turns, and each `with()` — the call that runs the decision — fails every way.
      const faults = soaking || names[at - 1] === "context.with" ? FAULTS : [FAULTS[at % FAULTS.length]!];
      for (const fault of faults) {
        for (const persistent of at % 7 === 1 ? [false, true] : [false]) {
          const got = await withPlan(EVERY_OP, { at, fault, persistent });
          expect(f.tripped, `call ${at} faulted`).toBeGreaterThan(0);
          if (!isEqual(got, baseline)) expect(got, `${fault} at call ${at} (${names[at - 1]})${persistent ? ", persistent" : ""}`).toEqual(baseline);
        }
      }
    }
  }, soaking ? 3_600_000 : 120_000);

  it("property: any session, a fault at any telemetry call: the outcomes and the audit log are those of the session with telemetry off", async () => {
    const runs = fuzzRuns(200);
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 14 }), fc.nat(), fc.constantFrom<Fault>(...FAULTS), fc.boolean(),
        async (script, pick, fault, persistent) => {
          const baseline = await runSession(script, false);
          await withPlan(script, { at: Number.POSITIVE_INFINITY, fault, persistent: false });
          const total = f.calls.length;
          const got = await withPlan(script, { at: 1 + (pick % Math.max(1, total)), fault, persistent });
          expect(got).toEqual(baseline);
        },
      ),
      { numRuns: runs },
    );
  }, timeoutFor(200, 40));
});

describe("telemetry left to the global API cannot change an outcome either", () => {
  it("a tracer provider and meter provider whose getTracer/getMeter throw", async () => {
    const baseline = await runSession(EVERY_OP, false);
    await r.shutdown();
    const broken = () => {
      throw new Error("provider down");
    };
    trace.setGlobalTracerProvider({ getTracer: broken } as never);
    metrics.setGlobalMeterProvider({ getMeter: broken } as never);
    try {
      expect(await runSession(EVERY_OP, undefined)).toEqual(baseline);
    } finally {
      trace.disable();
      metrics.disable();
      r = recording();
    }
  });
});

function isEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
