/** The implementation of `pruneguard explain`, loaded only when the command runs (see `explain.ts`). */
import { stat } from "node:fs/promises";
import * as path from "node:path";
import { formatDuration } from "../../../src/policy/durations.js";
import { DEFAULT_SEARCH_TOKENS } from "../../../src/policy/kinds.js";
import { presetPins } from "../../../src/policy/pins.js";
import { describeFate, fateOf } from "../../analysis/fate.js";
import { describeCompaction } from "../../emit/describe.js";
import { compilePolicies } from "../../index.js";
import type { KindIR, PolicyIR } from "../../ir/schema.js";
import { loadConfig, projectRoot } from "../config.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { resolveInputs } from "../inputs.js";
import { printDiagnostics } from "../report.js";
import { renderTable } from "../table.js";
import type { ExplainFlags } from "./explain.js";

/** The action of `pruneguard explain` (registered in `explain.ts`). */
export async function runExplain(inputs: readonly string[], flags: ExplainFlags, cli: CliContext): Promise<void> {
  const { io } = cli;
  const config = await loadConfig(io.cwd);
  for (const arg of inputs) {
    const info = await stat(path.resolve(io.cwd, arg)).catch(() => undefined);
    if (info?.isFile() && !arg.endsWith(".policy.ts")) {
      throw new CliError(`explain expects policy files (*.policy.ts), folders of them or globs; ${arg} is not a policy file`);
    }
  }
  const entries = await resolveInputs(inputs, io.cwd, config.policies);
  const r = compilePolicies(entries, { cwd: io.cwd, root: await projectRoot(io.cwd, flags.root, config) });
  // The policies asked about, in argument order; the bases they import are compiled, not explained.
  const targets = entries.flatMap((e) => r.policies.filter((p) => path.resolve(io.cwd, p.file).split(path.sep).join("/") === e));
  if (flags.format === "json") {
    printDiagnostics(io, r, "json", { policies: targets.map(explainData) });
  } else {
    io.stdout(targets.map((t) => `${explainText(t)}\n`).join("\n"));
    printDiagnostics(io, r, "pretty");
  }
  cli.exit(r.hasErrors || targets.length < entries.length ? ExitCode.diagnostics : ExitCode.ok);
}

function explainData(p: PolicyIR) {
  return {
    name: p.name,
    extends: p.extends?.name ?? null,
    // As the policy says it: `null` where it leaves a setting to the runtime's default.
    session: {
      maxLengthMs: p.session.maxLengthMs,
      lossyBudget: p.session.lossyBudget,
      searchTokens: p.session.searchTokens,
      compaction: p.session.compaction,
    },
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
    `compaction: ${describeCompaction(p.session.compaction)}`,
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
