/** `explain --format markdown`: one document for a set of policies, tables a pull request or a wiki renders. */
import { describePhase, describeSpan, describeTimeline } from "../../analysis/timeline.js";
import { markdownTable, mdCode } from "../markdown.js";
import type { PolicyView } from "./view.js";

const yes = (b: boolean | null): string => (b === null ? "-" : b ? "yes" : "no");

export function explainMarkdown(views: readonly PolicyView[]): string {
  const out = ["# pruneguard policies", "", `${views.length} ${views.length === 1 ? "policy" : "policies"}: ${views.map((v) => mdCode(v.name)).join(", ")}.`];
  for (const v of views) {
    out.push(
      "",
      `## ${mdCode(v.name)}${v.extends ? ` (extends ${mdCode(v.extends)})` : ""}`,
      "",
      `From ${mdCode(v.file)}.`,
      "",
      `- **Session:** ${v.session}`,
      `- **Compaction:** ${v.compaction}`,
      `- **Provider compaction:** ${v.providerCompaction}`,
      `- **Pins (all kinds):** ${v.pins}`,
      `- **Tombstone:** ${v.tombstone}`,
      "",
      "### Stores",
      "",
      v.stores.length === 0
        ? "No stores."
        : markdownTable(
            ["store", "engine", "retention", "holds", "distinguishes absent", "writable", "backs"],
            v.stores.map((s) => [s.name, s.engine, s.retention, yes(s.holds), yes(s.distinguishesAbsent), yes(s.writable), s.kinds.join(", ") || "-"]),
          ),
      "",
      "### Kinds",
      "",
      markdownTable(
        ["kind", "store", "retention", "holds", "modes", "lossy", "re-persist", "pins", "fate"],
        v.kinds.map((k) => [k.name, k.storeText, k.retention ?? "-", yes(k.holds), k.modes.join(", "), k.lossy, yes(k.repersist), k.pins.join(", ") || "-", `${k.fate} (${k.why})`]),
      ),
      "",
      `### Fates over the session${v.unlimited ? " (sessions have no maximum length)" : ""}`,
      "",
      "What a prune of each kind is, by the age of its span (the time since its append).",
      "",
      markdownTable(
        v.againstBase ? ["kind", v.name, v.extends ?? "base"] : ["kind", "over the session"],
        v.kinds.map((k) => [k.name, describeTimeline(k.timeline), ...(v.againstBase ? [k.baseTimeline ? describeTimeline(k.baseTimeline) : "(not in the base)"] : [])]),
      ),
      "",
      "Identifier classes a lossy summarize keeps (pinned, carried into the digest) and loses (presets not pinned):",
      "",
      ...v.kinds.map((k) => `- ${mdCode(k.name)}: ${k.keeps}`),
    );
    const d = v.againstBase;
    if (d && v.extends) {
      out.push("", `### Against its base ${mdCode(v.extends)}`, "");
      const rows = [
        ...d.changes.map((c) => [c.name === null ? c.scope : `${c.scope} ${c.name}`, c.change === "changed" ? c.setting : c.change, c.old, c.new, c.direction]),
        ...d.fates.map((f) => [`kind ${f.kind}`, `fate ${describeSpan(f.fromMs, f.toMs)} after append`, describePhase(f.old), describePhase(f.new), f.direction]),
      ];
      out.push(rows.length === 0 ? "No change: the overlay inherits everything." : markdownTable(["subject", "setting", v.extends, v.name, "effect"], rows));
    }
  }
  return `${out.join("\n")}\n`;
}
