/**
 * Every way a directive ends without freeing anything, said once: an invalid directive, a ref of another
 * window, a refusal decided before any store was asked, a refusal the store decided inside its transaction,
 * a store that failed. Each is audited, and each leaves a line where the model will read it — under the
 * span, or at the end of the window — except a foreign ref, which the model never asked for.
 */
import { errorMessage } from "../errors.js";
import type { GroupDecision } from "../decision/group.js";
import type { DirectiveOutcome, InvalidOutcome, RangeRejectedOutcome, RejectedOutcome, RejectReason } from "../outcome.js";
import { invalidLine, rangeRejectionLine, rejectionWhy } from "../render/lines.js";
import { cutUnits } from "../render/framing.js";
import { SPAN_ID } from "../directive.js";
import type { PruneCommitItem } from "../stores/store.js";
import type { PruneMode } from "../types.js";
import { invalidDraft, refusedPruneDraft } from "./audit-drafts.js";
import type { WindowCore } from "./core.js";
import type { LiveEntry } from "./entries.js";
import { rejectedOutcome } from "./outcomes.js";
import { persistFailures, type PlanRejectReason, type PrunePlan } from "./plan.js";
import { foreignRefMessage, type RefReading } from "./refs.js";

/** The directive operations, as outcomes name them. */
export type DirectiveOp = NonNullable<InvalidOutcome["op"]>;

/** What a ref reads as when it is not one of this window's. */
export type ForeignReading = Exclude<RefReading, { kind: "own" }>;

/** A directive that did not parse or cannot run: audited, and said at the end of the window. */
export async function invalid(core: WindowCore, op: DirectiveOp | null, issues: InvalidOutcome["issues"], raw: string): Promise<InvalidOutcome> {
  // A message that already names its field ("accept_lossy must be …") is not prefixed with it again.
  const message = issues.map((i) => (i.path && !i.message.startsWith(`${i.path} `) ? `${i.path}: ${i.message}` : i.message)).join("; ") || "invalid directive";
  const seq = await core.audit(core.home, invalidDraft(op, raw));
  const line = invalidLine(message.length > 160 ? `${cutUnits(message, 157)}...` : message); // on a code point (finding 25.9)
  core.notice(line);
  return { op, status: "invalid", issues, message, line, auditSeq: seq };
}

/**
 * Code named a span by something that is not a ref of this window. Refused before anything is looked
 * up, so another window's span of the same id is never touched; audited as refused, with the ref as
 * given. No line is rendered: the model asked for nothing, and its window stays as it was.
 */
export function refuseForeign(core: WindowCore, op: "prune", reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<RejectedOutcome>;
export function refuseForeign(core: WindowCore, op: "summarize_range", reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<RangeRejectedOutcome>;
export function refuseForeign(core: WindowCore, op: DirectiveOp, reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<DirectiveOutcome>;
export async function refuseForeign(core: WindowCore, op: DirectiveOp, reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<DirectiveOutcome> {
  const message = foreignRefMessage(core.self, reading, given);
  const auditSeq = await core.audit(core.home, refusedPruneDraft({
    spanId: null, kind: null, mode, handle: null, conditions: null, reason: { code: "foreign-ref" }, directive: raw,
  }));
  const spanId = reading.kind === "none" ? "(not a ref)" : reading.spanId;
  if (op === "summarize_range") {
    return { op, status: "rejected", from: spanId, to: spanId, reason: "foreign-ref", message, line: rangeRejectionLine(spanId, spanId, message), auditSeq };
  }
  if (op !== "prune") return { op, status: "invalid", issues: [{ path: "span_id", message }], message, line: invalidLine(message), auditSeq };
  return rejectedOutcome({
    spanId, kind: null, mode, reason: "foreign-ref", conditions: null, why: rejectionWhy("foreign-ref", null, mode), message,
    auditSeq, lossyHintPolicy: null, live: false,
  });
}

/** A refusal decided before any store was consulted (unknown span, wrong mode, group shape, a doubt). */
export async function refuseEarly(core: WindowCore, r: {
  spanId: string; kind: string | null; mode: PruneMode; reason: { readonly code: PlanRejectReason };
  message: string; entry: LiveEntry | null; raw: string;
}): Promise<RejectedOutcome> {
  const { entry } = r;
  const store = entry?.store ? core.store(entry.store) : core.home;
  const seq = await core.audit(store, refusedPruneDraft({
    spanId: SPAN_ID.test(r.spanId) ? r.spanId : null, kind: r.kind, mode: r.mode, handle: entry?.handle ?? null, conditions: null,
    reason: r.reason, directive: r.raw,
  }));
  const outcome = rejectedOutcome({
    spanId: entry?.span.id ?? r.spanId, kind: entry?.span.kind ?? r.kind, mode: r.mode, reason: r.reason.code, conditions: null,
    why: rejectionWhy(r.reason.code, null, r.mode), message: r.message, auditSeq: seq, lossyHintPolicy: null, live: entry !== null,
  });
  if (entry) core.noticeOn(entry, outcome.line);
  else core.notice(outcome.line);
  return outcome;
}

/** The store decided, and a member refused: the group stays, and the lead's line says which and why. */
export function refuseChecked(
  core: WindowCore, plan: PrunePlan, mode: PruneMode, lead: PruneCommitItem, items: readonly PruneCommitItem[],
  refusal: NonNullable<GroupDecision["refusal"]>,
): RejectedOutcome {
  const refusing = items[refusal.member]!;
  const spanId = plan.target.span.id;
  const why = rejectionWhy(refusal.reason, plan.members[plan.lead]!.policy.store === null ? null : refusing.check, mode);
  const message = (refusal.byLead ? `${spanId} cannot be pruned: ${why}` : `${spanId} is grouped with a span that cannot be pruned: ${why}`) +
    persistFailures(plan.members);
  const outcome = rejectedOutcome({
    spanId, kind: plan.target.span.kind, mode, reason: refusal.byLead ? refusal.reason : "group", conditions: refusing.check.conditions,
    why: refusal.byLead ? why : `group: ${why}`, message, auditSeq: lead.audit.seq, lossyHintPolicy: plan.members[plan.lead]!.policy,
  });
  core.noticeOn(plan.target, outcome.line);
  return outcome;
}

/** The store failed before anything was committed: the span stays, and says so. */
export async function storeFailed(core: WindowCore, entry: LiveEntry, mode: PruneMode, raw: string, err: unknown): Promise<RejectedOutcome> {
  const message = `${entry.span.id} kept: the store failed during the check (${errorMessage(err)}); nothing was committed`;
  const seq = await core.audit(core.home, refusedPruneDraft({
    spanId: entry.span.id, kind: entry.span.kind, mode, handle: entry.handle, conditions: null, reason: { code: "store-error" }, directive: raw,
  }));
  const outcome = rejectedOutcome({
    spanId: entry.span.id, kind: entry.span.kind, mode, reason: "store-error", conditions: null,
    why: rejectionWhy("store-error", null, mode), message, auditSeq: seq, lossyHintPolicy: null,
  });
  core.noticeOn(entry, outcome.line);
  return outcome;
}

/** A range summary refused (before its commit, or by the store inside it): the run stays, and says why. */
export async function refuseRange(
  core: WindowCore, from: string, to: string, raw: string, reason: RejectReason, message: string, auditSeq?: number | null,
): Promise<RangeRejectedOutcome> {
  const seq = auditSeq !== undefined ? auditSeq : await core.audit(core.home, refusedPruneDraft({
    spanId: from, kind: null, mode: "summarize", handle: null, conditions: null,
    reason: { code: reason as Exclude<RejectReason, "not-reversible" | "lossy-forbidden" | "lossy-budget"> }, directive: raw,
  }));
  const line = rangeRejectionLine(from, to, message);
  core.notice(line);
  return { op: "summarize_range", status: "rejected", from, to, reason, message, line, auditSeq: seq };
}
