/** The implementation of `pruneguard audit`, loaded only when the command runs (see `audit.ts`). */
import { existsSync } from "node:fs";
import * as path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { verifyAuditChain, type AuditChainBreak, type AuditRecord } from "../../../src/audit.js";
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
  readonly problem: AuditChainBreak["problem"] | "unreadable" | "column-mismatch" | "foreign-record" | "anchor-missing";
  readonly detail: string;
}

/** The action of `pruneguard audit` (registered in `audit.ts`). */
export function runAudit(file: string, flags: AuditFlags, cli: CliContext): void {
  const { io } = cli;
  const abs = path.resolve(io.cwd, file);
  if (!existsSync(abs)) throw new CliError(`no such file: ${file}`);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(abs, { readOnly: true });
  } catch (err) {
    throw new CliError(`cannot open ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const code = run(db, file, flags, io.stdout);
    cli.exit(code);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    db.close();
  }
}

function run(db: DatabaseSync, file: string, flags: AuditFlags, out: (t: string) => void): ExitCode {
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pruneguard_audit'").get();
  if (table === undefined) throw new CliError(`${file} is not a pruneguard store (no pruneguard_audit table)`);
  const audit = sqliteAuditRows(db);
  const sessions = db
    .prepare(`SELECT store, session, count(*) AS n FROM ${audit} GROUP BY store, session ORDER BY store, session`)
    .all() as unknown as Array<{ store: string; session: string; n: number }>;
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
  const rows = db
    .prepare(`SELECT seq, status, hash, record FROM ${audit} WHERE store = ? AND session = ? ORDER BY seq`)
    .all(store, flags.session) as unknown as AuditRow[];
  const records: AuditRecord[] = [];
  /** The row each parsed record came from, so a break is named by the row a reader can find. */
  const rowOf: number[] = [];
  let problem: AuditProblem | null = null;
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
    if (problem === null && flags.anchor !== undefined && !records.some((r) => r.hash === flags.anchor)) {
      problem = { seq: records.length, problem: "anchor-missing", detail: `no record has hash ${flags.anchor}: the chain was cut or replaced after it was anchored` };
    }
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

function describe(r: AuditRecord): string[] {
  const at = typeof r.at === "number" && Number.isFinite(r.at) ? new Date(r.at).toISOString() : String(r.at);
  return [
    String(r.seq), at, r.op ?? "-", String(r.status), r.spanId ?? "-", r.kind ?? "-", r.mode ?? "-", r.handle ?? "-",
    r.acceptLossy ? "accept" : "-", r.reason ?? "-",
  ];
}
