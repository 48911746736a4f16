/**
 * `pruneguard/postgres`: the PostgreSQL store, for many agent processes sharing one store, and the schema
 * migration operators run before starting them. The only module that loads `pg`.
 */
// First: on a Node below the supported version, importing fails here, with one clear message.
import "./assert-node.js";
export { PostgresStore, migrate, createPool, PG_URL_ENV, DEFAULT_SCHEMA, SCHEMA_VERSION } from "./stores/postgres/postgres-store.js";
export type { PostgresStoreOptions, PostgresStoreStats, PgQueryable, PoolOptions, MigrateTarget } from "./stores/postgres/postgres-store.js";
