/** The environment variable a PostgreSQL store and `pruneguard migrate` read the server URL from. */
export const PG_URL_ENV = "PRUNEGUARD_PG_URL";
