/**
 * Store declarations as data: which engines exist, what a store promises, and the defaults a declaration
 * gets. The DSL builds these, the compiler reads them statically, the runtime's adapters take the same
 * defaults, so none of the three can disagree on what an unspecified property means.
 */

/** What the DSL, the compiler and `openStores` need to know of a store engine. */
export interface EngineEntry {
  /**
   * Whether the engine's copies and audit chain outlive the process that wrote them (a restart, another
   * process). A durable engine's records are what `pruneguard audit` reads after the fact.
   */
  readonly durable: boolean;
}

/**
 * The store engines the runtime ships: registering an engine is one entry here. `store.<engine>` in the
 * DSL, the IR's engine enum and the compiler's diagnostics are derived from it. The runtime's half is one
 * entry in `ENGINE_ADAPTERS` (`src/stores/engine-adapters.ts`: its opener, where its stores live, its audit
 * source), typed over `Engine`, so a new entry here does not compile until it can be opened (and, durable,
 * audited); this base layer cannot hold it, as it imports nothing from the runtime. Every shipped engine
 * supports all three promises, so the defaults are `STORE_DEFAULTS`, one for all of them.
 */
export const STORE_ENGINES = Object.freeze({
  /** In-process memory; for tests and short-lived agents. */
  memory: Object.freeze({ durable: false }),
  /** An embedded SQLite file; the default for a single agent process. */
  sqlite: Object.freeze({ durable: true }),
  /** PostgreSQL, shared by many agent processes. */
  postgres: Object.freeze({ durable: true }),
} as const) satisfies Readonly<Record<string, EngineEntry>>;

/** The store adapters the runtime ships. */
export type Engine = keyof typeof STORE_ENGINES;
/** The engines whose records outlive the process (`EngineEntry.durable`). */
export type DurableEngine = { [E in Engine]: (typeof STORE_ENGINES)[E]["durable"] extends true ? E : never }[Engine];
/** The engines in the table's order (the order diagnostics list them in). */
export const ENGINES = Object.freeze(Object.keys(STORE_ENGINES)) as readonly [Engine, ...Engine[]];

/** Whether `name` is an engine of the table (an own key: `toString` is not an engine). */
export function isEngine(name: string): name is Engine {
  return Object.hasOwn(STORE_ENGINES, name);
}

/** The promises a store makes, each optional where it is written; `STORE_DEFAULTS` fills the gaps. */
export interface StorePromises {
  /** The store can place a retention hold so a copy referenced by the window outlives rotation. Default `true`. */
  readonly holds?: boolean;
  /** Retrieval tells "pruned" apart from "never existed" (provenance). Default `true`. */
  readonly distinguishesAbsent?: boolean;
  /** The runtime may write copies back (re-persist). Default `true`. */
  readonly writable?: boolean;
}

/** Defaults for the optional store promises: every shipped adapter supports all three. */
export const STORE_DEFAULTS = Object.freeze({ holds: true, distinguishesAbsent: true, writable: true } as const);

/** A store declaration as plain data: what the DSL returns, the compiler's IR mirrors and generated guards list. */
export interface StoreDeclaration<E extends Engine = Engine> {
  readonly engine: E;
  /** Milliseconds, or `null` for forever. */
  readonly retentionMs: number | null;
  readonly holds: boolean;
  readonly distinguishesAbsent: boolean;
  readonly writable: boolean;
}
