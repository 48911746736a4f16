/**
 * `definePolicy` and `extendPolicy`: the two forms a policy module's default export may take.
 *
 * Both are pure: they return frozen plain data and touch nothing. The compiler never calls them; it reads
 * the same calls statically. They exist so authors get completion and type errors while writing, and so a
 * policy can be evaluated in a test without the compiler.
 */
import { DEFAULT_COMPACTION, type CompactionPolicy, type KindPolicy, type LossyRule, type PinPattern } from "../src/policy/kinds.js";
import { retentionMs, type Duration, type Forever } from "../src/policy/durations.js";
import type { PruneguardTypeError } from "../src/policy/type-error.js";
import type { StoreSpec } from "./store.js";

/** One span kind as an author declares it: the runtime's `KindPolicy`, with `store` one of the policy's store names. */
export type KindSpec<S extends string = string> = KindPolicy<S>;

/** Session-wide limits. */
export interface SessionSpec {
  /** The longest session the policy serves; analysis compares store retention against it. */
  readonly maxLength?: Duration | Forever;
  /** How many lossy commitments one session may make. Absent means unlimited. */
  readonly lossyBudget?: number;
  /**
   * The most o200k tokens one search answer may cost in the window (matches and the coverage line).
   * Absent: the runtime's default (400). At least 64, so the coverage line always fits.
   */
  readonly searchTokens?: number;
  /**
   * When the window applies the prunes it has decided (a compaction point); in between, the provider's
   * prompt cache keeps every earlier prefix. `"immediate"`: each prune rewrites the window when it is
   * decided. Absent: the runtime's default (`DEFAULT_COMPACTION`). An overlay's replaces its base's whole.
   */
  readonly compaction?: CompactionSpec | "immediate";
  /**
   * Whether a session may let the provider compact its context on the server (Anthropic's `compact_20260112`,
   * OpenAI's Responses compaction), through pruneguard's request builders, which check every span the
   * provider may free first (docs/provider-compaction.md). Absent: `"forbid"`. An overlay may forbid what
   * its base allows, never the reverse.
   */
  readonly providerCompaction?: "forbid" | "allow";
}

/** When pending prunes are applied: as soon as either is reached (or on an explicit request). */
export interface CompactionSpec {
  /** Apply once the pending prunes would free at least this many o200k tokens; at least 1,024. Absent: the default's. */
  readonly minFreedTokens?: number;
  /** Apply whatever is pending once the window renders this many tokens; above `minFreedTokens`. Absent: the window's `maxTokens`. */
  readonly atTokens?: number;
}

/**
 * The properties a kind may declare, with a type error on any other. `kinds` is inferred into a `const`
 * type parameter (so an overlay can see each base kind's modes and lossy rule), and TypeScript does not
 * check an inferred object literal for properties its constraint lacks: without this, a misspelt
 * `repersists: true` type-checks in the editor and only the compiler refuses it (PG1012). Each unknown
 * property must then be a `PruneguardTypeError`, which no value is, so the editor underlines it where it
 * is written and its message names the properties a kind takes.
 */
export type KnownKindProperties<K> = {
  readonly [k in keyof K]: { readonly [p in Exclude<keyof K[k], KindProperty>]: PruneguardTypeError<`a kind has no property \`${p & string}\`; it declares store, modes, lossy, repersist, pins and compressTargetTokens`> };
};
type KindProperty = keyof KindSpec;

/** Tombstone wording names the span it stands for, so a string without `{span}` is refused as it is typed. */
export type TombstoneWording = `${string}{span}${string}`;

/** The argument of `definePolicy`. */
export interface PolicySpec<S extends Record<string, StoreSpec>, K extends Record<string, KindSpec<Extract<keyof S, string>>>> {
  /** Lower-case, dash-separated; used for output file names (`generated/<name>.ir.json`). */
  readonly name: string;
  readonly stores: S;
  readonly kinds: K & KnownKindProperties<K>;
  readonly session?: SessionSpec;
  /** Pins that apply to every kind. */
  readonly pins?: readonly PinPattern[];
  /** Tombstone wording; must contain `{span}` (a type error otherwise, PG2007) and fit in 13 tokens once filled. */
  readonly tombstone?: TombstoneWording;
}

/** The normalised session limits a policy value carries. */
export interface SessionValue {
  readonly maxLengthMs: number | null;
  readonly lossyBudget: number | null;
  readonly searchTokens: number | null;
  /** `null`: the runtime's default (`DEFAULT_COMPACTION`). */
  readonly compaction: CompactionPolicy | "immediate" | null;
  /** `null`: not set (the runtime forbids it). */
  readonly providerCompaction: "forbid" | "allow" | null;
}

/** A policy as plain data: what `definePolicy` and `extendPolicy` return. */
export interface Policy<S = Record<string, StoreSpec>, K = Record<string, KindSpec<string>>> {
  readonly type: "pruneguard.policy";
  readonly name: string;
  /** The base policy's name for an overlay, `null` for an organisation policy. */
  readonly extends: string | null;
  readonly stores: S;
  readonly kinds: K;
  readonly session: SessionValue;
  readonly pins: readonly PinPattern[];
  readonly tombstone: string | null;
}

type StoreNames<P extends Policy<any, any>> = Extract<keyof P["stores"], string>;

/**
 * What an overlay may say about a kind its base declares. Each field replaces the base's, and the types only
 * allow tightening where that is knowable in advance: no modes the base does not allow, no `with-flag` where
 * the base says `forbid`. The compiler checks the rest (retention, pins) and explains any violation.
 */
export interface KindOverride<B extends KindSpec<string>, S extends string> {
  readonly store?: S | null;
  readonly modes?: readonly B["modes"][number][];
  readonly lossy?: B["lossy"] extends "forbid" ? "forbid" : LossyRule;
  readonly repersist?: boolean;
  readonly pins?: readonly PinPattern[];
  readonly compressTargetTokens?: number;
}

/** The kinds of an overlay: overrides of base kinds, or whole declarations of new ones. */
export type OverlayKinds<BK, K2, S extends string> = {
  readonly [k in keyof K2]: k extends keyof BK ? (BK[k] extends KindSpec<string> ? KindOverride<BK[k], S> : never) : KindSpec<S>;
};

/** The argument of `extendPolicy`. */
export interface OverlaySpec<P extends Policy<any, any>, S2 extends Record<string, StoreSpec>, K2> {
  readonly name: string;
  /** Stores added by the overlay; a store with the base's name replaces it (and may not retain for less). */
  readonly stores?: S2;
  readonly kinds?: K2 & KnownKindProperties<K2>;
  readonly session?: SessionSpec;
  readonly pins?: readonly PinPattern[];
  readonly tombstone?: TombstoneWording;
}

type Merge<A, B> = { readonly [k in keyof A | keyof B]: k extends keyof B ? B[k] : k extends keyof A ? A[k] : never };
type MergeKinds<BK, K2> = {
  readonly [k in keyof BK | keyof K2]: k extends keyof K2
    ? k extends keyof BK
      ? Merge<BK[k], K2[k]>
      : K2[k]
    : k extends keyof BK
      ? BK[k]
      : never;
};

/**
 * Declares an organisation (or stand-alone) policy. The module's default export must be this call or
 * `extendPolicy(...)`.
 *
 * Gotcha: a kind's `store` must name a key of `stores` (a type error here, PG2001 in the compiler).
 *
 * @example
 * export default definePolicy({
 *   name: "org",
 *   stores: { toolLog: store.sqlite({ retention: hours(2), holds: true }) },
 *   kinds: { toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag" } },
 * });
 */
export function definePolicy<
  const S extends Record<string, StoreSpec>,
  const K extends Record<string, KindSpec<Extract<keyof S, string>>>,
>(spec: PolicySpec<S, K>): Policy<S, K> {
  return deepFreeze({
    type: "pruneguard.policy",
    name: spec.name,
    extends: null,
    stores: { ...spec.stores },
    kinds: { ...spec.kinds },
    session: sessionValue(spec.session, { maxLengthMs: null, lossyBudget: null, searchTokens: null, compaction: null, providerCompaction: null }),
    pins: [...(spec.pins ?? [])],
    tombstone: spec.tombstone ?? null,
  });
}

/**
 * Declares a team overlay of a base policy (imported from the base's policy module).
 *
 * When to use: a team needs stricter rules than the organisation's. An overlay may only tighten: fields it
 * gives replace the base's, and the compiler rejects any that loosen (PG21xx) with a counterexample.
 *
 * @example
 * import org from "./org.policy.js";
 * export default extendPolicy(org, { name: "team-search", kinds: { toolResult: { lossy: "forbid" } } });
 */
export function extendPolicy<
  P extends Policy<any, any>,
  const S2 extends Record<string, StoreSpec> = {},
  const K2 extends OverlayKinds<P["kinds"], K2, StoreNames<P> | Extract<keyof S2, string>> = {},
>(base: P, overlay: OverlaySpec<P, S2, K2>): Policy<Merge<P["stores"], S2>, MergeKinds<P["kinds"], K2>> {
  const kinds: Record<string, KindSpec<string>> = { ...base.kinds };
  for (const [name, override] of Object.entries((overlay.kinds ?? {}) as Record<string, Partial<KindSpec<string>>>)) {
    kinds[name] = { ...(base.kinds as Record<string, KindSpec<string>>)[name], ...override } as KindSpec<string>;
  }
  return deepFreeze({
    type: "pruneguard.policy",
    name: overlay.name,
    extends: base.name,
    stores: { ...base.stores, ...overlay.stores },
    kinds,
    session: sessionValue(overlay.session, base.session),
    pins: [...(overlay.pins ?? (base.pins as readonly PinPattern[]))],
    tombstone: overlay.tombstone ?? base.tombstone,
  }) as unknown as Policy<Merge<P["stores"], S2>, MergeKinds<P["kinds"], K2>>;
}

function sessionValue(spec: SessionSpec | undefined, base: SessionValue): SessionValue {
  return {
    maxLengthMs: spec?.maxLength === undefined ? base.maxLengthMs : retentionMs(spec.maxLength),
    lossyBudget: spec?.lossyBudget ?? base.lossyBudget,
    searchTokens: spec?.searchTokens ?? base.searchTokens,
    compaction: spec?.compaction === undefined ? base.compaction : compactionValue(spec.compaction),
    providerCompaction: spec?.providerCompaction ?? base.providerCompaction,
  };
}

/** An object given whole: a field it leaves out takes the default, not the base's (overlays replace `compaction`). */
function compactionValue(spec: CompactionSpec | "immediate"): CompactionPolicy | "immediate" {
  if (spec === "immediate") return spec;
  return { minFreedTokens: spec.minFreedTokens ?? DEFAULT_COMPACTION.minFreedTokens, atTokens: spec.atTokens ?? null };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
