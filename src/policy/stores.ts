/**
 * Store declarations as data: which engines exist, what a store promises, and the defaults a declaration
 * gets. The DSL builds these, the compiler reads them statically, the runtime's adapters take the same
 * defaults, so none of the three can disagree on what an unspecified property means.
 */

/** The store adapters the runtime ships. */
export type Engine = "memory" | "sqlite" | "postgres";
export const ENGINES: readonly Engine[] = Object.freeze(["memory", "sqlite", "postgres"]);

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
