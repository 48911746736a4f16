/**
 * Why a decision came out as it did, as tagged data. The decision returns a `DecisionReason`; the outcome,
 * the audit record and the rendered line all read that value. `auditReason` is the one place it becomes
 * the stable code an audit record stores.
 */
import type { CheckResult } from "../stores/store.js";

/**
 * What the check found about a span's copy; `no-provenance` when the copy is fine but the store cannot
 * tell pruned from absent; `expires` when it is fine but kept for less than the session's horizon.
 */
export type CopyFinding = CheckResult["copy"] | "no-provenance" | "expires";

/** The copy states that writing the window's bytes back can repair. */
export type RepersistableCopy = "absent" | "expired" | "no-handle";

/** Why a lossy commitment was not made, after the check failed. */
export type LossyRefusal = "not-reversible" | "lossy-forbidden" | "lossy-budget";

/** Why a prune was refused. Stable codes: tests, audit readers and models may rely on them. */
export type RejectReason =
  /** The check failed and the directive did not carry `accept_lossy: true`. */
  | "not-reversible"
  /** The check failed, `accept_lossy: true` was given, but the kind forbids lossy commitment. */
  | "lossy-forbidden"
  /** The check failed, `accept_lossy: true` was given, but the session's lossy budget is spent. */
  | "lossy-budget"
  /** The kind does not allow this mode. */
  | "mode-not-allowed"
  /** This window never held a span with that id. */
  | "unknown-span"
  /** The span was pruned already. */
  | "already-pruned"
  /** The span belongs to a tool call/result group whose other members cannot be pruned with it. */
  | "group"
  /** The store failed during the check; nothing was committed. */
  | "store-error"
  /** The span was lost in a restart: only the process that held it had its bytes. */
  | "lost"
  /**
   * An earlier prune of the span was sent to its store and the answer never came back: until the window
   * has read back whether it committed, no other directive for the span is accepted.
   */
  | "outcome-unknown"
  /** A range summary over positions that are not a run it can replace (out of order, a hole, an unbacked span). */
  | "range"
  /**
   * The code path named a span by something other than a ref of this window: a ref of another window or
   * session (span ids repeat across sessions), or a bare id. Nothing was looked up.
   */
  | "foreign-ref";

/** A refusal decided before any store was consulted, or because the store failed. */
export type EarlyRejectReason = Exclude<RejectReason, LossyRefusal>;

/** Why a recall answered `pruned-unrecoverable` although the prune was reversible. */
export type CopyLoss = "altered" | "expired" | "absent";

/**
 * Why a prune decided earlier was not applied at its compaction point: its copy's promise lapsed (a hold at the
 * session's horizon, retention, `end()`), its copy was found lost, or another member of the same decision (its
 * tool call group, its range summary) was not applied for one of those.
 */
export type NotAppliedCause = "lapsed" | "lost" | "group";

/** Why a decision came out as it did. Clean successes (a verified reversible prune, a recall from the store) carry `null` instead. */
export type DecisionReason =
  /** The check failed and a lossy commitment was refused. */
  | { readonly code: LossyRefusal; readonly copy: CopyFinding }
  /** The check failed and the span was pruned lossily, as the directive accepted. */
  | { readonly code: "lossy-committed"; readonly copy: CopyFinding }
  /** The copy had to be written back before a reversible prune. */
  | { readonly code: "repersisted"; readonly copy: RepersistableCopy }
  /**
   * A member of the span's tool call/result group refused, so this one is refused too: `member` on the
   * span the directive named, `lead` on the other members.
   */
  | { readonly code: "group-refused"; readonly refusedBy: "member" | "lead" }
  /** Refused before the check, or the store failed. */
  | { readonly code: EarlyRejectReason }
  /** The directive did not parse. */
  | { readonly code: "parse" }
  /** Recall answered from the live window, or from a store with no window memory of the span. */
  | { readonly code: "recall-live" | "recall-store-only" }
  /** Recall of a span pruned under a tombstone. */
  | { readonly code: "recall-lossy" }
  /** Recall of a span lost in a restart (never pruned; its bytes lived only in the process that held it). */
  | { readonly code: "recall-lost" }
  /** Recall of a range summary: expanded one level. */
  | { readonly code: "recall-summary" }
  /** Recall of a reversibly pruned span whose copy is gone or altered. */
  | { readonly code: "copy-lost"; readonly loss: CopyLoss }
  /** A prune decided earlier and not applied (status `kept`): the span stayed live. */
  | { readonly code: "not-applied"; readonly cause: NotAppliedCause }
  /**
   * What a search could cover: `complete` (every span the window knows of was searched), `holes` (some
   * were pruned unrecoverably or their copies are lost or unreachable), `partial` (a store had more
   * candidates than one search examines).
   */
  | { readonly code: "search"; readonly coverage: SearchCoverageCode };

/** How much of the session a search could read. */
export type SearchCoverageCode = "complete" | "holes" | "partial";

/** The stable code an audit record stores for a reason (`null` for a clean success). */
export type AuditReason =
  | CopyFinding
  | `${LossyRefusal}:${CopyFinding}`
  | `repersisted:${RepersistableCopy}`
  | "group:member-refused"
  | "group:lead-refused"
  | EarlyRejectReason
  | "parse"
  | "live"
  | "store-only"
  | "lossy"
  | "recall-lost"
  | "summary"
  | `copy-lost:${CopyLoss}`
  | `not-applied:${NotAppliedCause}`
  | `search:${SearchCoverageCode}`;

/** The code an audit record stores for `reason`; the format is part of every stored record's hash, so it never changes. */
export function auditReason(reason: DecisionReason | null): AuditReason | null {
  if (reason === null) return null;
  switch (reason.code) {
    case "not-reversible":
    case "lossy-forbidden":
    case "lossy-budget":
      return `${reason.code}:${reason.copy}`;
    case "lossy-committed":
      return reason.copy;
    case "repersisted":
      return `repersisted:${reason.copy}`;
    case "group-refused":
      return `group:${reason.refusedBy}-refused`;
    case "recall-live":
      return "live";
    case "recall-store-only":
      return "store-only";
    case "recall-lossy":
      return "lossy";
    case "recall-lost":
      return "recall-lost";
    case "recall-summary":
      return "summary";
    case "copy-lost":
      return `copy-lost:${reason.loss}`;
    case "not-applied":
      return `not-applied:${reason.cause}`;
    case "search":
      return `search:${reason.coverage}`;
    case "mode-not-allowed":
    case "unknown-span":
    case "already-pruned":
    case "group":
    case "store-error":
    case "lost":
    case "outcome-unknown":
    case "range":
    case "foreign-ref":
    case "parse":
      return reason.code;
    default:
      // Exhaustive: a new reason does not compile until it is given its stored code here.
      return unencoded(reason);
  }
}

function unencoded(reason: never): never {
  throw new TypeError(`no audit code for reason ${JSON.stringify(reason)}`);
}

/** The outcome's reject code for a refusal reason. */
export function rejectReasonOf(reason: DecisionReason): RejectReason {
  switch (reason.code) {
    case "not-reversible":
    case "lossy-forbidden":
    case "lossy-budget":
    case "mode-not-allowed":
    case "unknown-span":
    case "already-pruned":
    case "group":
    case "store-error":
    case "lost":
    case "outcome-unknown":
    case "range":
    case "foreign-ref":
      return reason.code;
    case "group-refused":
      return "group";
    case "lossy-committed":
    case "repersisted":
    case "parse":
    case "recall-live":
    case "recall-store-only":
    case "recall-lossy":
    case "recall-lost":
    case "recall-summary":
    case "copy-lost":
    case "not-applied":
    case "search":
      throw new TypeError(`not a refusal: ${reason.code}`);
    default:
      // Exhaustive: a new reason does not compile until it says whether it is a refusal.
      return unencoded(reason);
  }
}
