/** The implementation of `pruneguard explain`, loaded only when the command runs (see `explain.ts`). */
import { stat } from "node:fs/promises";
import * as path from "node:path";
import { fateOf } from "../../analysis/fate.js";
import { timelineOf } from "../../analysis/timeline.js";
import { compilePolicies } from "../../index.js";
import type { PolicyIR } from "../../ir/schema.js";
import { loadConfig, projectRoot } from "../config.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { explainHtml } from "../explain/html.js";
import { explainMarkdown } from "../explain/markdown.js";
import { explainText } from "../explain/text.js";
import { againstBase, lossySummarizeKeeps, policyView } from "../explain/view.js";
import { resolveInputs } from "../inputs.js";
import { printDiagnostics, textWidth } from "../report.js";
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
    printDiagnostics(io, r, "json", { policies: targets.map((t) => explainData(t, r.policies)) });
  } else {
    const views = targets.map((t) => policyView(t, r.policies));
    const source = inputs.length > 0 ? inputs.join(" ") : config.policies.length > 0 ? config.policies.join(" ") : "policies/";
    if (flags.format === "html") io.stdout(explainHtml(views, source));
    else if (flags.format === "markdown") io.stdout(explainMarkdown(views));
    else io.stdout(views.map((v) => `${explainText(v, textWidth(io))}\n`).join("\n"));
    printDiagnostics(io, r, "pretty");
  }
  cli.exit(r.hasErrors || targets.length < entries.length ? ExitCode.diagnostics : ExitCode.ok);
}

function explainData(p: PolicyIR, all: readonly PolicyIR[]) {
  const base = p.extends ? all.find((b) => b.file === p.extends!.file) : undefined;
  return {
    name: p.name,
    extends: p.extends?.name ?? null,
    // As the policy says it: `null` where it leaves a setting to the runtime's default.
    session: {
      maxLengthMs: p.session.maxLengthMs,
      lossyBudget: p.session.lossyBudget,
      searchTokens: p.session.searchTokens,
      compaction: p.session.compaction,
      providerCompaction: p.session.providerCompaction,
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
        // By the age of a span, from 0 to the session's length: what a prune of it is.
        timeline: timelineOf(k, p).segments.map((s) => ({ fromMs: s.fromMs, toMs: s.toMs, phase: s.phase })),
        lossySummarize: lossySummarizeKeeps(k, p),
      };
    }),
    // An overlay against its base, as `pruneguard diff` reports it: what it changes, and how each tightens.
    againstBase: base ? againstBase(base, p) : null,
  };
}
