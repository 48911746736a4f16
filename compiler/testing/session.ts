/**
 * A scripted session against a compiled policy, on the real runtime: a `ContextWindow` over in-memory
 * stores opened with the policy's declared retention, holds, provenance and writability, a manual clock,
 * and the policy's session limits, as its generated guard would build them. Steps are data (append, prune,
 * a model directive, rotate, advance the clock, recall, search, compact, render), so a test reads as the
 * session it scripts; the run returns every step's outcome and what the window renders at the end.
 *
 * The window applies decided prunes at compaction points (the policy's `session.compaction`); what the
 * run renders is taken after `compact()`, so it shows every decision made.
 */
import { formatDuration } from "../../src/policy/durations.js";
import type { StoreDeclaration } from "../../src/policy/stores.js";
import { ContextWindow, ManualClock, openStores, refSpanId, type BackingStore, type DirectiveOutcome, type InvalidOutcome, type PruneOutcome, type RecallOutcome, type SearchOutcome, type SessionLimits } from "../../src/index.js";
import type { RotateReport } from "../../src/stores/store.js";
import type { PruneMode, SpanMessage, SpanRef } from "../../src/types.js";
import type { CompactOutcome } from "../../src/outcome.js";
import { firstLoosening, type Fate } from "../analysis/fate.js";
import { lowerToRuntime } from "../ir/lower.js";
import { PolicyExpectationError } from "./errors.js";
import type { CompiledPolicy } from "./policy.js";

/**
 * One step of a scripted session. Spans are named by the label an `append` gave them (`as`), or by span id
 * (`span_3`); directives are the model's JSON and name span ids.
 */
export type SessionStep =
  | { readonly append: string; readonly text: string; readonly as?: string; readonly group?: string; readonly message?: SpanMessage }
  /** Moves the clock forward this many milliseconds. */
  | { readonly advance: number }
  /** Runs the retention job of one store, or of every store (`true`): copies past retention go, unless held. */
  | { readonly rotate: string | true }
  /** The typed path (`tryPrune`): never throws; the outcome is the step's result. */
  | { readonly prune: string; readonly mode: PruneMode; readonly digest?: string; readonly acceptLossy?: boolean }
  /** The untrusted path: model output, as JSON text or a value (`applyDirective`). */
  | { readonly directive: unknown }
  | { readonly recall: string }
  | { readonly search: string; readonly regex?: boolean }
  /** A compaction point: decided prunes applied to what the model reads. */
  | { readonly compact: true }
  /** What the window renders at this point (after a compaction point). */
  | { readonly render: true };

interface Done {
  /** The step's index in the script. */
  readonly step: number;
  /** Milliseconds since the session started, when the step ran. */
  readonly atMs: number;
}

export type StepResult =
  | (Done & { readonly op: "append"; readonly spanId: string; readonly kind: string; readonly label: string | null })
  | (Done & { readonly op: "advance"; readonly byMs: number })
  | (Done & { readonly op: "rotate"; readonly reports: Readonly<Record<string, RotateReport>> })
  | (Done & { readonly op: "prune"; readonly outcome: PruneOutcome })
  | (Done & { readonly op: "directive"; readonly outcome: DirectiveOutcome | InvalidOutcome })
  | (Done & { readonly op: "recall"; readonly outcome: RecallOutcome })
  | (Done & { readonly op: "search"; readonly outcome: SearchOutcome | InvalidOutcome })
  | (Done & { readonly op: "compact"; readonly outcome: CompactOutcome })
  | (Done & { readonly op: "render"; readonly text: string });

export interface SessionOptions {
  /** The session id; default `policy-test`. */
  readonly session?: string;
  /** The clock's start (ms since the epoch); default 2026-01-01T00:00:00Z, so rendered times do not depend on when the test runs. */
  readonly start?: number;
  /** The window's token limit (`limits.maxTokens`), which a policy does not set. */
  readonly maxTokens?: number;
}

const DEFAULT_START = Date.UTC(2026, 0, 1);

/** A session that ran: every step's result, the window and its stores as the script left them. */
export class SessionRun {
  readonly #labels: ReadonlyMap<string, SpanRef>;
  readonly #kinds: ReadonlyMap<string, string>;

  constructor(
    readonly policy: CompiledPolicy,
    /** One per step, in order. */
    readonly results: readonly StepResult[],
    /** What the window renders after the last step (after a compaction point). */
    readonly rendered: string,
    readonly window: ContextWindow,
    readonly stores: Readonly<Record<string, BackingStore>>,
    readonly clock: ManualClock,
    labels: ReadonlyMap<string, SpanRef>,
    kinds: ReadonlyMap<string, string>,
  ) {
    this.#labels = labels;
    this.#kinds = kinds;
  }

  /** Every prune's outcome, typed or by directive, in order. */
  get outcomes(): readonly (PruneOutcome | DirectiveOutcome | InvalidOutcome)[] {
    return this.results.flatMap((r) => (r.op === "prune" || r.op === "directive" ? [r.outcome] : []));
  }

  /** The span id of a label (or a span id, as it is). */
  spanId(span: string): string {
    return refSpanId(this.#labels.get(span) ?? span);
  }

  /** Recall, now, of a span by label or id. */
  recall(span: string): Promise<RecallOutcome> {
    return this.window.recall(this.spanId(span));
  }

  /**
   * Throws unless every span named is recoverable now: live, or pruned with a copy recall reads back
   * byte-identical. The message says what recall answers, how the span was pruned, and the policy's reason
   * (with the first prune of its kind the policy makes irreversible).
   */
  async expectRecoverable(...spans: readonly string[]): Promise<void> {
    const failures: string[] = [];
    for (const span of spans) {
      const r = await this.recall(span);
      if (r.status === "found") continue;
      failures.push(this.#explain(span, r));
    }
    if (failures.length > 0) throw new PolicyExpectationError(`${this.policy.name}: expected ${spans.map((s) => `\`${s}\``).join(", ")} recoverable at the end of the session, but\n${failures.map((f) => `  - ${f}`).join("\n")}`);
  }

  /**
   * Throws unless every span named is known to be gone: recall answers `pruned-unrecoverable` (a
   * tombstone, or a copy lost), never "never existed".
   */
  async expectUnrecoverable(...spans: readonly string[]): Promise<void> {
    const failures: string[] = [];
    for (const span of spans) {
      const r = await this.recall(span);
      if (r.status !== "pruned-unrecoverable") failures.push(`\`${span}\` (${this.spanId(span)}): recall answers ${r.status}`);
    }
    if (failures.length > 0) throw new PolicyExpectationError(`${this.policy.name}: expected ${spans.map((s) => `\`${s}\``).join(", ")} pruned and unrecoverable, but\n${failures.map((f) => `  - ${f}`).join("\n")}`);
  }

  #explain(span: string, r: RecallOutcome): string {
    const id = this.spanId(span);
    const kind = this.#kinds.get(id);
    const answer = `${r.status}${r.status === "pruned-unrecoverable" ? ` (${r.reason})` : ""}`;
    const pruned = [...this.results].reverse().find((x) => (x.op === "prune" || x.op === "directive") && "spanId" in x.outcome && x.outcome.spanId === id);
    const appended = this.results.find((x) => x.op === "append" && x.spanId === id);
    let how = "";
    if (pruned && (pruned.op === "prune" || pruned.op === "directive") && "status" in pruned.outcome) {
      const age = appended ? pruned.atMs - appended.atMs : null;
      how = ` It was pruned at step ${pruned.step}${age === null ? "" : `, ${formatDuration(age)} after its append`}: ${pruned.outcome.status}${"line" in pruned.outcome ? ` (\`${pruned.outcome.line}\`)` : ""}.`;
    }
    if (kind === undefined) return `\`${span}\` (${id}): recall answers ${answer}.${how}`;
    const t = this.policy.timeline(kind);
    const lossy = firstLoosening(ALWAYS, t.fate, t.sessionMs);
    const mode = this.policy.ir.kinds.find((k) => k.name === kind)?.modes[0] ?? "drop";
    const counter = lossy ? ` The first prune the policy makes lossy: a \`${mode}\` of \`${kind}\` ${lossy.ageMs === 0 ? "right after its append" : `${formatDuration(lossy.ageMs)} after its append`}.` : "";
    return `\`${span}\` (${id}, ${kind}): recall answers ${answer}.${how} The policy: ${kind} is ${t.why}.${counter}`;
  }
}

const ALWAYS: Fate = { fate: "always-reversible", why: "" };

/** Runs `steps` against `policy` (see `CompiledPolicy.session`). Throws `TypeError` on a step that names no span or store. */
export async function runSession(policy: CompiledPolicy, steps: readonly SessionStep[], options: SessionOptions = {}): Promise<SessionRun> {
  const lowered = lowerToRuntime(policy.ir);
  const start = options.start ?? DEFAULT_START;
  const clock = new ManualClock(start);
  const declarations: Record<string, StoreDeclaration> = Object.fromEntries(
    lowered.stores.map((s) => [s.name, { engine: s.engine, retentionMs: s.retentionMs, holds: s.holds, distinguishesAbsent: s.distinguishesAbsent, writable: s.writable }]),
  );
  const stores = await openStores(declarations, { memory: true, clock });
  const limits: SessionLimits = { ...lowered.policy.session, ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }) };
  const first = lowered.stores[0]?.name;
  const window = new ContextWindow<string>({
    session: options.session ?? "policy-test",
    kinds: lowered.policy.kinds,
    stores,
    clock,
    limits,
    declarations,
    pins: lowered.policy.pins ?? [],
    ...(lowered.policy.tombstone === undefined ? {} : { tombstone: lowered.policy.tombstone }),
    ...(first === undefined ? {} : { auditStore: first }),
  });
  const labels = new Map<string, SpanRef>();
  const kinds = new Map<string, string>();
  const results: StepResult[] = [];
  const ref = (span: string, i: number): SpanRef | string => {
    const r = labels.get(span);
    if (r !== undefined) return r;
    // A span named by id is looked up through the window, never cast; an id it does not hold goes to the
    // window as the model would name it, and is refused there as unknown.
    if (/^span_\d+$/.test(span)) {
      try {
        return window.ref(span);
      } catch {
        return span;
      }
    }
    throw new TypeError(`session step ${i}: no span labelled ${JSON.stringify(span)} (label an append with \`as\`, or name a span id such as span_1)`);
  };
  const render = async () => {
    await window.compact();
    return window.render();
  };
  for (const [i, step] of steps.entries()) {
    const done: Done = { step: i, atMs: clock.now() - start };
    if ("append" in step) {
      const r = await window.append({ kind: step.append, text: step.text, ...(step.group === undefined ? {} : { group: step.group }), ...(step.message === undefined ? {} : { message: step.message }) });
      if (step.as !== undefined) labels.set(step.as, r);
      kinds.set(refSpanId(r), step.append);
      results.push({ ...done, op: "append", spanId: refSpanId(r), kind: step.append, label: step.as ?? null });
    } else if ("advance" in step) {
      clock.advance(step.advance);
      results.push({ ...done, op: "advance", byMs: step.advance });
    } else if ("rotate" in step) {
      const names = step.rotate === true ? Object.keys(stores) : [step.rotate];
      const reports: Record<string, RotateReport> = {};
      for (const name of names) {
        const store = stores[name];
        if (!store) throw new TypeError(`session step ${i}: ${policy.name} has no store ${JSON.stringify(name)}; its stores are ${Object.keys(stores).join(", ") || "none"}`);
        reports[name] = await store.rotate();
      }
      results.push({ ...done, op: "rotate", reports });
    } else if ("prune" in step) {
      const span = ref(step.prune, i);
      const optional = { ...(step.digest === undefined ? {} : { digest: step.digest }), ...(step.acceptLossy === undefined ? {} : { acceptLossy: step.acceptLossy }) };
      // A prune directive answers with a prune's outcome.
      const outcome = !span.includes("@")
        ? (await window.applyDirective({ op: "prune", span_id: span, mode: step.mode, ...(optional.digest === undefined ? {} : { digest: optional.digest }), ...(optional.acceptLossy === undefined ? {} : { accept_lossy: optional.acceptLossy }) })) as PruneOutcome
        : await window.tryPrune({ span: span as SpanRef, mode: step.mode, ...optional });
      results.push({ ...done, op: "prune", outcome });
    } else if ("directive" in step) {
      results.push({ ...done, op: "directive", outcome: await window.applyDirective(step.directive) });
    } else if ("recall" in step) {
      results.push({ ...done, op: "recall", outcome: await window.recall(String(ref(step.recall, i))) });
    } else if ("search" in step) {
      results.push({ ...done, op: "search", outcome: await window.search({ query: step.search, ...(step.regex === undefined ? {} : { regex: step.regex }) }) });
    } else if ("compact" in step) {
      results.push({ ...done, op: "compact", outcome: await window.compact() });
    } else {
      results.push({ ...done, op: "render", text: await render() });
    }
  }
  return new SessionRun(policy, results, await render(), window, stores, clock, labels, kinds);
}
