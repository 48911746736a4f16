/**
 * `pruneguard migrate`: creates or upgrades the PostgreSQL store's schema. Idempotent; exit 0 or 2.
 *
 * This module only registers the command; `migrate.run.ts` (the PostgreSQL store and driver) is loaded
 * when it runs. The two defaults below are the store's `PG_URL_ENV` and `DEFAULT_SCHEMA`, repeated so
 * that help does not load the driver; test/compiler/cli.test.ts keeps them equal.
 */
import type { RegisterCommand } from "../context.js";

/** `PG_URL_ENV` of `src/stores/postgres.ts`. */
export const MIGRATE_URL_ENV = "PRUNEGUARD_PG_URL";
/** `DEFAULT_SCHEMA` of `src/stores/postgres.ts`. */
export const MIGRATE_DEFAULT_SCHEMA = "pruneguard";

export interface MigrateFlags {
  readonly url?: string;
  readonly schema: string;
}

export const registerMigrate: RegisterCommand = (program, cli) => {
  program
    .command("migrate")
    .description(`create or upgrade the PostgreSQL store's tables (idempotent; reads ${MIGRATE_URL_ENV} unless --url is given)`)
    .option("--url <url>", `PostgreSQL connection URL (default: $${MIGRATE_URL_ENV})`)
    .option("--schema <schema>", "schema that holds the store's tables", MIGRATE_DEFAULT_SCHEMA)
    .action(async (flags: MigrateFlags) => (await import("./migrate.run.js")).runMigrate(flags, cli));
};
