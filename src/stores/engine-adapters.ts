/**
 * The runtime's half of a store engine's registration: per engine of `STORE_ENGINES`
 * (`src/policy/stores.ts`, the vocabulary the DSL, the IR and the compiler read), one entry here saying
 * how a store declared on it is opened (`openStores`), where its stores live (its field of
 * `OpenStoresOptions`, derived from the entry), and how `pruneguard audit` reads it after the fact.
 *
 * The table is typed over `Engine`: an engine added to `STORE_ENGINES` does not compile until it has an
 * entry here, and a durable one until it has an audit source. The policy base layer imports nothing from
 * the runtime, so the two halves cannot be one object; this one is the only other place an engine is named.
 *
 * An engine's adapter and audit reader are loaded only when used: agent code that never opens a PostgreSQL
 * store never loads pg, auditing a SQLite file never loads it either, and `pruneguard audit`, which looks
 * its engine up here, loads no adapter.
 */
import type { Engine, STORE_ENGINES } from "../policy/stores.js";
import type { Clock } from "../types.js";
import type { AuditReader } from "./audit-reader.js";
import type { BackingStore } from "./store.js";

/** What every opener is given: the declared promises under the store's name. */
export interface OpenedStoreOptions {
  readonly name: string;
  readonly retentionMs: number | null;
  readonly holds: boolean;
  readonly distinguishesAbsent: boolean;
  readonly writable: boolean;
  readonly handlePrefix: string;
  readonly clock?: Clock;
}

/**
 * How `pruneguard audit` names a durable engine's stores: by a file (`pruneguard audit <file>`) or by a URL
 * (`--url`, with `--schema`). The command's flags are fixed; each kind is read by one engine.
 */
export interface AuditSource {
  readonly by: "file" | "url";
  /** What the location looks like, for the command's usage errors (`postgres://user@host/db`). */
  readonly form: string;
  /**
   * Opens the stores at `location` (an absolute path, or a URL) read only; throws `AuditReadError`. `label`
   * names a file in messages as the user wrote it (default: the path); a URL source names itself, never by
   * the URL, which may carry a password. `schema` is `--schema`.
   */
  open(location: string, options: { readonly label?: string; readonly schema?: string }): Promise<AuditReader>;
}

/**
 * One engine as the runtime knows it. `Place` is where its stores live, as `OpenStoresOptions` takes it
 * under the engine's name; `undefined` for an engine whose stores need no place (no option then).
 */
export interface EngineAdapter<Place extends object | undefined = undefined> {
  /** Opens one store declared on the engine, at `place` (absent when the caller gave none). */
  readonly open: (store: OpenedStoreOptions, place: Place | undefined) => Promise<BackingStore>;
  /** How `pruneguard audit` reads the engine's stores; `null` for an engine whose records die with the process. */
  readonly audit: AuditSource | null;
}

/** Where `sqlite` stores live. */
export interface SqlitePlace {
  /** The SQLite file every `sqlite` store keeps its records in (stores share one file by name). */
  readonly path: string;
  readonly busyTimeoutMs?: number;
}

/** Where `postgres` stores live: a pool to share (never ended by the stores), or a URL (default: `PRUNEGUARD_PG_URL`). */
export interface PostgresPlace {
  /** A `pg.Pool` or an in-process PGlite (typed loosely so this entry point does not need pg's types). */
  readonly pool?: object;
  readonly url?: string;
  readonly schema?: string;
  readonly statementTimeoutMs?: number | null;
}

/**
 * The engines, each with its opener and audit source. A property's comment is the comment of its field of
 * `OpenStoresOptions` (an engine with a place).
 */
export const ENGINE_ADAPTERS = Object.freeze({
  memory: {
    // Each opener returns a `BackingStore`, not its class: the declarations of this table must not name an
    // adapter's module, or a consumer type-checking without pg installed would need pg's types.
    open: async (store): Promise<BackingStore> => new (await import("./memory.js")).MemoryStore(store),
    audit: null,
  },
  /** Where every `sqlite` store keeps its records: one SQLite file (stores share it, by name). */
  sqlite: {
    open: async (store, place: SqlitePlace | undefined): Promise<BackingStore> => {
      if (place === undefined) throw new TypeError(`openStores: store ${store.name} is declared sqlite; give a sqlite path`);
      const { SqliteStore } = await import("./sqlite/sqlite-store.js");
      return new SqliteStore({ ...store, path: place.path, ...(place.busyTimeoutMs !== undefined ? { busyTimeoutMs: place.busyTimeoutMs } : {}) });
    },
    audit: {
      by: "file",
      form: "a SQLite file",
      open: async (file, { label }) => (await import("./sqlite/sqlite-audit.js")).openSqliteAuditReader(file, label === undefined ? {} : { label }),
    },
  },
  /**
   * The PostgreSQL database of every `postgres` store: a pool to share (never ended by the stores), or a
   * URL (default: `PRUNEGUARD_PG_URL`); the schema must be migrated (`pruneguard migrate`).
   */
  postgres: {
    open: async (store, place: PostgresPlace = {}): Promise<BackingStore> => {
      const { PostgresStore } = await (await import("./postgres/load.js")).loadPostgresStore();
      return PostgresStore.connect({
        ...store,
        ...(place.pool !== undefined ? { pool: place.pool as NonNullable<Parameters<typeof PostgresStore.connect>[0]["pool"]> } : {}),
        ...(place.url !== undefined ? { url: place.url } : {}),
        ...(place.schema !== undefined ? { schema: place.schema } : {}),
        ...(place.statementTimeoutMs !== undefined ? { statementTimeoutMs: place.statementTimeoutMs } : {}),
      });
    },
    audit: {
      by: "url",
      form: "postgres://user[:password]@host[:port]/database",
      open: async (url, { schema }) => {
        const { loadPostgresAudit, loadPostgresStore } = await import("./postgres/load.js");
        const [{ openPostgresAuditReader }, { DEFAULT_SCHEMA }] = await Promise.all([loadPostgresAudit(), loadPostgresStore()]);
        return openPostgresAuditReader(url, schema ?? DEFAULT_SCHEMA);
      },
    },
  },
}) satisfies {
  // Every engine of the table, and a durable one with an audit source (a non-durable one has none).
  readonly [E in Engine]: EngineAdapter<never> & { readonly audit: (typeof STORE_ENGINES)[E]["durable"] extends true ? AuditSource : null };
};

/** Where the stores of engine `E` live, read from its opener's second parameter (`never`: it has none). */
type PlaceOf<E extends Engine> = Exclude<Parameters<(typeof ENGINE_ADAPTERS)[E]["open"]>[1], undefined>;

/** A field per engine whose stores need a place: the part of `OpenStoresOptions` that says where stores live. */
export type EnginePlaces = { readonly [E in keyof typeof ENGINE_ADAPTERS as [PlaceOf<E>] extends [never] ? never : E]?: PlaceOf<E> };

/**
 * Opens a store declared on `engine` at its place in `places`: the field of the engine's name. An engine whose
 * stores need no place ignores what it is given (for `memory`, `OpenStoresOptions.memory`, the test switch).
 */
export function openOnEngine(engine: Engine, store: OpenedStoreOptions, places: EnginePlaces): Promise<BackingStore> {
  const entry = ENGINE_ADAPTERS[engine] as EngineAdapter<object | undefined>;
  return entry.open(store, (places as { readonly [E in Engine]?: object })[engine]);
}

/**
 * The engine whose stores `pruneguard audit` reads by a file, or by a URL, with its audit source; `null` when
 * none does.
 */
export function auditEngine(by: AuditSource["by"]): { readonly engine: Engine; readonly source: AuditSource } | null {
  for (const engine of Object.keys(ENGINE_ADAPTERS) as Engine[]) {
    const source: AuditSource | null = ENGINE_ADAPTERS[engine].audit;
    if (source?.by === by) return { engine, source };
  }
  return null;
}
