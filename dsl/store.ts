/**
 * Backing-store declarations. A store is where a kind's durable copies live; whether a prune is reversible
 * depends on what the store can do, so each property here is something the runtime relies on.
 */
import { retentionMs, type Retention } from "./durations.js";

/** The store adapters the runtime ships. */
export type Engine = "memory" | "sqlite" | "postgres";
export const ENGINES: readonly Engine[] = Object.freeze(["memory", "sqlite", "postgres"]);

/** What an author writes inside `store.sqlite({ ... })`. */
export interface StoreOptions {
  /** How long a copy survives before rotation. Required: "forever" has to be said, not assumed. */
  readonly retention: Retention;
  /** The store can place a retention hold so a copy referenced by the window outlives rotation. Default `true` (every shipped adapter supports holds). */
  readonly holds?: boolean;
  /** Retrieval tells "pruned" apart from "never existed" (provenance). Default `true`. */
  readonly distinguishesAbsent?: boolean;
  /** The runtime may write copies back (re-persist). Default `true`. */
  readonly writable?: boolean;
}

/** A store declaration as plain data: what the DSL returns and the compiler's IR mirrors. */
export interface StoreSpec<E extends Engine = Engine> {
  readonly engine: E;
  /** Milliseconds, or `null` for forever. */
  readonly retentionMs: number | null;
  readonly holds: boolean;
  readonly distinguishesAbsent: boolean;
  readonly writable: boolean;
}

/**
 * Defaults for the optional store properties. The compiler reads this table too, so a policy compiled and a
 * policy evaluated can never disagree.
 */
export const STORE_DEFAULTS = Object.freeze({ holds: true, distinguishesAbsent: true, writable: true } as const);

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
