/** The implementation of `pruneguard migrate`, loaded only when the command runs (see `migrate.ts`). */
import { errorMessage } from "../../../src/errors.js";
import { loadPostgresStore, PG_URL_ENV } from "../../../src/stores/postgres/load.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import type { MigrateFlags } from "./migrate.js";

/** The action of `pruneguard migrate` (registered in `migrate.ts`). */
export async function runMigrate(flags: MigrateFlags, cli: CliContext): Promise<void> {
  const url = flags.url ?? process.env[PG_URL_ENV];
  if (url === undefined || url === "") throw new CliError(`migrate: no server URL; pass --url or set ${PG_URL_ENV}`);
  checkUrl(url, flags.url === undefined ? PG_URL_ENV : "--url");
  // After the URL is checked: without `pg` installed, a missing URL is still the first thing said.
  const { migrate } = await loadPostgresStore();
  let result: { from: number; to: number };
  try {
    result = await migrate(url, { schema: flags.schema });
  } catch (err) {
    // Connection and server errors are one line; the URL is not echoed, it may carry a password.
    throw new CliError(`migrate: ${errorMessage(err)}`);
  }
  if (flags.format === "json") cli.io.stdout(`${JSON.stringify({ schema: flags.schema, from: result.from, to: result.to }, null, 2)}\n`);
  else {
    cli.io.stdout(
      result.from === result.to
        ? `schema ${flags.schema} is up to date (version ${result.to})\n`
        : `schema ${flags.schema} migrated from version ${result.from} to ${result.to}\n`,
    );
  }
  cli.exit(ExitCode.ok);
}

/**
 * A connection URL the driver would otherwise misread: `notaurl` reached DNS as a host name and came back as
 * `getaddrinfo ENOTFOUND base`. The URL itself is never echoed: it may carry a password.
 */
function checkUrl(url: string, from: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`migrate: ${from} is not a valid URL; expected postgres://user[:password]@host[:port]/database`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new CliError(`migrate: ${from} must be a PostgreSQL URL (postgres:// or postgresql://), not ${parsed.protocol}//…`);
  }
  if (parsed.hostname === "" && !parsed.searchParams.has("host")) throw new CliError(`migrate: ${from} names no server host; expected postgres://user@host[:port]/database`);
}
