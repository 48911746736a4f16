/** `pruneguard diff` for a terminal (at most 120 columns, fewer on a narrower one) and as markdown for a pull-request comment. */
import { describePhase, describeSpan } from "../../analysis/timeline.js";
import type { FateChange, JudgedChange, KindMove, PolicyDiff, PolicySetDiff } from "../../diff/index.js";
import { changeLine } from "../explain/text.js";
import { markdownTable, mdCode } from "../markdown.js";
import { TEXT_WIDTH } from "../report.js";
import { wrapIndented } from "../table.js";

/** A renamed kind's old name: its changes are compared with that kind's settings, and the reviewer should see which. */
const wasOf = (p: PolicyDiff, c: { readonly scope: string; readonly name: string | null }): string | undefined =>
  c.scope === "kind" ? p.renames.find((r) => r.new === c.name)?.old : undefined;
const subject = (c: JudgedChange, p?: PolicyDiff): string => {
  const was = p && wasOf(p, c);
  return `${c.name === null ? c.scope : `${c.scope} ${c.name}`}${was !== undefined && c.setting !== "name" ? ` (was ${was})` : ""}`;
};
/** A rename is a change of its own: reported as one, not counted as a neutral setting. */
const isRename = (c: JudgedChange): boolean => c.setting === "name" && c.change === "changed";
const moveText = (m: KindMove): string => `kind ${m.new.policy}.${m.new.kind} (was ${m.old.policy}.${m.old.kind}, paired by ${m.because})`;
const fateSubject = (f: FateChange): string => `fate ${describeSpan(f.fromMs, f.toMs)} after append${f.pastSessionOf ? ` (past the ${f.pastSessionOf} side's sessions)` : ""}`;

/**
 * How many setting changes of each direction (a finding only the changes together make, a kind moved that
 * loosens and an unpaired kind that may replace a stricter one count as loosening), renames, and fate ranges changed.
 */
function counts(d: PolicySetDiff): { loosening: number; tightening: number; neutral: number; renamed: number; fates: number; added: number; removed: number } {
  const all = [
    ...d.policies.flatMap((p) => [...p.changes.filter((c) => c.change === "changed" && !isRename(c)).map((c) => c.direction), ...p.findings.map(() => "loosening" as const)]),
    ...d.moves.map((m) => m.direction).filter((x) => x !== "neutral"),
    ...d.unpaired.map(() => "loosening" as const),
  ];
  return {
    renamed: d.policies.reduce((n, p) => n + p.changes.filter(isRename).length, 0) + d.moves.length,
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
  const changed = d.policies.filter((p) => p.status !== "unchanged").length + d.moves.length;
  if (changed === 0) return "no policy changed";
  const parts = [
    `${c.loosening} loosening`,
    `${c.tightening} tightening`,
    `${c.neutral} neutral`,
    ...(c.renamed > 0 ? [`${c.renamed} renamed`] : []),
    ...(c.fates > 0 ? [`${c.fates} fate ${c.fates === 1 ? "range" : "ranges"} changed`] : []),
    ...(c.added > 0 ? [`${c.added} ${c.added === 1 ? "policy" : "policies"} added`] : []),
    ...(c.removed > 0 ? [`${c.removed} ${c.removed === 1 ? "policy" : "policies"} removed`] : []),
  ];
  return `${d.loosens ? "loosens" : "nothing loosens"}: ${parts.join(", ")}`;
}

/**
 * A fate change's verdict by the overlay rule; a neutral one that stops prunes altogether says so, since
 * nothing can be lost but the window keeps those spans (`reversible → never`, which a reviewer may miss).
 */
function fateVerdict(f: FateChange): string {
  return f.direction === "neutral" && f.new === "never" && f.old !== "never" ? "neutral: nothing can be lost, but such spans can no longer be pruned" : f.direction;
}

export function diffText(d: PolicySetDiff, width = TEXT_WIDTH): string {
  const fit = (line: string, indent: number) => wrapIndented(line, width, indent);
  const out = [`pruneguard diff: ${d.labels.old} → ${d.labels.new}`];
  for (const p of d.policies) {
    out.push("");
    out.push(fit(policyHead(p), 2));
    for (const c of p.changes) {
      if (isRename(c) && c.scope === "kind") {
        const r = p.renames.find((x) => x.new === c.name);
        out.push(fit(`  kind ${c.new}: renamed from ${c.old}${r ? `, paired by ${r.because}` : ""}`, 4));
        continue;
      }
      const was = wasOf(p, c);
      out.push(fit(`  ${changeLine(was === undefined ? c : { ...c, name: `${c.name} (was ${was})` })}`, 4));
      for (const r of c.direction === "neutral" ? [] : c.rules) out.push(fit(`      ${c.direction === "loosening" ? "refused by the overlay rule" : "going back would be refused"}: ${r.message} (${r.code})`, 2));
    }
    for (const f of p.fates) out.push(fit(`  kind ${f.kind} ${fateSubject(f)}: ${describePhase(f.old)} → ${describePhase(f.new)} (${fateVerdict(f)})`, 4));
    for (const f of p.findings) out.push(fit(`  the changes together: ${f.message} (${f.code}, loosening)`, 4));
  }
  if (d.moves.length > 0) {
    out.push("", "kinds moved between policies:");
    for (const m of d.moves) {
      out.push(fit(`  ${moveText(m)}: ${m.direction === "loosening" ? "loosens" : m.direction === "tightening" ? "tightens" : "changes no fate"}`, 4));
      for (const r of m.rules) out.push(fit(`      ${m.direction === "loosening" ? "refused by the overlay rule" : "going back would be refused"}: ${r.message} (${r.code})`, 2));
    }
  }
  if (d.unpaired.length > 0) {
    out.push("", "added kinds that may replace a removed one (nothing pairs them; state a rename with --rename old=new):");
    for (const u of d.unpaired) out.push(fit(`  ${u.message}`, 4));
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
    case "changed": {
      const renamed = p.oldName !== null && p.oldName !== p.name ? `renamed from ${p.oldName}, paired by ${p.because}; ` : "";
      return `policy ${p.name} (${renamed}${p.oldFile === p.newFile ? p.newFile : `${p.oldFile} → ${p.newFile}`}): ${p.loosens ? "loosens" : p.tightens ? "tightens" : "changes no fate"}`;
    }
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
    const pairedBy = (c: JudgedChange): string => (c.scope === "policy" ? `paired by ${p.because ?? "name"}` : `paired by ${p.renames.find((r) => r.new === c.name)?.because ?? "name"}`);
    return [
      ...head,
      ...p.changes.map((c) => [
        mdCode(p.name),
        subject(c, p),
        c.change === "changed" ? (isRename(c) ? "renamed" : c.setting) : c.change,
        c.old,
        c.new,
        isRename(c) ? "renamed" : c.change === "changed" ? effect(c.direction) : c.change,
        isRename(c) ? pairedBy(c) : c.rules.map((r) => `${c.direction === "tightening" ? "going back would be refused: " : ""}${r.message} (${r.code})`).join("; "),
      ]),
      ...p.fates.map((f) => [mdCode(p.name), `kind ${f.kind}`, fateSubject(f), describePhase(f.old), describePhase(f.new), effect(fateVerdict(f)), ""]),
      ...p.findings.map((f) => [mdCode(p.name), "the changes together", "", "", "", effect("loosening"), `${f.message} (${f.code})`]),
    ];
  });
  rows.push(
    ...d.moves.map((m) => [
      mdCode(m.new.policy),
      `kind ${m.new.kind}`,
      "moved",
      `${m.old.policy}.${m.old.kind}`,
      `${m.new.policy}.${m.new.kind}`,
      effect(m.direction),
      [`paired by ${m.because}`, ...m.rules.map((r) => `${m.direction === "tightening" ? "going back would be refused: " : ""}${r.message} (${r.code})`)].join("; "),
    ]),
    ...d.unpaired.map((u) => [mdCode(u.policy), `kind ${u.kind}`, "added, unpaired", u.refusedBy.slice(0, 3).map((r) => `${r.policy}.${r.kind}`).join(", ") + (u.refusedBy.length > 3 ? ", …" : ""), u.modes.join(", "), effect("loosening"), u.message]),
  );
  const body = rows.length === 0 ? "No policy changed." : markdownTable(["policy", "subject", "setting", d.labels.old, d.labels.new, "effect", "why"], rows);
  // A revision or a path is code; "the working tree" is prose.
  const label = (l: string) => (l.includes(" ") ? l : mdCode(l));
  return `### pruneguard diff: ${label(d.labels.old)} → ${label(d.labels.new)}\n\n${verdict}\n\n${body}\n`;
}
