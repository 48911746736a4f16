/**
 * `pruneguard audit <sqlite-file>`: lists a session's logged decisions readably and, with `--verify`,
 * checks its hash chain. Exit 0 when all is well, 1 when `--verify` finds a break (the record and why
 * are printed), 2 on usage or I/O errors.
 *
 * The file is opened read-only with better-sqlite3, so auditing never changes what it audits. Besides
 * the chain itself, `--verify` checks that each row's indexed columns (`seq`, `status`, `hash`) agree
 * with the sealed record: the store counts the lossy budget from the `status` column, so an edit there
 * must not pass unnoticed. A chain cannot see its own tail being cut off; `--anchor <hash>` checks that
 * a head recorded elsewhere earlier is still in the chain.
 */
import { existsSync } from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";
import { Option } from "commander";
import { verifyAuditChain, type AuditChainBreak, type AuditRecord } from "../../../src/audit.js";
import { CliError, ExitCode, type RegisterCommand } from "../context.js";
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

interface Flags {
  readonly store?: string;
  readonly session?: string;
  readonly verify?: boolean;
  readonly anchor?: string;
  readonly format: "text" | "json";
}

export const registerAudit: RegisterCommand = (program, cli) => {
  program
    .command("audit")
    .description("list a session's logged prune and recall decisions from a SQLite store; --verify checks the hash chain")
    .argument("<sqlite-file>", "the SQLite file a SqliteStore writes")
    .option("--store <name>", "the store whose chain to read (default: the only store in the file)")
    .option("--session <id>", "the session to list (without it: list the sessions in the file)")
    .option("--verify", "check the chain: exit 1 naming the first edited, dropped or reordered record")
    .option("--anchor <hash>", "with --verify: a head hash recorded earlier that must still be in the chain (detects a cut tail)")
    .addOption(new Option("--format <format>", "output format").choices(["text", "json"]).default("text"))
    .addHelpText("after", [
      "",
      "Exit codes: 0 ok, 1 the chain is broken (with --verify), 2 usage or I/O error.",
      "",
      "Examples:",
      "  pruneguard audit agent.db                                  # sessions in the file",
      "  pruneguard audit agent.db --session s-42                   # that session's decisions",
      "  pruneguard audit agent.db --store toolLog --session s-42 --verify --format json",
    ].join("\n"))
    .action((file: string, flags: Flags) => {
      const { io } = cli;
      const abs = path.resolve(io.cwd, file);
      if (!existsSync(abs)) throw new CliError(`no such file: ${file}`);
      let db: Database.Database;
      try {
        db = new Database(abs, { readonly: true, fileMustExist: true });
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
    });
};

function run(db: Database.Database, file: string, flags: Flags, out: (t: string) => void): ExitCode {
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pruneguard_audit'").get();
  if (table === undefined) throw new CliError(`${file} is not a pruneguard store (no pruneguard_audit table)`);
  const sessions = db
    .prepare<[], { store: string; session: string; n: number }>("SELECT store, session, count(*) AS n FROM pruneguard_audit GROUP BY store, session ORDER BY store, session")
    .all();
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
    .prepare<[string, string], AuditRow>("SELECT seq, status, hash, record FROM pruneguard_audit WHERE store = ? AND session = ? ORDER BY seq")
    .all(store, flags.session);
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
