/**
 * The PostgreSQL store's span registry: the session's spans in registration order (the `spans` table) and
 * the session's counters they are numbered by (the `sessions` table) — registering a span (with its own
 * read-back when the reply is lost), listing and looking them up, the session's start and a span's
 * replacement note. `PostgresStore` exposes each of these as the `BackingStore` method of the same name.
 */
import { randomUUID } from "node:crypto";
import { errorMessage, StoreError } from "../../errors.js";
import { registeredSpan, type SpanRow } from "../records.js";
import type { RegisteredSpan, SpanRegistration } from "../store.js";
import { isCommitUnknown, type Row } from "./driver.js";
import type { PostgresAccess } from "./postgres-access.js";
import { RawSql, sql } from "./sql.js";

/** `PostgresStore.registerSpan`: one round trip, and a read-back by the registration's token when its reply is lost. */
export async function registerSpan(pg: PostgresAccess, session: string, span: SpanRegistration): Promise<RegisteredSpan> {
  const { sessions: S, spans: P } = pg.t;
  const own = new RawSql(sql`store = ${pg.name} AND session = ${session}`);
  const token = randomUUID();
  // One message, one implicit transaction: the counter row's lock orders concurrent appenders.
  const statements = [
    pg.ensureSession(session),
    sql`WITH n AS (UPDATE ${S} SET next_span = next_span + 1 WHERE ${own} RETURNING next_span)
      INSERT INTO ${P} (store, session, ordinal, span_id, kind, hash, grp, message, backing, token)
      SELECT ${pg.name}, ${session}, next_span, 'span_' || next_span, ${span.kind}, ${span.hash}, ${span.group},
        ${span.message === null ? null : JSON.stringify(span.message)}, ${span.store}, ${token} FROM n
      RETURNING ordinal, span_id`,
  ];
  let rows: Row[] | undefined;
  try {
    [, rows] = await pg.retrying("register", () => pg.driver.script(statements, pg.timeoutMs));
  } catch (err) {
    if (!isCommitUnknown(err)) throw err;
    const resolve = async (): Promise<RegisteredSpan | null> => {
      const [, found] = await pg.run("read back", () =>
        pg.driver.script([
          sql`SELECT next_span FROM ${S} WHERE ${own} FOR UPDATE`,
          sql`SELECT ordinal, span_id FROM ${P} WHERE ${own} AND token = ${token}`,
        ], pg.timeoutMs),
      );
      const row = found?.[0];
      return row === undefined ? null : { ...span, spanId: String(row["span_id"]), ordinal: Number(row["ordinal"]), replacement: null };
    };
    return pg.settleLost(
      err,
      resolve,
      (readErr) =>
        `registering a span in session ${session}: the message was sent and its answer lost (${errorMessage(err)}); reading back whether it registered failed too (${errorMessage(readErr)}), so the session may hold a registered span no window has`,
    );
  }
  const row = rows?.[0];
  if (!row) throw new StoreError(pg.name, `could not register a span in session ${session}`);
  return { ...span, spanId: String(row["span_id"]), ordinal: Number(row["ordinal"]), replacement: null };
}

export async function sessionSpans(pg: PostgresAccess, session: string): Promise<RegisteredSpan[]> {
  const [rows] = await pg.run("session spans", () =>
    pg.driver.script([sql`SELECT ordinal, span_id, kind, hash, grp, message, backing, replacement FROM ${pg.t.spans}
      WHERE store = ${pg.name} AND session = ${session} ORDER BY ordinal`], pg.timeoutMs),
  );
  return (rows ?? []).map((r) => registeredSpan(r as unknown as SpanRow));
}

export async function sessionSpanCount(pg: PostgresAccess, session: string): Promise<number> {
  const [rows] = await pg.run("span count", () =>
    pg.driver.script([sql`SELECT next_span FROM ${pg.t.sessions} WHERE store = ${pg.name} AND session = ${session}`], pg.timeoutMs),
  );
  const row = rows?.[0];
  return row === undefined ? 0 : Number(row["next_span"]);
}

export async function lookupSpan(pg: PostgresAccess, session: string, spanId: string): Promise<RegisteredSpan | null> {
  // PostgreSQL text cannot hold NUL: no span id has one.
  if (spanId.includes("\0")) return null;
  const [rows] = await pg.run("session span", () =>
    pg.driver.script([sql`SELECT ordinal, span_id, kind, hash, grp, message, backing, replacement FROM ${pg.t.spans}
      WHERE store = ${pg.name} AND session = ${session} AND span_id = ${spanId}`], pg.timeoutMs),
  );
  const row = rows?.[0];
  return row === undefined ? null : registeredSpan(row as unknown as SpanRow);
}

export async function sessionStart(pg: PostgresAccess, session: string, start: number): Promise<number> {
  const [, rows] = await pg.retrying("session start", () =>
    pg.driver.script([
      pg.ensureSession(session),
      sql`UPDATE ${pg.t.sessions} SET started_at = coalesce(started_at, ${start}) WHERE store = ${pg.name} AND session = ${session}
        RETURNING started_at`,
    ], pg.timeoutMs),
  );
  const row = rows?.[0];
  if (!row) throw new StoreError(pg.name, `could not read the start of session ${session}`);
  return Number(row["started_at"]);
}

export async function noteReplacement(pg: PostgresAccess, session: string, spanId: string, body: string): Promise<void> {
  // Idempotent: a lost reply is answered by writing the same note again.
  await pg.onceMore(() => pg.run("note replacement", () =>
    pg.driver.script([sql`UPDATE ${pg.t.spans} SET replacement = ${body}
      WHERE store = ${pg.name} AND session = ${session} AND span_id = ${spanId}`], pg.timeoutMs),
  ));
}
