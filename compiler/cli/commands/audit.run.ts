/** The implementation of `pruneguard audit`, loaded only when the command runs (see `audit.ts`). */
import { existsSync } from "node:fs";
import * as path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { storedAuditProblem, verifyAuditChain, type AuditChainBreak, type AuditRecord } from "../../../src/audit.js";
import { errorMessage } from "../../../src/errors.js";
import { sqliteAuditRows } from "../../../src/stores/sqlite.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import type { AuditFlags } from "./audit.js";
import { renderTable } from "../table.js";

interface AuditRow {
  readonly seq: number;
  readonly status: string;
  readonly hash: string;
  readonly record: string;
}

/** A break `--verify` found: the chain's own, or a row whose columns disagree with its sealed record. */
export interface AuditProblem {
  readonly seq: number;
  readonly problem:
    | AuditChainBreak["problem"] | "unreadable" | "non-canonical" | "column-mismatch" | "foreign-record" | "anchor-missing" | "counter-mismatch";
  readonly detail: string;
}

/** Where the audit rows come from: a SQLite file, or a PostgreSQL schema. Read only, either way. */
interface AuditSource {
  /** How the source is named in output (a file name, or `postgres:<schema>`: never the URL, which may carry a password). */
  readonly label: string;
  sessions(): Promise<Array<{ store: string; session: string; n: number }>>;
  rows(store: string, session: string): Promise<AuditRow[]>;
  /**
   * The session's counters on this store and the highest position it registered (the counters are `null`
   * when the row is missing); `null` when the store keeps no counters at all (written before they existed).
   */
  counters(store: string, session: string): Promise<SessionCounters | null>;
  close(): Promise<void>;
}

/** A session's counter row (`pruneguard_sessions` / `sessions`), as `--verify` cross-checks it. */
interface SessionCounters {
  /** Where the counters live, as the operator would look them up. */
  readonly table: string;
  /** `null`: the session has no counter row. */
  readonly lossyUsed: number | null;
  readonly nextSpan: number | null;
  /** The highest ordinal registered for the session (`pruneguard_spans` / `spans`), 0 for none. */
  readonly registered: number;
}

/** The action of `pruneguard audit` (registered in `audit.ts`). */
export async function runAudit(file: string | undefined, flags: AuditFlags, cli: CliContext): Promise<void> {
  if ((file === undefined) === (flags.url === undefined)) throw new CliError("audit: give a SQLite file or --url for a PostgreSQL store (one of them)");
  const source = file !== undefined ? openSqlite(file, cli) : await openPostgres(flags.url!, flags.schema ?? "pruneguard");
  try {
    const code = await run(source, flags, cli.io.stdout);
    cli.exit(code);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${source.label}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await source.close();
  }
}

function openSqlite(file: string, cli: CliContext): AuditSource {
  const abs = path.resolve(cli.io.cwd, file);
  if (!existsSync(abs)) throw new CliError(`no such file: ${file}`);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(abs, { readOnly: true });
  } catch (err) {
    throw new CliError(`cannot open ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let table: unknown;
  try {
    table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pruneguard_audit'").get();
  } catch (err) {
    db.close();
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (table === undefined) {
    db.close();
    throw new CliError(`${file} is not a pruneguard store (no pruneguard_audit table)`);
  }
  // Either schema of the audit table (files written before it was keyed by chain are read as they are).
  const audit = sqliteAuditRows(db);
  return {
    label: file,
    sessions: async () =>
      db.prepare(`SELECT store, session, count(*) AS n FROM ${audit} GROUP BY store, session ORDER BY store, session`)
        .all() as unknown as Array<{ store: string; session: string; n: number }>,
    rows: async (store, session) =>
      db.prepare(`SELECT seq, status, hash, record FROM ${audit} WHERE store = ? AND session = ? ORDER BY seq`)
        .all(store, session) as unknown as AuditRow[],
    counters: async (store, session) => {
      // Files written before the counters existed have no such table.
      const has = (name: string) => db.prepare("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
      if (!has("pruneguard_sessions")) return null;
      const row = db.prepare("SELECT next_span, lossy_used FROM pruneguard_sessions WHERE store = ? AND session = ?").get(store, session) as
        | { next_span: number; lossy_used: number }
        | undefined;
      const max = has("pruneguard_spans")
        ? (db.prepare("SELECT coalesce(max(ordinal), 0) AS n FROM pruneguard_spans WHERE store = ? AND session = ?").get(store, session) as { n: number }).n
        : 0;
      return {
        table: "pruneguard_sessions", lossyUsed: row === undefined ? null : Number(row.lossy_used),
        nextSpan: row === undefined ? null : Number(row.next_span), registered: Number(max),
      };
    },
    close: async () => db.close(),
  };
}

/** A PostgreSQL store's audit table, read in a read-only transaction on one connection. */
async function openPostgres(url: string, schema: string): Promise<AuditSource> {
  try {
    new URL(url);
  } catch {
    throw new CliError("audit: --url is not a valid URL; expected postgres://user[:password]@host[:port]/database");
  }
  const { default: pg } = await import("pg");
  const { checkSchemaName } = await import("../../../src/stores/postgres/sql.js");
  try {
    checkSchemaName(schema);
  } catch (err) {
    throw new CliError(`audit: ${errorMessage(err)}`);
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000, application_name: "pruneguard audit" });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("BEGIN READ ONLY");
    const present = await client.query("SELECT to_regclass($1) AS t", [`${pg.escapeIdentifier(schema)}.audit`]);
    if (present.rows[0]?.t === null) throw new CliError(`schema ${schema} holds no pruneguard store (no audit table; run \`pruneguard migrate\`?)`);
  } catch (err) {
    await client.end().catch(() => undefined);
    if (err instanceof CliError) throw err;
    // The URL is not echoed: it may carry a password.
    throw new CliError(`audit: cannot read the PostgreSQL store: ${errorMessage(err)}`);
  }
  const table = `${pg.escapeIdentifier(schema)}.audit`;
  return {
    label: `postgres:${schema}`,
    sessions: async () =>
      (await client.query(`SELECT store, session, count(*)::int AS n FROM ${table} GROUP BY store, session ORDER BY store, session`)).rows,
    rows: async (store, session) =>
      (await client.query(`SELECT seq::int AS seq, status, hash, record FROM ${table} WHERE store = $1 AND session = $2 ORDER BY seq`, [store, session])).rows,
    counters: async (store, session) => {
      const sessions = `${pg.escapeIdentifier(schema)}.sessions`;
      const spans = `${pg.escapeIdentifier(schema)}.spans`;
      // Schemas before version 3 have no counters.
      const present = await client.query("SELECT to_regclass($1) IS NOT NULL AS s, to_regclass($2) IS NOT NULL AS p", [sessions, spans]);
      if (present.rows[0]?.s !== true) return null;
      const row = (await client.query(`SELECT next_span::bigint::text AS next_span, lossy_used::bigint::text AS lossy_used FROM ${sessions} WHERE store = $1 AND session = $2`, [store, session])).rows[0] as
        | { next_span: string; lossy_used: string }
        | undefined;
      const max = present.rows[0]?.p === true
        ? Number((await client.query(`SELECT coalesce(max(ordinal), 0)::text AS n FROM ${spans} WHERE store = $1 AND session = $2`, [store, session])).rows[0]?.n ?? 0)
        : 0;
      return {
        table: `${schema}.sessions`, lossyUsed: row === undefined ? null : Number(row.lossy_used),
        nextSpan: row === undefined ? null : Number(row.next_span), registered: max,
      };
    },
    close: async () => {
      await client.query("ROLLBACK").catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

async function run(source: AuditSource, flags: AuditFlags, out: (t: string) => void): Promise<ExitCode> {
  const file = source.label;
  const sessions = await source.sessions();
  const stores = [...new Set(sessions.map((s) => s.store))];
  if (flags.anchor !== undefined && flags.verify !== true) throw new CliError("--anchor needs --verify");
  if (flags.session === undefined) {
    if (flags.verify === true) throw new CliError("--verify needs --session");
    const shown = sessions.filter((s) => flags.store === undefined || s.store === flags.store);
    if (flags.format === "json") out(`${JSON.stringify({ file, sessions: shown }, null, 2)}\n`);
    else out(`${shown.length === 0 ? "no audit records" : renderTable(["store", "session", "records"], shown.map((s) => [s.store, s.session, String(s.n)]))}\n`);
    return ExitCode.ok;
  }
  let store = flags.store;
  if (store === undefined) {
    const withSession = [...new Set(sessions.filter((s) => s.session === flags.session).map((s) => s.store))];
    if (withSession.length > 1) throw new CliError(`session ${flags.session} has records in stores ${withSession.join(", ")}; choose one with --store`);
    store = withSession[0] ?? stores[0];
    if (store === undefined) throw new CliError(`${file} holds no audit records`);
  } else if (!stores.includes(store) && stores.length > 0) {
    throw new CliError(`no store ${store} in ${file} (stores: ${stores.join(", ")})`);
  }
  const rows = await source.rows(store, flags.session);
  const records: AuditRecord[] = [];
  /** The row each parsed record came from, so a break is named by the row a reader can find. */
  const rowOf: number[] = [];
  let problem: AuditProblem | null = null;
  /** The first record whose text is not its canonical serialisation (reported unless something earlier or more specific is). */
  let uncanonical: AuditProblem | null = null;
  for (const row of rows) {
    let rec: AuditRecord;
    try {
      rec = JSON.parse(row.record) as AuditRecord;
      if (rec === null || typeof rec !== "object") throw new Error("not an object");
    } catch (err) {
      problem ??= { seq: row.seq, problem: "unreadable", detail: `record ${row.seq} is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
      continue;
    }
    records.push(rec);
    rowOf.push(row.seq);
    // The hash covers what the text parses to; a text that is not exactly that value's serialisation (a
    // key written twice, above all) reads differently to other readers, so it counts as tampered.
    if (uncanonical === null) {
      const odd = storedAuditProblem(row.record, rec);
      if (odd !== null) uncanonical = { seq: row.seq, problem: "non-canonical", detail: `record ${row.seq}: ${odd}` };
    }
    if (problem !== null) continue;
    if (rec.store !== store || rec.session !== flags.session) {
      problem = { seq: row.seq, problem: "foreign-record", detail: `record ${row.seq} belongs to store ${rec.store}, session ${rec.session}` };
    } else if (rec.seq !== row.seq || rec.status !== row.status || rec.hash !== row.hash) {
      const which = rec.seq !== row.seq ? "seq" : rec.status !== row.status ? "status" : "hash";
      problem = { seq: row.seq, problem: "column-mismatch", detail: `row ${row.seq}: column ${which} disagrees with the sealed record (${JSON.stringify(row[which])} vs ${JSON.stringify(rec[which])})` };
    }
  }
  if (flags.verify === true) {
    const chain = verifyAuditChain(records);
    if (chain !== null) {
      // verifyAuditChain names the record by the seq it claims; name it by its row instead. A verified
      // prefix is numbered 1..i, so a gap breaks at the first record out of step, anything else at seq - 1.
      const at = chain.problem === "seq-gap" ? records.findIndex((r, i) => r.seq !== i + 1) : chain.seq - 1;
      const rowSeq = rowOf[at] ?? chain.seq;
      // The earliest problem wins; on the same row, the row-level finding (more specific) stays.
      if (problem === null || rowSeq < problem.seq) problem = { seq: rowSeq, problem: chain.problem, detail: chain.detail };
    }
    if (uncanonical !== null && (problem === null || uncanonical.seq < problem.seq)) problem = uncanonical;
    if (problem === null && flags.anchor !== undefined && !records.some((r) => r.hash === flags.anchor)) {
      problem = { seq: records.length, problem: "anchor-missing", detail: `no record has hash ${flags.anchor}: the chain was cut or replaced after it was anchored` };
    }
    if (problem === null) problem = counterProblem(await source.counters(store, flags.session), records);
  }
  const head = records.at(-1)?.hash ?? null;
  if (flags.format === "json") {
    out(`${JSON.stringify({
      file, store, session: flags.session, records,
      ...(flags.verify === true ? { verify: { ok: problem === null, records: records.length, head, break: problem } } : {}),
    }, null, 2)}\n`);
  } else {
    out(`store ${store}, session ${flags.session}: ${records.length} record${records.length === 1 ? "" : "s"}\n`);
    if (records.length > 0) out(`${renderTable(["seq", "at", "op", "status", "span", "kind", "mode", "handle", "lossy", "reason"], records.map(describe))}\n`);
    if (flags.verify === true) {
      out(problem === null
        ? `chain ok: ${records.length} records, head ${head ?? "(empty)"}\n`
        : `chain broken at record ${problem.seq}: ${problem.problem}: ${problem.detail}\n`);
    }
  }
  return flags.verify === true && problem !== null ? ExitCode.diagnostics : ExitCode.ok;
}

/**
 * The session's counters checked against its verified chain. Every lossy commitment a store makes is added
 * to its counter in the same transaction, so a lossy counter below the lossy records of the chain was reset
 * or edited (and would hand the session its budget again); a span counter below the registry's highest
 * position would mint an id twice.
 */
function counterProblem(counters: SessionCounters | null, records: readonly AuditRecord[]): AuditProblem | null {
  if (counters === null) return null;
  if (counters.lossyUsed === null || counters.nextSpan === null) {
    // Registering a span creates the row, so a registry without it lost its counters (a session begun
    // before them has no registry either); a store would rebuild them from its records and chain alone.
    return counters.registered === 0 ? null : {
      seq: records.length, problem: "counter-mismatch",
      detail: `the session's counters (${counters.table}) are missing, though its registry holds span_${counters.registered}: the row was deleted`,
    };
  }
  const lossy = records.filter((r) => r.status === "lossy").map((r) => r.seq);
  if (counters.lossyUsed < lossy.length) {
    const uncovered = lossy[Math.max(0, counters.lossyUsed)]!;
    const list = lossy.length <= 8 ? lossy.join(", ") : `${lossy.slice(0, 8).join(", ")}, …`;
    return {
      seq: uncovered, problem: "counter-mismatch",
      detail: `the session's lossy budget counter (${counters.table}.lossy_used) is ${counters.lossyUsed}, below the ${lossy.length} lossy commitment${lossy.length === 1 ? "" : "s"} its chain records (record${lossy.length === 1 ? "" : "s"} ${list}): it was reset or edited`,
    };
  }
  if (counters.nextSpan < counters.registered) {
    return {
      seq: records.length, problem: "counter-mismatch",
      detail: `the session's span counter (${counters.table}.next_span) is ${counters.nextSpan}, below span_${counters.registered} in its registry: it was reset or edited`,
    };
  }
  return null;
}

function describe(r: AuditRecord): string[] {
  const at = typeof r.at === "number" && Number.isFinite(r.at) ? new Date(r.at).toISOString() : String(r.at);
  return [
    String(r.seq), at, r.op ?? "-", String(r.status), r.spanId ?? "-", r.kind ?? "-", r.mode ?? "-", r.handle ?? "-",
    r.acceptLossy ? "accept" : "-", r.reason ?? "-",
  ];
}
