/**
 * `pruneguard migrate`: creates or upgrades the PostgreSQL store's schema. Idempotent; exit 0 or 2.
 *
 * This module only registers the command; `migrate.run.ts` (the PostgreSQL store and driver) is loaded
 * when it runs. The two defaults below are the store's `PG_URL_ENV` and `DEFAULT_SCHEMA`, repeated so
 * that help does not load the driver; test/compiler/cli.test.ts keeps them equal.
 */
import type { RegisterCommand } from "../context.js";
import { formatOption } from "../options.js";
import { helpFooter, type OutputFormat } from "../report.js";

/** `PG_URL_ENV` of `src/stores/postgres/postgres-store.ts`. */
export const MIGRATE_URL_ENV = "PRUNEGUARD_PG_URL";
/** `DEFAULT_SCHEMA` of `src/stores/postgres/postgres-store.ts`. */
export const MIGRATE_DEFAULT_SCHEMA = "pruneguard";

export interface MigrateFlags {
  readonly url?: string;
  readonly schema: string;
  readonly format: OutputFormat;
}

export const registerMigrate: RegisterCommand = (program, cli) => {
  program
    .command("migrate")
    .description(`create or upgrade the PostgreSQL store's tables (idempotent; reads ${MIGRATE_URL_ENV} unless --url is given)`)
    .option("--url <url>", `PostgreSQL connection URL (default: $${MIGRATE_URL_ENV})`)
    .option("--schema <schema>", "schema that holds the store's tables", MIGRATE_DEFAULT_SCHEMA)
    .addOption(formatOption())
    .addHelpText(
      "after",
      helpFooter("0 the schema is up to date (now or already), 2 usage error, invalid URL, or a connection or server error.", [
        `${MIGRATE_URL_ENV}=postgres://app@db.internal:5432/agents pruneguard migrate`,
        "pruneguard migrate --url postgres://app@127.0.0.1:5432/agents --schema pruneguard --format json",
      ]),
    )
    .action(async (flags: MigrateFlags) => (await import("./migrate.run.js")).runMigrate(flags, cli));
};
