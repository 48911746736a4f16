/**
 * `compile` and `check` without commander: the arguments those two commands are usually given (inputs,
 * `--out`, `--runtime-import`, `--root`, `--format pretty|json`, `--force`, and `check`'s `--no-drift`), read
 * into the flags commander would hand their actions, and the action run as `program.ts` runs it — the same
 * `runCompile` / `runCheck`, the same output, exit code and error report. Anything else (`--help`, `--watch`,
 * an unknown or repeated option, a value that starts with `-`, an empty argument) is declined, and `main`
 * runs the commander program, which answers it as before.
 *
 * Why: a `check` (or `compile`) with nothing to do reads the manifest and hashes some files; loading
 * commander and the seven command registrations cost as much again (BENCHMARKS.md, figure 4).
 */
import type { CheckFlags } from "./commands/check.js";
import type { CompileFlags } from "./commands/compile.js";
import { ExitCode, type CliContext, type CliIO } from "./context.js";
import { reportFailure } from "./report.js";

export type DirectCommand =
  | { readonly command: "check"; readonly inputs: string[]; readonly flags: CheckFlags }
  | { readonly command: "compile"; readonly inputs: string[]; readonly flags: CompileFlags };

/** Options taking a value, by their flag, with the property commander gives them. */
const VALUED: Readonly<Record<string, "out" | "runtimeImport" | "root" | "format">> = {
  "--out": "out",
  "--runtime-import": "runtimeImport",
  "--root": "root",
  "--format": "format",
};

/** Options without a value, per command (`--watch` stays with commander: it never returns). */
const SWITCHES: Readonly<Record<DirectCommand["command"], readonly string[]>> = {
  check: ["--force", "--no-drift"],
  compile: ["--force"],
};

/** The command, inputs and flags of `argv` when the direct path takes it; `undefined` to leave it to commander. */
export function parseDirect(argv: readonly string[]): DirectCommand | undefined {
  const [command, ...rest] = argv;
  if (command !== "check" && command !== "compile") return undefined;
  const inputs: string[] = [];
  const values: { out?: string; runtimeImport?: string; root?: string; format?: string } = {};
  const switches = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "") return undefined;
    if (!arg.startsWith("-")) {
      inputs.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const key = Object.hasOwn(VALUED, name) ? VALUED[name] : undefined;
    if (key !== undefined) {
      const value = eq < 0 ? rest[++i] : arg.slice(eq + 1);
      if (value === undefined || value === "" || value.startsWith("-") || values[key] !== undefined) return undefined;
      values[key] = value;
    } else if (eq < 0 && SWITCHES[command].includes(arg) && !switches.has(arg)) {
      switches.add(arg);
    } else {
      return undefined;
    }
  }
  const format = values.format ?? "pretty";
  if (format !== "pretty" && format !== "json") return undefined;
  const common = {
    ...(values.out === undefined ? {} : { out: values.out }),
    ...(values.runtimeImport === undefined ? {} : { runtimeImport: values.runtimeImport }),
    ...(values.root === undefined ? {} : { root: values.root }),
    format,
    ...(switches.has("--force") ? { force: true } : {}),
  } as const;
  return command === "check"
    ? { command, inputs, flags: { ...common, drift: !switches.has("--no-drift") } }
    : { command, inputs, flags: common };
}

/** Runs a command `parseDirect` took, as the commander program runs its action; returns the exit code. */
export async function runDirect(direct: DirectCommand, argv: readonly string[], io: CliIO): Promise<number> {
  let code: number = ExitCode.ok;
  const cli: CliContext = { io, exit: (c) => void (code = c) };
  try {
    if (direct.command === "check") await (await import("./commands/check.run.js")).runCheck(direct.inputs, direct.flags, cli);
    else await (await import("./commands/compile.run.js")).runCompile(direct.inputs, direct.flags, cli);
    return code;
  } catch (error) {
    return reportFailure(io, argv, error);
  }
}
