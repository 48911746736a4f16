/** The implementation of `pruneguard migrate`, loaded only when the command runs (see `migrate.ts`). */
import { errorMessage } from "../../../src/errors.js";
import { migrate, PG_URL_ENV } from "../../../src/stores/postgres.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import type { MigrateFlags } from "./migrate.js";

/** The action of `pruneguard migrate` (registered in `migrate.ts`). */
export async function runMigrate(flags: MigrateFlags, cli: CliContext): Promise<void> {
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
}
