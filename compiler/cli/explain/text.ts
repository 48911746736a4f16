/**
 * `explain` for a terminal, in at most `width` columns (120, or the terminal's or `COLUMNS` when narrower):
 * a policy's settings and stores, a table of its kinds with each kind's fate over the session, then per kind
 * why, its pins, what a lossy summarize keeps, and what an overlay changes against its base.
 */
import { describePhase, describeSpan } from "../../analysis/timeline.js";
import type { JudgedChange } from "../../diff/index.js";
import { TEXT_WIDTH } from "../report.js";
import { renderTable, wrapIndented } from "../table.js";
import type { PolicyView } from "./view.js";

export function explainText(v: PolicyView, width = TEXT_WIDTH): string {
  const fit = (line: string, indent = 2) => wrapIndented(line, width, indent);
  const yes = (b: boolean) => (b ? "holds" : "no holds");
  const stores = v.stores.map((s) => `${s.name} (${[s.engine, `retention ${s.retention}`, yes(s.holds), ...(s.distinguishesAbsent ? [] : ["cannot distinguish absent"]), ...(s.writable ? [] : ["read-only"])].join(", ")})`);
  const head = [
    `policy ${v.name}${v.extends ? ` (extends ${v.extends})` : ""}  —  ${v.file}`,
    `session: ${v.session}`,
    `compaction: ${v.compaction}`,
    `provider compaction: ${v.providerCompaction}`,
    `pins (all kinds): ${v.pins}`,
    `tombstone: ${v.tombstone}`,
    `stores: ${stores.join(", ") || "none"}`,
  ].map((l) => fit(l));
  const rows = v.kinds.map((k) => [
    k.name,
    k.store ?? "none",
    k.retention ?? "-",
    k.holds === null ? "-" : k.holds ? "yes" : "no",
    k.modes.join(", "),
    k.lossy,
    k.timeline.segments.map((s) => `${describeSpan(s.fromMs, s.toMs)} ${describePhase(s.phase)}`).join("\n"),
  ]);
  const out = [
    ...head,
    "",
    renderTable(["kind", "store", "retention", "holds", "modes", "lossy", `over the session (age of the span)`], rows, { maxWidth: width }),
    "",
    "fate of each kind, and why:",
    ...v.kinds.map((k) => fit(`  ${k.name}: ${k.fate} (${k.why})`, 4)),
    "",
    "pins (the policy's, then the kind's own):",
    ...v.kinds.map((k) => fit(`  ${k.name}: ${k.pins.join(", ") || "none"}`, 4)),
    "",
    "identifier classes a lossy summarize keeps (pinned, carried into the digest) and loses (presets not pinned):",
    ...v.kinds.map((k) => fit(`  ${k.name}: ${k.keeps}`, 4)),
  ];
  const d = v.againstBase;
  if (d && v.extends) {
    out.push("", `against its base ${v.extends}:`);
    if (d.changes.length === 0 && d.fates.length === 0) out.push("  no change");
    for (const c of d.changes) out.push(fit(`  ${changeLine(c)}`, 4));
    for (const f of d.fates) out.push(fit(`  fate of ${f.kind}, ${describeSpan(f.fromMs, f.toMs)} after append: ${describePhase(f.old)} → ${describePhase(f.new)} (${f.direction})`, 4));
  }
  return out.join("\n");
}

/** `kind toolResult modes: drop, summarize, compress → drop, summarize (tightening)`. */
export function changeLine(c: JudgedChange): string {
  const subject = c.name === null ? c.scope : `${c.scope} ${c.name}`;
  if (c.change === "added") return `${subject} added: ${c.new}`;
  if (c.change === "removed") return `${subject} removed (was ${c.old})`;
  return `${subject} ${c.setting}: ${c.old} → ${c.new} (${c.direction})`;
}
