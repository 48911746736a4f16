/** The implementation of `pruneguard explain`, loaded only when the command runs (see `explain.ts`). */
import * as path from "node:path";
import { formatDuration } from "../../../dsl/durations.js";
import { DEFAULT_SEARCH_TOKENS } from "../../../src/policy/kinds.js";
import { presetPins } from "../../../src/policy/pins.js";
import { describeFate, fateOf } from "../../analysis/fate.js";
import { compilePolicies } from "../../index.js";
import { displayPath } from "../../frontend/index.js";
import type { KindIR, PolicyIR } from "../../ir/schema.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { printDiagnostics, type OutputFormat } from "../report.js";
import { renderTable } from "../table.js";

/** The action of `pruneguard explain` (registered in `explain.ts`). */
export function runExplain(file: string, flags: { format: OutputFormat }, cli: CliContext): void {
  const { io } = cli;
  const abs = path.resolve(io.cwd, file);
  const r = compilePolicies([abs], { cwd: io.cwd });
  if (!r.sources.has(displayPath(io.cwd, abs.split(path.sep).join("/")))) throw new CliError(`no such file: ${file}`);
  const target = r.policies.find((p) => path.resolve(io.cwd, p.file) === abs);
  if (flags.format === "json") {
    printDiagnostics(io, r, "json", { policy: target ? explainData(target) : null });
  } else {
    if (target) io.stdout(`${explainText(target)}\n`);
    printDiagnostics(io, r, "pretty");
  }
  cli.exit(r.hasErrors || !target ? ExitCode.diagnostics : ExitCode.ok);
}

function explainData(p: PolicyIR) {
  return {
    name: p.name,
    extends: p.extends?.name ?? null,
    kinds: p.kinds.map((k) => {
      const store = p.stores.find((s) => s.name === k.store);
      return {
        kind: k.name,
        store: k.store,
        engine: store?.engine ?? null,
        retentionMs: store ? store.retentionMs : null,
        holds: store?.holds ?? false,
        modes: k.modes,
        lossy: k.lossy,
        fate: fateOf(k, p),
        lossySummarize: lossySummarizeKeeps(k, p),
      };
    }),
  };
}

export function explainText(p: PolicyIR): string {
  const head = [
    `policy ${p.name}${p.extends ? ` (extends ${p.extends.name})` : ""}  —  ${p.file}`,
    `session: max ${p.session.maxLengthMs === null ? "unlimited" : formatDuration(p.session.maxLengthMs)}, lossy budget ${p.session.lossyBudget ?? "unlimited"}, search answers up to ${p.session.searchTokens ?? `${DEFAULT_SEARCH_TOKENS} (default)`} tokens`,
    `pins (all kinds): ${p.pins.map((x) => x.name).join(", ") || "none"}`,
    `tombstone: ${p.tombstone ? JSON.stringify(p.tombstone.text) : "runtime default"}`,
    "",
  ];
  const rows = p.kinds.map((k) => {
    const s = p.stores.find((x) => x.name === k.store);
    const fate = fateOf(k, p);
    return [
      k.name,
      s ? `${s.name} (${s.engine})` : "none",
      s ? formatDuration(s.retentionMs) : "-",
      s ? (s.holds ? "yes" : "no") : "-",
      k.modes.join(", "),
      k.lossy,
      [...new Set([...p.pins, ...k.pins].map((x) => x.name))].join(", ") || "-",
      `${describeFate(fate)} (${fate.why.replaceAll("`", "")})`,
    ];
  });
  const keeps = p.kinds.map((k) => {
    const c = lossySummarizeKeeps(k, p);
    if (c === null) return `  ${k.name}: no lossy summarize (${k.modes.includes("summarize") ? "lossy forbidden" : "summarize not allowed"})`;
    return `  ${k.name}: keeps ${c.kept.join(", ") || "nothing"}; loses ${c.lost.join(", ") || "no preset class"}`;
  });
  return [
    ...head,
    renderTable(["kind", "store", "retention", "holds", "modes", "lossy", "pins", "fate"], rows),
    "",
    "identifier classes a lossy summarize keeps (pinned, carried into the digest) and loses (presets not pinned):",
    ...keeps,
  ].join("\n");
}

/**
 * What a lossy summarize of the kind keeps: the classes it pins (presets by name, custom pins by theirs)
 * and the preset classes it does not, which survive only if the digest happens to repeat them. `null`
 * when the kind can never be summarized lossily.
 */
function lossySummarizeKeeps(k: KindIR, p: PolicyIR): { kept: string[]; lost: string[] } | null {
  if (!k.modes.includes("summarize") || k.lossy === "forbid") return null;
  const pinned = [...p.pins, ...k.pins];
  const kept = [...new Set(pinned.map((x) => x.preset ?? `${x.name} (custom)`))];
  const lost = Object.keys(presetPins).filter((name) => !pinned.some((x) => x.preset === name));
  return { kept, lost };
}
