/** `pruneguard diff` for a terminal (at most 120 columns) and as markdown for a pull-request comment. */
import { describePhase, describeSpan } from "../../analysis/timeline.js";
import type { FateChange, JudgedChange, PolicyDiff, PolicySetDiff } from "../../diff/index.js";
import { changeLine, TEXT_WIDTH } from "../explain/text.js";
import { markdownTable, mdCode } from "../markdown.js";
import { wrapIndented } from "../table.js";

const subject = (c: JudgedChange): string => (c.name === null ? c.scope : `${c.scope} ${c.name}`);
const fateSubject = (f: FateChange): string => `fate ${describeSpan(f.fromMs, f.toMs)} after append${f.pastSessionOf ? ` (past the ${f.pastSessionOf} side's sessions)` : ""}`;

/** How many setting changes of each direction (a finding only the changes together make counts as loosening), and fate ranges changed. */
function counts(d: PolicySetDiff): { loosening: number; tightening: number; neutral: number; fates: number; added: number; removed: number } {
  const all = d.policies.flatMap((p) => [...p.changes.filter((c) => c.change === "changed").map((c) => c.direction), ...p.findings.map(() => "loosening" as const)]);
  return {
    loosening: all.filter((x) => x === "loosening").length,
    tightening: all.filter((x) => x === "tightening").length,
    neutral: all.filter((x) => x === "neutral").length,
    fates: d.policies.reduce((n, p) => n + p.fates.length, 0),
    added: d.policies.filter((p) => p.status === "added").length,
    removed: d.policies.filter((p) => p.status === "removed").length,
  };
}

/** The one-line verdict both renderings end (or start) with. */
export function summaryLine(d: PolicySetDiff): string {
  const c = counts(d);
  const changed = d.policies.filter((p) => p.status !== "unchanged").length;
  if (changed === 0) return "no policy changed";
  const parts = [
    `${c.loosening} loosening`,
    `${c.tightening} tightening`,
    `${c.neutral} neutral`,
    ...(c.fates > 0 ? [`${c.fates} fate ${c.fates === 1 ? "range" : "ranges"} changed`] : []),
    ...(c.added > 0 ? [`${c.added} ${c.added === 1 ? "policy" : "policies"} added`] : []),
    ...(c.removed > 0 ? [`${c.removed} ${c.removed === 1 ? "policy" : "policies"} removed`] : []),
  ];
  return `${d.loosens ? "loosens" : "nothing loosens"}: ${parts.join(", ")}`;
}

export function diffText(d: PolicySetDiff): string {
  const fit = (line: string, indent: number) => wrapIndented(line, TEXT_WIDTH, indent);
  const out = [`pruneguard diff: ${d.labels.old} → ${d.labels.new}`];
  for (const p of d.policies) {
    out.push("");
    out.push(fit(policyHead(p), 2));
    for (const c of p.changes) {
      out.push(fit(`  ${changeLine(c)}`, 4));
      for (const r of c.direction === "neutral" ? [] : c.rules) out.push(fit(`      ${c.direction === "loosening" ? "refused by the overlay rule" : "going back would be refused"}: ${r.message} (${r.code})`, 2));
    }
    for (const f of p.fates) out.push(fit(`  kind ${f.kind} ${fateSubject(f)}: ${describePhase(f.old)} → ${describePhase(f.new)} (${f.direction})`, 4));
    for (const f of p.findings) out.push(fit(`  the changes together: ${f.message} (${f.code}, loosening)`, 4));
  }
  out.push("", summaryLine(d));
  return `${out.join("\n")}\n`;
}

function policyHead(p: PolicyDiff): string {
  switch (p.status) {
    case "added":
      return `policy ${p.name}: added (${p.newFile})`;
    case "removed":
      return `policy ${p.name}: removed (was ${p.oldFile})`;
    case "unchanged":
      return `policy ${p.name}: unchanged`;
    case "changed":
      return `policy ${p.name} (${p.oldFile === p.newFile ? p.newFile : `${p.oldFile} → ${p.newFile}`}): ${p.loosens ? "loosens" : p.tightens ? "tightens" : "changes no fate"}`;
  }
}

const effect = (direction: string): string => (direction === "loosening" ? "**loosening**" : direction);

/** A comment for the pull request: the verdict, then one table row per change, fates and rule findings included. */
export function diffMarkdown(d: PolicySetDiff): string {
  const verdict = d.loosens
    ? `**Loosens**: ${summaryLine(d).replace(/^loosens: /, "")}. A loosening makes some prune lossy that was not, or allows what the old side refused; the rule is the one \`compile\` holds an overlay to.`
    : `**Nothing loosens**: ${summaryLine(d).replace(/^nothing loosens: /, "")}.`;
  const rows = d.policies.flatMap((p): string[][] => {
    if (p.status === "removed") return [[mdCode(p.name), "policy", "removed", p.oldFile ?? "", "—", "removed", ""]];
    if (p.status === "unchanged") return [];
    const head: string[][] = p.status === "added" ? [[mdCode(p.name), "policy", "added", "—", p.newFile ?? "", "added", ""]] : [];
    return [
      ...head,
      ...p.changes.map((c) => [
        mdCode(p.name),
        subject(c),
        c.change === "changed" ? c.setting : c.change,
        c.old,
        c.new,
        c.change === "changed" ? effect(c.direction) : c.change,
        c.rules.map((r) => `${c.direction === "tightening" ? "going back would be refused: " : ""}${r.message} (${r.code})`).join("; "),
      ]),
      ...p.fates.map((f) => [mdCode(p.name), `kind ${f.kind}`, fateSubject(f), describePhase(f.old), describePhase(f.new), effect(f.direction), ""]),
      ...p.findings.map((f) => [mdCode(p.name), "the changes together", "", "", "", effect("loosening"), `${f.message} (${f.code})`]),
    ];
  });
  const body = rows.length === 0 ? "No policy changed." : markdownTable(["policy", "subject", "setting", d.labels.old, d.labels.new, "effect", "why"], rows);
  // A revision or a path is code; "the working tree" is prose.
  const label = (l: string) => (l.includes(" ") ? l : mdCode(l));
  return `### pruneguard diff: ${label(d.labels.old)} → ${label(d.labels.new)}\n\n${verdict}\n\n${body}\n`;
}
