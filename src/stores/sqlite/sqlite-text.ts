/**
 * How text crosses `node:sqlite`: prepared statements typed where their SQL is, and span text read whole on
 * every Node (Node 22's driver stops at a NUL). Shared by the store and the audit reader.
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";

/** A prepared statement with its parameter and row types written down once, where the SQL is. */
export interface Typed<P extends unknown[], R> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  run(...params: P): { changes: number | bigint };
}
export const typed = <P extends unknown[], R>(statement: StatementSync): Typed<P, R> => statement as unknown as Typed<P, R>;

/**
 * Whether this Node's `node:sqlite` reads text back whole. Node 22's stops at the first NUL (it reads the
 * value as a C string, though it wrote every byte); Node 24's reads the value's bytes. Asked once, of an
 * in-memory database.
 */
let readsNul: boolean | undefined;
export function textReadsWhole(Database: typeof DatabaseSync): boolean {
  if (readsNul === undefined) {
    const db = new Database(":memory:");
    try {
      readsNul = (db.prepare("SELECT ? AS t").get("a\0b") as { t: unknown }).t === "a\0b";
    } finally {
      db.close();
    }
  }
  return readsNul;
}

/**
 * How a statement reads a column of span text or a replacement body. Where text reads whole, as it is;
 * elsewhere as its bytes (`CAST(… AS BLOB)`, which SQLite returns as written, NULs included), turned back
 * into text by `decodingText`. So a copy holding a NUL is recoverable on Node 22 too, not a hole.
 */
export type TextColumn = (expr: string, as: string) => string;
export const wholeText: TextColumn = (expr, as) => (expr === as ? as : `${expr} AS ${as}`);
export const blobText: TextColumn = (expr, as) => `CAST(${expr} AS BLOB) AS ${as}`;

/** A text column read as bytes (`CAST … AS BLOB`), as text again; text and `null` are returned as they are. */
export function sqliteText<T>(v: Uint8Array | T): string | T {
  return v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("utf8") : v;
}

/** `statement`, with the named columns of every row it returns turned from bytes (UTF-8) back into text. */
export function decodingText<P extends unknown[], R>(statement: Typed<P, R>, columns: readonly string[]): Typed<P, R> {
  const decode = (row: R | undefined): R | undefined => {
    if (row === undefined) return row;
    const r = row as Record<string, unknown>;
    for (const c of columns) r[c] = sqliteText(r[c]);
    return row;
  };
  return {
    get: (...params) => decode(statement.get(...params)),
    all: (...params) => statement.all(...params).map((row) => decode(row)!),
    run: (...params) => statement.run(...params),
  };
}
