/**
 * `pruneguard audit … --session S --format html`: one session as a page a person can read — what the audit
 * chains and the store recorded, laid out in time. One self-contained HTML file: no script, font, image or
 * URL (its Content-Security-Policy forbids loading anything), so it can be attached to an incident, archived
 * or opened offline.
 *
 * What it shows: each chain's verification result first (a page built from a tampered chain says so before
 * anything else); counts; the decisions over time, one lane per kind of answer (prunes reversible, reversible
 * until a time, lossy, rejected, not applied — `kept`: decided, then its copy stopped being promised before its
 * compaction point, so the span stayed live; recalls found or not; searches with and without a match; maps; compaction
 * points, asked for and the window's own; invalid directives); the session's spans by position and time (each
 * prune and recall at its span's position); the lossy budget spent over time; then the decisions and the spans
 * as tables (copies, holds, each span's fate). A compaction point the window made by itself is a `compact`
 * record with no directive (docs/observability.md).
 *
 * Content only on request (`--content`): without it the page has no span text, digest, directive or query,
 * only ids, kinds, stores, handles, times, statuses and reasons. Everything from the store is untrusted and
 * escaped. The page's size is bounded whatever the session's and whatever the store holds: charts bin their
 * marks, the tables list at most `rows` entries each (the first and last halves, and every decision that needs
 * attention first), every string from the store is cut at `FIELD_CHARS` characters in a cell and content at
 * `AUDIT_CONTENT_CHARS`, saying how much is left out, and at most `UNREADABLE_SHOWN` unreadable rows are named.
 * (What reaches the page was bounded before: the audit readers read no field past `MAX_AUDIT_FIELD_BYTES`,
 * no record past `MAX_AUDIT_RECORD_BYTES`, and no more than `MAX_AUDIT_ROWS` rows in all.)
 */
import { inDecisionOrder, type AuditRecord } from "../../src/audit.js";
import { AUDIT_CONTENT_CHARS, MAX_AUDIT_RECORD_BYTES, type AuditCopy, type AuditSpan } from "../../src/stores/audit-reader.js";
import { escapeHtml } from "./html.js";

/** One store's chain of the session, read and verified as `audit --verify` does. */
export interface TimelineChain {
  readonly store: string;
  readonly records: readonly AuditRecord[];
  /** The break `--verify` found, or `null` when the chain verifies. */
  readonly problem: { readonly seq: number; readonly problem: string; readonly detail: string } | null;
  readonly head: string | null;
  /** The session's lossy counter on this store (`null`: no counter row or none kept). */
  readonly lossyUsed: number | null;
  /** How many of the chain's records could not be read (too long, not JSON, fields of the wrong types): not shown. */
  readonly unreadable: number;
}

/** A span the home store registered (never its bytes), as the store's audit reader returns it. */
export type TimelineSpan = AuditSpan;

/** A copy a store keeps (its bytes only with `content`), as the store's audit reader returns it. */
export type TimelineCopy = AuditCopy;

export interface TimelineInput {
  /** How the source is named (a file name, `postgres:<schema>`; never a URL). */
  readonly source: string;
  readonly session: string;
  readonly chains: readonly TimelineChain[];
  readonly spans: readonly TimelineSpan[];
  readonly copies: readonly TimelineCopy[];
  /**
   * Rows of the store not shown because they could not be read (a registry row or a copy with a field past
   * its bound, a chain whose names are), one sentence each; said right after the chains' verification.
   */
  readonly unreadable?: readonly string[];
  /** Include span text, digests and directives (queries). */
  readonly content: boolean;
  /** The most entries a table lists; 0: all. */
  readonly rows: number;
  /** When the page was made (ms). */
  readonly generatedAt: number;
}

/** The default of `--rows`: enough to read, few enough that a browser renders the page at once. */
export const DEFAULT_TIMELINE_ROWS = 2_000;

/** Characters of span text or a directive shown per cell with `--content` (what the audit readers read of it). */
const CONTENT_CHARS = AUDIT_CONTENT_CHARS;

/** Characters of any other string from the store shown per cell (names, ids, kinds, reasons, details). */
const FIELD_CHARS = 200;

/** The most unreadable rows the page names one by one. */
const UNREADABLE_SHOWN = 10;

/**
 * Every value written into the page goes through this, numbers included: what a store returns is typed only
 * as far as its reader and the record checks go (`readRow` in `audit.run.ts` refuses a record whose fields
 * are not of their types), and a value that slipped past them must still come out as text, never markup.
 */
const e = (value: unknown): string => escapeHtml(String(value));

/** A string from the store, cut at `FIELD_CHARS` (saying how much is left out), escaped: what a cell shows of it. */
const field = (value: unknown): string => e(cut(String(value), FIELD_CHARS));

/** A record's time (ms): the decision clock where it has one, else when the store wrote it. */
function timeOf(r: AuditRecord): number {
  return typeof r.decided === "number" && Number.isFinite(r.decided) ? r.decided / 1000 : typeof r.at === "number" ? r.at : 0;
}

function iso(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "-";
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? "-" : d.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, "Z");
}

/** The lanes of the decision chart, in order: what a record answered. */
const LANES = [
  { id: "prune-reversible", label: "prune: reversible", color: "#2e7d32" },
  { id: "prune-until", label: "prune: reversible until", color: "#9e9d24" },
  { id: "prune-lossy", label: "prune: lossy (tombstone)", color: "#c62828" },
  { id: "prune-rejected", label: "prune: rejected", color: "#ef6c00" },
  { id: "prune-kept", label: "prune: not applied (copy no longer promised; kept live)", color: "#ad1457" },
  { id: "recall-found", label: "recall: found", color: "#1565c0" },
  { id: "recall-missing", label: "recall: not found", color: "#6a1b9a" },
  { id: "search-match", label: "search: match", color: "#00838f" },
  { id: "search-none", label: "search: no match", color: "#5d4037" },
  { id: "map", label: "map", color: "#546e7a" },
  { id: "compact", label: "compaction point (asked)", color: "#37474f" },
  { id: "compact-auto", label: "compaction point (automatic)", color: "#90a4ae" },
  { id: "compact-unchanged", label: "compact asked: nothing to rewrite (no compaction point)", color: "#cfd8dc" },
  { id: "start", label: "window opened under a policy", color: "#bdbdbd" },
  { id: "end", label: "session ended (holds released)", color: "#212121" },
  { id: "invalid", label: "invalid directive", color: "#9e9e9e" },
] as const;
type Lane = (typeof LANES)[number]["id"];

function laneOf(r: AuditRecord): Lane {
  if (r.status === "invalid") return "invalid";
  switch (r.op) {
    case "prune":
    case "summarize_range":
      if (r.status === "kept") return "prune-kept";
      return r.status === "reversible" ? (r.until !== undefined ? "prune-until" : "prune-reversible") : r.status === "lossy" ? "prune-lossy" : "prune-rejected";
    case "recall":
      return r.status === "found" ? "recall-found" : "recall-missing";
    case "search":
      return r.status === "match" ? "search-match" : "search-none";
    case "map":
      return "map";
    case "compact":
      if (r.status !== "compacted") return "compact-unchanged";
      return r.directive === null ? "compact-auto" : "compact";
    case "start":
      return "start";
    case "end":
      return "end";
    default:
      return "invalid";
  }
}

/** Whether a decision is one a reader looks at first: anything lost, refused, not found or failed. */
function needsAttention(r: AuditRecord): boolean {
  return r.status === "lossy" || r.status === "rejected" || r.status === "kept" || r.status === "invalid" || r.status === "pruned-unrecoverable" ||
    r.status === "lost" || r.status === "unavailable" || r.status === "unknown" || (r.op === "search" && r.reason !== null && r.reason !== "search:complete");
}

const CSS = `
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; padding: 20px 28px; color: #1b1b1b; background: #fafafa; max-width: 1280px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #555; margin: 0 0 12px; }
.verify { padding: 10px 14px; border-radius: 6px; margin: 10px 0; font-weight: 600; }
.ok { background: #e8f5e9; border: 1px solid #a5d6a7; color: #1b5e20; }
.broken { background: #ffebee; border: 1px solid #ef9a9a; color: #b71c1c; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 8px 12px; min-width: 150px; }
.card b { display: block; font-size: 20px; }
.card span { color: #555; font-size: 12px; }
.chart { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 8px; overflow-x: auto; }
.chart svg { display: block; width: 100%; height: auto; }
.legend { display: flex; flex-wrap: wrap; gap: 12px; font-size: 12px; color: #444; margin: 6px 0 0; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
.scroll { overflow-x: auto; background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { text-align: left; padding: 3px 7px; border-bottom: 1px solid #eee; vertical-align: top; white-space: nowrap; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.c { white-space: pre-wrap; word-break: break-all; max-width: 420px; font-family: ui-monospace, monospace; font-size: 11.5px; color: #333; }
tr.gap td { text-align: center; color: #777; font-style: italic; }
.s-reversible, .s-found, .s-match, .s-compacted, .s-mapped { color: #2e7d32; }
.s-lossy, .s-pruned-unrecoverable, .s-lost { color: #c62828; font-weight: 600; }
.s-rejected, .s-unavailable, .s-unknown, .s-no-match { color: #ef6c00; }
.s-kept { color: #ad1457; font-weight: 600; }
.s-invalid { color: #757575; }
.note { color: #555; font-size: 12.5px; }
`;

/** Whether a copy's hold still keeps it from rotation when the page is made (a hold with a time lapses then). */
function holdInForce(c: TimelineCopy, now: number): boolean {
  return c.held && (c.heldUntil === null || c.heldUntil > now);
}

/** The page. */
export function timelineHtml(input: TimelineInput): string {
  const records = inDecisionOrder(input.chains.flatMap((c) => c.records));
  const limit = input.rows <= 0 ? Number.POSITIVE_INFINITY : input.rows;
  const broken = input.chains.filter((c) => c.problem !== null);
  const count = (pred: (r: AuditRecord) => boolean) => records.reduce((n, r) => n + (pred(r) ? 1 : 0), 0);
  const byLane = new Map<Lane, number>();
  for (const r of records) byLane.set(laneOf(r), (byLane.get(laneOf(r)) ?? 0) + 1);
  const held = input.copies.filter((c) => holdInForce(c, input.generatedAt)).length;
  const out: string[] = [];
  out.push(
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    // Nothing may be loaded: no script, no style sheet, no image, no font, no frame, no form target.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>pruneguard session ${e(input.session)}</title>`,
    `<style>${CSS}</style></head><body>`,
    `<h1>Session <code>${e(input.session)}</code></h1>`,
    `<p class="sub">From ${e(input.source)} · ${records.length} decision${records.length === 1 ? "" : "s"} in ${input.chains.length} audit chain${input.chains.length === 1 ? "" : "s"} · ${input.spans.length} span${input.spans.length === 1 ? "" : "s"} registered · page made ${e(iso(input.generatedAt))}${input.content ? " · <b>content included</b>" : " · no content (span text, digests, directives and queries are left out; --content includes them)"}</p>`,
  );
  // The verification result comes first: a reader must know whether the rest can be trusted.
  out.push('<h2 id="verify">Audit chain</h2>');
  if (input.chains.length === 0) out.push('<p class="verify broken">No audit chain holds this session.</p>');
  for (const c of input.chains) {
    out.push(c.problem === null
      ? `<p class="verify ok" data-verify="ok">✓ store ${field(c.store)}: chain ok, ${c.records.length} record${c.records.length === 1 ? "" : "s"}, head <code>${field(c.head ?? "(empty)")}</code></p>`
      : `<p class="verify broken" data-verify="broken">✗ store ${field(c.store)}: chain broken at record ${e(c.problem.seq)}: ${field(c.problem.problem)}: ${e(cut(c.problem.detail, 4 * FIELD_CHARS))}.${c.unreadable > 0 ? ` ${e(c.unreadable)} record${c.unreadable === 1 ? "" : "s"} could not be read and ${c.unreadable === 1 ? "is" : "are"} not shown.` : ""} What follows is what the store holds now, not what was decided.</p>`);
  }
  const unreadable = input.unreadable ?? [];
  if (unreadable.length > 0) {
    const n = unreadable.length;
    out.push(
      `<p class="verify broken" data-unreadable="${n}">✗ ${n} row${n === 1 ? "" : "s"} of the store could not be read and ${n === 1 ? "is" : "are"} not shown (the registry, the copies or the chains' names):</p>`,
      ...unreadable.slice(0, UNREADABLE_SHOWN).map((d) => `<p class="note">${e(cut(d, 4 * FIELD_CHARS))}</p>`),
      ...(n > UNREADABLE_SHOWN ? [`<p class="note">… and ${n - UNREADABLE_SHOWN} more.</p>`] : []),
    );
  }
  out.push(
    '<h2 id="summary">Summary</h2><div class="cards">',
    card(count((r) => r.op === "prune" || r.op === "summarize_range"), "prunes decided"),
    card(byLane.get("prune-reversible") ?? 0, "reversible for the session"),
    card(byLane.get("prune-until") ?? 0, "reversible until a time"),
    card(byLane.get("prune-lossy") ?? 0, "lossy (tombstones)"),
    card(byLane.get("prune-rejected") ?? 0, "rejected"),
    card(byLane.get("prune-kept") ?? 0, "not applied (kept live)"),
    card(count((r) => r.op === "recall"), `recalls (${byLane.get("recall-found") ?? 0} found)`),
    card(count((r) => r.op === "search"), `searches (${count((r) => r.op === "search" && r.reason === "search:holes")} with holes)`),
    card((byLane.get("compact") ?? 0) + (byLane.get("compact-auto") ?? 0), `compaction points (${byLane.get("compact") ?? 0} asked for)`),
    card(byLane.get("invalid") ?? 0, "invalid directives"),
    card(held, `copies held (of ${input.copies.length})`),
    "</div>",
  );
  out.push('<h2 id="decisions-chart">Decisions over time</h2>', laneChart(records), legend(LANES.map((l) => [l.label, l.color])));
  out.push('<h2 id="spans-chart">Spans by position and time</h2>', spanChart(records, input.spans));
  out.push('<h2 id="lossy">Lossy budget spent over time</h2>', lossyChart(records, input.chains));
  const compactions = records.filter((r) => r.op === "compact" && r.status === "compacted");
  const times = (rs: readonly AuditRecord[]) => `${rs.slice(0, 50).map((r) => e(iso(timeOf(r)))).join(", ")}${rs.length > 50 ? ", …" : ""}`;
  const asked = compactions.filter((r) => r.directive !== null);
  const automatic = compactions.filter((r) => r.directive === null);
  out.push(
    '<h2 id="compactions">Compaction points</h2>',
    `<p class="note">${asked.length === 0 ? "None was asked for (compact)." : `${asked.length} asked for (compact): ${times(asked)}.`} ${automatic.length === 0 ? "The window made none by itself." : `${automatic.length} made by the window itself, recorded when the window next wrote to its store: ${times(automatic)}.`}</p>`,
  );
  const attention = records.filter(needsAttention);
  out.push(
    `<h2 id="attention">Needs attention (${attention.length})</h2>`,
    `<p class="note">Lossy and rejected prunes, recalls that did not find their span, searches with holes, invalid directives.</p>`,
    decisionTable(attention, limit, input.content),
    `<h2 id="all">Every decision (${records.length})</h2>`,
    decisionTable(records, limit, input.content),
    `<h2 id="spans">Spans (${input.spans.length})</h2>`,
    spanTable(input, records, limit),
    "</body></html>",
  );
  return `${out.join("\n")}\n`;
}

function card(n: number, label: string): string {
  return `<div class="card"><b>${n}</b><span>${e(label)}</span></div>`;
}

function legend(items: ReadonlyArray<readonly [string, string]>): string {
  return `<div class="legend">${items.map(([label, color]) => `<span><i style="background:${color}"></i>${e(label)}</span>`).join("")}</div>`;
}

const WIDTH = 1160;
const LEFT = 215;
const BINS = 240;

/** The session's time span and a bin function over it. */
function timeAxis(records: readonly AuditRecord[], bins: number) {
  let t0 = Number.POSITIVE_INFINITY;
  let t1 = Number.NEGATIVE_INFINITY;
  for (const r of records) {
    const t = timeOf(r);
    if (t < t0) t0 = t;
    if (t > t1) t1 = t;
  }
  if (!Number.isFinite(t0)) t0 = t1 = 0;
  if (t1 <= t0) t1 = t0 + 1;
  const bin = (t: number) => Math.min(bins - 1, Math.floor(((t - t0) / (t1 - t0)) * bins));
  const span = (b: number) => `${iso(t0 + ((t1 - t0) * b) / bins)} – ${iso(t0 + ((t1 - t0) * (b + 1)) / bins)}`;
  return { t0, t1, bin, span };
}

function axisLabels(t0: number, t1: number, y: number): string {
  return `<text x="${LEFT}" y="${y}" font-size="11" fill="#555">${e(iso(t0))}</text><text x="${WIDTH}" y="${y}" font-size="11" fill="#555" text-anchor="end">${e(iso(t1))}</text>`;
}

/** One lane per kind of answer; each lane a histogram of its decisions over at most BINS time bins. */
function laneChart(records: readonly AuditRecord[]): string {
  if (records.length === 0) return '<p class="note">No decisions.</p>';
  const { t0, t1, bin, span } = timeAxis(records, BINS);
  const counts = new Map<Lane, number[]>();
  for (const r of records) {
    const lane = laneOf(r);
    let c = counts.get(lane);
    if (c === undefined) counts.set(lane, (c = new Array<number>(BINS).fill(0)));
    c[bin(timeOf(r))]!++;
  }
  const laneH = 22;
  const lanes = LANES.filter((l) => counts.has(l.id));
  const w = (WIDTH - LEFT) / BINS;
  const parts: string[] = [];
  lanes.forEach((l, i) => {
    const c = counts.get(l.id)!;
    const max = Math.max(...c);
    const y = i * laneH;
    parts.push(`<text x="${LEFT - 8}" y="${y + 15}" font-size="12" text-anchor="end">${e(l.label)} (${c.reduce((a, b) => a + b, 0)})</text>`);
    parts.push(`<line x1="${LEFT}" x2="${WIDTH}" y1="${y + laneH - 1}" y2="${y + laneH - 1}" stroke="#eee"/>`);
    c.forEach((n, b) => {
      if (n === 0) return;
      const h = Math.max(3, Math.round(((laneH - 4) * n) / max));
      parts.push(`<rect x="${(LEFT + b * w).toFixed(1)}" y="${y + laneH - 1 - h}" width="${Math.max(1, w - 0.5).toFixed(1)}" height="${h}" fill="${l.color}"><title>${n} × ${e(l.label)}, ${e(span(b))}</title></rect>`);
    });
  });
  const height = lanes.length * laneH + 18;
  return `<div class="chart"><svg viewBox="0 0 ${WIDTH + 10} ${height}" role="img" aria-label="decisions over time">${parts.join("")}${axisLabels(t0, t1, height - 3)}</svg></div>`;
}

/** The worse a mark, the later in this order: a cell shows its worst. */
const SPAN_MARKS = [
  { id: "recall", label: "recalled", color: "#1565c0" },
  { id: "reversible", label: "pruned, reversible", color: "#2e7d32" },
  { id: "until", label: "pruned, reversible until a time", color: "#9e9d24" },
  { id: "rejected", label: "prune rejected", color: "#ef6c00" },
  { id: "kept", label: "prune not applied (copy no longer promised)", color: "#ad1457" },
  { id: "missing", label: "recall: not found", color: "#6a1b9a" },
  { id: "lossy", label: "pruned, lossy", color: "#c62828" },
] as const;

/** Each prune and recall at its span's position (y) and its time (x), binned into a bounded grid. */
function spanChart(records: readonly AuditRecord[], spans: readonly TimelineSpan[]): string {
  const position = new Map(spans.map((s) => [s.spanId, s.ordinal]));
  const posOf = (id: string | null): number | null => {
    if (id === null) return null;
    const p = position.get(id);
    if (p !== undefined) return p;
    const m = /^span_(\d+)$/.exec(id);
    return m ? Number(m[1]) : null;
  };
  const marked = records.flatMap((r) => {
    if (r.op !== "prune" && r.op !== "recall" && r.op !== "summarize_range") return [];
    if (r.status === "invalid" || r.status === "unknown") return [];
    const p = posOf(r.spanId);
    if (p === null) return [];
    const mark = r.op === "recall" ? (r.status === "found" ? 0 : 5) : r.status === "lossy" ? 6 : r.status === "kept" ? 4 : r.status === "rejected" ? 3 : r.until !== undefined ? 2 : 1;
    return [{ t: timeOf(r), p, mark }];
  });
  if (marked.length === 0) return '<p class="note">No prune or recall of a span.</p>';
  const xBins = 160;
  let maxPos = 1;
  for (const m of marked) if (m.p > maxPos) maxPos = m.p;
  for (const s of spans) if (s.ordinal > maxPos) maxPos = s.ordinal;
  const yBins = Math.min(80, maxPos);
  const { t0, t1, bin } = timeAxis(records, xBins);
  const cells = new Map<number, { mark: number; n: number; lo: number; hi: number }>();
  for (const m of marked) {
    const yb = Math.min(yBins - 1, Math.floor(((m.p - 1) / maxPos) * yBins));
    const key = yb * xBins + bin(m.t);
    const c = cells.get(key);
    if (c === undefined) cells.set(key, { mark: m.mark, n: 1, lo: m.p, hi: m.p });
    else {
      c.mark = Math.max(c.mark, m.mark);
      c.n++;
      c.lo = Math.min(c.lo, m.p);
      c.hi = Math.max(c.hi, m.p);
    }
  }
  const cellW = (WIDTH - LEFT) / xBins;
  const cellH = Math.max(4, Math.min(12, Math.floor(400 / yBins)));
  const height = yBins * cellH + 20;
  const parts: string[] = [
    `<text x="${LEFT - 8}" y="12" font-size="12" text-anchor="end">span_1</text>`,
    `<text x="${LEFT - 8}" y="${yBins * cellH}" font-size="12" text-anchor="end">position ${e(maxPos)}</text>`,
    `<rect x="${LEFT}" y="0" width="${WIDTH - LEFT}" height="${yBins * cellH}" fill="none" stroke="#ddd"/>`,
  ];
  for (const [key, c] of cells) {
    const yb = Math.floor(key / xBins);
    const xb = key % xBins;
    const mark = SPAN_MARKS[c.mark]!;
    const where = c.lo === c.hi ? `position ${e(c.lo)}` : `positions ${e(c.lo)}–${e(c.hi)}`;
    parts.push(`<rect x="${(LEFT + xb * cellW).toFixed(1)}" y="${yb * cellH}" width="${Math.max(1, cellW - 0.3).toFixed(1)}" height="${cellH - 0.5}" fill="${mark.color}"><title>${c.n} decision${c.n === 1 ? "" : "s"} at ${where}; worst: ${mark.label}</title></rect>`);
  }
  return `<div class="chart"><svg viewBox="0 0 ${WIDTH + 10} ${height}" role="img" aria-label="spans by position and time">${parts.join("")}${axisLabels(t0, t1, height - 3)}</svg></div>${legend(SPAN_MARKS.map((m) => [m.label, m.color]))}`;
}

/** Lossy commitments, cumulative, against time; refusals because the budget was spent are marked. */
function lossyChart(records: readonly AuditRecord[], chains: readonly TimelineChain[]): string {
  const lossy = records.filter((r) => r.status === "lossy");
  const refused = records.filter((r) => r.status === "rejected" && typeof r.reason === "string" && r.reason.startsWith("lossy-budget"));
  const counters = chains.filter((c) => c.lossyUsed !== null).map((c) => `${e(c.store)}: ${e(c.lossyUsed)}`);
  const note = `<p class="note">${lossy.length} lossy commitment${lossy.length === 1 ? "" : "s"}; ${refused.length} prune${refused.length === 1 ? "" : "s"} refused because the budget was spent.${counters.length > 0 ? ` The session's lossy counter (spent units, reservations included): ${counters.join(", ")}.` : ""}</p>`;
  if (records.length === 0 || (lossy.length === 0 && refused.length === 0)) return note;
  const { t0, t1 } = timeAxis(records, BINS);
  const h = 120;
  const x = (t: number) => LEFT + ((t - t0) / (t1 - t0)) * (WIDTH - LEFT);
  const max = Math.max(1, lossy.length);
  const y = (n: number) => 8 + (h - 16) * (1 - n / max);
  // A step line through at most ~400 points: the last commitment of each of 400 time bins.
  const step = Math.max(1, Math.ceil(lossy.length / 400));
  const pts: string[] = [`${LEFT},${y(0).toFixed(1)}`];
  for (let i = 0; i < lossy.length; i += step) {
    const j = Math.min(lossy.length - 1, i + step - 1);
    const xt = x(timeOf(lossy[j]!)).toFixed(1);
    pts.push(`${xt},${y(i).toFixed(1)}`, `${xt},${y(j + 1).toFixed(1)}`);
  }
  pts.push(`${WIDTH},${y(lossy.length).toFixed(1)}`);
  const ticks = refused.slice(0, 400).map((r) => `<line x1="${x(timeOf(r)).toFixed(1)}" x2="${x(timeOf(r)).toFixed(1)}" y1="${h - 6}" y2="${h}" stroke="#ef6c00" stroke-width="1.5"><title>${e(iso(timeOf(r)))}: lossy prune refused, budget spent</title></line>`);
  return `${note}<div class="chart"><svg viewBox="0 0 ${WIDTH + 10} ${h + 18}" role="img" aria-label="lossy budget over time"><text x="${LEFT - 8}" y="${y(max) + 4}" font-size="12" text-anchor="end">${max} spent</text><text x="${LEFT - 8}" y="${y(0)}" font-size="12" text-anchor="end">0</text><polyline points="${pts.join(" ")}" fill="none" stroke="#c62828" stroke-width="2"/>${ticks.join("")}${axisLabels(t0, t1, h + 15)}</svg></div>`;
}

/** At most `limit` rows of `items`: the first and last halves, with a line saying how many are left out. */
function bounded<T>(items: readonly T[], limit: number, row: (item: T) => string, columns: number): string {
  if (items.length <= limit) return items.map(row).join("\n");
  const head = Math.ceil(limit / 2);
  const tail = Math.floor(limit / 2);
  return [
    ...items.slice(0, head).map(row),
    `<tr class="gap"><td colspan="${columns}">… ${items.length - head - tail} more not listed (--rows 0 lists all; --format json has every record) …</td></tr>`,
    ...items.slice(items.length - tail).map(row),
  ].join("\n");
}

function decisionTable(records: readonly AuditRecord[], limit: number, content: boolean): string {
  if (records.length === 0) return '<p class="note">None.</p>';
  const head = ["time", "record", "op", "answer", "span", "kind", "mode", "handle", "reversible until", "accept_lossy", "reason", ...(content ? ["directive"] : [])];
  const row = (r: AuditRecord) => {
    const cells = [
      e(iso(timeOf(r))), `${field(r.store)} #${e(r.seq)}`, field(r.op ?? "-"), `<span class="s-${field(String(r.status))}">${field(String(r.status))}</span>`, field(r.spanId ?? "-"),
      field(r.kind ?? "-"), field(r.mode ?? "-"), field(r.handle ?? "-"), e(r.until === undefined ? "-" : iso(r.until)), r.acceptLossy ? "yes" : "-", field(r.reason ?? "-"),
    ];
    const directive = content ? `<td class="c">${e(cut(r.directive ?? "", CONTENT_CHARS))}</td>` : "";
    return `<tr>${cells.map((c) => `<td>${c}</td>`).join("")}${directive}</tr>`;
  };
  return `<div class="scroll"><table><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>\n${bounded(records, limit, row, head.length)}\n</tbody></table></div>`;
}

function spanTable(input: TimelineInput, records: readonly AuditRecord[], limit: number): string {
  if (input.spans.length === 0) return '<p class="note">No span registry for this session in this source (the home store keeps it).</p>';
  const copies = new Map<string, TimelineCopy>();
  for (const c of input.copies) copies.set(c.spanId, c);
  const fate = new Map<string, { status: string; until?: number; rejected: number; recalls: number; lastRecall: string | null }>();
  const of = (id: string) => {
    let f = fate.get(id);
    if (f === undefined) fate.set(id, (f = { status: "live", rejected: 0, recalls: 0, lastRecall: null }));
    return f;
  };
  for (const r of records) {
    if (r.spanId === null) continue;
    if (r.op === "prune" || r.op === "summarize_range") {
      const f = of(r.spanId);
      if (r.status === "reversible" || r.status === "lossy") {
        f.status = r.status;
        if (r.until !== undefined) f.until = r.until;
      } else if (r.status === "kept") {
        // Decided, then not applied: the span stayed live.
        f.status = "kept";
        delete f.until;
      } else if (r.status === "rejected") f.rejected++;
    } else if (r.op === "recall") {
      const f = of(r.spanId);
      f.recalls++;
      f.lastRecall = String(r.status);
    }
  }
  const head = ["position", "span", "kind", "store", "copy written", "copy", "fate", "prunes rejected", "recalls", ...(input.content ? ["text", "replacement"] : [])];
  const row = (s: TimelineSpan) => {
    const c = copies.get(s.spanId);
    const f = fate.get(s.spanId);
    const copy = c === undefined ? (s.backing === null ? "none (no store)" : "none") : c.held ? (holdInForce(c, input.generatedAt) ? `held${c.heldUntil === null ? "" : ` until ${iso(c.heldUntil)}`}` : `hold lapsed ${iso(c.heldUntil)}, kept until rotation`) : c.expiredAt !== null ? `expired ${iso(c.expiredAt)}` : "kept (not held)";
    const status = f?.status ?? "live";
    const fateText = status === "reversible" ? (f?.until !== undefined ? `reversible until ${iso(f.until)}` : "pruned, reversible") : status === "lossy" ? "pruned, lossy" : status === "kept" ? "live (prune not applied)" : "live";
    const cells = [
      e(s.ordinal), field(s.spanId), field(s.kind), field(s.backing ?? "-"), e(iso(c?.createdAt)), e(copy), `<span class="s-${status === "live" ? "found" : e(status)}">${e(fateText)}</span>`,
      String(f?.rejected ?? 0), f === undefined || f.recalls === 0 ? "0" : `${f.recalls} (last: ${field(f.lastRecall ?? "-")})`,
    ];
    const extra = input.content ? `<td class="c">${e(contentCell(c?.text ?? null, c?.textBytes))}</td><td class="c">${e(contentCell(s.replacement ?? null, s.replacementBytes))}</td>` : "";
    return `<tr>${cells.map((x) => `<td>${x}</td>`).join("")}${extra}</tr>`;
  };
  return `<div class="scroll"><table><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>\n${bounded(input.spans, limit, row, head.length)}\n</tbody></table></div>`;
}

/** `text` cut at `chars` (never inside a surrogate pair), saying how many characters are left out. */
function cut(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const code = text.charCodeAt(chars - 1);
  const at = code >= 0xd800 && code <= 0xdbff ? chars - 1 : chars;
  return `${text.slice(0, at)}… (${text.length - at} more characters)`;
}

/**
 * Span text or a replacement as a cell shows it. `bytes` is the whole text's length when the reader read only
 * its start (at least `CONTENT_CHARS` characters of it), or none of it (past `MAX_AUDIT_RECORD_BYTES`).
 */
function contentCell(text: string | null, bytes: number | undefined): string {
  if (bytes === undefined) return cut(text ?? "", CONTENT_CHARS);
  if (text === null || bytes > MAX_AUDIT_RECORD_BYTES) return `(not read: ${bytes} bytes, over the ${MAX_AUDIT_RECORD_BYTES} bytes pruneguard audit reads of one text)`;
  const code = text.charCodeAt(CONTENT_CHARS - 1);
  return `${text.slice(0, code >= 0xd800 && code <= 0xdbff ? CONTENT_CHARS - 1 : CONTENT_CHARS)}… (${bytes} bytes in all)`;
}
