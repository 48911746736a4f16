/**
 * The SQLite store's prepared statements: every statement `SqliteStore` runs, prepared once when it opens
 * the file — its records and handles, holds, copy search, audit chains, the session's counters and span
 * registry, and rotation. Statements that read text come in two forms, chosen once by whether this Node's
 * `node:sqlite` reads text past a NUL (`textReadsWhole`, sqlite-text.ts).
 */
import type { DatabaseSync } from "node:sqlite";
import type { SpanRow, StoredRecord } from "../records.js";
import { CHAIN_AUDIT, SEQ_MASK } from "./sqlite-schema.js";
import { blobText, decodingText, typed, wholeText } from "./sqlite-text.js";

type SqlValue = string | number | null;

interface AuditRow {
  record: string;
}

/** The statements of one store's connection; `wholeTextReads`: read text columns as they are (else as bytes, decoded here). */
export function prepareStatements(db: DatabaseSync, wholeTextReads: boolean) {
  const prep = <P extends unknown[], R = unknown>(sql: string) => typed<P, R>(db.prepare(sql));
  // Statements that read span text, a replacement body or a group (a provider's call id: any text; see `TextColumn`).
  const text = wholeTextReads ? wholeText : blobText;
  const prepText = <P extends unknown[], R = unknown>(sql: string, columns: readonly string[]) =>
    wholeTextReads ? prep<P, R>(sql) : decodingText(prep<P, R>(sql), columns);
  return {
    bySpan: prepText<[string, string, string], StoredRecord>(
      `SELECT handle, span_id AS spanId, kind, ${text("text", "text")}, hash, created_at AS createdAt, expired_at AS expiredAt FROM pruneguard_records WHERE store = ? AND session = ? AND span_id = ?`,
      ["text"],
    ),
    byHandle: prepText<[string, string, string], StoredRecord>(
      `SELECT handle, span_id AS spanId, kind, ${text("text", "text")}, hash, created_at AS createdAt, expired_at AS expiredAt FROM pruneguard_records WHERE store = ? AND session = ? AND handle = ?`,
      ["text"],
    ),
    nextHandle: prep<[string, string], { next: number }>(
      `INSERT INTO pruneguard_handles (store, session, next) VALUES (?, ?, 1)
       ON CONFLICT (store, session) DO UPDATE SET next = next + 1 RETURNING next`,
    ),
    insert: prep<[Record<string, SqlValue>]>(
      `INSERT INTO pruneguard_records (store, session, span_id, handle, kind, text, hash, created_at)
       VALUES (@store, @session, @spanId, @handle, @kind, @text, @hash, @now)`,
    ),
    rewrite: prep<[Record<string, SqlValue>]>(
      `UPDATE pruneguard_records SET text = @text, hash = @hash, kind = @kind, created_at = @now, expired_at = NULL
       WHERE store = @store AND session = @session AND span_id = @spanId`,
    ),
    // A chain's fold: the holds its audit rows placed after `folded` (the last one of each span wins, as each
    // prune's hold replaced the one before), applied to the records — read by the rowid range, each row once.
    foldHolds: prep<[Record<string, SqlValue>]>(
      `UPDATE pruneguard_records SET held_folded = 1, held_until = h.hold_until
       FROM (SELECT hold_span, hold_until, max(id) FROM pruneguard_audit
             WHERE id BETWEEN (@chain << 32) + CAST(@folded AS INTEGER) + 1 AND (@chain << 32) + ${SEQ_MASK} AND hold_span IS NOT NULL GROUP BY hold_span) AS h
       WHERE store = @store AND session = @session AND span_id = h.hold_span`,
    ),
    setFolded: prep<[number, number]>("UPDATE pruneguard_chains SET folded = ? WHERE chain = ?"),
    chainFolded: prep<[string, string], { chain: number; folded: number }>("SELECT chain, folded FROM pruneguard_chains WHERE store = ? AND session = ?"),
    // The chains of the sessions that have copies past retention (the ones rotation may empty): folded first.
    chainsToFold: prep<[string, number], { chain: number; session: string; folded: number }>(
      `SELECT DISTINCT c.chain, c.session, c.folded FROM pruneguard_records r JOIN pruneguard_chains c ON c.store = r.store AND c.session = r.session
       WHERE r.store = ? AND r.text IS NOT NULL AND r.created_at <= ?`,
    ),
    releaseHolds: prep<[string, string]>(
      "UPDATE pruneguard_records SET held_folded = 0, held_until = NULL WHERE store = ? AND session = ? AND held_folded = 1",
    ),
    searchCopies: prepText<[string, string, string, string], { handle: string; spanId: string; kind: string; hash: string; rotated: number; text: string | null }>(
      `SELECT handle, span_id AS spanId, kind, hash, text IS NULL AS rotated,
              ${text("CASE WHEN text IS NOT NULL AND instr(text, ?1) > 0 THEN text END", "text")}
       FROM pruneguard_records WHERE store = ?2 AND session = ?3 AND handle IN (SELECT value FROM json_each(?4))`,
      ["text"],
    ),
    // The same over the session's whole range of records, for many copies at once (see `SqliteStore.searchCopies`).
    searchSession: prepText<[string, string, string], { handle: string; spanId: string; kind: string; hash: string; rotated: number; text: string | null }>(
      `SELECT handle, span_id AS spanId, kind, hash, text IS NULL AS rotated,
              ${text("CASE WHEN text IS NOT NULL AND instr(text, ?1) > 0 THEN text END", "text")}
       FROM pruneguard_records WHERE store = ?2 AND session = ?3`,
      ["text"],
    ),
    chain: prep<[string, string], { chain: number }>("SELECT chain FROM pruneguard_chains WHERE store = ? AND session = ?"),
    newChain: prep<[string, string], { chain: number }>("INSERT INTO pruneguard_chains (store, session) VALUES (?, ?) RETURNING chain"),
    // A chain's records are the key range (chain << 32) + 1 … (chain << 32) + 2^32 − 1 of the rowid.
    lastAudit: prep<[number], { seq: number; hash: string }>(
      `SELECT seq, hash FROM pruneguard_audit WHERE id BETWEEN (?1 << 32) + 1 AND (?1 << 32) + ${SEQ_MASK} ORDER BY id DESC LIMIT 1`,
    ),
    // DO NOTHING: a record already at this seq means the cached head was stale (see `SqliteStore`'s `#heads`).
    // `hold_span`, `hold_until`: the hold a reversible prune places on its span's copy (`hold_span` null: none;
    // `hold_until` null: until released), in the prune's own row, so the prune writes no other B-tree.
    insertAudit: prep<[number, number, string, string, string, string | null, number | null]>(
      "INSERT INTO pruneguard_audit (id, status, hash, record, hold_span, hold_until) VALUES ((?1 << 32) + CAST(?2 AS INTEGER), ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING",
    ),
    auditLog: prep<[number], AuditRow>(
      `SELECT record FROM pruneguard_audit WHERE id BETWEEN (?1 << 32) + 1 AND (?1 << 32) + ${SEQ_MASK} ORDER BY id`,
    ),
    countLossy: prep<[number], { n: number }>(
      `SELECT count(*) AS n FROM pruneguard_audit WHERE id BETWEEN (?1 << 32) + 1 AND (?1 << 32) + ${SEQ_MASK} AND status = 'lossy'`,
    ),
    // The chain's prune decisions naming span ?2 (committed, or `kept`: not applied after all): those through
    // `indexed` by `pruneguard_audit_spans`, those after it (at most `INDEX_TAIL`) by the rowid range; one
    // statement, so both halves read one snapshot.
    prunesOfSpan: prep<[number, string], AuditRow & { seq: number }>(
      `WITH c AS (SELECT indexed FROM pruneguard_chains WHERE chain = ?1)
       SELECT a.id & ${SEQ_MASK} AS seq, a.record FROM pruneguard_audit_spans s JOIN pruneguard_audit a ON a.id = (s.chain << 32) + s.seq
         WHERE s.chain = ?1 AND s.span_id = ?2
       UNION ALL
       SELECT a.id & ${SEQ_MASK} AS seq, a.record FROM pruneguard_audit a, c
         WHERE a.id BETWEEN (?1 << 32) + c.indexed + 1 AND (?1 << 32) + ${SEQ_MASK}
         AND a.status IN ('reversible', 'lossy', 'kept') AND json_extract(a.record, '$.spanId') = ?2
       ORDER BY seq`,
    ),
    chainIndexed: prep<[number], { indexed: number }>("SELECT indexed FROM pruneguard_chains WHERE chain = ?"),
    // Indexes the chain's prune decisions after `indexed` (a rowid range: each row is indexed once). `kept`
    // records did not exist before a prune could be left unapplied: rows indexed earlier hold none to miss.
    indexSpans: prep<[number, number]>(
      `INSERT OR IGNORE INTO pruneguard_audit_spans (chain, span_id, seq)
       SELECT ?1, json_extract(record, '$.spanId'), id & ${SEQ_MASK} FROM pruneguard_audit
       WHERE id BETWEEN (?1 << 32) + CAST(?2 AS INTEGER) + 1 AND (?1 << 32) + ${SEQ_MASK}
       AND status IN ('reversible', 'lossy', 'kept') AND json_extract(record, '$.spanId') IS NOT NULL`,
    ),
    setIndexed: prep<[number, number]>("UPDATE pruneguard_chains SET indexed = ? WHERE chain = ?"),
    spanOfHandle: prep<[string, string, string], { spanId: string }>(
      "SELECT span_id AS spanId FROM pruneguard_records WHERE store = ? AND session = ? AND handle = ?",
    ),
    // A session's counters start after what the store already holds for it (sessions begun before the
    // counters existed): the highest span id it has a record or a committed prune of, and its lossy records.
    ensureSession: prep<[Record<string, SqlValue>]>(
      `INSERT INTO pruneguard_sessions (store, session, next_span, lossy_used) SELECT @store, @session,
         max(
           (SELECT coalesce(max(CAST(substr(span_id, 6) AS INTEGER)), 0) FROM pruneguard_records
             WHERE store = @store AND session = @session AND span_id GLOB 'span_[1-9]*'),
           (SELECT coalesce(max(CAST(substr(json_extract(a.record, '$.spanId'), 6) AS INTEGER)), 0) ${CHAIN_AUDIT}
             AND a.status IN ('reversible', 'lossy') AND json_extract(a.record, '$.spanId') GLOB 'span_[1-9]*')
         ),
         (SELECT count(*) ${CHAIN_AUDIT} AND a.status = 'lossy')
       ON CONFLICT (store, session) DO NOTHING`,
    ),
    sessionRow: prep<[string, string], { next_span: number; lossy_used: number }>(
      "SELECT next_span, lossy_used FROM pruneguard_sessions WHERE store = ? AND session = ?",
    ),
    nextSpan: prep<[string, string], { next_span: number }>(
      "UPDATE pruneguard_sessions SET next_span = next_span + 1 WHERE store = ? AND session = ? RETURNING next_span",
    ),
    sessionStart: prep<[number, string, string], { started_at: number }>(
      "UPDATE pruneguard_sessions SET started_at = coalesce(started_at, ?) WHERE store = ? AND session = ? RETURNING started_at",
    ),
    addLossy: prep<[number, string, string]>(
      "UPDATE pruneguard_sessions SET lossy_used = max(0, lossy_used + ?) WHERE store = ? AND session = ?",
    ),
    insertSpan: prep<[Record<string, SqlValue>]>(
      `INSERT INTO pruneguard_spans (store, session, ordinal, span_id, kind, hash, grp, message, backing)
       VALUES (@store, @session, @ordinal, @spanId, @kind, @hash, @grp, @message, @backing)`,
    ),
    sessionSpans: prepText<[string, string], SpanRow>(
      `SELECT ordinal, span_id, kind, hash, ${text("grp", "grp")}, message, backing, ${text("replacement", "replacement")} FROM pruneguard_spans WHERE store = ? AND session = ? ORDER BY ordinal`,
      ["grp", "replacement"],
    ),
    lookupSpan: prepText<[string, string, string], SpanRow>(
      `SELECT ordinal, span_id, kind, hash, ${text("grp", "grp")}, message, backing, ${text("replacement", "replacement")} FROM pruneguard_spans WHERE store = ? AND session = ? AND span_id = ?`,
      ["grp", "replacement"],
    ),
    noteReplacement: prep<[string, string, string, string]>(
      "UPDATE pruneguard_spans SET replacement = ? WHERE store = ? AND session = ? AND span_id = ?",
    ),
    heldPastRetention: prep<[string, number, number], { n: number }>(
      `SELECT count(*) AS n FROM pruneguard_records WHERE store = ? AND text IS NOT NULL AND created_at <= ?
       AND held_folded = 1 AND (held_until IS NULL OR held_until > ?)`,
    ),
    rotate: prep<[Record<string, SqlValue>]>(
      `UPDATE pruneguard_records SET text = NULL, expired_at = @now, held_folded = 0, held_until = NULL
       WHERE store = @store AND text IS NOT NULL AND created_at <= @cutoff
       AND NOT (held_folded = 1 AND (held_until IS NULL OR held_until > @now))`,
    ),
  };
}

export type SqliteStatements = ReturnType<typeof prepareStatements>;
