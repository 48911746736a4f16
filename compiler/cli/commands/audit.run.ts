/**
 * The implementation of `pruneguard audit`, loaded only when the command runs (see `audit.ts`). It reads
 * a store through its engine's audit reader (`src/stores/audit-reader.ts`), which knows the engine's
 * tables; the engine is looked up in the runtime's engine table (`auditEngine`,
 * `src/stores/engine-adapters.ts`) by how the store is named, a file or `--url`. What is checked of the rows,
 * and how the result is shown, is the same for every engine.
 */
import * as path from "node:path";
import { auditRecordTypeProblem, storedAuditProblem, verifyAuditChain, type AuditChainBreak, type AuditRecord } from "../../../src/audit.js";
import {
  AuditReadError, MAX_AUDIT_FIELD_BYTES, MAX_AUDIT_RECORD_BYTES, type AuditChainCount, type AuditReader, type AuditRow, type OversizedColumns, type SessionCounters,
} from "../../../src/stores/audit-reader.js";
import { auditEngine } from "../../../src/stores/engine-adapters.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import type { AuditFlags } from "./audit.js";
import { wrapHanging } from "../../diagnostics/format.js";
import { messageWidth, textWidth } from "../report.js";
import { renderTable } from "../table.js";
import { DEFAULT_TIMELINE_ROWS, timelineHtml, type TimelineChain, type TimelineCopy, type TimelineSpan } from "../timeline.js";

/** A break `--verify` found: the chain's own, or a row whose columns disagree with its sealed record. */
export interface AuditProblem {
  readonly seq: number;
  readonly problem:
    | AuditChainBreak["problem"] | "unreadable" | "non-canonical" | "column-mismatch" | "foreign-record" | "anchor-missing" | "counter-mismatch";
  readonly detail: string;
}

/** The action of `pruneguard audit` (registered in `audit.ts`). */
export async function runAudit(file: string | undefined, flags: AuditFlags, cli: CliContext): Promise<void> {
  if ((file === undefined) === (flags.url === undefined)) throw new CliError("audit: give a SQLite file or --url for a PostgreSQL store (one of them)");
  const source = await openSource(file, flags, cli);
  try {
    const code = await run(source, flags, cli.io.stdout, { table: textWidth(cli.io), message: messageWidth(cli.io, "stdout") });
    cli.exit(code);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${source.label}: ${visible(err instanceof Error ? err.message : err)}`);
  } finally {
    await source.close();
  }
}

/** The store the arguments name, opened read only by its engine's reader; a reader that refuses is a usage or I/O error. */
async function openSource(file: string | undefined, flags: AuditFlags, cli: CliContext): Promise<AuditReader> {
  try {
    const found = auditEngine(file !== undefined ? "file" : "url");
    if (found === null) throw new CliError(`audit: no store engine is read by ${file !== undefined ? "a file" : "--url"}`);
    // Each engine's reader is loaded only when it opens, so auditing a SQLite file never loads pg.
    if (file !== undefined) return await found.source.open(path.resolve(cli.io.cwd, file), { label: file });
    try {
      new URL(flags.url!);
    } catch {
      throw new CliError(`audit: --url is not a valid URL; expected ${found.source.form}`);
    }
    return await found.source.open(flags.url!, flags.schema === undefined ? {} : { schema: flags.schema });
  } catch (err) {
    if (!(err instanceof AuditReadError)) throw err;
    // What is wrong with --schema or the connection is said as the command's own complaint, as for --url.
    throw new CliError(err.reason === "bad-schema" || err.reason === "unreachable" ? `audit: ${err.message}` : err.message);
  }
}

/**
 * Reads and prints what the flags ask for. `width.table` is the widest line a table may take (it is fitted
 * to it); `width.message` wraps the verdict line, and is 0 (one line, for grep) when no width is known.
 */
async function run(
  source: AuditReader, flags: AuditFlags, out: (t: string) => void, width: { readonly table: number; readonly message: number }, listed?: readonly AuditChainCount[],
): Promise<ExitCode> {
  const file = source.label;
  const all = listed ?? await source.sessions();
  // A chain whose store or session name is past the bound is not listed, nor can it be chosen: it is named by its lengths.
  const sessions = all.filter((s) => s.oversized === undefined);
  const unlisted = all.filter((s) => s.oversized !== undefined).map((s) => ({ n: s.n, oversized: s.oversized!, detail: oversizedDetail(unlistedSubject(s), s.oversized!) }));
  const stores = [...new Set(sessions.map((s) => s.store))];
  if (flags.anchor !== undefined && flags.verify !== true) throw new CliError("--anchor needs --verify");
  if (flags.store !== undefined && !stores.includes(flags.store)) await noChain(source, flags.store, stores);
  if (flags.session === undefined) {
    if (flags.verify === true) throw new CliError("--verify needs --session");
    if (flags.format === "html") throw new CliError("--format html needs --session: the page shows one session");
    const shown = sessions.filter((s) => flags.store === undefined || s.store === flags.store);
    if (flags.format === "json") out(`${JSON.stringify({ file, sessions: shown, ...(unlisted.length > 0 ? { unlisted } : {}) }, null, 2)}\n`);
    else {
      out(`${shown.length === 0 ? "no audit records" : renderTable(["store", "session", "records"], shown.map((s) => [visible(s.store), visible(s.session), String(s.n)]), { maxWidth: width.table })}\n`);
      if (unlisted.length > 0) out(problemNote(`${unlisted.length} chain${unlisted.length === 1 ? "" : "s"} not listed, unreadable:`, unlisted.map((u) => u.detail), width.message));
    }
    return ExitCode.ok;
  }
  if (flags.format === "html") return timeline(source, flags as AuditFlags & { session: string }, sessions, unlisted.map((u) => u.detail), out);
  let chosen: readonly string[];
  if (flags.store !== undefined) chosen = [flags.store];
  else {
    // Every store's chain of the session, one after the other; JSON reads one chain (its shape is one chain's).
    const withSession = [...new Set(sessions.filter((s) => s.session === flags.session).map((s) => s.store))];
    if (withSession.length > 1 && flags.format === "json") {
      throw new CliError(`session ${visible(flags.session)} has records in stores ${names(withSession)}; --format json reads one chain: choose one with --store`);
    }
    // An anchor is the head of one chain: checked against every store's, the others would read as cut.
    if (withSession.length > 1 && flags.anchor !== undefined) {
      throw new CliError(`session ${visible(flags.session)} has records in stores ${names(withSession)}; --anchor is one chain's head: choose its store with --store`);
    }
    chosen = withSession.length > 0 ? withSession : stores.slice(0, 1);
    if (chosen.length === 0) throw new CliError(`${file} holds no audit records`);
  }
  let code: ExitCode = ExitCode.ok;
  for (const [i, store] of chosen.entries()) {
    if (i > 0) out("\n");
    if ((await chain(source, store, flags as AuditFlags & { session: string }, out, width)) !== ExitCode.ok) code = ExitCode.diagnostics;
  }
  return code;
}

/** One store's chain of the session: its records (and, with `--verify`, whether the chain holds). */
async function chain(
  source: AuditReader, store: string, flags: AuditFlags & { session: string }, out: (t: string) => void, width: { readonly table: number; readonly message: number },
): Promise<ExitCode> {
  const file = source.label;
  const rows = await source.rows(store, flags.session);
  const records: AuditRecord[] = [];
  /** The row each parsed record came from, so a break is named by the row a reader can find. */
  const rowOf: number[] = [];
  /** Every row whose record is not shown: too long to read, not JSON, or not a record pruneguard writes. */
  const unreadable: AuditProblem[] = [];
  let problem: AuditProblem | null = null;
  /** The first record whose text is not its canonical serialisation (reported unless something earlier or more specific is). */
  let uncanonical: AuditProblem | null = null;
  for (const [i, row] of rows.entries()) {
    const read = readRow(row, i + 1);
    if (!("record" in read)) {
      // Not shown, and not verified: the chain cannot be followed past it (the next record is a gap).
      unreadable.push(read);
      problem ??= read;
      continue;
    }
    const rec = read.record;
    records.push(rec);
    rowOf.push(row.seq);
    // The hash covers what the text parses to; a text that is not exactly that value's serialisation (a
    // key written twice, above all) reads differently to other readers, so it counts as tampered.
    if (uncanonical === null) {
      const odd = storedAuditProblem(read.text, rec);
      if (odd !== null) uncanonical = { seq: row.seq, problem: "non-canonical", detail: `record ${row.seq}: ${odd}` };
    }
    if (problem !== null) continue;
    // The record's own strings are cut (`clip`): a record is up to 1 MiB, and a detail is printed whole.
    if (rec.store !== store || rec.session !== flags.session) {
      problem = { seq: row.seq, problem: "foreign-record", detail: `record ${row.seq} belongs to store ${clip(rec.store)}, session ${clip(rec.session)}` };
    } else if (rec.seq !== row.seq || rec.status !== row.status || rec.hash !== row.hash) {
      const which = rec.seq !== row.seq ? "seq" : rec.status !== row.status ? "status" : "hash";
      problem = { seq: row.seq, problem: "column-mismatch", detail: `row ${row.seq}: column ${which} disagrees with the sealed record (${clip(JSON.stringify(row[which]))} vs ${clip(JSON.stringify(rec[which]))})` };
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
      file, store, session: flags.session, records, unreadable,
      ...(flags.verify === true ? { verify: { ok: problem === null, records: records.length, head, break: problem } } : {}),
    }, null, 2)}\n`);
  } else {
    // Everything below may carry text from the store (names, reasons, a foreign record's store): each such
    // string goes through `visible`, so no escape sequence reaches the terminal as one.
    out(`store ${visible(store)}, session ${visible(flags.session)}: ${records.length} record${records.length === 1 ? "" : "s"}\n`);
    if (records.length > 0) {
      out(`${renderTable(["seq", "at", "op", "status", "span/query", "kind", "mode", "handle", "lossy", "reason"], records.map(describe), { maxWidth: width.table })}\n`);
    }
    if (unreadable.length > 0) out(unreadableNote(unreadable, width.message));
    if (flags.verify === true) {
      out(problem === null
        ? `chain ok: ${records.length} records, head ${visible(head ?? "(empty)")}\n`
        : `${wrapHanging(visible(`chain broken at record ${problem.seq}: ${problem.problem}: ${problem.detail}`), width.message)}\n`);
    }
  }
  return flags.verify === true && problem !== null ? ExitCode.diagnostics : ExitCode.ok;
}

/**
 * The record a row holds, or why it is not shown (problem `unreadable`): a column not of its type (a SQLite
 * file can hold any value in any column), a text past `MAX_AUDIT_RECORD_BYTES` (the reader left it in the
 * store), a text that is not JSON, or JSON that is not a record pruneguard writes. Only a record whose every
 * field has its type is shown, in any format: the table and the HTML page rely on the types. `position`
 * (1-based, in seq order) names a row whose seq column is not a number.
 */
function readRow(row: AuditRow, position: number): { readonly record: AuditRecord; readonly text: string } | AuditProblem {
  const unreadable = (seq: number, detail: string): AuditProblem => ({ seq, problem: "unreadable", detail });
  if (row.oversized?.seq !== undefined) return unreadable(position, oversizedDetail(`row ${position} (in seq order)`, row.oversized));
  if (!Number.isSafeInteger(row.seq) || row.seq < 1) {
    return unreadable(position, `row ${position} (in seq order): its seq column is ${columnType(row.seq)}, not a whole number from 1`);
  }
  const seq = row.seq;
  if (row.oversized !== undefined) return unreadable(seq, oversizedDetail(`record ${seq}`, row.oversized));
  for (const column of ["status", "hash"] as const) {
    if (typeof row[column] !== "string") return unreadable(seq, `record ${seq}: its ${column} column is ${columnType(row[column])}, not text`);
  }
  if (typeof row.record !== "string") {
    return typeof row.bytes === "number" && row.bytes > MAX_AUDIT_RECORD_BYTES
      ? unreadable(seq, `record ${seq} is ${row.bytes} bytes long, over the ${MAX_AUDIT_RECORD_BYTES} bytes (1 MiB) pruneguard audit reads of one record (pruneguard writes none over 10 kB): not read`)
      : unreadable(seq, `record ${seq}: its record column is ${columnType(row.record)}, not text`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.record);
  } catch (err) {
    return unreadable(seq, `record ${seq} is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const odd = auditRecordTypeProblem(parsed);
  if (odd !== null) return unreadable(seq, `record ${seq} is not a record pruneguard writes: ${odd}`);
  return { record: parsed as AuditRecord, text: row.record };
}

/** What a column holds, as a message names it (never the value). */
function columnType(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (value instanceof Uint8Array) return "a blob";
  return typeof value === "string" ? "text" : `a ${typeof value}`;
}

/** The most unreadable records the text output names one by one (`--format json` lists them all). */
const UNREADABLE_SHOWN = 10;

/** The records the table leaves out because they could not be read, and what that means for the chain. */
function unreadableNote(unreadable: readonly AuditProblem[], width: number): string {
  const n = unreadable.length;
  return problemNote(`${n} record${n === 1 ? "" : "s"} not shown, unreadable; the chain cannot be verified past record ${unreadable[0]!.seq}:`, unreadable.map((p) => p.detail), width);
}

/** `head`, then the first `UNREADABLE_SHOWN` of `details` one a line, indented, and how many more there are. */
function problemNote(head: string, details: readonly string[], width: number): string {
  const n = details.length;
  const lines = [
    head,
    ...details.slice(0, UNREADABLE_SHOWN).map((d) => `  ${d}`),
    ...(n > UNREADABLE_SHOWN ? [`  … and ${n - UNREADABLE_SHOWN} more (--format json lists them all)`] : []),
  ];
  return lines.map((line) => `${wrapHanging(visible(line), width)}\n`).join("");
}

/**
 * Why a row is not shown: the columns of it its reader left in the store, each past `MAX_AUDIT_FIELD_BYTES`
 * (the reader asked the engine for their lengths and read `NULL` in their place). `subject` names the row.
 */
function oversizedDetail(subject: string, oversized: OversizedColumns): string {
  const columns = Object.entries(oversized).map(([column, bytes]) => `its ${column} column is ${bytes} bytes long`);
  return `${subject}: ${columns.join(", ")}, over the ${MAX_AUDIT_FIELD_BYTES} bytes pruneguard audit reads of one field (a name, an id, a status, a hash or a number): not read`;
}

/** A chain whose store or session name is past the bound, by what can be read of it. */
function unlistedSubject(c: AuditChainCount): string {
  const store = c.oversized?.store === undefined ? ` in store ${c.store}` : "";
  const session = c.oversized?.session === undefined ? ` of session ${c.session}` : "";
  return `a chain of ${c.n} record${c.n === 1 ? "" : "s"}${session}${store}`;
}

/** The most characters of one string from a record that a detail, a table cell or a list of names shows. */
const CLIP_CHARS = 200;

/** `text` cut at `CLIP_CHARS`, saying how much is left out (the JSON output has the whole record). */
function clip(text: string): string {
  return clipTo(text, CLIP_CHARS);
}

/** `text` cut at `chars` (never inside a surrogate pair), saying how much is left out. */
function clipTo(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const code = text.charCodeAt(chars - 1);
  const cut = code >= 0xd800 && code <= 0xdbff ? chars - 1 : chars;
  return `${text.slice(0, cut)}… (${text.length - cut} more characters)`;
}

/** The most names an error lists; the rest are counted. */
const NAMES_SHOWN = 20;

/** Store names for an error, through `visible`: at most `NAMES_SHOWN` of them. */
function names(list: readonly string[]): string {
  const shown = list.slice(0, NAMES_SHOWN).map(visible).join(", ");
  return list.length > NAMES_SHOWN ? `${shown}, … and ${list.length - NAMES_SHOWN} more` : shown;
}

/**
 * The session's counters checked against its verified chain. Every lossy commitment a store makes is added
 * to its counter in the same transaction, so a lossy counter below the lossy records of the chain was reset
 * or edited (and would hand the session its budget again); a span counter below the registry's highest
 * position would mint an id twice.
 */
function counterProblem(counters: SessionCounters | null, records: readonly AuditRecord[]): AuditProblem | null {
  if (counters === null) return null;
  // A SQLite column holds any value: text where a counter is (past the field bound or not) reads as NaN.
  const notNumber = (["lossyUsed", "nextSpan", "registered"] as const).find((k) => counters[k] !== null && !Number.isSafeInteger(counters[k]));
  if (notNumber !== undefined) {
    const column = notNumber === "lossyUsed" ? `${counters.table}.lossy_used` : notNumber === "nextSpan" ? `${counters.table}.next_span` : "the registry's highest position";
    return { seq: records.length, problem: "counter-mismatch", detail: `the session's counter ${column} is not a whole number (or is past the ${MAX_AUDIT_FIELD_BYTES} bytes pruneguard audit reads of one field): it was edited` };
  }
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

/**
 * `--store` names a store with no audit chain in the source: say which of the two it is. A store can hold
 * copies and never a record (its kinds were appended but never pruned, and the window's other decisions
 * are recorded in its home store), which is not the same as a store that is not there.
 */
async function noChain(source: AuditReader, store: string, withChain: readonly string[]): Promise<void> {
  const present = await source.stores();
  const chains = withChain.length > 0 ? `stores with an audit chain: ${names(withChain)}` : `no store in ${source.label} has one yet`;
  if (present.includes(store)) {
    throw new CliError(
      `store ${visible(store)} in ${source.label} has no audit chain: it holds spans or copies, but no decision was recorded in it (a prune is recorded in the store that keeps the span's copy, every other decision in the window's home store); ${chains}`,
    );
  }
  if (present.length > 0) throw new CliError(`no store ${visible(store)} in ${source.label} (stores: ${names(present)})`);
}

/** A record as a row of the table: every string from the store through `visible`. */
function describe(r: AuditRecord): string[] {
  // A time past what a Date holds (±8.64e15 ms) is shown as the number it is.
  const date = new Date(r.at);
  const at = Number.isNaN(date.getTime()) ? String(r.at) : date.toISOString();
  const cell = (text: string) => visible(clip(text));
  return [
    String(r.seq), at, cell(r.op ?? "-"), cell(r.status), subject(r), cell(r.kind ?? "-"), cell(r.mode ?? "-"), cell(r.handle ?? "-"),
    r.acceptLossy ? "accept" : "-", cell(r.reason ?? "-"),
  ];
}

/**
 * Text from the store as the terminal shows it: every control, format and separator character (ESC, CR,
 * BEL, bidi overrides, U+2028…) written out as `\uXXXX`, so a stored string cannot move the cursor, clear
 * the screen, retitle the window, reorder what follows or break a line of a table. Every string the text
 * output takes from the store goes through it. It takes any value: a SQLite column may hold a number or a
 * blob where the reader's type says text.
 */
function visible(text: unknown): string {
  return String(text).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`);
}

/** The longest query shown in the table; the JSON output has the whole directive. */
const QUERY_SHOWN = 40;

/**
 * What a record is about: its span, or for a search the query it looked for (`"req_7f3a"`, or `/req_\d+/`
 * for a pattern), read from the directive the record keeps. The query is untrusted text: written as a JSON
 * string with every control, format and separator character escaped (`visible`), so it cannot move the
 * terminal's cursor or break the table's line.
 */
function subject(r: AuditRecord): string {
  if (r.op !== "search") return visible(clip(r.spanId ?? "-"));
  let d: unknown;
  try {
    d = JSON.parse(r.directive ?? "");
  } catch {
    return "-"; // a directive cut at its bound, or one that did not parse (an invalid search)
  }
  if (typeof d !== "object" || d === null || typeof (d as { query?: unknown }).query !== "string") return "-";
  const { query, regex } = d as { query: string; regex?: unknown };
  const cut = [...query].length > QUERY_SHOWN ? `${[...query].slice(0, QUERY_SHOWN).join("")}…` : query;
  // What a terminal would act on is written out; a pattern is shown as written, a literal as a JSON string.
  return regex === true ? `/${visible(cut)}/` : visible(JSON.stringify(cut));
}

/**
 * `--format html`: the session as one timeline page on stdout. Every store's chain of the session (or the
 * one `--store` names) is read and verified exactly as `--verify` does it — by this command's own JSON path —
 * and the page shows each result first; the exit code is 1 for a broken chain only with `--verify`, as for
 * the other formats. The home store's registry gives the spans' positions; every store's records their
 * copies and holds.
 */
async function timeline(
  source: AuditReader, flags: AuditFlags & { session: string }, sessions: readonly AuditChainCount[], unlisted: readonly string[], out: (t: string) => void,
): Promise<ExitCode> {
  const rows = flags.rows === undefined ? DEFAULT_TIMELINE_ROWS : Number(flags.rows);
  if (!Number.isInteger(rows) || rows < 0) throw new CliError(`--rows must be a whole number (0: all), got ${flags.rows}`);
  const stores = flags.store !== undefined ? [flags.store] : [...new Set(sessions.filter((s) => s.session === flags.session).map((s) => s.store))];
  if (stores.length === 0) throw new CliError(`no audit records of session ${visible(flags.session)} in ${source.label}`);
  if (flags.anchor !== undefined && stores.length > 1) throw new CliError(`--anchor checks one chain: session ${visible(flags.session)} has chains in ${names(stores)}; choose one with --store`);
  const content = flags.content === true;
  const chains: TimelineChain[] = [];
  const spans: TimelineSpan[] = [];
  for (const store of stores) {
    let json = "";
    await run(source, { ...flags, store, format: "json", verify: true }, (t) => void (json += t), { table: 0, message: 0 }, sessions);
    const read = JSON.parse(json) as { records: AuditRecord[]; unreadable: AuditProblem[]; verify: { head: string | null; break: AuditProblem | null } };
    const counters = await source.counters(store, flags.session);
    chains.push({ store, records: read.records, problem: read.verify.break, head: read.verify.head, lossyUsed: counters?.lossyUsed ?? null, unreadable: read.unreadable.length });
  }
  // Rows of the registry or the copies with a column past the bound are not shown, and said so first: the
  // chains of the session a store or session name past it hides too.
  const unreadable = [...unlisted];
  // The registry is the home store's, which may keep no chain of its own for the session: ask every store.
  const seen = new Set<string>();
  for (const store of await source.stores()) {
    for (const span of await source.registry(store, flags.session, content)) {
      if (span.oversized !== undefined) {
        const spanId = span.oversized.span_id === undefined ? ` for span ${span.spanId}` : "";
        const ordinal = span.oversized.ordinal === undefined ? ` at position ${span.ordinal}` : "";
        unreadable.push(oversizedDetail(`registry row${spanId}${ordinal} in store ${store}`, span.oversized));
        continue;
      }
      if (seen.has(span.spanId)) continue;
      seen.add(span.spanId);
      spans.push(span);
    }
  }
  const copies: TimelineCopy[] = [];
  for (const copy of await source.copies(flags.session, content)) {
    if (copy.oversized === undefined) copies.push(copy);
    else {
      const spanId = copy.oversized.span_id === undefined ? ` of span ${copy.spanId}` : "";
      const store = copy.oversized.store === undefined ? ` in store ${copy.store}` : "";
      unreadable.push(oversizedDetail(`copy${spanId}${store}`, copy.oversized));
    }
  }
  out(timelineHtml({
    source: source.label, session: flags.session, chains, spans: spans.sort((a, b) => a.ordinal - b.ordinal), copies, unreadable,
    content, rows, generatedAt: Date.now(),
  }));
  return flags.verify === true && chains.some((c) => c.problem !== null) ? ExitCode.diagnostics : ExitCode.ok;
}
