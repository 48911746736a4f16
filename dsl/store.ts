/**
 * Backing-store declarations. A store is where a kind's durable copies live; whether a prune is reversible
 * depends on what the store can do, so each property here is something the runtime relies on.
 */
import { retentionMs, type Retention } from "../src/policy/durations.js";
import { STORE_DEFAULTS, type Engine, type StoreDeclaration, type StorePromises } from "../src/policy/stores.js";

export { ENGINES, STORE_DEFAULTS } from "../src/policy/stores.js";
export type { Engine } from "../src/policy/stores.js";

/** What an author writes inside `store.sqlite({ ... })`. */
export interface StoreOptions extends StorePromises {
  /** How long a copy survives before rotation. Required: "forever" has to be said, not assumed. */
  readonly retention: Retention;
}

/** A store declaration as plain data: what the DSL returns and the compiler's IR mirrors. */
export type StoreSpec<E extends Engine = Engine> = StoreDeclaration<E>;

function make<E extends Engine>(engine: E, options: StoreOptions): StoreSpec<E> {
  return Object.freeze({
    engine,
    retentionMs: retentionMs(options.retention),
    holds: options.holds ?? STORE_DEFAULTS.holds,
    distinguishesAbsent: options.distinguishesAbsent ?? STORE_DEFAULTS.distinguishesAbsent,
    writable: options.writable ?? STORE_DEFAULTS.writable,
  });
}

/**
 * Declares a backing store.
 *
 * @example
 * stores: { toolLog: store.sqlite({ retention: hours(2), holds: true }) }
 */
export const store = Object.freeze({
  /** In-process memory; for tests and short-lived agents. */
  memory: (options: StoreOptions): StoreSpec<"memory"> => make("memory", options),
  /** An embedded SQLite file; the default for a single agent process. */
  sqlite: (options: StoreOptions): StoreSpec<"sqlite"> => make("sqlite", options),
  /** PostgreSQL, shared by many agent processes. */
  postgres: (options: StoreOptions): StoreSpec<"postgres"> => make("postgres", options),
});
