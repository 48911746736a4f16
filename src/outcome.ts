import type { RejectReason } from "./decision/reasons.js";
import type { Conditions, PruneMode } from "./types.js";

export type { RejectReason } from "./decision/reasons.js";

interface PruneBase {
  readonly op: "prune";
  readonly spanId: string;
  readonly kind: string;
  readonly mode: PruneMode;
  /** Position of the audit record in its store's chain, when it could be written. */
  readonly auditSeq: number | null;
}

/** The copy was verified and held; the span was replaced by an index line that carries the handle. */
export interface ReversibleOutcome extends PruneBase {
  readonly status: "reversible";
  readonly handle: string;
  readonly conditions: Conditions;
  /** The copy had expired and the window's bytes were written back before the prune. */
  readonly repersisted: boolean;
  /** What now stands in the window in the span's place. */
  readonly line: string;
  readonly tokensFreed: number;
  readonly pinsCarried: readonly string[];
  /** Other members of the span's group pruned with it. */
  readonly groupPruned: readonly string[];
}

/** No verified copy; the directive accepted the loss and the policy allowed it. A tombstone marks the hole. */
export interface LossyOutcome extends PruneBase {
  readonly status: "lossy";
  readonly conditions: Conditions;
  readonly failed: ReadonlyArray<keyof Conditions>;
  readonly tombstone: string;
  readonly line: string;
  readonly tokensFreed: number;
  readonly pinsCarried: readonly string[];
  readonly groupPruned: readonly string[];
}

/** The runtime refused; the window is unchanged but for the rejection line the model will read. */
export interface RejectedOutcome {
  readonly op: "prune";
  readonly status: "rejected";
  readonly spanId: string;
  readonly kind: string | null;
  readonly mode: PruneMode;
  readonly reason: RejectReason;
  /** The check result when the check ran (`null` when refused before it). */
  readonly conditions: Conditions | null;
  readonly failed: ReadonlyArray<keyof Conditions>;
  readonly message: string;
  /** The short line rendered into the window. */
  readonly line: string;
  readonly auditSeq: number | null;
}

/** One problem with a directive that did not parse. */
export interface DirectiveIssue {
  readonly path: string;
  readonly message: string;
}

/** The directive did not parse; nothing was attempted. */
export interface InvalidOutcome {
  readonly op: "prune" | "recall" | null;
  readonly status: "invalid";
  readonly issues: readonly DirectiveIssue[];
  readonly message: string;
  readonly line: string;
  readonly auditSeq: number | null;
}

export type PruneOutcome = ReversibleOutcome | LossyOutcome | RejectedOutcome | InvalidOutcome;

/**
 * Recall's answers. `found` and `pruned-unrecoverable` and `unknown` never collapse: a model told
 * `pruned-unrecoverable` knows the thing existed; `unknown` means this window never held it.
 */
export type RecallOutcome =
  | {
      readonly op: "recall";
      readonly status: "found";
      readonly spanId: string;
      readonly handle: string | null;
      /** Byte-identical to what the window held (verified by content hash). */
      readonly text: string;
      /** `window`: the span is still live; `store`: read back from its backing store. */
      readonly source: "window" | "store";
      readonly auditSeq: number | null;
    }
  | {
      readonly op: "recall";
      readonly status: "pruned-unrecoverable";
      readonly spanId: string;
      readonly handle: string | null;
      /** `lossy`: pruned under a tombstone; `copy-lost`: pruned reversibly but the copy is gone or altered. */
      readonly reason: "lossy" | "copy-lost";
      /** What the window kept in its place (digest or compressed form), if anything. */
      readonly replacement: string | null;
      readonly line: string;
      readonly auditSeq: number | null;
    }
  | {
      readonly op: "recall";
      readonly status: "unknown";
      readonly query: string;
      readonly line: string;
      readonly auditSeq: number | null;
    }
  | {
      readonly op: "recall";
      /**
       * The span was in this session, but only the process that held it had its bytes, and that process
       * is gone: it was never pruned, never copied to a store, and nothing can bring it back.
       */
      readonly status: "lost";
      readonly spanId: string;
      readonly kind: string;
      readonly line: string;
      readonly auditSeq: number | null;
    }
  | {
      readonly op: "recall";
      readonly status: "unavailable";
      readonly spanId: string;
      readonly handle: string | null;
      /** The store failed; the copy may still exist. Ask again later. */
      readonly message: string;
      readonly line: string;
      readonly auditSeq: number | null;
    };

/** What `applyDirective` answers: never throws, always one of these. */
export type DirectiveOutcome = PruneOutcome | RecallOutcome;
