/**
 * The typed face of a window, for generated guard modules.
 *
 * A generated module declares, per span kind, the exact prune request that kind accepts (a named
 * interface; kinds with the same rules share one), and passes the map `kind → request` as `Requests`.
 * `append` returns a `SpanRef<K, Requests[K]>`: the ref carries its own request type, so
 * `prune(span, request)` checks `request` against it without inferring anything from the kind union.
 * That keeps the consumer's type-check linear and cheap at thousands of kinds.
 */
import type { AuditRecord } from "./audit.js";
import type { CompactOutcome, DirectiveOutcome, InvalidOutcome, LossyOutcome, PruneOutcome, RangeOutcome, RecallOutcome, ReversibleOutcome, SearchOutcome } from "./outcome.js";
import type { SearchRequest } from "./window/search.js";
import type { ToolCall, ToolCallResult } from "./tools/call.js";
import type { DirectiveTool } from "./tools/schemas.js";
import type { AppendInput, PruneRequest } from "./window/options.js";
import type { WindowEntry } from "./window/view.js";
import type { WindowMap } from "./window/map.js";
import type { ContextWindow } from "./window/window.js";
import type { PruneMode, Span, SpanRef } from "./types.js";

/** A readable compile error: a forbidden request type is one (defined with the policy vocabulary, which the DSL uses too). */
export type { PruneguardTypeError } from "./policy/type-error.js";

/**
 * Requests are data: a runtime value of any of the generated request interfaces. Declared here so
 * guards can type the shared implementation once.
 */
export interface AnyPruneRequest {
  readonly mode: PruneMode;
  readonly digest?: string;
  readonly acceptLossy?: boolean;
}

/**
 * A window whose `append` brands refs with their kind's request type, and whose `prune` checks it.
 * `K` is constrained by `Requests`' keys rather than `Requests` by a mapped type over `K`: the same
 * rule (every kind has a request), which tsc checks without building a type of one property per kind.
 */
export interface GuardedWindow<K extends keyof Requests & string, Requests> {
  readonly session: string;
  /** Type only (never set): the prune request each kind accepts, so refs made for this window elsewhere (a `Transcript`'s) carry it. */
  readonly "~requests"?: Requests;
  /**
   * Appends a span; the ref carries the prune request its kind accepts. `const P` infers the same kind
   * (the literal `kind` as written) and costs tsc less per call against a large `K` (BENCHMARKS.md,
   * figure 5); a kind outside `K` is the same error at the same position.
   */
  append<const P extends K>(input: AppendInput<P>): Promise<SpanRef<P, Requests[P]>>;
  /**
   * Prunes through the runtime check. Throws `IrreversiblePruneError` when the copy cannot be verified
   * and the request did not accept a loss its policy allows. `S`, the ref's kind, is inferred with `R`:
   * matching the ref's own `SpanRef<S, R>` lets tsc take both from its type arguments and relate the
   * ref by identity, where a `SpanRef<string, R>` parameter compared every ref's brand structurally (a
   * cost per distinct kind; BENCHMARKS.md, figure 5). `R` comes first, so `prune<Request>(…)` written
   * out still means what it did (`S` then defaults to `string`).
   */
  prune<R, S extends string = string>(span: SpanRef<S, R>, request: NoInfer<R>): Promise<ReversibleOutcome | LossyOutcome>;
  /** `prune` without the throw: every outcome as data. */
  tryPrune<R, S extends string = string>(span: SpanRef<S, R>, request: NoInfer<R>): Promise<PruneOutcome>;
  /** The untrusted path for model output; never throws. */
  applyDirective(input: unknown): Promise<DirectiveOutcome>;
  /** A provider's call to a directive tool: the outcome and the tool result's text, `null` for other tools. */
  handleToolCall(call: ToolCall, tools?: readonly DirectiveTool[]): Promise<ToolCallResult | null>;
  recall(query: string): Promise<RecallOutcome>;
  /** The reversibility map: what a prune of each live span would be now, and the token pressure. Advisory. */
  map(): Promise<WindowMap>;
  /** Asks the stores whether pruned spans' copies are still there; lines of lost ones stop offering recall. */
  checkCopies(): Promise<number>;
  /** Replaces a run of positions with one digest, keeping the tree; every live member's copy is held first. */
  summarizeRange(request: { readonly from: string; readonly to: string; readonly digest: string }): Promise<RangeOutcome | InvalidOutcome>;
  /** Finds text again across live spans and pruned copies; names the pruned spans it could not search. */
  search(request: string | SearchRequest): Promise<SearchOutcome | InvalidOutcome>;
  /** Applies pending decisions to what the model reads now (a compaction point); see `ContextWindow.compact`. */
  compact(): Promise<CompactOutcome>;
  /** Compaction points made so far. */
  readonly compactionPoints: number;
  /** How many of `entries()` the last compaction point rendered (renderers put a cache breakpoint there). */
  readonly compactedEntries: number;
  render(options?: { readonly map?: boolean }): string;
  entries(): WindowEntry[];
  span(id: string): Span | undefined;
  tokens(): number;
  auditLog(): Promise<AuditRecord[]>;
  end(): Promise<void>;
}

/** Wraps a runtime window in its typed face; generated `createWindow` functions call this. */
export function guardWindow<K extends keyof Requests & string, Requests>(
  window: ContextWindow<K>,
): GuardedWindow<K, Requests> {
  const asRequest = (span: string, request: unknown): PruneRequest<K> => {
    const r = request as AnyPruneRequest;
    return {
      span: span as SpanRef<K>,
      mode: r.mode,
      ...(r.digest !== undefined ? { digest: r.digest } : {}),
      ...(r.acceptLossy !== undefined ? { acceptLossy: r.acceptLossy } : {}),
    };
  };
  return {
    session: window.session,
    append: (input) => window.append(input) as Promise<never>,
    prune: (span, request) => window.prune(asRequest(span, request)),
    tryPrune: (span, request) => window.tryPrune(asRequest(span, request)),
    applyDirective: (input) => window.applyDirective(input),
    handleToolCall: (call, tools) => window.handleToolCall(call, tools),
    recall: (query) => window.recall(query),
    map: () => window.map(),
    checkCopies: () => window.checkCopies(),
    search: (request) => window.search(request),
    summarizeRange: (request) => window.summarizeRange(request),
    compact: () => window.compact(),
    get compactionPoints() {
      return window.compactionPoints;
    },
    get compactedEntries() {
      return window.compactedEntries;
    },
    render: (options) => window.render(options),
    entries: () => window.entries(),
    span: (id) => window.span(id),
    tokens: () => window.tokens(),
    auditLog: () => window.auditLog(),
    end: () => window.end(),
  };
}
