/** The implementation of `pruneguard check`, loaded only when the command runs (see `check.ts`). */
import * as path from "node:path";
import { printable } from "../../diagnostics/format.js";
import { outDirProblem, staleFiles, type StaleFile } from "../../emit/files.js";
import { buildPolicies } from "../../incremental/build.js";
import { loadConfig, projectRoot } from "../config.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { resolveInputs } from "../inputs.js";
import { fitMessage, printDiagnostics } from "../report.js";
import type { CheckFlags } from "./check.js";

const WHY: Record<StaleFile["state"], string> = {
  missing: "is missing",
  differs: "differs from what the policies compile to",
  orphaned: "was generated from a policy that no longer exists",
};

/** The action of `pruneguard check` (registered in `check.ts`). */
export async function runCheck(inputs: string[], flags: CheckFlags, cli: CliContext): Promise<void> {
  const { io } = cli;
  const config = await loadConfig(io.cwd);
  const out = flags.out ?? config.out;
  const outDir = path.resolve(io.cwd, out);
  // The same folder compile would write to, or the same refusal: a check never reads outputs through a link.
  const refused = outDirProblem(io.cwd, outDir, flags.out === undefined);
  if (refused !== null) throw new CliError(`cannot check ${printable(out)}: ${printable(refused)}`);
  const entries = await resolveInputs(inputs, io.cwd, config.policies);
  const root = await projectRoot(io.cwd, flags.root, config);
  // Entries the manifest shows unchanged have outputs on disk with the bytes it recorded: fresh by construction.
  const r = await buildPolicies(entries, {
    cwd: io.cwd,
    root,
    outDir,
    emit: { runtimeImport: flags.runtimeImport ?? config.runtimeImport },
    force: flags.force === true,
  });
  const stale = flags.drift && !r.hasErrors ? await staleFiles(outDir, r.emitted, r.outputs, inputs.length > 0 ? { cwd: io.cwd, root: path.resolve(io.cwd, root), entries } : undefined) : [];
  const shown = (f: StaleFile) => path.posix.join(out.split(path.sep).join("/"), f.path);
  printDiagnostics(io, r, flags.format, flags.drift ? { stale: stale.map((f) => ({ path: shown(f), state: f.state })) } : {});
  if (flags.format === "pretty") {
    for (const f of stale) io.stderr(`${fitMessage(io, `${shown(f)} ${WHY[f.state]}`)}\n`);
    if (stale.length > 0) io.stderr(`${fitMessage(io, `${stale.length} stale file${stale.length === 1 ? "" : "s"} in ${out}; run \`pruneguard compile\` and commit the result.`)}\n`);
    if (!r.hasErrors && stale.length === 0) {
      const what = `${r.policies} polic${r.policies === 1 ? "y" : "ies"}`;
      io.stdout(`${fitMessage(io, `Checked ${what}: no errors${flags.drift ? `; ${r.outputs.length} files in ${out} are fresh` : ""}.`, "stdout")}\n`);
    }
  }
  cli.exit(r.hasErrors || stale.length > 0 ? ExitCode.diagnostics : ExitCode.ok);
}
