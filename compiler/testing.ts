/**
 * `pruneguard-cli/testing`: policy tests in the team's own test runner (vitest, node:test, jest; it
 * depends on none of them — an expectation that fails throws `PolicyExpectationError`, which every runner
 * reports as a failed test, with the reason and a counterexample in its message).
 *
 * It lives in the CLI package because the compiler does: `compilePolicy` reads a policy file statically,
 * as `pruneguard compile` does, and answers from the compiler's own analysis — each kind's fate at an
 * age of its span and a session length, what a prune request would be, whether the policy is looser than
 * another by the overlay rule — and `session()` runs a scripted session on the runtime the CLI package
 * carries (a `ContextWindow` over in-memory stores opened as the policy declares them). Install
 * `pruneguard-cli` as a devDependency, as for `pruneguard check`.
 *
 * @example
 * ```ts
 * import { compilePolicy, hours } from "pruneguard-cli/testing";
 * const org = compilePolicy("policies/org.policy.ts");
 * org.expectFateAt("toolResult", hours(3), "reversible");
 * ```
 */
export { compilePolicy, CompiledPolicy, type CompilePolicyOptions, type FateAt, type PolicySource, type PruneAnswer, type PruneQuestion, type SessionLength } from "./testing/policy.js";
export { SessionRun, type SessionOptions, type SessionStep, type StepResult } from "./testing/session.js";
export { PolicyCompileError, PolicyExpectationError, type Counterexample } from "./testing/errors.js";
export { describePhase, describeTimeline, PHASES, type Phase, type Segment, type Timeline } from "./analysis/timeline.js";
export { describeFate, type Fate } from "./analysis/fate.js";
export type { RequestShape } from "./analysis/requests.js";
export type { Direction, FateChange, JudgedChange, PolicyDiff, RuleFinding } from "./diff/index.js";
export type { PolicyIR } from "./ir/schema.js";
export type { Diagnostic } from "./diagnostics/diagnostic.js";
// Durations, so a test need not import the DSL to say "three hours".
export { days, hours, minutes, seconds } from "../src/policy/durations.js";
