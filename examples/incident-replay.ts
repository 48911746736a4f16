/**
 * The incident from the reference document, replayed twice with the same scripted model:
 *
 *   left:  a naive executor that frees whatever the model names (what agent runtimes do today);
 *   right: pruneguard's window, which checks the backing store at execution time — opened through the
 *          guards the compiler generated from `examples/policies` (org: tool results re-persist;
 *          team-payments: they do not).
 *
 * Turn N: the model summarizes a 40-turn tool block (~9k tokens) whose durable copy was rotated out two
 * hours earlier, and prunes it. Turn N+5: it needs the request id that existed only in that block.
 * Turn N+6: it needs the database the failing call waited on, and no longer knows which span named it,
 * so it searches.
 *
 * Run: `npm start` (or `node dist/examples/incident-replay.js`). Output is deterministic.
 * Set PRUNEGUARD_PG_URL to run the guarded side on PostgreSQL instead of a temporary SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ManualClock, SqliteStore, countTokens, refSpanId, type BackingStore, type DirectiveOutcome } from "../src/index.js";
import { PG_URL_ENV, PostgresStore, createPool, migrate } from "../src/postgres.js";
import { createWindow } from "./replay-window.js";

const HOUR = 3_600_000;
const REQUEST_ID = "req_7f3a9c2e41";
/** The database the failing call waited on: in the block, never in the digest, never pinned. */
const DATABASE = "orders-primary";
const DIGEST = "Investigated the failing deploy over 40 tool calls: the API returned 502s caused by a database connection timeout; two retries did not help.";

/** Forty tool interactions, one of which carries the request id the model will need later. */
export function toolBlock(): string {
  const lines: string[] = [];
  for (let i = 1; i <= 40; i++) {
    lines.push(`## tool call ${i}: http.get https://api.internal/deploys/8812/steps/${i}`);
    if (i === 23) {
      lines.push(`HTTP/1.1 502 Bad Gateway`, `X-Request-Id: ${REQUEST_ID}`, `{"error":"upstream timeout","code":"E1042","db":"orders-primary","waited_ms":30000}`);
    } else {
      lines.push(`HTTP/1.1 200 OK`, `{"step":${i},"status":"ok","duration_ms":${100 + ((i * 37) % 400)},"node":"worker-${(i % 7) + 1}"}`);
      for (let j = 1; j <= 5; j++) {
        lines.push(`  ${String(j).padStart(2, "0")}:${String((i * 7 + j * 13) % 60).padStart(2, "0")} worker-${(i % 7) + 1} step ${i}.${j}: pulled layer sha256:${((i * 7919 + j * 104729) % 0xffffff).toString(16).padStart(6, "0")}, verified, ${(i * j * 37) % 900 + 100} KiB in ${(i + j) * 3} ms`);
      }
    }
  }
  return lines.join("\n");
}

/** `line` in pieces of at most `width` columns, broken at spaces (the continuation pieces 4 columns narrower). */
function fitLine(line: string, width: number): string[] {
  const out: string[] = [];
  let rest = line;
  let room = width;
  while (rest.length > room) {
    const cut = rest.lastIndexOf(" ", room);
    if (cut <= 0) break;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut + 1);
    room = width - 4;
  }
  out.push(rest);
  return out;
}

/** What one side did at one turn. */
type Row = { readonly turn: string; readonly cells: readonly string[] };

/** The naive executor: a list of spans, a log whose retention it cannot see, and no check. */
export class NaiveWindow {
  readonly spans = new Map<string, string>();
  readonly log = new Map<string, string>();
  append(id: string, text: string): void {
    this.spans.set(id, text);
    this.log.set(id, text);
  }
  render(): string {
    return [...this.spans.values()].join("\n\n");
  }
}

const REQUEST_ID_PATTERN = /\breq_[0-9a-f]{6,}\b/;

/** One side of the replay: the same scripted model drives each. */
interface Side {
  readonly title: string;
  append(kind: "scratch" | "toolResult", text: string): Promise<string>;
  rotate(): Promise<string>;
  /** The model's directive; returns what the runtime told it. May issue a follow-up (accept_lossy). */
  prune(directive: Record<string, unknown>): Promise<string>;
  recall(spanId: string): Promise<{ said: string; text: string | null; status: string }>;
  /** The model does not know which span held the text: it searches the session. */
  search(query: string): Promise<{ said: string; found: string | null; holders: readonly string[] }>;
  render(): string;
}

function naiveSide(): Side {
  const w = new NaiveWindow();
  let n = 0;
  return {
    title: "naive executor (no check)",
    async append(_kind, text) {
      w.append(`span_${++n}`, text);
      return `span_${n} logged`;
    },
    async rotate() {
      w.log.delete("span_7");
      return "raw log of span_7 deleted";
    },
    async prune(d) {
      w.spans.set(String(d.span_id), String(d.digest));
      return `freed span_7, digest in its place`;
    },
    async recall(id) {
      const text = w.log.get(id) ?? null;
      return { said: text === null ? "[] (empty)" : "text", text, status: text === null ? "empty" : "found" };
    },
    async search(query) {
      // What agent runtimes offer today: a grep over what is still stored, silent about what is not.
      const hit = [...w.spans, ...w.log].find(([, text]) => text.includes(query));
      return { said: hit ? `match in ${hit[0]}` : "[] (no results)", found: hit ? hit[0] : null, holders: [] };
    },
    render: () => w.render(),
  };
}

/**
 * How the scripted model prunes on a guarded window: `trial` sends the directive and reads the rejection
 * line if there is one (the reference document's protocol); `map-first` asks for the reversibility map
 * (`{"op":"map"}`) and sends the directive the map says will execute, or keeps the span.
 */
export type ModelStyle = "trial" | "map-first";

function guardedSide(title: string, win: ReturnType<typeof createWindow>, toolLog: BackingStore, style: ModelStyle, outcomes: DirectiveOutcome[]): Side {
  const decide = async (d: Record<string, unknown>): Promise<string> => {
    if (style === "map-first") {
      const map = await win.applyDirective({ op: "map" });
      const f = map.status === "mapped" ? map.spans.find((s) => s.spanId === d.span_id) : undefined;
      if (f === undefined || f.forecast === "never") return `map: ${f?.forecast ?? "no such span"} → model keeps the span`;
      const directive = f.forecast === "lossy-with-flag" ? { ...d, accept_lossy: true } : d;
      const out = await win.applyDirective(JSON.stringify(directive));
      outcomes.push(out);
      return `map: ${f.forecast} → ${describePrune(out)}`;
    }
    const first = await win.applyDirective(JSON.stringify(d));
    outcomes.push(first);
    if (first.status !== "rejected") return describePrune(first);
    // The model reads the rejection line and chooses the explicit loss rather than overflowing.
    const second = await win.applyDirective(JSON.stringify({ ...d, accept_lossy: true }));
    outcomes.push(second);
    return `rejected: "${first.line}" → model resends with accept_lossy: ${describePrune(second)}`;
  };
  return {
    title,
    async append(kind, text) {
      const id = refSpanId(await win.append({ kind, text }));
      const e = win.entries().find((x) => x.state === "live" && x.span.id === id);
      return e?.state === "live" && e.handle ? `${id} persisted as ${e.handle}` : `${id} kept in window only`;
    },
    async rotate() {
      const r = await toolLog.rotate();
      return `${r.rotated} record rotated out, ${r.keptByHold} kept by hold`;
    },
    async prune(d) {
      const said = await decide(d);
      // The model freed the block because it needs the room now, so it asks for the compaction point at
      // once (`{"op":"compact"}`); otherwise the window would apply it with the next prunes that pay for it.
      const c = await win.applyDirective({ op: "compact" });
      return c.op === "compact" && c.status === "compacted" && c.applied > 0 ? `${said}; compact → applied now` : said;
    },
    async recall(id) {
      const r = await win.applyDirective({ op: "recall", span_id: id });
      if (r.op === "recall" && r.status === "found") return { said: `found, ${r.text.length} bytes, byte-identical`, text: r.text, status: r.status };
      return { said: r.status, text: null, status: r.status };
    },
    async search(query) {
      const r = await win.applyDirective({ op: "search", query });
      if (r.op !== "search" || r.status === "invalid") return { said: r.status, found: null, holders: [] };
      const m = r.matches[0];
      const said = m ? `${m.spanId} (${m.source === "copy" ? `pruned, recall ${m.handle}` : m.source}): "${m.snippet}"` : r.text.split("\n").at(-1)!;
      return { said, found: m ? m.spanId : null, holders: r.coverage.holes.map((h) => h.spanId) };
    },
    render: () => win.render(),
  };
}

function describePrune(o: DirectiveOutcome): string {
  if (o.op !== "prune") return o.status;
  const pins = (o.status === "reversible" || o.status === "lossy") && o.pinsCarried.length > 0 ? `; pins carried: ${o.pinsCarried.join(", ")}` : "";
  switch (o.status) {
    case "reversible":
      return `reversible${o.repersisted ? " (copy had expired: re-persisted with a hold)" : ""}, handle ${o.handle}${pins}; freed ${o.tokensFreed} tokens`;
    case "lossy":
      return `lossy, tombstone "${o.line.split("\n")[0]}"${pins}; freed ${o.tokensFreed} tokens`;
    default:
      return `${o.status}: ${o.line}`;
  }
}

/** What the scripted model concludes from what it could read at turn N+5. */
function conclude(seen: string | null, recall: { status: string; text: string | null }): string {
  const id = seen ?? recall.text?.match(REQUEST_ID_PATTERN)?.[0] ?? null;
  if (id !== null && recall.status === "found") return `files the ticket with ${id}; the raw block is recoverable (correct)`;
  if (id !== null) return `files the ticket with ${id}; knows the raw block was pruned and is gone (correct)`;
  if (recall.status === "pruned-unrecoverable") return "knows the id existed and was lost; re-runs the tool (correct)";
  return "concludes no request id was ever logged (confabulation)";
}

/** What the scripted model concludes from a search for the database name at turn N+6. */
function concludeSearch(r: { found: string | null; holders: readonly string[] }): string {
  if (r.found !== null) return `reads the database name in ${r.found} and recalls it for the full error (correct)`;
  if (r.holders.length > 0) return `knows ${r.holders.join(", ")} may have named the database and is gone; re-runs the tool (correct)`;
  return "concludes the failing call named no database (confabulation)";
}

export interface ReplayOptions {
  /** Where to print; defaults to stdout. */
  readonly write?: (line: string) => void;
  /** A store for the guarded sides; defaults to a SQLite file in a temporary folder. */
  readonly store?: (clock: ManualClock, name: string) => Promise<BackingStore>;
  /** How the scripted model prunes on the guarded sides (default `trial`). */
  readonly model?: ModelStyle;
}

export interface ReplayResult {
  readonly rows: Row[];
  readonly titles: readonly string[];
  readonly conclusions: readonly string[];
  /** Every prune outcome the guarded sides returned, in order. */
  readonly prunes: readonly DirectiveOutcome[];
  /** What the model concluded from its search at turn N+6, per side. */
  readonly searchConclusions: readonly string[];
}

/** Runs the script on all three sides, prints the table and returns it. */
export async function replay(options: ReplayOptions = {}): Promise<ReplayResult> {
  const write = options.write ?? ((l: string) => process.stdout.write(`${l}\n`));
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  const dir = mkdtempSync(join(tmpdir(), "pruneguard-replay-"));
  try {
    const open = async (name: string) =>
      options.store
        ? options.store(clock, name)
        : new SqliteStore({ name: "toolLog", path: join(dir, `${name}.db`), retentionMs: 2 * HOUR, clock });
    const onStore = await open("repersist");
    const offStore = await open("no-repersist");
    const session = "incident-replay";
    const style = options.model ?? "trial";
    const prunes: DirectiveOutcome[] = [];
    const sides: Side[] = [
      naiveSide(),
      guardedSide("pruneguard org, re-persist on", createWindow({ session, toolLog: onStore, clock, repersist: true }), onStore, style, prunes),
      guardedSide("pruneguard payments, re-persist off", createWindow({ session, toolLog: offStore, clock, repersist: false }), offStore, style, prunes),
    ];
    const rows: Row[] = [];
    const all = async (turn: string, f: (s: Side) => Promise<string>) => {
      const cells: string[] = [];
      for (const s of sides) cells.push(await f(s));
      rows.push({ turn, cells });
    };
    const block = toolBlock();
    for (let t = 1; t <= 6; t++) for (const s of sides) await s.append("scratch", `turn ${t}: planning note ${t}`);
    await all("N-1", async (s) => `40-call tool block, ${countTokens(block)} tokens: ${await s.append("toolResult", block)}`);
    // Two hours pass; the retention job rotates the tool-call log. No model can see this.
    clock.advance(2 * HOUR + 60_000);
    await all("N-½", (s) => s.rotate());
    const directive = { op: "prune", span_id: "span_7", mode: "summarize", digest: DIGEST };
    await all("N", (s) => s.prune(directive));
    await all("N+1…4", async (s) => {
      for (let t = 1; t <= 4; t++) await s.append("scratch", `turn N+${t}: work continues`);
      return "four turns of work; the digest suffices";
    });
    clock.advance(40 * 60_000);
    // Turn N+5: the subtask needs the exact request id. The model looks in its window, then recalls.
    const conclusions: string[] = [];
    await all("N+5", async (s) => {
      const seen = s.render().match(REQUEST_ID_PATTERN)?.[0] ?? null;
      const r = await s.recall("span_7");
      conclusions.push(conclude(seen, r));
      return `window shows ${seen ?? "no request id"}; recall(span_7) → ${r.said}`;
    });
    rows.push({ turn: "model", cells: conclusions });
    // Turn N+6: the model needs the database the failing call waited on. It no longer knows which span
    // named it (the window shows digests and ids, not span contents), so it searches.
    const searchConclusions: string[] = [];
    await all("N+6", async (s) => {
      const r = await s.search(DATABASE);
      searchConclusions.push(concludeSearch(r));
      return `search "${DATABASE}" → ${r.said}`;
    });
    rows.push({ turn: "model", cells: searchConclusions });
    printTable(sides.map((s) => s.title), rows, write);
    for (const [i, store] of [onStore, offStore].entries()) {
      write("");
      write(`audit log, ${sides[i + 1]!.title}:`);
      for (const r of await store.auditLog(session)) {
        write(`  ${r.seq}. ${r.op ?? "-"} ${r.spanId ?? "-"} → ${r.status}${r.reason ? ` [${r.reason}]` : ""}${r.pinsCarried ? `, ${r.pinsCarried} pins carried` : ""}`);
      }
    }
    write("");
    write(`what the model reads in span_7's place (${sides[1]!.title}):`);
    const text = sides[1]!.render();
    const at = text.indexOf("span_7 ");
    // The model reads each line whole; it is shown in lines of at most 120 columns, continued under its text.
    for (const l of text.slice(at).split("\n").slice(0, 3)) {
      const [first, ...rest] = fitLine(l, 116);
      write(`  | ${first}`);
      for (const r of rest) write(`  |     ${r}`);
    }
    await onStore.close();
    await offStore.close();
    return { rows, titles: sides.map((s) => s.title), conclusions, prunes, searchConclusions };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printTable(titles: readonly string[], rows: readonly Row[], write: (l: string) => void): void {
  // Three sides side by side in 98 columns: a terminal's width, with room to spare.
  const W = 28;
  const wrap = (s: string): string[] => {
    const out: string[] = [];
    let line = "";
    // A word longer than the column (a JSON line in a snippet) is broken, so the table keeps its shape.
    const words = s.split(" ").flatMap((w) => (w.length <= W ? [w] : (w.match(new RegExp(`.{1,${W}}`, "gu")) ?? [w])));
    for (const word of words) {
      if (line && (line + " " + word).length > W) {
        out.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    if (line) out.push(line);
    return out;
  };
  const sep = ["-".repeat(5), ...titles.map(() => "-".repeat(W))].join("-+-");
  const heads = titles.map(wrap);
  for (let i = 0; i < Math.max(...heads.map((h) => h.length)); i++) {
    write([(i === 0 ? "turn" : "").padEnd(5), ...heads.map((h) => (h[i] ?? "").padEnd(W))].join(" | ").trimEnd());
  }
  write(sep);
  for (const r of rows) {
    const cols = r.cells.map(wrap);
    const height = Math.max(...cols.map((c) => c.length));
    for (let i = 0; i < height; i++) {
      write([(i === 0 ? r.turn : "").padEnd(5), ...cols.map((c) => (c[i] ?? "").padEnd(W))].join(" | ").trimEnd());
    }
    write(sep);
  }
}

/**
 * With PRUNEGUARD_PG_URL set, the guarded sides run on PostgreSQL: each in a schema of its own, created
 * by the migration and dropped afterwards, so the replay leaves nothing behind on the server.
 */
async function main(): Promise<void> {
  const url = process.env[PG_URL_ENV];
  if (!url) {
    await replay();
    return;
  }
  const pool = createPool({ url, max: 2 });
  const schemas: string[] = [];
  try {
    process.stdout.write(`(guarded sides on PostgreSQL: ${new URL(url).host})\n`);
    await replay({
      store: async (clock, name) => {
        const schema = `pruneguard_replay_${name.replace(/[^a-z]/g, "")}_${process.pid}`;
        schemas.push(schema);
        await migrate(pool, { schema });
        return new PostgresStore({ name: "toolLog", pool, schema, retentionMs: 2 * HOUR, clock });
      },
    });
  } finally {
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  // `npm start | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
