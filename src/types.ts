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
declare const spanRequestBrand: unique symbol;

/**
 * A span id branded with its kind (and, for generated guards, with the exact prune request the kind
 * accepts). A plain string, or the ref of another kind, is not assignable.
 *
 * The brand exists only in types: at run time a `SpanRef` is the span id string (`"span_7"`).
 */
export type SpanRef<K extends string = string, R = unknown> = string & {
  readonly [spanKindBrand]: K;
  readonly [spanRequestBrand]: R;
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
