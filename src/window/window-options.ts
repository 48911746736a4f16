/**
 * What a caller gives a `ContextWindow`, and how the window checks it once, at construction: every kind
 * names a store it was given, allows some mode and has usable pins; store handles cannot collide; the
 * audit store exists. The kinds are frozen, so a caller mutating its policy object cannot change a live
 * window's rules.
 */
import { DEFAULT_LIMITS, type DirectiveLimits } from "../directive.js";
import { errorMessage } from "../errors.js";
import { DEFAULT_HINT_TOKENS, MAX_HINT_TOKENS } from "../hint.js";
import { findPins } from "../pin-carry.js";
import { MIN_SEARCH_TOKENS } from "../policy/kinds.js";
import { DEFAULT_TOMBSTONE } from "../render/lines.js";
import { MemoryStore } from "../stores/memory.js";
import { describeIssues, windowOptionsSchema } from "./window-options-schema.js";
import { checkStoreDeclarations } from "../stores/open.js";
import type { StoreDeclaration } from "../policy/stores.js";
import type { BackingStore } from "../stores/store.js";
import type { TelemetryOptions } from "../telemetry/index.js";
import type { DirectiveTool } from "../tools/schemas.js";
import { systemClock, type Clock, type KindPolicy, type KindTable, type PinPattern, type PruneMode, type SessionLimits, type SpanMessage, type SpanRef } from "../types.js";

/** Options of a `ContextWindow`. `kinds` is the runtime form of a policy (generated guards pass it). */
export interface ContextWindowOptions<K extends string> {
  /** The session this window belongs to; every store call is scoped to it. */
  readonly session: string;
  readonly kinds: KindTable<K>;
  /** The stores kinds name, by name. */
  readonly stores: { readonly [name: string]: BackingStore };
  readonly clock?: Clock;
  readonly limits?: SessionLimits;
  /** Pins for every kind (merged with each kind's own). */
  readonly pins?: readonly PinPattern[];
  /** Tombstone wording with `{span}`; at most 13 tokens when filled. */
  readonly tombstone?: string;
  /**
   * The store that logs decisions touching no store (invalid directives, unbacked kinds). Default: the
   * first store in `stores`, or a private in-memory one when there is none.
   */
  readonly auditStore?: string;
  readonly directiveLimits?: Partial<DirectiveLimits>;
  /**
   * The most o200k tokens a drop's index line spends on its hint of what the span held (a tool's name
   * and key argument, a file path, an identifier): 0 to `MAX_HINT_TOKENS` (16); default 12, 0 turns hints off.
   */
  readonly indexHintTokens?: number;
  /**
   * The name of the policy the kinds come from (a generated guard passes its own). Recorded in the home
   * store's chain at the window's first append (`op: "start"`); `resume` refuses a session begun under a
   * policy of another name (a guard imported by mistake would apply its own modes and lossy budget to the
   * session) unless `policyChange` is `"allow"`.
   */
  readonly policyName?: string;
  /** `"allow"`: `resume` takes a session begun under another policy's name. Default `"refuse"`. */
  readonly policyChange?: "allow" | "refuse";
  /**
   * The policy's store declarations (a generated guard passes its `storeDeclarations`): every store must
   * make exactly the declared promises — retention, holds, provenance, writability — or the window is not
   * created. The engine may differ (a `MemoryStore` in tests): the promises are what decide a prune.
   */
  readonly declarations?: { readonly [name: string]: StoreDeclaration };
  /**
   * OpenTelemetry spans and metrics of every decision (docs/observability.md). Left out: the global
   * tracer and meter providers of `@opentelemetry/api` when it is installed and an SDK registered them,
   * else nothing. `{ tracer, meter }` gives them (`null` turns one off); `{ queryText: n }` records a
   * search's first `n` characters (never by default). `false`: off, and the API is never loaded.
   */
  readonly telemetry?: TelemetryOptions | false;
  /**
   * The directive tools the model is given, as `handleToolCall` takes them (a generated guard passes its
   * own). A window learns them at its first `handleToolCall` anyway; given here, a resumed window knows at
   * once which restored tool calls were directive traffic and folds them at its first compaction point.
   */
  readonly directiveTools?: readonly DirectiveTool[];
}

/** A span to append. */
export interface AppendInput<K extends string> {
  readonly kind: K;
  readonly text: string;
  /** Tool call/result group: members prune together or not at all. Defaults to a tool message's `callId`. */
  readonly group?: string;
  /** Its place in a provider conversation, for `toOpenAI` / `toAnthropic` / `toAISDK`. */
  readonly message?: SpanMessage;
}

/** A prune written in code: the typed path. */
export interface PruneRequest<K extends string = string> {
  readonly span: SpanRef<K>;
  readonly mode: PruneMode;
  /** Required for `summarize`: the digest that replaces the span. */
  readonly digest?: string | undefined;
  /** Accept an irreversible loss when the copy cannot be verified (only where the kind allows it); `undefined` is absent. */
  readonly acceptLossy?: boolean | undefined;
}

/** The options, checked, with defaults filled in. */
export interface WindowSettings<K extends string> {
  readonly session: string;
  readonly kinds: KindTable<K>;
  readonly stores: ReadonlyMap<string, BackingStore>;
  readonly auditStore: BackingStore;
  readonly clock: Clock;
  readonly limits: SessionLimits;
  readonly pins: readonly PinPattern[];
  readonly tombstone: string;
  readonly directiveLimits: DirectiveLimits;
  readonly indexHintTokens: number;
  readonly policyName: string | null;
  readonly policyChange: "allow" | "refuse";
}

/** Checks a window's options; throws `TypeError` naming the first problem. */
export function resolveWindowOptions<K extends string>(options: ContextWindowOptions<K>): WindowSettings<K> {
  // The shape first, with zod: a value the runtime would misread (`lossy: "Forbid"`) is an error naming its field.
  const shape = windowOptionsSchema.safeParse(options);
  if (!shape.success) throw new TypeError(`ContextWindow: ${describeIssues(shape.error)}`);
  const kinds = freezeKinds(options.kinds);
  const stores = new Map(Object.entries(options.stores));
  const clock = options.clock ?? systemClock;
  const pins = options.pins ?? [];
  const tombstone = options.tombstone ?? DEFAULT_TOMBSTONE;
  if (!tombstone.includes("{span}")) throw new TypeError("ContextWindow: tombstone must contain {span}");
  for (const [name, policy] of Object.entries<KindPolicy>(kinds)) {
    if (policy.store !== null && !stores.has(policy.store)) {
      throw new TypeError(`ContextWindow: kind ${name} names store ${policy.store}, which is not in stores`);
    }
    if (policy.modes.length === 0) throw new TypeError(`ContextWindow: kind ${name} allows no prune mode`);
    // Compiles and safety-checks the kind's pins now, so a bad pattern fails here, not mid-prune.
    try {
      findPins("", kindPins(pins, policy));
    } catch (err) {
      throw new TypeError(`ContextWindow: kind ${name} has an unusable pin pattern: ${errorMessage(err)}`);
    }
  }
  if (options.declarations !== undefined) checkStoreDeclarations(options.declarations, stores);
  const searchTokens = options.limits?.searchTokens;
  if (searchTokens !== undefined && searchTokens !== null && !(Number.isInteger(searchTokens) && searchTokens >= MIN_SEARCH_TOKENS)) {
    throw new TypeError(`ContextWindow: limits.searchTokens must be an integer >= ${MIN_SEARCH_TOKENS} (room for the coverage line), got ${searchTokens}`);
  }
  const indexHintTokens = options.indexHintTokens ?? DEFAULT_HINT_TOKENS;
  if (!Number.isInteger(indexHintTokens) || indexHintTokens < 0 || indexHintTokens > MAX_HINT_TOKENS) {
    throw new TypeError(`ContextWindow: indexHintTokens must be an integer from 0 to ${MAX_HINT_TOKENS}`);
  }
  const prefixes = new Map<string, string>();
  for (const [name, store] of stores) {
    const other = prefixes.get(store.handlePrefix);
    if (other !== undefined && other !== name) {
      throw new TypeError(`ContextWindow: stores ${other} and ${name} both mint ${store.handlePrefix}#n handles; give one a handlePrefix`);
    }
    prefixes.set(store.handlePrefix, name);
  }
  let auditStore: BackingStore;
  if (options.auditStore !== undefined) {
    const s = stores.get(options.auditStore);
    if (!s) throw new TypeError(`ContextWindow: auditStore ${options.auditStore} is not in stores`);
    auditStore = s;
  } else {
    auditStore = stores.values().next().value ?? new MemoryStore({ name: "audit", clock });
  }
  return {
    session: options.session,
    kinds,
    stores,
    auditStore,
    clock,
    limits: options.limits ?? {},
    pins,
    tombstone,
    directiveLimits: options.directiveLimits ? { ...DEFAULT_LIMITS, ...options.directiveLimits } : DEFAULT_LIMITS,
    indexHintTokens,
    policyName: options.policyName ?? null,
    policyChange: options.policyChange ?? "refuse",
  };
}

/** A kind's pins: the window's own, then the kind's. */
export function kindPins(windowPins: readonly PinPattern[], policy: KindPolicy): readonly PinPattern[] {
  return [...windowPins, ...(policy.pins ?? [])];
}

function freezeKinds<K extends string>(kinds: KindTable<K>): KindTable<K> {
  const out: Record<string, KindPolicy> = Object.create(null) as Record<string, KindPolicy>;
  for (const [name, k] of Object.entries<KindPolicy>(kinds)) {
    out[name] = Object.freeze({
      ...k,
      modes: Object.freeze([...k.modes]),
      ...(k.pins ? { pins: Object.freeze(k.pins.map((p) => Object.freeze({ ...p }))) } : {}),
    });
  }
  return Object.freeze(out) as KindTable<K>;
}
