/**
 * The model-based suite's machinery: a deliberately simple reference model of one store and the
 * windows over it, commands as plain data (so a failing sequence can be pasted into
 * `regressions.json` and replayed forever), and the invariants checked after every command.
 *
 * The model does not reuse the runtime's code: it predicts each outcome from the policy table and a
 * map of which copies exist: reversible when a verified copy exists, the handle resolves and the store
 * tells pruned from absent; otherwise lossy only on `accept_lossy: true` where the kind allows it.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { verifyAuditChain } from "../../src/audit.js";
import type { DirectiveOutcome } from "../../src/outcome.js";
import type { BackingStore } from "../../src/stores/store.js";
import { ManualClock, type PruneMode } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { freedSpanProblems, HOUR, KIND_NAMES, KINDS, RETENTION_MS, type Kind } from "./helpers.js";
import { immediate } from "../window/immediate.js";
import { refSpanId } from "../../src/window/refs.js";

/** One step, as data. `pick` chooses among existing spans modulo their count; `ghost` aims past them. */
export type Op =
  | { readonly t: "append"; readonly kind: Kind; readonly text: string }
  | { readonly t: "prune"; readonly pick: number; readonly ghost: boolean; readonly mode: PruneMode; readonly lossy: boolean | null; readonly digest: string }
  | { readonly t: "recall"; readonly pick: number; readonly by: "span" | "handle" | "ghost"; readonly gen: number }
  | { readonly t: "advance"; readonly ms: number }
  | { readonly t: "rotate" }
  | { readonly t: "crash" };

export const LOSSY_BUDGET = 2;

// ---------------------------------------------------------------------------------------------------
// The reference model

interface MSpan {
  readonly id: string;
  readonly kind: Kind;
  readonly text: string;
  state: "live" | "pruned" | "tombstone";
}

interface MRecord {
  readonly handle: string;
  createdAt: number;
  rotated: boolean;
  held: boolean;
}

interface Gen {
  readonly session: string;
  readonly spans: MSpan[];
  /** The store's copy of each backed span, by span id. */
  readonly records: Map<string, MRecord>;
  nextHandle: number;
  lossyUsed: number;
  /** Directives applied in this session: each must leave exactly one audit record. */
  directives: number;
}

export interface Model {
  now: number;
  readonly gens: Gen[];
  readonly canCrash: boolean;
}

export interface Real {
  readonly clock: ManualClock;
  store: BackingStore;
  /** The window doing new work (the last generation's session). */
  win: ContextWindow;
  /** Windows rebuilt over earlier sessions after a crash: they only recall. */
  readonly readers: ContextWindow[];
  /** Closes the store as a crash would and opens it again; undefined for stores that live in memory. */
  readonly reopen: (() => Promise<BackingStore>) | undefined;
  /** The window applies decisions at compaction points (the default) instead of at once. */
  readonly deferred: boolean;
}

const START = 10 * HOUR;

function newGen(n: number): Gen {
  return { session: `sess-${n}`, spans: [], records: new Map(), nextHandle: 1, lossyUsed: 0, directives: 0 };
}

/**
 * A window of the model's kinds. Immediate by default, so its rendering is the model's state after every
 * command; `deferred` uses compaction points (the smallest threshold), where the rendering lags the decisions.
 */
export function makeWindow(session: string, store: BackingStore, clock: ManualClock, deferred = false): ContextWindow {
  const options = { session, clock, stores: { log: store }, kinds: KINDS };
  if (deferred) return new ContextWindow({ ...options, limits: { lossyBudget: LOSSY_BUDGET, compaction: { minFreedTokens: 1_024, atTokens: null } } });
  return new ContextWindow(immediate({ ...options, limits: { lossyBudget: LOSSY_BUDGET } }));
}

export function initial(store: BackingStore, clock: ManualClock, reopen: Real["reopen"], deferred = false): { model: Model; real: Real } {
  return {
    model: { now: START, gens: [newGen(0)], canCrash: reopen !== undefined },
    real: { clock, store, win: makeWindow("sess-0", store, clock, deferred), readers: [], reopen, deferred },
  };
}

export const START_TIME = START;

type Predicted =
  | { status: "reversible"; handle: string }
  | { status: "lossy" }
  | { status: "rejected"; reason: string }
  | { status: "found"; text: string; source: "window" | "store" }
  | { status: "pruned-unrecoverable" }
  | { status: "lost" }
  | { status: "unknown" };

const current = (m: Model): Gen => m.gens[m.gens.length - 1]!;

function predictPrune(m: Model, g: Gen, span: MSpan | undefined, op: Extract<Op, { t: "prune" }>): Predicted {
  if (span === undefined) return { status: "rejected", reason: "unknown-span" };
  if (span.state !== "live") return { status: "rejected", reason: "already-pruned" };
  const k = KINDS[span.kind];
  if (!(k.modes as readonly PruneMode[]).includes(op.mode)) return { status: "rejected", reason: "mode-not-allowed" };
  const rec = g.records.get(span.id);
  if (k.store !== null && rec !== undefined) {
    if (!rec.rotated) return { status: "reversible", handle: rec.handle };
    if ("repersist" in k && k.repersist) return { status: "reversible", handle: rec.handle };
  }
  if (op.lossy !== true) return { status: "rejected", reason: "not-reversible" };
  if (k.lossy === "forbid") return { status: "rejected", reason: "lossy-forbidden" };
  if (g.lossyUsed >= LOSSY_BUDGET) return { status: "rejected", reason: "lossy-budget" };
  return { status: "lossy" };
}

function applyPrune(m: Model, g: Gen, span: MSpan | undefined, p: Predicted): void {
  if (span === undefined) return;
  if (p.status === "reversible") {
    const rec = g.records.get(span.id)!;
    if (rec.rotated) Object.assign(rec, { rotated: false, createdAt: m.now });
    rec.held = true;
    span.state = "pruned";
  } else if (p.status === "lossy") {
    g.lossyUsed++;
    span.state = "tombstone";
  }
}

/** What recall must answer in a live window (`reader` false) or in one rebuilt after a crash. */
function predictRecall(g: Gen, query: string, reader: boolean): Predicted {
  const span = g.spans.find((s) => s.id === query) ?? g.spans.find((s) => g.records.get(s.id)?.handle === query);
  if (span === undefined) return { status: "unknown" };
  const rec = g.records.get(span.id);
  if (reader) {
    // Unbacked kinds lived only in the crashed process: their bytes died with it, but a tombstone's
    // lossy record is in the audit log and every span is in the session's registry, so the rebuilt window
    // still knows the span existed: pruned, or lost in the restart — never "unknown".
    if (rec === undefined) return span.state === "tombstone" ? { status: "pruned-unrecoverable" } : { status: "lost" };
    return rec.rotated ? { status: "pruned-unrecoverable" } : { status: "found", text: span.text, source: "store" };
  }
  if (span.state === "live") {
    // A handle of a live span resolves through the window's own entry.
    return { status: "found", text: span.text, source: "window" };
  }
  if (span.state === "tombstone") return { status: "pruned-unrecoverable" };
  return rec !== undefined && !rec.rotated ? { status: "found", text: span.text, source: "store" } : { status: "pruned-unrecoverable" };
}

// ---------------------------------------------------------------------------------------------------
// Checking the real system against the model

function expectOutcome(out: DirectiveOutcome, p: Predicted, what: string): void {
  expect(out.status, `${what}: ${JSON.stringify(out).slice(0, 400)}`).toBe(p.status);
  if (p.status === "reversible") expect(out).toMatchObject({ handle: p.handle });
  if (p.status === "rejected") expect(out).toMatchObject({ reason: p.reason });
  if (p.status === "found" && out.status === "found") {
    // Byte-identical, not merely equal after normalisation.
    expect(out.text, `${what}: recalled text differs from what the window held`).toBe(p.text);
    expect(out.source).toBe(p.source);
  }
}

/** Invariants that hold after every command, whatever it was. */
async function checkInvariants(m: Model, r: Real): Promise<void> {
  const g = current(m);
  const shown = r.win.entries().map((e) => (e.state === "live" ? `${e.span.id}:live` : `${e.spanId}:${e.state}`));
  if (!r.deferred) {
    // The window shows exactly what the model says, position by position.
    expect(shown).toEqual(g.spans.map((s) => `${s.id}:${s.state}`));
  } else {
    // Decided now, shown at a compaction point: the decided state is the model's, and what is shown is the
    // model's or an earlier state of it (a span shown pruned is pruned; one shown live may be pending).
    expect(g.spans.map((s) => `${s.id}:${r.win.span(s.id) === undefined ? "gone" : "live"}`))
      .toEqual(g.spans.map((s) => `${s.id}:${s.state === "live" ? "live" : "gone"}`));
    expect(shown.filter((e) => !e.endsWith(":live"))).toEqual(g.spans.filter((s) => s.state !== "live" && shown.includes(`${s.id}:${s.state}`)).map((s) => `${s.id}:${s.state}`));
    expect(shown.map((e) => e.split(":")[0])).toEqual(g.spans.map((s) => s.id));
    // The window's own compaction records are written with its next record; write them now.
    await r.win.auditLog();
  }
  // Every freed span has a verified handle (resolving to byte-identical text) or a tombstone.
  const originals = new Map(g.spans.map((s) => [s.id, s.text]));
  expect(await freedSpanProblems(r.win, r.store, originals)).toEqual([]);
  // Every directive has exactly one audit record (the window's own compaction points aside), and each
  // session's chain verifies.
  for (const gen of m.gens) {
    const log = await r.store.auditLog(gen.session);
    expect(log.filter((rec) => !(rec.op === "compact" && rec.directive === null)).length, `audit records of ${gen.session}`).toBe(gen.directives);
    expect(verifyAuditChain(log)).toBeNull();
  }
  expect(r.win.pendingAudit).toBe(0);
}

// ---------------------------------------------------------------------------------------------------
// Commands

export class OpCommand implements fc.AsyncCommand<Model, Real> {
  readonly op: Op;
  constructor(op: Op) {
    this.op = op;
  }

  check(m: Readonly<Model>): boolean {
    return this.op.t !== "crash" || m.canCrash;
  }

  async run(m: Model, r: Real): Promise<void> {
    const op = this.op;
    const g = current(m);
    switch (op.t) {
      case "append": {
        const id = refSpanId(await r.win.append({ kind: op.kind, text: op.text }));
        // The window makes text well-formed on append (a lone surrogate has no UTF-8 form to store).
        const span: MSpan = { id, kind: op.kind, text: op.text.toWellFormed(), state: "live" };
        expect(id).toBe(`span_${g.spans.length + 1}`);
        g.spans.push(span);
        if (KINDS[op.kind].store !== null) {
          g.records.set(id, { handle: `#${g.nextHandle++}`, createdAt: m.now, rotated: false, held: false });
        }
        break;
      }
      case "prune": {
        const span = op.ghost || g.spans.length === 0 ? undefined : g.spans[op.pick % g.spans.length];
        const id = span?.id ?? `span_${g.spans.length + 1 + (op.pick % 3)}`;
        const directive: Record<string, unknown> = { op: "prune", span_id: id, mode: op.mode };
        if (op.mode === "summarize") directive["digest"] = op.digest;
        if (op.lossy !== null) directive["accept_lossy"] = op.lossy;
        const p = predictPrune(m, g, span, op);
        const out = await r.win.applyDirective(directive);
        g.directives++;
        expectOutcome(out, p, `prune ${JSON.stringify(directive)}`);
        applyPrune(m, g, span, p);
        const last = (await r.store.auditLog(g.session)).at(-1);
        expect(last).toMatchObject({ op: "prune", status: p.status, spanId: id });
        break;
      }
      case "recall": {
        const gi = op.gen % m.gens.length;
        const gen = m.gens[gi]!;
        const reader = gi !== m.gens.length - 1;
        const span = gen.spans.length === 0 ? undefined : gen.spans[op.pick % gen.spans.length];
        const handle = span === undefined ? undefined : gen.records.get(span.id)?.handle;
        const query = op.by === "ghost" || span === undefined
          ? (op.pick % 2 === 0 ? `span_${gen.spans.length + 1}` : `#${gen.nextHandle + (op.pick % 5)}`)
          : op.by === "handle" && handle !== undefined ? handle : span.id;
        const win = reader ? r.readers[gi]! : r.win;
        const p = predictRecall(gen, query, reader);
        const out = await win.applyDirective({ op: "recall", span_id: query });
        gen.directives++;
        expectOutcome(out, p, `recall ${query} in ${gen.session}${reader ? " after a crash" : ""}`);
        break;
      }
      case "advance":
        r.clock.advance(op.ms);
        m.now += op.ms;
        break;
      case "rotate": {
        const report = await r.store.rotate();
        let rotated = 0;
        let kept = 0;
        for (const gen of m.gens) {
          for (const rec of gen.records.values()) {
            if (rec.rotated || rec.createdAt + RETENTION_MS > m.now) continue;
            if (rec.held) kept++;
            else {
              rec.rotated = true;
              rotated++;
            }
          }
        }
        expect(report).toEqual({ rotated, keptByHold: kept });
        // A held copy is never deleted by rotation.
        for (const gen of m.gens) {
          for (const s of gen.spans) {
            const rec = gen.records.get(s.id);
            if (rec?.held) expect(await r.store.lookup(gen.session, { handle: rec.handle })).toMatchObject({ status: "found", text: s.text });
          }
        }
        break;
      }
      case "crash": {
        r.store = await r.reopen!();
        const next = newGen(m.gens.length);
        m.gens.push(next);
        r.readers.length = 0;
        for (const gen of m.gens.slice(0, -1)) r.readers.push(makeWindow(gen.session, r.store, r.clock, r.deferred));
        r.win = makeWindow(next.session, r.store, r.clock, r.deferred);
        break;
      }
    }
    await checkInvariants(m, r);
  }

  toString(): string {
    return JSON.stringify(this.op);
  }
}

// ---------------------------------------------------------------------------------------------------
// Generators

const line = fc.constantFrom(
  "GET /api/search -> 200 in 12ms",
  "request req_8f3a2c91 failed: E1042",
  "at Object.<anonymous> (/srv/app.js:14:3)",
  "<|endoftext|>",
  "lone \ud800 surrogate",
  "naïve ünïcode ✓ 🚀 \u200d\u0301",
  "\r\n",
  "",
);
// Lone surrogates ("\ud800") have no UTF-8 form; the window makes text well-formed on append so every
// store keeps the same code units. The regression case "lone surrogate" in regressions.json pins it.
export const textArb: fc.Arbitrary<string> = fc.oneof(
  fc.array(line, { maxLength: 12 }).map((ls) => ls.join("\n")),
  fc.string({ maxLength: 120 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
);

export function opArbs(withCrash: boolean): Array<fc.Arbitrary<OpCommand>> {
  const ops: Array<fc.Arbitrary<Op>> = [
    fc.record({ t: fc.constant("append" as const), kind: fc.constantFrom(...KIND_NAMES), text: textArb }),
    fc.record({ t: fc.constant("append" as const), kind: fc.constantFrom(...KIND_NAMES), text: textArb }),
    fc.record({
      t: fc.constant("prune" as const), pick: fc.nat(), ghost: fc.integer({ min: 0, max: 11 }).map((n) => n === 0),
      mode: fc.constantFrom<PruneMode>("drop", "summarize", "compress"), lossy: fc.constantFrom(true, false, null),
      digest: fc.string({ minLength: 1, maxLength: 40 }),
    }),
    fc.record({ t: fc.constant("recall" as const), pick: fc.nat(), by: fc.constantFrom("span" as const, "handle" as const, "ghost" as const), gen: fc.nat() }),
    fc.record({ t: fc.constant("advance" as const), ms: fc.constantFrom(0, 1, HOUR / 2, RETENTION_MS - 1, RETENTION_MS, 3 * HOUR) }),
    fc.record({ t: fc.constant("rotate" as const) }),
  ];
  if (withCrash) ops.push(fc.constant({ t: "crash" as const }));
  return ops.map((a) => a.map((op) => new OpCommand(op)));
}
