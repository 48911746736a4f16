/**
 * Core vocabulary of the runtime: spans, kinds, prune modes and the runtime form of a policy.
 *
 * The runtime policy (`RuntimePolicy`) is exactly what the compiler's IR lowers to and what a generated
 * guard module passes to `ContextWindow`; nothing here reads policy source.
 */

/** The three ways a model may ask to free a span. All three free the original bytes. */
export type PruneMode = "drop" | "summarize" | "compress";
export const PRUNE_MODES: readonly PruneMode[] = ["drop", "summarize", "compress"];

/**
 * When a prune that cannot be proven reversible may still execute.
 * - `forbid`: never; the directive is rejected and the span stays.
 * - `with-flag`: only when the directive carries `accept_lossy: true` (the JSON value, nothing else).
 */
export type LossyRule = "forbid" | "with-flag";

/** A named identifier pattern whose matches are carried into any digest or compressed form that lost them. */
export interface PinPattern {
  readonly name: string;
  /** An RE2 regular-expression source (see `src/policy/pins.ts`), matched line by line on re2js. */
  readonly pattern: string;
}

/** The runtime form of one span kind's policy. */
export interface KindPolicy {
  /** The name of the backing store that keeps durable copies of this kind, or `null` when none does. */
  readonly store: string | null;
  /** The prune modes this kind allows; a directive in another mode is rejected. */
  readonly modes: readonly PruneMode[];
  readonly lossy: LossyRule;
  /**
   * When the kind's copy has expired (rotated out, lost, or never written) but the window still holds the
   * bytes, write them back with a hold and prune reversibly instead of rejecting or going lossy.
   */
  readonly repersist?: boolean;
  /** Identifier patterns pinned for this kind (merged with the policy-wide ones). */
  readonly pins?: readonly PinPattern[];
  /** Token target for the runtime's own `compress`. */
  readonly compressTargetTokens?: number;
}

/** Session-wide limits. */
export interface SessionLimits {
  /** The longest session the policy expects, in milliseconds (used by analysis, reported in audit). */
  readonly maxLengthMs?: number | null;
  /** How many lossy commitments one session may make; `null` or absent means unlimited. */
  readonly lossyBudget?: number | null;
}

/** The runtime form of a whole policy: what `ContextWindow` needs to dispose of a directive. */
export interface RuntimePolicy<Kinds extends string = string> {
  readonly kinds: { readonly [K in Kinds]: KindPolicy };
  readonly session?: SessionLimits;
  /** Pins that apply to every kind. */
  readonly pins?: readonly PinPattern[];
  /** Tombstone wording; `{span}` is replaced by the span id. At most 13 tokens once filled. */
  readonly tombstone?: string;
}

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
  | { readonly role: "tool-result"; readonly callId: string; readonly toolName: string };

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
