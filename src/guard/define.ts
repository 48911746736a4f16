/**
 * The wiring every generated guard shares, written once. A guard module holds its policy's tables (kinds,
 * pins, session limits, store declarations) and its types, and hands them to `defineGuard`, which turns them
 * into what agent code calls: `openStores`, `createWindow`, `resumeWindow`, the runtime policy, and the
 * directive schema and tools narrowed to the policy's modes. Keeping the wiring here rather than in each
 * emitted file means a fix to it reaches every compiled policy without recompiling, and a guard read
 * during an incident is data plus one call.
 */
import { DEFAULT_LIMITS, directiveSchema } from "../directive.js";
import type { StoreDeclaration } from "../policy/stores.js";
import { openStores, type OpenStoresOptions } from "../stores/open.js";
import type { BackingStore } from "../stores/store.js";
import type { TelemetryOptions } from "../telemetry/index.js";
import { directiveTools, type DirectiveTool } from "../tools/schemas.js";
import { guardWindow, type GuardedWindow } from "../typed.js";
import type { Clock, KindTable, PinPattern, PruneMode, RuntimePolicy, SessionLimits } from "../types.js";
import type { ContextWindowOptions } from "../window/window-options.js";
import { ContextWindow } from "../window/window.js";

/** The zod schema of model directives, as `directiveSchema` builds it. */
export type DirectiveSchema = ReturnType<typeof directiveSchema>;

/** One backing store per store name the policy declares. */
export type DeclaredStores<StoreName extends string> = { readonly [P in StoreName]: BackingStore };

/** A policy's tables, as its generated guard passes them to `defineGuard`. */
export interface GuardDefinition<SpanKind extends string, PolicyName extends string, StoreName extends string> {
  readonly name: PolicyName;
  readonly kinds: KindTable<SpanKind>;
  readonly session: SessionLimits;
  /** Pins that apply to every kind. */
  readonly pins: readonly PinPattern[];
  /** Tombstone wording with `{span}`; left out, the runtime's default. */
  readonly tombstone?: string;
  readonly storeDeclarations: { readonly [P in StoreName]: StoreDeclaration };
  /** The store that logs decisions touching no store when `createWindow` names none: the policy's first. */
  readonly defaultAuditStore?: StoreName;
  /** The prune modes a model directive may name: those of the kinds that can be pruned at all. */
  readonly directiveModes: readonly PruneMode[];
}

/** Options of a guard's `createWindow` and `resumeWindow`. */
export interface GuardWindowOptions<StoreName extends string, Stores extends DeclaredStores<StoreName> = DeclaredStores<StoreName>> {
  /** The session this window belongs to; every store call is scoped to it. */
  readonly session: string;
  /** Every store the policy declares, by its name; the window checks each against its declaration. */
  readonly stores: Stores;
  /** A source of time; default: the system clock. */
  readonly clock?: Clock;
  /** The store that logs decisions touching no store (invalid directives, unbacked kinds); default: the policy's first. */
  readonly auditStore?: StoreName;
  /**
   * OpenTelemetry spans and metrics of every decision, as `ContextWindowOptions.telemetry` (docs/observability.md).
   * Left out: the global tracer and meter providers of `@opentelemetry/api`, when it is installed and an SDK
   * registered them; else nothing. `{ tracer, meter }` gives them (`null` turns one off; a field left out is taken
   * from the global API); `{ queryText: n }` records a search's first `n` characters (never by default). `false`:
   * off, and the API is never loaded.
   */
  readonly telemetry?: TelemetryOptions | false;
  /**
   * `"allow"`: `resumeWindow` takes a session begun under another policy (as `ContextWindowOptions.policyChange`).
   * Default: such a resume is refused, naming the policy that began the session.
   */
  readonly policyChange?: "allow" | "refuse";
}

/**
 * What a guard exports, typed by its policy. The functions are closures over the definition (no `this`), so a
 * guard re-exports them as plain constants.
 */
export interface PolicyGuard<
  SpanKind extends keyof Requests & string,
  Requests,
  PolicyName extends string,
  StoreName extends string,
  Stores extends DeclaredStores<StoreName>,
> {
  readonly name: PolicyName;
  /** The runtime form of the policy, as `ContextWindow` takes it. */
  readonly policy: RuntimePolicy<SpanKind>;
  /** Opens the declared stores, each with its declared retention, holds, provenance and writability. */
  readonly openStores: (options: OpenStoresOptions) => Promise<Stores>;
  /** A window whose prunes are typed by the policy and checked at run time against its stores. */
  readonly createWindow: (options: GuardWindowOptions<StoreName, Stores>) => GuardedWindow<SpanKind, Requests, PolicyName>;
  /** The window of an existing session, reopened from its stores. */
  readonly resumeWindow: (options: GuardWindowOptions<StoreName, Stores>) => Promise<GuardedWindow<SpanKind, Requests, PolicyName>>;
  readonly directiveModes: readonly PruneMode[];
  readonly directiveSchema: DirectiveSchema;
  readonly directiveTools: readonly DirectiveTool[];
}

/**
 * Wires a policy's tables to the runtime; generated guards call it once. The type parameters come from the
 * guard's types module and are given explicitly: `Requests` and `PolicyName` exist only in types, and naming
 * `SpanKind` spares tsc inferring it from a table of thousands of kinds in every consumer's program.
 */
export function defineGuard<
  SpanKind extends keyof Requests & string,
  Requests,
  PolicyName extends string,
  StoreName extends string,
  Stores extends DeclaredStores<StoreName> = DeclaredStores<StoreName>,
>(definition: GuardDefinition<SpanKind, PolicyName, StoreName>): PolicyGuard<SpanKind, Requests, PolicyName, StoreName, Stores> {
  const { name, kinds, session, pins, tombstone, storeDeclarations, defaultAuditStore, directiveModes } = definition;
  const policy: RuntimePolicy<SpanKind> = { kinds, session, pins, ...(tombstone === undefined ? {} : { tombstone }) };
  const storeNames = Object.keys(storeDeclarations) as StoreName[];
  const tools = directiveTools({ modes: directiveModes });
  const windowOptions = (options: GuardWindowOptions<StoreName, Stores>): ContextWindowOptions<SpanKind> => {
    const auditStore = options.auditStore ?? defaultAuditStore;
    return {
      session: options.session,
      kinds,
      // Exactly the declared stores: an object holding more (stores shared with another policy's windows)
      // must not bring the window a store it would audit to by default or find a handle collision with.
      stores: Object.fromEntries(storeNames.map((n) => [n, options.stores[n]])),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
      limits: session,
      declarations: storeDeclarations,
      ...(pins.length === 0 ? {} : { pins }),
      ...(tombstone === undefined ? {} : { tombstone }),
      ...(auditStore === undefined ? {} : { auditStore }),
      directiveTools: tools,
      // The session records which policy wrote it; a resume under another guard is refused unless allowed.
      policyName: name,
      ...(options.policyChange === undefined ? {} : { policyChange: options.policyChange }),
    };
  };
  const guarded = (window: ContextWindow<SpanKind>) => guardWindow<SpanKind, Requests, PolicyName>(window);
  return {
    name,
    policy,
    // `openStores` returns the declared names' stores; `Stores` is the guard's documented spelling of that type.
    openStores: (options) => openStores(storeDeclarations, options) as Promise<Stores>,
    createWindow: (options) => guarded(new ContextWindow<SpanKind>(windowOptions(options))),
    resumeWindow: (options) => ContextWindow.resume<SpanKind>(windowOptions(options)).then(guarded),
    directiveModes,
    directiveSchema: directiveSchema(DEFAULT_LIMITS, directiveModes),
    directiveTools: tools,
  };
}
