/**
 * A policy compiled for a test: compiled from source as the CLI compiles it (statically, never run), and
 * asked what it decides — each kind's fate at an age of its span and a session length, what a prune
 * request would be — with expectations that throw `PolicyExpectationError` saying why, and a scripted
 * session against the real runtime (`session.ts`).
 *
 * Every answer is read off the compiler's own analysis (`analysis/fate.ts`, `analysis/timeline.ts`) and
 * every "no looser than" off the overlay rule (`diff/`), so a test, `explain` and `compile` cannot disagree.
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { formatDuration } from "../../src/policy/durations.js";
import type { PruneMode } from "../../src/types.js";
import { firstLoosening, type Fate } from "../analysis/fate.js";
import { requestShapeOf, type RequestShape } from "../analysis/requests.js";
import { describePhase, describeSpan, segmentAt, timelineOf, type Phase, type Segment, type Timeline } from "../analysis/timeline.js";
import { isError, type Diagnostic } from "../diagnostics/diagnostic.js";
import { formatDiagnostics } from "../diagnostics/format.js";
import { diffPolicy, type Labels, type PolicyDiff } from "../diff/index.js";
import { compilePolicies } from "../index.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";
import { PolicyCompileError, PolicyExpectationError } from "./errors.js";
import { runSession, type SessionOptions, type SessionRun, type SessionStep } from "./session.js";

/** A policy file (a path relative to `cwd`, or a file URL), or files in memory with the entry to compile. */
export type PolicySource = string | URL | { readonly files: Readonly<Record<string, string>>; readonly entry: string };

export interface CompilePolicyOptions {
  /** What relative paths are relative to; default `process.cwd()` (`/` for files in memory). */
  readonly cwd?: string;
  /** The only folder files are read from, as `--root`; default `cwd`. */
  readonly root?: string;
}

/** Options of the questions that depend on how long sessions last. */
export interface SessionLength {
  /** Ask as if sessions lasted up to this long (milliseconds; `null`: no limit); default: the policy's `session.maxLength`. */
  readonly sessionLength?: number | null;
}

/** What a prune is at one age of its span: its phase, the age range the phase holds for, and why. */
export interface FateAt {
  readonly kind: string;
  readonly ageMs: number;
  readonly phase: Phase;
  readonly fromMs: number;
  readonly toMs: number | null;
  readonly why: string;
}

/** A prune to ask about: a kind, a mode, the span's age, and whether it accepts a loss. */
export interface PruneQuestion extends SessionLength {
  readonly kind: string;
  readonly mode: PruneMode;
  /** Milliseconds after the span's append; default 0. */
  readonly age?: number;
  readonly acceptLossy?: boolean;
}

/** What the policy makes of a prune, decided in advance (the runtime still checks the copy when it runs). */
export type PruneAnswer =
  | {
      readonly outcome: "reversible";
      /** `session`: the copy is held for the session; `copy-retention`: only until the copy's retention ends (a store without holds). */
      readonly keptFor: "session" | "copy-retention";
      readonly why: string;
    }
  /** Executed only as a lossy commitment: a tombstone takes the span's place. */
  | { readonly outcome: "lossy"; readonly why: string }
  | {
      readonly outcome: "rejected";
      readonly reason: "mode-not-allowed" | "needs-accept-lossy" | "lossy-forbidden" | "no-lossy-budget";
      readonly why: string;
    };

/**
 * Compiles one policy file (and the bases it extends) from source, without running it, and returns what
 * it decides. Throws `PolicyCompileError`, with the compiler's diagnostics, when it has errors.
 *
 * When to use: in a policy test, once per file (compiling takes a few hundred milliseconds; the answers
 * after that are pure). Gotcha: paths are relative to the working directory, which is the package root
 * under `vitest`, `jest` and `node --test` run from there; pass `cwd` otherwise.
 */
export function compilePolicy(source: PolicySource, options: CompilePolicyOptions = {}): CompiledPolicy {
  const root = options.root === undefined ? {} : { root: options.root };
  let r: ReturnType<typeof compilePolicies>;
  let entry: string;
  let cwd: string;
  if (typeof source === "object" && !(source instanceof URL)) {
    cwd = options.cwd ?? "/";
    entry = path.posix.resolve(cwd, source.entry);
    r = compilePolicies({ files: source.files, entries: [source.entry] }, { cwd, ...root });
  } else {
    cwd = options.cwd ?? process.cwd();
    entry = path.resolve(cwd, source instanceof URL ? fileURLToPath(source) : source).split(path.sep).join("/");
    r = compilePolicies([entry], { cwd, ...root });
  }
  const shown = path.relative(cwd, entry).split(path.sep).join("/") || entry;
  if (r.hasErrors) {
    throw new PolicyCompileError(`${shown} does not compile:\n${formatDiagnostics(r.diagnostics, { sources: r.sources, color: false })}`, r.diagnostics);
  }
  const byFile = (file: string) => r.policies.find((p) => path.posix.resolve(cwd.split(path.sep).join("/"), p.file) === file);
  const ir = byFile(entry);
  if (!ir) throw new PolicyCompileError(`${shown} has no policy (a default export of definePolicy or extendPolicy)`, r.diagnostics);
  const warnings = r.diagnostics.filter((d) => !isError(d));
  const compiled = (p: PolicyIR): CompiledPolicy => {
    const baseIR = p.extends ? r.policies.find((b) => b.file === p.extends!.file) : undefined;
    return new CompiledPolicy(p, baseIR ? compiled(baseIR) : null, warnings.filter((w) => w.location?.file === p.file));
  };
  return compiled(ir);
}

/** The fate a test asks "always reversible" of: what `expectReversible` compares a kind's fate with. */
const ALWAYS_REVERSIBLE: Fate = { fate: "always-reversible", why: "the test expects every prune to be reversible" };

/** One compiled policy: its IR, and answers read off the compiler's analysis. */
export class CompiledPolicy {
  readonly name: string;
  /** The policy file, relative to the working directory it was compiled in. */
  readonly file: string;
  readonly ir: PolicyIR;
  /** The warnings the compiler gave for this policy's own file. */
  readonly warnings: readonly Diagnostic[];
  /** The span kinds, in policy order. */
  readonly kinds: readonly string[];

  constructor(
    ir: PolicyIR,
    /** The policy an overlay extends, compiled with it; `null` for an organisation policy. */
    readonly base: CompiledPolicy | null,
    warnings: readonly Diagnostic[],
  ) {
    this.ir = ir;
    this.name = ir.name;
    this.file = ir.file;
    this.warnings = warnings;
    this.kinds = ir.kinds.map((k) => k.name);
  }

  /** The kind's fate under the policy (as `explain` prints it). */
  fate(kind: string, options: SessionLength = {}): Fate {
    return this.timeline(kind, options).fate;
  }

  /** The kind's fate over the session: from age 0 to the session's end, what a prune is (as `explain --format html` draws it). */
  timeline(kind: string, options: SessionLength = {}): Timeline {
    const p = this.#withLength(options);
    return timelineOf(this.#kind(kind), p);
  }

  /** What a prune of the kind is `ageMs` after its span's append. */
  fateAt(kind: string, ageMs: number, options: SessionLength = {}): FateAt {
    const t = this.timeline(kind, options);
    const s = segmentAt(t, ageMs);
    return { kind, ageMs, phase: s.phase, fromMs: s.fromMs, toMs: s.toMs, why: t.why };
  }

  /** The request the generated types accept for the kind (`acceptLossy` optional, required or never). */
  requestShape(kind: string): RequestShape {
    return requestShapeOf(this.#kind(kind), this.ir);
  }

  /** What a given prune request would be, decided from the policy. */
  prune(q: PruneQuestion): PruneAnswer {
    const k = this.#kind(q.kind);
    if (!k.modes.includes(q.mode)) return { outcome: "rejected", reason: "mode-not-allowed", why: `kind ${k.name} allows ${k.modes.join(", ")}, not ${q.mode}` };
    const at = this.fateAt(q.kind, q.age ?? 0, q);
    switch (at.phase) {
      case "reversible":
        return { outcome: "reversible", keptFor: "session", why: at.why };
      case "reversible-until":
        return { outcome: "reversible", keptFor: "copy-retention", why: at.why };
      case "lossy-with-flag":
        return q.acceptLossy === true ? { outcome: "lossy", why: at.why } : { outcome: "rejected", reason: "needs-accept-lossy", why: at.why };
      case "never":
        return { outcome: "rejected", reason: this.#withLength(q).session.lossyBudget === 0 ? "no-lossy-budget" : "lossy-forbidden", why: at.why };
    }
  }

  /** What changed from `old` to this policy, each change marked by the overlay rule. */
  diff(old: CompiledPolicy): PolicyDiff {
    return diffPolicy(old.ir, this.ir, labelsOf(old, this));
  }

  /** Throws unless a prune of the kind `ageMs` after its append is in `expected` phase. */
  expectFateAt(kind: string, ageMs: number, expected: Phase, options: SessionLength = {}): void {
    const at = this.fateAt(kind, ageMs, options);
    if (at.phase === expected) return;
    const mode = this.#kind(kind).modes[0] ?? "drop";
    throw new PolicyExpectationError(
      `${this.name}: expected a prune of \`${kind}\` ${when(ageMs)} to be ${describePhase(expected)}, but it is ${describePhase(at.phase)} ` +
        `(${describeSpan(at.fromMs, at.toMs)} after its append): ${kind} is ${at.why}`,
      { kind, mode, ageMs, expected: expected, actual: at.phase },
    );
  }

  /**
   * Throws unless a prune of the kind (in its first mode, or `mode`) is reversible for the session at every
   * age of its span `within` that long after its append (default: the session's length). The
   * counterexample is the first prune that is not, found as the overlay check finds the prune that makes an
   * overlay looser than its base.
   */
  expectReversible(kind: string, options: SessionLength & { readonly within?: number; readonly mode?: PruneMode } = {}): void {
    const k = this.#kind(kind);
    const mode = options.mode ?? k.modes[0] ?? "drop";
    if (!k.modes.includes(mode)) {
      throw new PolicyExpectationError(`${this.name}: expected \`${mode}\` of \`${kind}\` to be reversible, but the kind allows ${k.modes.join(", ")} only`, {
        kind, mode, ageMs: 0, expected: "reversible", actual: "rejected",
      });
    }
    const p = this.#withLength(options);
    const t = timelineOf(k, p, options.within === undefined ? {} : { untilMs: options.within });
    const until = t.untilMs;
    // With a lossy budget of 0 nothing is lossy (the timeline says rejected), as the overlay check reads it.
    const lossy = p.session.lossyBudget === 0 ? undefined : firstLoosening(ALWAYS_REVERSIBLE, t.fate, until);
    const first: Segment | undefined = lossy ? segmentAt(t, lossy.ageMs) : t.segments.find((s) => s.phase !== "reversible" && (until === null || s.fromMs < until));
    if (!first) return;
    const ageMs = lossy?.ageMs ?? first.fromMs;
    const becomes =
      first.phase === "lossy-with-flag"
        ? "lossy, executed only with accept_lossy and leaving a tombstone"
        : first.phase === "never"
          ? "rejected: it can be neither reversible nor lossy"
          : "reversible only until its copy expires, before the session can end";
    throw new PolicyExpectationError(
      `${this.name}: expected every prune of \`${kind}\` to be reversible${until === null ? "" : ` within ${formatDuration(until)} of its append`}, ` +
        `but a \`${mode}\` of \`${kind}\` ${when(ageMs)} is ${becomes} (${t.why})`,
      { kind, mode, ageMs, expected: "reversible", actual: first.phase },
    );
  }

  /** Throws unless the prune request is decided as `expected` (`reversible`, `lossy` or `rejected`). */
  expectPrune(q: PruneQuestion, expected: PruneAnswer["outcome"]): void {
    const a = this.prune(q);
    if (a.outcome === expected) return;
    const detail = a.outcome === "rejected" ? `rejected (${a.reason})` : a.outcome === "reversible" && a.keptFor === "copy-retention" ? "reversible only until its copy expires" : a.outcome;
    throw new PolicyExpectationError(
      `${this.name}: expected a \`${q.mode}\` of \`${q.kind}\` ${when(q.age ?? 0)}${q.acceptLossy === true ? " with accept_lossy" : ""} to be ${expected}, but it is ${detail}: ${a.why}`,
      { kind: q.kind, mode: q.mode, ageMs: q.age ?? 0, expected, actual: a.outcome },
    );
  }

  /**
   * Throws unless this policy is no looser than `old` by the overlay rule (`compile`'s check of an
   * overlay against its base, and `pruneguard diff`'s): the message lists what loosens, each with the
   * rule's counterexample. Use it to pin a policy to a reviewed version, or a team's policy to the org's.
   */
  expectNoLooserThan(old: CompiledPolicy): void {
    const d = this.diff(old);
    if (!d.loosens) return;
    const lines = [
      ...d.changes.filter((c) => c.direction === "loosening").flatMap((c) => c.rules.map((r) => `  - ${subject(c)} ${c.setting} ${c.old} → ${c.new}: ${r.message} (${r.code})`)),
      ...d.findings.map((f) => `  - ${f.message} (${f.code})`),
      ...d.fates.filter((f) => f.direction === "loosening").map((f) => `  - ${f.kind} ${describeSpan(f.fromMs, f.toMs)} after append: ${describePhase(f.old)} → ${describePhase(f.new)}`),
    ];
    const first = d.fates.find((f) => f.direction === "loosening");
    const kind = first ? this.#kind(first.kind) : undefined;
    throw new PolicyExpectationError(
      `${this.name}: expected no looser than ${labelsOf(old, this).old}, but it loosens it:\n${lines.join("\n")}`,
      first && kind ? { kind: first.kind, mode: kind.modes[0] ?? "drop", ageMs: first.fromMs, expected: first.old, actual: first.new } : null,
      [...d.changes.flatMap((c) => (c.direction === "loosening" ? c.rules : [])), ...d.findings],
    );
  }

  /**
   * Runs a scripted session against this policy on the real runtime (a `ContextWindow` over in-memory
   * stores opened as the policy declares them, a manual clock, the policy's session limits): appends,
   * prunes, model directives, rotations, clock steps. Returns every step's outcome and what the window
   * renders at the end.
   */
  session(steps: readonly SessionStep[], options: SessionOptions = {}): Promise<SessionRun> {
    return runSession(this, steps, options);
  }

  #kind(name: string): KindIR {
    const k = this.ir.kinds.find((x) => x.name === name);
    if (!k) throw new TypeError(`${this.name} has no kind ${JSON.stringify(name)}; its kinds are ${this.kinds.join(", ")}`);
    return k;
  }

  #withLength(options: SessionLength): PolicyIR {
    return options.sessionLength === undefined ? this.ir : { ...this.ir, session: { ...this.ir.session, maxLengthMs: options.sessionLength } };
  }
}

const when = (ageMs: number): string => (ageMs === 0 ? "right after its append" : `${formatDuration(ageMs)} after its append`);

const subject = (c: { readonly scope: string; readonly name: string | null }): string => (c.name === null ? c.scope : `${c.scope} ${c.name}`);

/** Names in messages: the policies' names when they differ, else their files, else old and new. */
function labelsOf(old: CompiledPolicy, neu: CompiledPolicy): Labels {
  if (old.name !== neu.name) return { old: old.name, new: neu.name };
  if (old.file !== neu.file) return { old: old.file, new: neu.file };
  return { old: "old", new: "new" };
}

