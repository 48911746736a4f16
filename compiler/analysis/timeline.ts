/**
 * A kind's fate over the session, as a timeline: for each age of a span (the time since its append), what
 * a prune of it in an allowed mode becomes. `explain --format html|markdown` draws it, `diff` compares two,
 * and the policy tests (`pruneguard-cli/testing`) answer from it.
 *
 * Read off `fate.ts`: the outcome at each age where it can change (`changeAges`, `outcomeAt`), so the
 * timeline, `explain`, the types and the overlay rule cannot disagree. One thing is added here: a session
 * whose lossy budget is 0 can commit no loss, so a prune that would be lossy is rejected (as the runtime
 * does, and as `requestShapeOf` types it).
 */
import { formatDuration } from "../../src/policy/durations.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";
import { changeAges, describeFate, fateOf, outcomeAt, type Fate, type Outcome } from "./fate.js";

/**
 * What a prune is at some age of its span: reversible for the session; reversible only until its copy
 * ends (a store without holds); executed only as a lossy commitment with `accept_lossy`; never executed.
 */
export type Phase = "reversible" | "reversible-until" | "lossy-with-flag" | "never";

export const PHASES: readonly Phase[] = ["reversible", "reversible-until", "lossy-with-flag", "never"];

/** A phase in a few words, for tables and legends. */
export function describePhase(p: Phase): string {
  switch (p) {
    case "reversible":
      return "reversible";
    case "reversible-until":
      return "reversible until its copy expires";
    case "lossy-with-flag":
      return "lossy only with flag";
    case "never":
      return "never";
  }
}

export interface Segment {
  readonly fromMs: number;
  /** `null`: to the end of a session that has no maximum length. */
  readonly toMs: number | null;
  readonly phase: Phase;
  /** What the overlay rule compares (`loosens` in fate.ts). */
  readonly outcome: Outcome;
}

export interface Timeline {
  readonly kind: string;
  readonly fate: Fate;
  /** The policy's longest session; `null` when it sets none. */
  readonly sessionMs: number | null;
  /** Where the segments end: the session's length, unless asked for another (`untilMs`). */
  readonly untilMs: number | null;
  /** From age 0, contiguous, adjacent segments in different phases. */
  readonly segments: readonly Segment[];
  /** Why: the fate's reason, and the budget when it turns a lossy prune into a rejected one. */
  readonly why: string;
}

/** What a prune of the kind is at `ageMs` after its span's append. */
export function outcomeOf(fate: Fate, policy: PolicyIR, ageMs: number): Outcome {
  const o = outcomeAt(fate, ageMs);
  return o === "lossy" && policy.session.lossyBudget === 0 ? "rejected" : o;
}

export function phaseOf(fate: Fate, outcome: Outcome): Phase {
  if (outcome === "lossy") return "lossy-with-flag";
  if (outcome === "rejected") return "never";
  return fate.fate === "reversible-until-retention" ? "reversible-until" : "reversible";
}

/**
 * The kind's timeline under the policy, from age 0 to the session's length (or `untilMs`: `null` for no end,
 * which a comparison with a longer session needs).
 */
export function timelineOf(kind: KindIR, policy: PolicyIR, options: { readonly untilMs?: number | null } = {}): Timeline {
  const fate = fateOf(kind, policy);
  const sessionMs = policy.session.maxLengthMs;
  const untilMs = options.untilMs === undefined ? sessionMs : options.untilMs;
  const starts = [...new Set([0, ...changeAges(fate)])].filter((a) => untilMs === null || a < untilMs).sort((a, b) => a - b);
  const segments: Segment[] = [];
  for (const [i, fromMs] of starts.entries()) {
    const outcome = outcomeOf(fate, policy, fromMs);
    const phase = phaseOf(fate, outcome);
    const toMs = starts[i + 1] ?? untilMs;
    const last = segments.at(-1);
    if (last && last.phase === phase) segments[segments.length - 1] = { ...last, toMs };
    else segments.push({ fromMs, toMs, phase, outcome });
  }
  const budget = policy.session.lossyBudget === 0 && segments.some((s) => outcomeAt(fate, s.fromMs) === "lossy") ? "; the session's lossy budget is 0, so no prune may be lossy" : "";
  return { kind: kind.name, fate, sessionMs, untilMs, segments, why: `${describeFate(fate)}: ${fate.why.replaceAll("`", "")}${budget}` };
}

/** The segment that holds `ageMs` (the last one for an age past the timeline's end). */
export function segmentAt(t: Timeline, ageMs: number): Segment {
  return t.segments.find((s) => ageMs >= s.fromMs && (s.toMs === null || ageMs < s.toMs)) ?? t.segments.at(-1)!;
}

/** `0–2h`, `2h–8h`, `2h on` (no end). */
export function describeSpan(fromMs: number, toMs: number | null): string {
  const at = (ms: number) => (ms === 0 ? "0" : formatDuration(ms));
  return toMs === null ? `${at(fromMs)} on` : `${at(fromMs)}–${at(toMs)}`;
}

/** The timeline in words: `0–2h reversible; 2h–8h lossy only with flag`. */
export function describeTimeline(t: Timeline): string {
  return t.segments.map((s) => `${describeSpan(s.fromMs, s.toMs)} ${describePhase(s.phase)}`).join("; ");
}
