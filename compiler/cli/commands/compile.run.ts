/** The implementation of `pruneguard compile`, loaded only when the command runs (see `compile.ts`). */
import * as path from "node:path";
import { printable } from "../../diagnostics/format.js";
import { outDirProblem, removeOrphans, writeEmitted } from "../../emit/files.js";
import type { SourceHost } from "../../frontend/host.js";
import { buildPolicies } from "../../incremental/build.js";
import { writeManifest } from "../../incremental/manifest.js";
import { loadConfig, projectRoot, type ResolvedConfig } from "../config.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { resolveInputs } from "../inputs.js";
import { fitMessage, printDiagnostics, type OutputFormat } from "../report.js";
import type { CompileFlags } from "./compile.js";

/** Flags with the project configuration filled in. */
interface Settings {
  readonly inputs: readonly string[];
  readonly configured: readonly string[];
  readonly out: string;
  /** `out` came from package.json (the repository's say, confined to the project), not the command line. */
  readonly outConfigured: boolean;
  readonly runtimeImport: string;
  readonly root: string;
  readonly format: OutputFormat;
  readonly force: boolean;
}

const settings = (inputs: readonly string[], flags: CompileFlags, config: ResolvedConfig): Settings => ({
  inputs,
  configured: config.policies,
  out: flags.out ?? config.out,
  outConfigured: flags.out === undefined,
  runtimeImport: flags.runtimeImport ?? config.runtimeImport,
  root: flags.root ?? config.root,
  format: flags.format,
  force: flags.force === true,
});

/** The action of `pruneguard compile` (registered in `compile.ts`). */
export async function runCompile(inputs: string[], flags: CompileFlags, cli: CliContext): Promise<void> {
  const config = await loadConfig(cli.io.cwd);
  const s = settings(inputs, { ...flags, root: await projectRoot(cli.io.cwd, flags.root, config) }, config);
  if (flags.watch) return watchMode(s, cli);
  cli.exit((await compileOnce(s, cli)).code);
}

async function compileOnce(s: Settings, cli: CliContext, host?: SourceHost): Promise<{ code: 0 | 1 | 2; read: readonly string[] }> {
  const { io } = cli;
  const outDir = path.resolve(io.cwd, s.out);
  const refused = outDirProblem(io.cwd, outDir, s.outConfigured);
  if (refused !== null) throw new CliError(`cannot write to ${printable(s.out)}: ${printable(refused)}`);
  const entries = await resolveInputs(s.inputs, io.cwd, s.configured);
  const r = await buildPolicies(entries, { cwd: io.cwd, root: s.root, outDir, emit: { runtimeImport: s.runtimeImport }, force: s.force, ...(host ? { host } : {}) });
  // A tsconfig that decided an extensionless import is watched like a policy: switching it to NodeNext makes that import PG1021.
  const read = [...r.sources.keys(), ...r.configs];
  const shown = (p: string) => path.posix.join(s.out.split(path.sep).join("/"), p);
  // All or nothing: with errors nothing is written, so the output folder never mixes files of two compilations.
  if (r.hasErrors) {
    printDiagnostics(io, r, s.format, { written: [], unchanged: [], removed: [], wroteNothing: true });
    if (s.format === "pretty") io.stderr(`${fitMessage(io, `Wrote nothing to ${s.out}: the policies have errors. The files there are unchanged; fix the errors and compile again.`)}\n`);
    return { code: ExitCode.diagnostics, read };
  }
  let removed: string[];
  let changed: string[];
  try {
    changed = await writeEmitted(outDir, r.emitted);
    // Policy files named on the command line: another policy's output is left as it is.
    removed = await removeOrphans(outDir, r.outputs.map((p) => ({ path: p })), s.inputs.length > 0 ? { cwd: io.cwd, root: path.resolve(io.cwd, s.root), entries } : undefined);
    // Last, so a manifest never describes outputs that are not on disk.
    if (r.manifest && r.key) await writeManifest(outDir, r.manifest, r.key);
  } catch (error) {
    throw new CliError(`cannot write to ${s.out}: ${(error as Error).message}`);
  }
  // Honest counts: a file whose bytes are already on disk is not rewritten (`writeEmitted` returns the
  // ones it wrote), and one an incremental build did not re-emit is unchanged too.
  const rewritten = new Set(changed);
  const written = r.outputs.filter((p) => rewritten.has(p)).map(shown);
  const unchanged = r.outputs.filter((p) => !rewritten.has(p)).map(shown);
  printDiagnostics(io, r, s.format, { written, unchanged, removed: removed.map(shown), wroteNothing: false });
  if (s.format === "pretty") {
    io.stdout(`${fitMessage(io, compileSummary(written.length, unchanged.length, s.out, r), "stdout")}\n`);
    for (const f of removed) io.stdout(`${fitMessage(io, `Removed ${shown(f)}: no policy generates it any more.`, "stdout")}\n`);
  }
  return { code: ExitCode.ok, read };
}

/** `Wrote 2 files to generated; 7 were already up to date.`, or that nothing needed writing. */
function compileSummary(written: number, unchanged: number, out: string, r: { readonly reused: number; readonly entries: number }): string {
  const files = (n: number) => `${n} file${n === 1 ? "" : "s"}`;
  const reused = r.reused > 0 ? ` (${r.reused} of ${r.entries} polic${r.entries === 1 ? "y" : "ies"} unchanged since the last compile)` : "";
  if (written === 0) return `Nothing to write: ${unchanged === 1 ? "the file" : `the ${files(unchanged)}`} in ${out} ${unchanged === 1 ? "is" : "are"} up to date${reused}.`;
  const rest = unchanged === 0 ? "" : `; ${unchanged} ${unchanged === 1 ? "was" : "were"} already up to date`;
  return `Wrote ${files(written)} to ${out}${rest}${reused}.`;
}

/** Watches the inputs and every file they read; one project is reused, only changed files are re-parsed. */
async function watchMode(s: Settings, cli: CliContext): Promise<void> {
  const { io } = cli;
  const { createSourceHost } = await import("../../frontend/index.js");
  const { watch } = await import("chokidar");
  const host = createSourceHost({ cwd: io.cwd, root: s.root });
  const entries = await resolveInputs(s.inputs, io.cwd, s.configured);
  // Each run resolves the inputs again (a new policy file is compiled) and rebuilds only what changed.
  const run = async () => {
    const r = await compileOnce(s, cli, host).catch((error: unknown) => {
      io.stderr(`${fitMessage(io, `pruneguard: ${(error as Error).message}`)}\n`);
      return undefined;
    });
    if (r) watcher.add(r.read.map((p) => path.resolve(io.cwd, p)));
    io.stderr(`[watch] ${new Date().toISOString()} watching for changes\n`);
  };
  const roots = (s.inputs.length > 0 ? s.inputs : s.configured.length > 0 ? s.configured : ["policies"]).map((i) => path.resolve(io.cwd, i));
  const watcher = watch([...roots, ...entries], { ignoreInitial: true, ignored: (p) => p.includes("node_modules") });
  let timer: NodeJS.Timeout | undefined;
  watcher.on("all", (_event, changed) => {
    host.refresh([changed.split(path.sep).join("/")]);
    clearTimeout(timer);
    timer = setTimeout(() => void run(), 50);
  });
  await run();
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => void watcher.close().then(resolve));
  });
  cli.exit(ExitCode.ok);
}
