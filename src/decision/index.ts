/** The decision boundary: pure functions from check results to dispositions, with reasons as data. */
export { decideGroup } from "./group.js";
export type { GroupDecision, GroupDecisionInput, MemberInput } from "./group.js";
export { decideSpan, lossyRefusal } from "./span.js";
export type { SpanDecision, SpanDecisionInput } from "./span.js";
export { auditReason, rejectReasonOf } from "./reasons.js";
export type { AuditReason, CopyFinding, CopyLoss, DecisionReason, EarlyRejectReason, LossyRefusal, RejectReason, RepersistableCopy } from "./reasons.js";
