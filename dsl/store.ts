/**
 * Backing-store declarations. A store is where a kind's durable copies live; whether a prune is reversible
 * depends on what the store can do, so each property here is something the runtime relies on.
 */
import { retentionMs, type Retention } from "../src/policy/durations.js";
import { ENGINES, STORE_DEFAULTS, type Engine, type STORE_ENGINES, type StoreDeclaration, type StorePromises } from "../src/policy/stores.js";

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
 * The builders of `store`, one per engine of `STORE_ENGINES`. Mapped over the table's own type, so each
 * builder carries its engine's documentation and a new engine gets its builder without an edit here.
 */
export type StoreBuilders = { readonly [E in keyof typeof STORE_ENGINES]: (options: StoreOptions) => StoreSpec<E> };

/**
 * Declares a backing store.
 *
 * @example
 * stores: { toolLog: store.sqlite({ retention: hours(2), holds: true }) }
 */
export const store: StoreBuilders = Object.freeze(
  Object.fromEntries(ENGINES.map((engine) => [engine, (options: StoreOptions) => make(engine, options)])) as unknown as StoreBuilders,
);
