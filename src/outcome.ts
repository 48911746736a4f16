import type { RejectReason } from "./decision/reasons.js";
import type { Conditions, PruneMode } from "./types.js";

export type { RejectReason } from "./decision/reasons.js";

/** When a decision reaches what the model reads. */
export type WhenApplied =
  /** At once: the decision was (or caused) a compaction point. */
  | { readonly at: "now" }
  /** At the next compaction point; `line` says so to the model (the tool result's second line). */
  | {
      readonly at: "next-compaction";
      /** Tokens the pending prunes free when applied, this one included. */
      readonly pendingTokens: number;
      /** What pending prunes must free for the window to apply them by itself. */
      readonly thresholdTokens: number;
      /** Tokens of the rendering from the first pending span on: what applying now re-sends uncached. */
      readonly rewriteTokens: number;
      readonly line: string;
      /**
       * `no need to prune yet: ~9.8k tokens, pruning pays from ~36k` while the window is below the size at
       * which pruning pays (`pruneFloor`): the decision stands and applies at a compaction point, but a
       * prune sent in a step of its own costs a request more than it saves. `null` from that size on.
       */
      readonly advice: string | null;
    };

/** What a compaction point did. */
export interface CompactionReport {
  /** Decisions applied (span ids whose lines changed: prune targets, group members, summaries). */
  readonly applied: number;
  /** Directive tool calls and results folded out of the window. */
  readonly folded: number;
  /** Tokens the rendering is smaller by. */
  readonly freedTokens: number;
  /** Tokens of the rendering from the first change on: what the next request sends uncached. */
  readonly rewrittenTokens: number;
  /**
   * Decisions this compaction point did not apply: a copy they freed stopped being promised before it (a hold
   * that lapsed, retention, `end()`, a copy found lost), so their spans stay live (`window/lapse.ts`).
   */
  readonly notApplied: number;
}

/** What is pending, for the map: how many decisions, the tokens they free, what applying them now rewrites. */
export interface PendingState {
  readonly decisions: number;
  readonly pendingTokens: number;
  readonly thresholdTokens: number;
  readonly rewriteTokens: number;
}

/** What a prune of a span would be now. */
export type Forecast =
  /** Reversible for the whole session. */
  | "reversible"
  /** Reversible, but its copy is kept only until `until`. */
  | "reversible-until"
  /** Not provably reversible: a prune needs `accept_lossy: true` and leaves a tombstone. */
  | "lossy-with-flag"
  /** No prune of it can execute now (`why` says what stands in the way). */
  | "never";

export interface SpanForecast {
  readonly spanId: string;
  readonly kind: string;
  /** The modes a directive may name for it. */
  readonly modes: readonly PruneMode[];
  readonly forecast: Forecast;
  /** For `reversible-until`: when the copy stops being kept (ms). */
  readonly until: number | null;
  /** For `never`: a few words on why. */
  readonly why: string | null;
}

/** The map's answer: token pressure and one forecast per live span, plus the lines a model reads. */
export interface WindowMap {
  readonly op: "map";
  readonly status: "mapped";
  readonly tokens: { readonly used: number; readonly limit: number | null };
  readonly spans: readonly SpanForecast[];
  /** The map as runtime lines (`map: …` then one line per span). */
  readonly line: string;
  readonly auditSeq: number | null;
  /** Decisions not yet applied to what the model reads, and what applying them now would rewrite; `null`: none. */
  readonly pending: PendingState | null;
}

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
  /**
   * `null`: reversible for the whole session (the copy is held, or retained past the session's horizon).
   * A time (ms): reversible only until then — nothing keeps the copy longer; the index line says how long.
   */
  readonly until: number | null;
  /** What now stands in the window in the span's place. */
  readonly line: string;
  /** Negative when the replacement costs more than the span did; `grew` then says so in a line. */
  readonly tokensFreed: number;
  /** `span_7 pruned, but its replacement costs 10 more tokens` when `tokensFreed` is negative, else `null`. */
  readonly grew: string | null;
  readonly pinsCarried: readonly string[];
  /** Other members of the span's group pruned with it. */
  readonly groupPruned: readonly string[];
  /** What happened to each of them: a member can be lossy when the span is reversible (a call with no store). */
  readonly group: readonly GroupMemberFate[];
  /** When the model's window shows it: now, or at the next compaction point (`line` then says so). */
  readonly applies: WhenApplied;
}

/** A group member's fate in a prune of its group, and the line that stands in its place. */
export interface GroupMemberFate {
  readonly spanId: string;
  readonly status: "reversible" | "lossy";
  readonly line: string;
}

/** No verified copy; the directive accepted the loss and the policy allowed it. A tombstone marks the hole. */
export interface LossyOutcome extends PruneBase {
  readonly status: "lossy";
  readonly conditions: Conditions;
  readonly failed: ReadonlyArray<keyof Conditions>;
  readonly tombstone: string;
  readonly line: string;
  readonly tokensFreed: number;
  readonly grew: string | null;
  readonly pinsCarried: readonly string[];
  readonly groupPruned: readonly string[];
  readonly group: readonly GroupMemberFate[];
  /** When the tombstone replaces the span in the model's window: now, or at the next compaction point. */
  readonly applies: WhenApplied;
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
  readonly op: "prune" | "recall" | "map" | "search" | "summarize_range" | "compact" | null;
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
      /** A range summary, expanded one level: its members as the window showed them; recall a member for its bytes. */
      readonly status: "expanded";
      readonly spanId: string;
      readonly members: readonly string[];
      /** One line (or block, for a lower summary) per member. */
      readonly text: string;
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

/** One span that holds a match, with a short snippet around the first one. */
export interface SearchMatch {
  readonly spanId: string;
  /** The handle that recalls its bytes; `null` for a live span without a copy, or a replacement's lossy span. */
  readonly handle: string | null;
  readonly kind: string;
  /**
   * Where the match is: `live` (the span is in the window), `copy` (its pruned bytes, read from the store
   * and verified by content hash) or `replacement` (the digest, compressed form or carried ids that stand
   * in its place).
   */
  readonly source: "live" | "copy" | "replacement";
  /** The match with a little context either side, on one line, bounded in length. */
  readonly snippet: string;
}

/** A span that could not be searched and so may have held a match. */
export interface SearchHole {
  readonly spanId: string;
  /**
   * `lossy`: pruned under a tombstone; `copy-lost`: pruned reversibly, but the copy was rotated out or no
   * longer has the bytes that were pruned; `unavailable`: its store failed just now (retry later);
   * `elsewhere`: another window of the session appended it, so this window has nothing of it to read.
   */
  readonly why: "lossy" | "copy-lost" | "unavailable" | "elsewhere";
}

/** What a search covered: never "nothing there" when the window knows of holes. */
export interface SearchCoverage {
  /** Live spans searched. */
  readonly live: number;
  /** Pruned spans whose verified copy was searched. */
  readonly pruned: number;
  /** Every span the window knows was pruned and cannot be searched now, in window order. */
  readonly holes: readonly SearchHole[];
  /** A store had more candidate copies than one search examines: narrow the query to cover the rest. */
  readonly truncated: boolean;
  /**
   * Spans whose text the pattern would cost more to match than what was left of the search's work bound
   * (`SEARCH_WORK_UNITS`), so were not read: a substring or a simpler pattern reads them.
   */
  readonly unread: number;
}

/**
 * The answer to a search: the matches that fit the policy's token budget, and the coverage. `no-match`
 * means no match in what could be searched; `coverage.holes` says what could not be.
 */
export interface SearchOutcome {
  readonly op: "search";
  readonly status: "match" | "no-match";
  readonly query: string;
  readonly regex: boolean;
  /** Matching spans in window order, as many as fit the budget. */
  readonly matches: readonly SearchMatch[];
  /** Matching spans left out to stay within the budget. */
  readonly omitted: number;
  readonly coverage: SearchCoverage;
  /** What the model reads: the matches and one line of coverage, at most `tokens` o200k tokens. */
  readonly text: string;
  readonly tokens: number;
  readonly auditSeq: number | null;
}

/** A run of the window replaced by one digest; every live member's copy was verified and held first. */
export interface RangeSummaryOutcome {
  readonly op: "summarize_range";
  readonly status: "summarized";
  /** The summary's own id: recall it to expand one level. */
  readonly spanId: string;
  /** The positions it replaced, in order (span ids of spans and of lower summaries). */
  readonly members: readonly string[];
  /** Members that were live until now, with the handles that recall their bytes. */
  readonly pruned: ReadonlyArray<{ readonly spanId: string; readonly handle: string; readonly repersisted: boolean }>;
  /**
   * A time (ms): the earliest any member's copy (at any depth) is kept until, when that is before the
   * session's horizon — the summary's line says `recall span_9 until 17:05Z`, and from then on that copies may
   * be lost. `null` when every member's copy is kept for the session.
   */
  readonly until: number | null;
  readonly line: string;
  readonly tokensFreed: number;
  readonly pinsCarried: readonly string[];
  readonly auditSeq: number | null;
  /** When the digest replaces the run in the model's window: now, or at the next compaction point. */
  readonly applies: WhenApplied;
  /**
   * Present when the note a resumed window draws the summary again from could not be written to the home
   * store (the summary stands in this window): after a restart its members come back as their index lines.
   */
  readonly noteError?: string;
}

/** The run stays as it was: a member could not be held, or the run cannot be summarized. */
export interface RangeRejectedOutcome {
  readonly op: "summarize_range";
  readonly status: "rejected";
  readonly from: string;
  readonly to: string;
  readonly reason: RejectReason;
  readonly message: string;
  readonly line: string;
  readonly auditSeq: number | null;
}

export type RangeOutcome = RangeSummaryOutcome | RangeRejectedOutcome;

/** What `applyDirective` answers: never throws, always one of these. */
/** A compaction point the model or code asked for: what it applied, folded and rewrote. */
export interface CompactOutcome extends CompactionReport {
  readonly op: "compact";
  readonly status: "compacted";
  /** `compacted: 3 decisions applied, 2 calls folded, ~11k tokens freed, ~48k rewritten`. */
  readonly line: string;
  readonly auditSeq: number | null;
}

/**
 * A provider's compaction recorded (`ContextWindow.providerCompacted`): what it pruned through the checks,
 * lost as the policy allows, and kept (said again after the block). `refused`, `failed` and `store-error`
 * changed nothing in the window, and the block is not sent back.
 */
export interface ProviderCompactionOutcome {
  readonly op: "provider_compaction";
  readonly status: "compacted" | "failed" | "refused" | "store-error";
  readonly provider: string;
  /** The summary's id (recall it to list what the compaction covered); `null` unless compacted. */
  readonly spanId: string | null;
  /** The positions the summary stands for, one level (span ids, fold keys, lower summaries). */
  readonly members: readonly string[];
  /** Spans pruned for it with their copies held. */
  readonly pruned: readonly string[];
  /** Spans lost for it as lossy commitments the policy allows (tombstones). */
  readonly lossy: readonly string[];
  /** Spans the check kept: live, said again after the block. */
  readonly kept: ReadonlyArray<{ readonly spanId: string; readonly reason: string; readonly message: string }>;
  /** The runtime line the model reads beside the block (`span_9 summary of span_1–span_8 (8), recall span_9`). */
  readonly line: string;
  readonly message: string;
}

export type DirectiveOutcome = PruneOutcome | RecallOutcome | WindowMap | SearchOutcome | RangeOutcome | CompactOutcome;
