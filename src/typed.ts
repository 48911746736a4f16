/**
 * The typed face of a window, for generated guard modules.
 *
 * A generated module declares, per span kind, the exact prune request that kind accepts (a named
 * interface per rule, instantiated with the kind and the policy so a refusal names both), and passes the
 * map `kind → request` as `Requests` and its name as `Policy`. `append` returns a `SpanRef<K, Policy>`.
 * `prune(span, request)` takes the ref's kind from the ref and the rule from this window's own table:
 * however the ref was typed (by `append`, by hand as `SpanRef<"kind">`, as a bare `Ref`, by a
 * `Transcript` or a `ContextWindow`), the request is checked against this policy's rule for that kind,
 * and against every member's rule when the ref may be of several kinds. A ref of another policy does not
 * compile; a ref of another window of the same policy is refused at run time.
 */
import type { AuditRecord } from "./audit.js";
import type { CompactOutcome, DirectiveOutcome, WindowMap, InvalidOutcome, LossyOutcome, PruneOutcome, RangeOutcome, RecallOutcome, ReversibleOutcome, SearchOutcome } from "./outcome.js";
import type { SearchRequest } from "./window/search.js";
import type { ToolCall, ToolCallResult } from "./tools/call.js";
import type { DirectiveTool } from "./tools/schemas.js";
import type { AppendInput, PruneRequest } from "./window/window-options.js";
import type { WindowEntry } from "./window/view.js";
import type { ContextWindow } from "./window/window.js";
import type { PruneMode, Span, SpanRef } from "./types.js";

/** A readable compile error: a forbidden request type is one (defined with the policy vocabulary, which the DSL uses too). */
export type { PruneguardTypeError } from "./policy/type-error.js";
import type { PruneguardTypeError } from "./policy/type-error.js";

/**
 * The request a prune of a ref of kind(s) `S` must carry: for one kind, its rule; for a union, every
 * member's rule at once (the intersection, so the strictest wins: a forbid kind in the union forbids
 * `acceptLossy: true`, a never-prunable one refuses every request). Distributing over `S` and reading the
 * intersection back through a parameter position is how TypeScript turns a union into one.
 */
export type StrictestRequest<Requests, S extends keyof Requests> =
  (S extends unknown ? (request: Requests[S]) => void : never) extends (request: infer I) => void ? I : never;

/**
 * `StrictestRequest`, or a message when no request satisfies every kind the ref may be of (their modes
 * differ): the kind is not known statically, so the prune needs a ref of one kind or the checked path.
 */
export type PruneRequestOf<Requests, S extends keyof Requests, Policy extends string> = [StrictestRequest<Requests, S>] extends [never]
  ? PruneguardTypeError<`no one request satisfies every kind this ref may be of under policy ${Policy}: take a ref of one kind with win.ref(id, kind), or send the prune through applyDirective, which checks the span's kind at run time`>
  : StrictestRequest<Requests, S>;

/** The request a prune of a ref takes: the one its type carries (set by generated code), else the policy's. */
export type RequestFor<Requests, S extends keyof Requests, Policy extends string, R> = unknown extends R ? PruneRequestOf<Requests, S, Policy> : R;

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
 * A window whose `append` brands refs with its policy, and whose `prune` checks each request against its
 * policy's rule for the ref's kind. `K` is constrained by `Requests`' keys rather than `Requests` by a
 * mapped type over `K`: the same rule (every kind has a request), which tsc checks without building a type
 * of one property per kind.
 */
export interface GuardedWindow<K extends keyof Requests & string, Requests, Policy extends string = string> {
  readonly session: string;
  /** This window object's identity, as its refs carry it; a ref of another window is refused. */
  readonly windowId: string;
  /** Type only (never set): the policy this window's refs carry, so refs made for it elsewhere (a `Transcript`'s) carry it too. */
  readonly "~policy"?: Policy;
  /**
   * Appends a span; the ref carries its kind and this window's policy. `const P` infers the same kind
   * (the literal `kind` as written) and costs tsc less per call against a large `K` (BENCHMARKS.md,
   * figure 5); a kind outside `K` is the same error at the same position.
   */
  append<const P extends K>(input: AppendInput<P>): Promise<SpanRef<P, Policy, Requests[P]>>;
  /**
   * Prunes through the runtime check. Throws `IrreversiblePruneError` when the copy cannot be verified
   * and the request did not accept a loss its policy allows, or when `span` is not a ref of this window.
   * `S`, the ref's kind, and `R`, its request, are inferred from the ref's own `SpanRef<S, …, R>` (tsc
   * relates it by identity, at no cost per kind; BENCHMARKS.md, figure 5). The request is this policy's rule
   * for `S`: the ref's `R` when generated code set it (`append`, `Ref<K>`), else worked out here.
   */
  prune<S extends K, R = unknown>(span: SpanRef<S, Policy, R>, request: NoInfer<RequestFor<Requests, S, Policy, R>>): Promise<ReversibleOutcome | LossyOutcome>;
  /** `prune` without the throw: every outcome as data, a ref of another window a `rejected` one (`foreign-ref`). */
  tryPrune<S extends K, R = unknown>(span: SpanRef<S, Policy, R>, request: NoInfer<RequestFor<Requests, S, Policy, R>>): Promise<PruneOutcome>;
  /**
   * The ref of a span this window holds, from its id (`span_7`, as entries, outcomes and the model name it)
   * or from a ref of this session written down earlier (JSON, a database, a window before a restart).
   * Checked now, not cast: an id this window does not know, a ref of another session, or a span of another
   * kind than `kind` throws a `RefError`. Without `kind`, the ref may be of any kind, and a prune of it must
   * satisfy every kind's rule; name the kind to prune it under its own.
   */
  ref<const P extends K = K>(id: string, kind?: P): SpanRef<P, Policy>;
  /** The refs of the live spans, in window order: after `resumeWindow`, every span that came back, with no cast. */
  refs(): SpanRef<K, Policy>[];
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

/** Wraps a runtime window in its typed face; a generated guard's `createWindow` does, through `defineGuard`. */
export function guardWindow<K extends keyof Requests & string, Requests, Policy extends string = string>(
  window: ContextWindow<K>,
): GuardedWindow<K, Requests, Policy> {
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
    windowId: window.windowId,
    append: (input) => window.append(input) as Promise<never>,
    ref: (id, kind) => window.ref(id, kind) as never,
    refs: () => window.refs() as never,
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
