/**
 * The audit drafts a window writes, one builder per kind of decision, so every record of a kind has the
 * same shape and its reason comes from the decision's tagged data.
 */
import type { AuditDraft } from "../audit.js";
import { auditReason, type DecisionReason, type NotAppliedCause } from "../decision/reasons.js";
import type { SpanDecision } from "../decision/span.js";
import { HANDLE, SPAN_ID } from "../directive.js";
import type { Conditions, PruneMode } from "../types.js";
import type { CheckResult } from "../stores/store.js";
import { kindOf, spanIdOf, type Entry } from "./entries.js";

/** What a prune's draft records about the span, besides the decision. */
export interface PruneSubject {
  readonly spanId: string;
  readonly kind: string;
  readonly hash: string;
  readonly mode: PruneMode;
  readonly acceptLossy: boolean;
  readonly pinsCarried: number;
  /** The raw directive, on the record of the span it named; `null` on the other group members. */
  readonly directive: string | null;
}

/** The draft a store seals for one checked span of a prune. */
export function checkedPruneDraft(subject: PruneSubject, decision: SpanDecision, check: CheckResult): AuditDraft {
  return {
    op: "prune",
    status: decision.status,
    spanId: subject.spanId,
    kind: subject.kind,
    mode: subject.mode,
    conditions: check.conditions,
    handle: check.handle,
    repersisted: decision.status === "reversible" && decision.repersist,
    acceptLossy: subject.acceptLossy,
    reason: auditReason(decision.reason),
    // A refused prune carried nothing: the span stays as it was.
    pinsCarried: decision.status === "rejected" ? 0 : subject.pinsCarried,
    spanHash: subject.hash,
    directive: subject.directive,
    ...(decision.status === "reversible" && decision.keep.until !== null ? { until: decision.keep.until } : {}),
  };
}

/** A prune refused without a decision from the store: before the check, or because the store failed. */
export function refusedPruneDraft(input: {
  readonly spanId: string | null;
  readonly kind: string | null;
  readonly mode: PruneMode;
  readonly handle: string | null;
  readonly conditions: Conditions | null;
  readonly reason: DecisionReason;
  readonly directive: string;
}): AuditDraft {
  return {
    op: "prune", status: "rejected", spanId: input.spanId, kind: input.kind, mode: input.mode, conditions: input.conditions,
    handle: input.handle, repersisted: false, acceptLossy: false, reason: auditReason(input.reason), pinsCarried: 0,
    directive: input.directive,
  };
}

/**
 * A prune decided earlier and not applied at its compaction point (`lapse.ts`): the span stayed live. Written
 * in the chain of the decision's own records, so a resumed window reads it after them and shows the span live.
 */
export function keptDraft(subject: { readonly spanId: string; readonly kind: string; readonly mode: PruneMode; readonly handle: string | null; readonly hash: string | null }, cause: NotAppliedCause): AuditDraft {
  return {
    op: "prune", status: "kept", spanId: subject.spanId, kind: subject.kind, mode: subject.mode, conditions: null, handle: subject.handle,
    repersisted: false, acceptLossy: false, reason: auditReason({ code: "not-applied", cause }), pinsCarried: 0, spanHash: subject.hash, directive: null,
  };
}

/** A directive that did not parse. */
export function invalidDraft(op: "prune" | "recall" | "map" | "search" | "summarize_range" | "compact" | null, directive: string): AuditDraft {
  return {
    op, status: "invalid", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: auditReason({ code: "parse" }), pinsCarried: 0, directive,
  };
}

/** A map directive's answer (an advisory read: nothing is decided, but every directive is logged). */
export function mapDraft(directive: string): AuditDraft {
  return {
    op: "map", status: "mapped", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: null, pinsCarried: 0, directive,
  };
}

/** A compaction point: asked for (its directive, or `{"op":"compact"}` from `compact()`), or the window's own (`null`). */
export function compactDraft(directive: string | null, made = true): AuditDraft {
  return {
    op: "compact", status: made ? "compacted" : "unchanged", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: null, pinsCarried: 0, directive,
  };
}

/** A window's first append to the session, under the policy named (`directive`: `{"op":"start","policy":…}`). */
export function startDraft(policy: string): AuditDraft {
  return {
    op: "start", status: "started", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: null, pinsCarried: 0, directive: JSON.stringify({ op: "start", policy }),
  };
}

/**
 * The session's end (`end()`), written before its holds are released: a window resumed later reads from it
 * that copies pruned before it are kept by retention alone.
 */
export function endDraft(): AuditDraft {
  return {
    op: "end", status: "ended", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: null, pinsCarried: 0, directive: null,
  };
}

/** A recall's answer; the span and handle come from the window's entry when it has one, else from the query. */
export function recallDraft(
  query: string,
  directive: string,
  status: "found" | "pruned-unrecoverable" | "unknown" | "unavailable" | "lost",
  reason: DecisionReason | null,
  entry?: Entry,
): AuditDraft {
  return {
    op: "recall", status, spanId: entry ? spanIdOf(entry) : SPAN_ID.test(query) ? query : null, kind: entry ? kindOf(entry) : null,
    mode: null, conditions: null, handle: entry?.handle ?? (HANDLE.test(query) ? query : null), repersisted: false,
    acceptLossy: false, reason: auditReason(reason), pinsCarried: 0, directive,
  };
}

/** A search's answer: what it covered is the reason, the directive holds the (bounded) query. */
export function searchDraft(directive: string, status: "match" | "no-match", reason: DecisionReason): AuditDraft {
  return {
    op: "search", status, spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: auditReason(reason), pinsCarried: 0, directive,
  };
}
