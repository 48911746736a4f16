/**
 * The two ways a policy test fails, as errors any runner reports (vitest, node:test and jest all fail a
 * test that throws): the policy did not compile, or it does not decide what the test expects. Both carry
 * their reasons as data beside the message.
 */
import type { Diagnostic } from "../diagnostics/diagnostic.js";

/** The policy file has errors; `message` is the compiler's own output, with code frames. */
export class PolicyCompileError extends Error {
  override readonly name = "PolicyCompileError";
  constructor(
    message: string,
    /** Every diagnostic of the compilation, warnings included. */
    readonly diagnostics: readonly Diagnostic[],
  ) {
    super(message);
  }
}

/** A concrete prune that shows an expectation wrong: what it is, and what the test expected of it. */
export interface Counterexample {
  readonly kind: string;
  readonly mode: string;
  /** The span's age when pruned, in milliseconds after its append. */
  readonly ageMs: number;
  readonly expected: string;
  readonly actual: string;
}

/**
 * The policy decides otherwise than the test expects. The message says why, with a concrete prune where
 * there is one (`counterexample`), computed as the compiler computes the counterexample of an overlay
 * that loosens its base.
 */
export class PolicyExpectationError extends Error {
  override readonly name = "PolicyExpectationError";
  constructor(
    message: string,
    readonly counterexample: Counterexample | null = null,
    /** The overlay rule's findings, when the expectation was "no looser than". */
    readonly findings: readonly { readonly code: string; readonly message: string }[] = [],
  ) {
    super(message);
  }
}
