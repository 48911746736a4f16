/**
 * Core vocabulary of the runtime: spans, refs, clocks and the three conditions. The runtime form of a
 * policy (kinds, prune modes, session limits) lives in `policy/` and is re-exported here.
 */

export { PRUNE_MODES } from "./policy/kinds.js";
export type { KindPolicy, KindTable, LossyRule, PinPattern, PruneMode, RuntimePolicy, SessionLimits } from "./policy/kinds.js";

/** A source of time. Injected so tests and the replay can simulate hours in microseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  #now: number;
  constructor(start = 0) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  /** Moves time forward by `ms` and returns the new time. */
  advance(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`ManualClock.advance: ms must be >= 0, got ${ms}`);
    this.#now += ms;
    return this.#now;
  }
  set(ms: number): void {
    this.#now = ms;
  }
}

declare const spanKindBrand: unique symbol;
declare const spanPolicyBrand: unique symbol;
declare const spanRequestBrand: unique symbol;

/**
 * A ref to a span of kind `K`: a plain string, or the ref of another kind, is not assignable.
 *
 * A ref belongs to one window. Its value names the window (`span_7@3fa2c1d0:payments-42`: span 7 of window
 * `3fa2c1d0` of session `payments-42`), and a window refuses a ref of any other, so span ids that repeat
 * across sessions never reach the wrong span. `refSpanId(ref)` gives the id (`span_7`), as outcomes,
 * entries and the model name the span.
 *
 * `P` is the policy of the window that made it: a generated guard's refs carry its name, so a ref of
 * another policy does not compile on that guard's window. A ref typed without one (`SpanRef<"note">`, the
 * default `string`, or a `ContextWindow`'s) is accepted by any window that has its kind, and a guard's ref
 * can be stored in it. `R` is set by generated code only: the request the window's policy gives `K` (the
 * strictest member's, for a union), read off the ref's type so a prune need not work it out per call;
 * where it is left `unknown`, the window works it out from its own policy. Either way the rule is the
 * window's, never how the ref was annotated.
 */
export type SpanRef<K extends string = string, P extends string = string, R = unknown> = string & {
  readonly [spanKindBrand]: K;
  // Methods, so their parameters compare both ways: a ref of policy `org` fits `SpanRef<K>` (`string`) and
  // back, but never `SpanRef<K, "payments">`; a ref's request fits an annotation with a looser or stricter one.
  [spanPolicyBrand](policy: P): void;
  [spanRequestBrand](request: R): void;
};

/**
 * Where a span sits in a provider conversation, for rendering to message arrays. A tool call's text is
 * its JSON arguments; a call and its result share `callId`, which also makes them one prune group.
 */
export type SpanMessage =
  | { readonly role: "system" | "user" | "assistant" }
  | { readonly role: "tool-call"; readonly callId: string; readonly toolName: string }
  | {
      readonly role: "tool-result";
      readonly callId: string;
      readonly toolName: string;
      /** The tool failed: rendered with the provider's error flag (AI SDK `error-text`, Anthropic `is_error`). */
      readonly isError?: boolean;
    };

/** A live span as the window holds it. */
export interface Span {
  readonly id: string;
  readonly kind: string;
  readonly text: string;
  readonly tokens: number;
  /** SHA-256 of the UTF-8 bytes of `text`, hex. */
  readonly hash: string;
  /** Tool call/result group this span belongs to, if any. */
  readonly group?: string;
  /** Its place in a provider conversation (default: user text). */
  readonly message?: SpanMessage;
}

/** The result of the runtime's three-condition check at execution time. */
export interface Conditions {
  /** A durable copy, byte-identical (same content hash), exists outside the window. */
  readonly existence: boolean;
  /** The window can keep a resolvable handle to that copy. */
  readonly addressability: boolean;
  /** Retrieval distinguishes "pruned" from "never existed". */
  readonly provenance: boolean;
}

export const NO_CONDITIONS: Conditions = Object.freeze({ existence: false, addressability: false, provenance: false });

export function conditionsHold(c: Conditions): boolean {
  return c.existence && c.addressability && c.provenance;
}

export function failedConditions(c: Conditions): Array<keyof Conditions> {
  const out: Array<keyof Conditions> = [];
  if (!c.existence) out.push("existence");
  if (!c.addressability) out.push("addressability");
  if (!c.provenance) out.push("provenance");
  return out;
}
