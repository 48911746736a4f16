/**
 * `explain --format html`: one self-contained page for a set of policies, for reviewers who do not read a
 * terminal. Per policy: its settings, stores and kinds, each kind's fate over the session drawn as a
 * timeline (reversible, reversible until its copy expires, lossy only with the flag, never), and an
 * overlay against its base. No script, font, image or URL leaves the page (its Content-Security-Policy
 * forbids loading anything), so it can be attached to a review, archived, or opened offline; the layout
 * wraps within a 1280 px window (test/compiler/explain-html.test.ts renders it in headless Chromium).
 */
import { formatDuration } from "../../../src/policy/durations.js";
import { describePhase, describeSpan, describeTimeline, PHASES, type Phase, type Timeline } from "../../analysis/timeline.js";
import type { PolicyDiff } from "../../diff/index.js";
import { escapeHtml } from "../html.js";
import type { KindView, PolicyView } from "./view.js";

const e = escapeHtml;

const PHASE_HELP: Record<Phase, string> = {
  reversible: "the copy is verified and held for the session; recall gives the bytes back",
  "reversible-until": "reversible, but the store cannot hold copies: recall works only until the copy's retention ends",
  "lossy-with-flag": "no copy can back it: executed only with accept_lossy, leaving a tombstone",
  never: "refused: it can be neither reversible nor lossy",
};

const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: #1f2328; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 4px; padding-top: 20px; border-top: 2px solid #d0d7de; }
h3 { font-size: 15px; margin: 22px 0 8px; }
p { margin: 4px 0 8px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 12.5px; overflow-wrap: anywhere; }
a { color: #0969da; }
nav { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 8px 0 16px; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; margin: 4px 0 8px; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid #e6e9ed; overflow-wrap: anywhere; word-break: break-word; }
th { background: #f6f8fa; font-weight: 600; }
table.settings th { width: 180px; background: none; }
.muted { color: #59636e; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 24px; padding: 10px 12px; background: #f6f8fa; border-radius: 6px; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.swatch { display: inline-block; flex: none; width: 28px; height: 12px; border-radius: 2px; }
.p-reversible { background: #2da44e; }
.p-reversible-until { background: repeating-linear-gradient(135deg, #2da44e 0 6px, #aceebb 6px 12px); }
.p-lossy-with-flag { background: #e16f24; }
.p-never { background: #8c959f; }
.timelines { display: grid; grid-template-columns: 180px minmax(0, 1fr); gap: 2px 16px; align-items: start; }
.timelines .kind { padding-top: 2px; font-weight: 600; overflow-wrap: anywhere; }
.track { margin-bottom: 10px; min-width: 0; }
.bar { display: flex; width: 100%; height: 20px; border-radius: 3px; background: #eef1f4; }
.bar.base { height: 10px; margin-top: 4px; opacity: 0.75; }
.seg { display: block; height: 100%; min-width: 2px; }
.seg:first-child { border-radius: 3px 0 0 3px; }
.seg:last-child { border-radius: 0 3px 3px 0; }
.seg:only-child { border-radius: 3px; }
.seg.past { background: repeating-linear-gradient(90deg, transparent 0 4px, #d0d7de 4px 5px); }
.caption { font-size: 12.5px; color: #59636e; overflow-wrap: anywhere; }
.axis { display: flex; justify-content: space-between; gap: 12px; font-size: 12px; color: #59636e; border-top: 1px solid #d0d7de; padding-top: 2px; }
.tightening { color: #1a7f37; font-weight: 600; }
.loosening { color: #cf222e; font-weight: 600; }
.neutral { color: #59636e; }
footer { margin-top: 40px; color: #59636e; font-size: 12.5px; }
`;

/** The page for `views` (in argument order), titled by what was explained. */
export function explainHtml(views: readonly PolicyView[], source: string): string {
  const names = views.map((v) => v.name).join(", ");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // Nothing may be loaded from anywhere: the page is its own whole.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'">`,
    `<title>pruneguard policies: ${e(names)}</title>`,
    `<style>${STYLE}</style>`,
    "</head>",
    "<body>",
    "<main>",
    "<h1>pruneguard policies</h1>",
    `<p class="muted">${views.length} ${views.length === 1 ? "policy" : "policies"} from <code>${e(source)}</code>: which span kinds are backed by which stores, and what every prune of them can become over a session.</p>`,
    views.length > 1 ? `<nav>${views.map((v) => `<a href="#policy-${e(v.name)}">${e(v.name)}</a>`).join("")}</nav>` : "",
    legend(),
    ...views.map(policySection),
    '<footer>Written by <code>pruneguard explain --format html</code>. A timeline is a span\'s age: the time since its append, up to the longest session the policy allows.</footer>',
    "</main>",
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

function legend(): string {
  return `<div class="legend" role="list">${PHASES.map((p) => `<span role="listitem" title="${e(PHASE_HELP[p])}"><i class="swatch p-${p}"></i>${e(describePhase(p))}</span>`).join("")}</div>`;
}

const yes = (b: boolean | null): string => (b === null ? "–" : b ? "yes" : "no");

function table(header: readonly string[], rows: readonly (readonly string[])[], widths: readonly string[] = []): string {
  const cols = widths.length > 0 ? `<colgroup>${widths.map((w) => `<col style="width:${w}">`).join("")}</colgroup>` : "";
  return `<table>${cols}<thead><tr>${header.map((h) => `<th>${e(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
}

function policySection(v: PolicyView): string {
  const settings = [
    ["session", v.session],
    ["compaction", v.compaction],
    ["provider compaction", v.providerCompaction],
    ["pins (all kinds)", v.pins],
    ["tombstone", v.tombstone],
  ];
  const parts = [
    `<section id="policy-${e(v.name)}">`,
    `<h2>${e(v.name)}${v.extends ? ` <span class="muted">extends ${e(v.extends)}</span>` : ""}</h2>`,
    `<p class="muted"><code>${e(v.file)}</code></p>`,
    `<table class="settings"><tbody>${settings.map(([k, val]) => `<tr><th>${e(k!)}</th><td>${e(val!)}</td></tr>`).join("")}</tbody></table>`,
    "<h3>Stores</h3>",
    v.stores.length === 0
      ? '<p class="muted">No stores: nothing keeps a copy of any span.</p>'
      : table(
          ["store", "engine", "retention", "holds", "distinguishes absent", "writable", "backs"],
          v.stores.map((s) => [`<code>${e(s.name)}</code>`, e(s.engine), e(s.retention), yes(s.holds), yes(s.distinguishesAbsent), yes(s.writable), e(s.kinds.join(", ") || "–")]),
          ["14%", "10%", "10%", "8%", "14%", "9%", "35%"],
        ),
    "<h3>Kinds</h3>",
    table(
      ["kind", "store", "modes", "lossy", "re-persist", "pins", "fate"],
      v.kinds.map((k) => [`<code>${e(k.name)}</code>`, e(k.storeText), e(k.modes.join(", ")), e(k.lossy), yes(k.repersist), e(k.pins.join(", ") || "–"), `${e(k.fate)} <span class="muted">(${e(k.why)})</span>`]),
      ["12%", "12%", "12%", "8%", "8%", "16%", "32%"],
    ),
    `<h3>Fates over the session</h3>`,
    `<p class="muted">What a prune of each kind is, by the age of its span, from its append to ${v.unlimited ? `${e(formatDuration(v.axisMs))} (sessions have no maximum length; the last phase goes on)` : `the end of the longest session, ${e(formatDuration(v.axisMs))}`}.${v.againstBase ? ` The thin bar under each is the same kind under ${e(v.extends ?? "the base")}; a bar ends where its policy's sessions end.` : ""}</p>`,
    `<div class="timelines">${v.kinds.map((k) => timelineRow(k, v)).join("")}<div></div><div class="axis"><span>0 (append)</span><span>${e(formatDuration(v.axisMs))}${v.unlimited ? " and on" : " (the longest session)"}</span></div></div>`,
    "<h3>What a lossy summarize keeps</h3>",
    table(["kind", "identifier classes pinned and carried into the digest; preset classes lost"], v.kinds.map((k) => [`<code>${e(k.name)}</code>`, e(k.keeps)]), ["18%", "82%"]),
  ];
  if (v.againstBase && v.extends) parts.push(`<h3>Against its base ${e(v.extends)}</h3>`, againstBase(v.againstBase, v.extends, v.name));
  parts.push("</section>");
  return parts.join("\n");
}

function timelineRow(k: KindView, v: PolicyView): string {
  const base = v.againstBase
    ? k.baseTimeline
      ? `${bar(k.baseTimeline, v.axisMs, "base")}<div class="caption">${e(v.extends ?? "base")}: ${e(describeTimeline(k.baseTimeline))}</div>`
      : `<div class="caption">not in ${e(v.extends ?? "the base")}: a kind of this overlay's own</div>`
    : "";
  return [
    `<div class="kind"><code>${e(k.name)}</code></div>`,
    `<div class="track">${bar(k.timeline, v.axisMs, "")}<div class="caption">${e(describeTimeline(k.timeline))}</div>${base}</div>`,
  ].join("");
}

/**
 * A bar of the timeline's segments, each as wide as its share of the axis. Where the policy's sessions end
 * before the axis does (an overlay's shorter sessions), the rest of the bar is left empty.
 */
function bar(t: Timeline, axisMs: number, cls: string): string {
  const end = Math.min(t.untilMs ?? axisMs, axisMs);
  const segs = t.segments.map((s, i) => {
    const to = Math.min(s.toMs ?? axisMs, axisMs);
    const share = Math.max(0, to - s.fromMs) / axisMs;
    // The last segment of a bar that reaches the axis's end takes what is left, so rounding leaves no gap or overflow.
    const size = i === t.segments.length - 1 && end >= axisMs ? "flex: 1 1 0" : `flex: 0 0 ${(share * 100).toFixed(3)}%`;
    const label = `${describeSpan(s.fromMs, s.toMs)} after append: ${describePhase(s.phase)} — ${PHASE_HELP[s.phase]}`;
    return `<span class="seg p-${s.phase}" style="${size}" title="${e(label)}"></span>`;
  });
  if (end < axisMs) segs.push(`<span class="seg past" style="flex: 1 1 0" title="${e(`sessions end at ${formatDuration(end)}`)}"></span>`);
  return `<div class="bar${cls ? ` ${cls}` : ""}" role="img" aria-label="${e(describeTimeline(t))}">${segs.join("")}</div>`;
}

function againstBase(d: PolicyDiff, base: string, overlay: string): string {
  const rows = [
    ...d.changes.map((c) => [
      e(c.name === null ? c.scope : `${c.scope} ${c.name}`),
      e(c.change === "changed" ? c.setting : c.change),
      e(c.old),
      e(c.new),
      `<span class="${c.direction}">${e(c.direction)}</span>`,
    ]),
    ...d.fates.map((f) => [
      e(`kind ${f.kind}`),
      e(`fate ${describeSpan(f.fromMs, f.toMs)} after append`),
      e(describePhase(f.old)),
      e(describePhase(f.new)),
      `<span class="${f.direction}">${e(f.direction)}</span>`,
    ]),
  ];
  if (rows.length === 0) return '<p class="muted">No change: the overlay inherits everything.</p>';
  return table(["subject", "setting", base, overlay, "effect"], rows, ["18%", "20%", "24%", "24%", "14%"]);
}
