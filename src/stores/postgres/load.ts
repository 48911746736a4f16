/**
 * The PostgreSQL store's modules, loaded only when a `postgres` store is opened, migrated or audited: they
 * import `pg`, an optional peer dependency, which a project on SQLite alone never installs. Without it, a
 * `MissingPeerError` says what needs it and how to install it. This module imports nothing of `pg`.
 */
import { isMissingPackage, MissingPeerError } from "../../errors.js";

export { PG_URL_ENV } from "./env.js";

/** The PostgreSQL store module (`PostgresStore`, `migrate`). */
export const loadPostgresStore = () => load(() => import("./postgres-store.js"));

/** The PostgreSQL audit reader module (`pruneguard audit --url`). */
export const loadPostgresAudit = () => load(() => import("./postgres-audit.js"));

async function load<T>(importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (err) {
    if (isMissingPackage(err, "pg")) throw new MissingPeerError("pg", "the PostgreSQL store", { cause: err });
    throw err;
  }
}
