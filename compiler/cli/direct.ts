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

/** The options each command reads here, in `util.parseArgs`' terms (`--watch` stays with commander: it never returns). */
const VALUED = { out: { type: "string" }, "runtime-import": { type: "string" }, root: { type: "string" }, format: { type: "string" } } as const;
const OPTIONS = {
  check: { ...VALUED, force: { type: "boolean" }, "no-drift": { type: "boolean" } },
  compile: { ...VALUED, force: { type: "boolean" } },
} as const;

/**
 * The command, inputs and flags of `argv` when the direct path takes it; `undefined` to leave it to commander.
 * Read by Node's own `util.parseArgs` (strict: an unknown option, a switch given a value or a value that
 * looks like an option throws, and is declined); what it accepts and commander reads otherwise — an option
 * given twice, an empty value or input, `-` or `--` — is declined too.
 */
export function parseDirect(argv: readonly string[]): DirectCommand | undefined {
  const [command, ...rest] = argv;
  if (command !== "check" && command !== "compile") return undefined;
  // Through `getBuiltinModule`: the `node:util` ES module facade reads every export when it loads (figure 4).
  const { parseArgs } = process.getBuiltinModule("node:util");
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options: OPTIONS[command], strict: true, allowPositionals: true, tokens: true });
  } catch {
    return undefined;
  }
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind === "option-terminator") return undefined;
    if (t.kind === "positional" && (t.value === "" || t.value.startsWith("-"))) return undefined;
    if (t.kind !== "option") continue;
    if (seen.has(t.name) || (t.value !== undefined && (t.value === "" || t.value.startsWith("-")))) return undefined;
    seen.add(t.name);
  }
  const v = parsed.values as { out?: string; "runtime-import"?: string; root?: string; format?: string; force?: boolean; "no-drift"?: boolean };
  const format = v.format ?? "pretty";
  if (format !== "pretty" && format !== "json") return undefined;
  const common = {
    ...(v.out === undefined ? {} : { out: v.out }),
    ...(v["runtime-import"] === undefined ? {} : { runtimeImport: v["runtime-import"] }),
    ...(v.root === undefined ? {} : { root: v.root }),
    format,
    ...(v.force === true ? { force: true } : {}),
  } as const;
  const inputs = [...parsed.positionals];
  return command === "check"
    ? { command, inputs, flags: { ...common, drift: v["no-drift"] !== true } }
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
