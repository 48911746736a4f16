/** The implementation of `pruneguard compile`, loaded only when the command runs (see `compile.ts`). */
import * as path from "node:path";
import { watch } from "chokidar";
import { compilePolicies, type CompileResult } from "../../index.js";
import { emitAll, removeOrphans, writeEmitted } from "../../emit/index.js";
import { createSourceHost } from "../../frontend/index.js";
import { loadConfig, type ResolvedConfig } from "../config.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { resolveInputs } from "../inputs.js";
import { printDiagnostics, type OutputFormat } from "../report.js";
import type { CompileFlags } from "./compile.js";

/** Flags with the project configuration filled in. */
interface Settings {
  readonly inputs: readonly string[];
  readonly configured: readonly string[];
  readonly out: string;
  readonly runtimeImport: string;
  readonly root: string;
  readonly format: OutputFormat;
}

const settings = (inputs: readonly string[], flags: CompileFlags, config: ResolvedConfig): Settings => ({
  inputs,
  configured: config.policies,
  out: flags.out ?? config.out,
  runtimeImport: flags.runtimeImport ?? config.runtimeImport,
  root: flags.root ?? config.root,
  format: flags.format,
});

/** The action of `pruneguard compile` (registered in `compile.ts`). */
export async function runCompile(inputs: string[], flags: CompileFlags, cli: CliContext): Promise<void> {
  const s = settings(inputs, flags, await loadConfig(cli.io.cwd));
  if (flags.watch) return watchMode(s, cli);
  cli.exit(await compileOnce(s, cli));
}

async function compileOnce(s: Settings, cli: CliContext, result?: CompileResult): Promise<0 | 1 | 2> {
  const { io } = cli;
  const r = result ?? compilePolicies(await resolveInputs(s.inputs, io.cwd, s.configured), { cwd: io.cwd, root: s.root });
  const shown = (p: string) => path.posix.join(s.out.split(path.sep).join("/"), p);
  // All or nothing: with errors nothing is written, so the output folder never mixes files of two compilations.
  if (r.hasErrors) {
    printDiagnostics(io, r, s.format, { written: [], removed: [], wroteNothing: true });
    if (s.format === "pretty") io.stderr(`Wrote nothing to ${s.out}: the policies have errors. The files there are unchanged; fix the errors and compile again.\n`);
    return ExitCode.diagnostics;
  }
  const outDir = path.resolve(io.cwd, s.out);
  const files = emitAll(r.policies, { runtimeImport: s.runtimeImport });
  let removed: string[];
  try {
    await writeEmitted(outDir, files);
    removed = await removeOrphans(outDir, files);
  } catch (error) {
    throw new CliError(`cannot write to ${s.out}: ${(error as Error).message}`);
  }
  const written = files.map((f) => shown(f.path));
  printDiagnostics(io, r, s.format, { written, removed: removed.map(shown), wroteNothing: false });
  if (s.format === "pretty") {
    io.stdout(`Wrote ${written.length} file${written.length === 1 ? "" : "s"} to ${s.out}.\n`);
    for (const f of removed) io.stdout(`Removed ${shown(f)}: no policy generates it any more.\n`);
  }
  return ExitCode.ok;
}

/** Watches the inputs and every file they read; one project is reused, only changed files are re-parsed. */
async function watchMode(s: Settings, cli: CliContext): Promise<void> {
  const { io } = cli;
  const host = createSourceHost({ cwd: io.cwd, root: s.root });
  const resolve = () => resolveInputs(s.inputs, io.cwd, s.configured);
  let entries = await resolve();
  const run = async () => {
    const r = compilePolicies(entries, { cwd: io.cwd, host });
    await compileOnce(s, cli, r).catch((error: unknown) => io.stderr(`pruneguard: ${(error as Error).message}\n`));
    watcher.add([...r.sources.keys()].map((p) => path.resolve(io.cwd, p)));
    io.stderr(`[watch] ${new Date().toISOString()} watching for changes\n`);
  };
  const roots = (s.inputs.length > 0 ? s.inputs : s.configured.length > 0 ? s.configured : ["policies"]).map((i) => path.resolve(io.cwd, i));
  const watcher = watch([...roots, ...entries], { ignoreInitial: true, ignored: (p) => p.includes("node_modules") });
  let timer: NodeJS.Timeout | undefined;
  watcher.on("all", (_event, changed) => {
    host.refresh([changed.split(path.sep).join("/")]);
    clearTimeout(timer);
    timer = setTimeout(() => {
      void resolve()
        .then((e) => (entries = e))
        .catch(() => undefined)
        .then(run);
    }, 50);
  });
  await run();
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => void watcher.close().then(resolve));
  });
  cli.exit(ExitCode.ok);
}
