/**
 * A ref belongs to one window.
 *
 * Span ids are numbered per session (`span_1`, `span_2`, …), so the same id names a different span in every
 * other session, and in every window over other stores. A ref that was only the id let a ref of window A
 * prune window B's span of the same number. So a ref's value carries its window's identity:
 * `span_7@3fa2c1d0:payments-42` is span 7 of the window `3fa2c1d0` (random, one per window object) of
 * session `payments-42`. The window resolves every ref it is given against itself before anything else
 * happens; a ref of another window or session never reaches a decision.
 *
 * Refs stay strings, so they still go wherever an id went (a directive's `span_id`, a log line, JSON), and
 * what the model reads is unchanged: it sees `span_7`, never a ref.
 */
import { randomBytes } from "node:crypto";
import { SPAN_ID } from "../directive.js";

/** Which window a ref belongs to: its session, and the window object within it. */
export interface WindowIdentity {
  readonly session: string;
  /** Eight hex digits, random per window object: two windows of one session in one process differ too. */
  readonly window: string;
}

/** A new window's identity. */
export function newWindowIdentity(session: string): WindowIdentity {
  return { session, window: randomBytes(4).toString("hex") };
}

/** The ref of span `spanId` in window `owner`. */
export function mintRef(owner: WindowIdentity, spanId: string): string {
  return `${spanId}@${owner.window}:${owner.session}`;
}

// A session id is the caller's string; the span id and the window part cannot contain `@` or `:`, so the
// first `@` and the `:` after the window part split a ref unambiguously. Linear (anchored, no nesting).
const REF = /^(span_[1-9][0-9]{0,8})@([0-9a-f]{8}):([\s\S]*)$/;
/** Refs longer than this are not refs (a session id is bounded by the stores' own limits well below it). */
const MAX_REF_CHARS = 4_096;

/** How a value given where a ref belongs reads against a window. */
export type RefReading =
  /** A ref of this window: its span id. */
  | { readonly kind: "own"; readonly spanId: string }
  /** A bare span id (`span_7`): no window named. What the model writes; code gets refs instead. */
  | { readonly kind: "bare"; readonly spanId: string }
  /** A ref of another window: of another session, or another window of this one. */
  | { readonly kind: "foreign"; readonly spanId: string; readonly owner: WindowIdentity }
  /** Neither a ref nor a span id. */
  | { readonly kind: "none" };

/** Reads `value` against window `self`. Never throws; bounded in the value's length. */
export function readRef(self: WindowIdentity, value: unknown): RefReading {
  if (typeof value !== "string" || value.length > MAX_REF_CHARS) return { kind: "none" };
  if (SPAN_ID.test(value)) return { kind: "bare", spanId: value };
  const m = REF.exec(value);
  if (m === null) return { kind: "none" };
  const owner: WindowIdentity = { window: m[2]!, session: m[3]! };
  if (owner.window === self.window && owner.session === self.session) return { kind: "own", spanId: m[1]! };
  return { kind: "foreign", spanId: m[1]!, owner };
}

/** `session s (window w)`, for messages that name both sides of a mismatch. */
export function describeWindow(owner: WindowIdentity): string {
  return `session ${quoteSession(owner.session)} (window ${owner.window})`;
}

/** Why a value is refused where a ref of `self` belongs. */
export function foreignRefMessage(self: WindowIdentity, reading: Exclude<RefReading, { kind: "own" }>, given: unknown): string {
  const here = describeWindow(self);
  switch (reading.kind) {
    case "foreign":
      return `${reading.spanId} is a ref of ${describeWindow(reading.owner)}, not of this window, ${here}: nothing was pruned` +
        (reading.owner.session === self.session ? "; take this window's ref with ref(id)" : "");
    case "bare":
      return `${reading.spanId} is a span id, not a ref of this window, ${here}: take the ref from append() or ref("${reading.spanId}")`;
    case "none":
      return `${describeValue(given)} is not a ref of this window, ${here}`;
  }
}

/** The error `ref(id)` throws: the id names no span of this window, names another kind, or is another session's. */
export class RefError extends Error {
  override readonly name = "RefError";
  /** Data first: `unknown-span`, `wrong-kind` or `foreign-session`. */
  readonly code: "unknown-span" | "wrong-kind" | "foreign-session";
  constructor(code: RefError["code"], message: string) {
    super(message);
    this.code = code;
  }
}

function quoteSession(session: string): string {
  const shown = session.length > 64 ? `${session.slice(0, 61)}...` : session;
  return JSON.stringify(shown);
}

function describeValue(value: unknown): string {
  if (typeof value !== "string") return value === null ? "null" : `a ${typeof value}`;
  return JSON.stringify(value.length > 48 ? `${value.slice(0, 45)}...` : value);
}

/**
 * The span id a ref names (`span_7`), as outcomes, entries and the model name the span; a bare id is
 * returned as it is. For logs and lookups in data keyed by id, not for pruning: only the ref itself says
 * which window the span is in.
 */
export function refSpanId(ref: string): string {
  const at = ref.indexOf("@");
  return at > 0 && REF.test(ref) ? ref.slice(0, at) : ref;
}
