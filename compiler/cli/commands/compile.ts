/** `pruneguard compile [inputs...] --out generated [--watch]`: policies → diagnostics → output files. */
import * as path from "node:path";
import { watch } from "chokidar";
import { compilePolicies, type CompileResult } from "../../index.js";
import { emitAll, writeEmitted } from "../../emit/index.js";
import { createSourceHost } from "../../frontend/index.js";
import { CliError, ExitCode, type CliContext, type RegisterCommand } from "../context.js";
import { resolveInputs } from "../inputs.js";
import { formatOption, printDiagnostics, type OutputFormat } from "../report.js";

interface CompileFlags {
  readonly out: string;
  readonly format: OutputFormat;
  readonly watch?: boolean;
}

export const registerCompile: RegisterCommand = (program, cli) => {
  program
    .command("compile")
    .description("compile policy files to IR (and, with the generators, types and guards)")
    .argument("[inputs...]", "policy files, folders (their **/*.policy.ts) or globs", [])
    .option("--out <dir>", "output directory", "generated")
    .addOption(formatOption())
    .option("--watch", "recompile when a policy file changes")
    .action(async (inputs: string[], flags: CompileFlags) => {
      if (flags.watch) return watchMode(inputs, flags, cli);
      cli.exit(await compileOnce(inputs, flags, cli));
    });
};

async function compileOnce(inputs: readonly string[], flags: CompileFlags, cli: CliContext, result?: CompileResult): Promise<0 | 1 | 2> {
  const { io } = cli;
  const r = result ?? compilePolicies(await resolveInputs(inputs, io.cwd), { cwd: io.cwd });
  const outDir = path.resolve(io.cwd, flags.out);
  const files = r.hasErrors ? [] : emitAll(r.policies);
  if (!r.hasErrors) {
    try {
      await writeEmitted(outDir, files);
    } catch (error) {
      throw new CliError(`cannot write to ${flags.out}: ${(error as Error).message}`);
    }
  }
  const written = files.map((f) => path.posix.join(flags.out.split(path.sep).join("/"), f.path));
  printDiagnostics(io, r, flags.format, { written });
  if (flags.format === "pretty" && !r.hasErrors) io.stdout(`Wrote ${written.length} file${written.length === 1 ? "" : "s"} to ${flags.out}.\n`);
  return r.hasErrors ? ExitCode.diagnostics : ExitCode.ok;
}

/** Watches the inputs and every file they read; one project is reused, only changed files are re-parsed. */
async function watchMode(inputs: readonly string[], flags: CompileFlags, cli: CliContext): Promise<void> {
  const { io } = cli;
  const host = createSourceHost({ cwd: io.cwd });
  let entries = await resolveInputs(inputs, io.cwd);
  const run = async () => {
    const r = compilePolicies(entries, { cwd: io.cwd, host });
    await compileOnce(inputs, flags, cli, r).catch((error: unknown) => io.stderr(`pruneguard: ${(error as Error).message}\n`));
    watcher.add([...r.sources.keys()].map((p) => path.resolve(io.cwd, p)));
    io.stderr(`[watch] ${new Date().toISOString()} watching for changes\n`);
  };
  const roots = inputs.length > 0 ? inputs.map((i) => path.resolve(io.cwd, i)) : [path.resolve(io.cwd, "policies")];
  const watcher = watch([...roots, ...entries], { ignoreInitial: true, ignored: (p) => p.includes("node_modules") });
  let timer: NodeJS.Timeout | undefined;
  watcher.on("all", (_event, changed) => {
    host.refresh([changed.split(path.sep).join("/")]);
    clearTimeout(timer);
    timer = setTimeout(() => {
      void resolveInputs(inputs, io.cwd)
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
