/**
 * The runtime form of a policy: span kinds, prune modes, lossy rules, pins and session limits. It is what the
 * compiler's IR lowers to, what a generated guard passes to `ContextWindow`, and what the DSL's builders
 * produce; nothing here reads policy source.
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
export const LOSSY_RULES: readonly LossyRule[] = ["forbid", "with-flag"];

/** A named identifier pattern whose matches are carried into any digest or compressed form that lost them. */
export interface PinPattern {
  readonly name: string;
  /** An RE2 regular-expression source (see `policy/pins.ts`), matched line by line on re2js. */
  readonly pattern: string;
}

/**
 * The runtime form of one span kind's policy, and what a policy author writes for a kind. `S` is the union
 * of the policy's store names where the DSL knows it.
 */
export interface KindPolicy<S extends string = string> {
  /** The name of the backing store that keeps durable copies of this kind, or `null` when none does. */
  readonly store: S | null;
  /** The prune modes this kind allows; a directive in another mode is rejected. */
  readonly modes: readonly PruneMode[];
  /** `forbid`: a prune that cannot be proven reversible is rejected. `with-flag`: allowed with `accept_lossy: true`. */
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
  /**
   * The window's token limit (o200k_base, as rendered), shown as pressure in the reversibility map
   * (`map: 1234 tokens of 8000`). Advisory: the runtime does not truncate. `null` or absent: none.
   */
  readonly maxTokens?: number | null;
  /**
   * The most o200k tokens one search answer may cost in the window (matches and coverage together);
   * `null` or absent: `DEFAULT_SEARCH_TOKENS`.
   */
  readonly searchTokens?: number | null;
  /**
   * When the window rewrites what the model reads (a compaction point). A prune is checked, held, audited
   * and answered when it arrives, but applied — the span replaced by its index line, digest or tombstone —
   * only at a compaction point, so the provider's prompt cache keeps every earlier prefix between them.
   * `"immediate"`: every decision rewrites the window at once (no deferral). `null` or absent:
   * `DEFAULT_COMPACTION`.
   */
  readonly compaction?: CompactionPolicy | "immediate" | null;
  /**
   * Whether the session may let the provider compact its context (Anthropic's `compact_20260112` edit, OpenAI's
   * Responses compaction) through pruneguard's request builders, which check every span the provider may free
   * first (docs/provider-compaction.md). `"forbid"`, `null` or absent: the builders refuse.
   */
  readonly providerCompaction?: ProviderCompactionRule | null;
}

/** Whether a session may use a provider's own compaction: `forbid` (the default) or `allow`. */
export type ProviderCompactionRule = "forbid" | "allow";
export const PROVIDER_COMPACTION_RULES: readonly ProviderCompactionRule[] = ["forbid", "allow"];

/** When pending prunes are applied: the first of these, or an explicit request (`compact()`, the directive). */
export interface CompactionPolicy {
  /** Apply once the pending prunes would free at least this many tokens (o200k, as rendered). */
  readonly minFreedTokens: number;
  /**
   * Apply whatever is pending once the window renders at least this many tokens; `null`: the session's
   * `maxTokens`, or never when that is not set either.
   */
  readonly atTokens: number | null;
}

/**
 * The compaction a policy gets when it sets none. Chosen from benchmark figure 11 (BENCHMARKS.md): below
 * it a model that prunes every turn re-writes the cache more often than its prunes save; far above it
 * the window's peak grows towards never pruning.
 */
export const DEFAULT_COMPACTION: CompactionPolicy = Object.freeze({ minFreedTokens: 12_000, atTokens: null });
/** The smallest `minFreedTokens` a policy may set: a rewrite must at least pay for re-caching one block. */
export const MIN_COMPACTION_TOKENS = 1_024;

/**
 * A policy's kinds and their runtime rules. One alias for every place that holds the table (the policy,
 * the window's options and settings), so tsc relates them by identity: at thousands of kinds, two
 * spellings of the same mapped type cost a property-by-property comparison (BENCHMARKS.md, figure 5).
 */
export type KindTable<Kinds extends string = string> = { readonly [K in Kinds]: KindPolicy };

/** The runtime form of a whole policy: what `ContextWindow` needs to dispose of a directive. */
export interface RuntimePolicy<Kinds extends string = string> {
  readonly kinds: KindTable<Kinds>;
  readonly session?: SessionLimits;
  /** Pins that apply to every kind. */
  readonly pins?: readonly PinPattern[];
  /** Tombstone wording; `{span}` is replaced by the span id. At most 13 tokens once filled. */
  readonly tombstone?: string;
}

/** The search budget when the policy sets none: room for about eight snippets and the coverage line. */
export const DEFAULT_SEARCH_TOKENS = 400;
/** The smallest search budget: the coverage line must always fit. */
export const MIN_SEARCH_TOKENS = 64;
