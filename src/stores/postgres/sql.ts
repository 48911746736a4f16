/**
 * SQL text for the PostgreSQL store: a literal-escaping builder and the store's table names.
 *
 * Every statement is sent over the simple query protocol as literal-escaped text. That is what lets a
 * prune send "BEGIN; lock; lock" as one message and "write; write; COMMIT" as another (the extended
 * protocol takes one statement per round trip), and it lets `SET LOCAL statement_timeout` ride in the same
 * message as the statement it limits, on a shared pool whose configuration this store does not own.
 */
import pg from "pg";

/** SQL that is spliced in verbatim. Only this module and the store mint it, never from input. */
export class RawSql {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export type SqlValue = string | number | boolean | null | RawSql | readonly SqlValue[];

/** One value as a SQL literal. Numbers must be safe integers: every number the store writes is one. */
export function literal(value: SqlValue): string {
  if (value instanceof RawSql) return value.text;
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new RangeError(`SQL literal: ${value} is not a safe integer`);
    return String(value);
  }
  if (typeof value === "string") {
    // PostgreSQL text cannot hold NUL, and a NUL would end the query message early.
    if (value.includes("\0")) throw new RangeError("PostgreSQL text cannot hold a NUL character");
    // escapeLiteral doubles quotes and backslashes and uses E'' when needed, so the result does not depend
    // on the server's standard_conforming_strings.
    return pg.escapeLiteral(value);
  }
  if (value.length === 0) throw new RangeError("SQL literal: empty list");
  return value.map(literal).join(", ");
}

/** A tagged template whose every interpolation becomes a literal (or raw SQL when it is a `RawSql`). */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): string {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += literal(v) + strings[i + 1]!;
  });
  return out;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Schema names are restricted so that they never need thinking about in logs, URLs or `search_path`. */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new RangeError(`PostgreSQL schema must match ${SCHEMA_NAME.source}, got ${JSON.stringify(schema)}`);
  }
  return schema;
}

/** The schema-qualified names of the store's tables. */
export interface Tables {
  readonly schema: string;
  readonly records: RawSql;
  readonly handles: RawSql;
  readonly heads: RawSql;
  readonly audit: RawSql;
  readonly version: RawSql;
  readonly sessions: RawSql;
  readonly spans: RawSql;
}

export function tablesOf(schema: string): Tables {
  const q = pg.escapeIdentifier(checkSchemaName(schema));
  return {
    schema,
    records: new RawSql(`${q}.records`),
    handles: new RawSql(`${q}.handles`),
    heads: new RawSql(`${q}.audit_heads`),
    audit: new RawSql(`${q}.audit`),
    version: new RawSql(`${q}.schema_version`),
    sessions: new RawSql(`${q}.sessions`),
    spans: new RawSql(`${q}.spans`),
  };
}
