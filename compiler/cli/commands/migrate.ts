/** `pruneguard migrate`: creates or upgrades the PostgreSQL store's schema. Idempotent; exit 0 or 2. */
import { errorMessage } from "../../../src/errors.js";
import { DEFAULT_SCHEMA, migrate, PG_URL_ENV } from "../../../src/stores/postgres.js";
import { CliError, ExitCode, type RegisterCommand } from "../context.js";

export const registerMigrate: RegisterCommand = (program, cli) => {
  program
    .command("migrate")
    .description(`create or upgrade the PostgreSQL store's tables (idempotent; reads ${PG_URL_ENV} unless --url is given)`)
    .option("--url <url>", `PostgreSQL connection URL (default: $${PG_URL_ENV})`)
    .option("--schema <schema>", "schema that holds the store's tables", DEFAULT_SCHEMA)
    .action(async (flags: { url?: string; schema: string }) => {
      const url = flags.url ?? process.env[PG_URL_ENV];
      if (url === undefined || url === "") throw new CliError(`migrate: no server URL; pass --url or set ${PG_URL_ENV}`);
      let result: { from: number; to: number };
      try {
        result = await migrate(url, { schema: flags.schema });
      } catch (err) {
        // Connection and server errors are one line; the URL is not echoed, it may carry a password.
        throw new CliError(`migrate: ${errorMessage(err)}`);
      }
      cli.io.stdout(
        result.from === result.to
          ? `schema ${flags.schema} is up to date (version ${result.to})\n`
          : `schema ${flags.schema} migrated from version ${result.from} to ${result.to}\n`,
      );
      cli.exit(ExitCode.ok);
    });
};
