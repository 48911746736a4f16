/** The implementation of `pruneguard diff`, loaded only when the command runs (see `diff.ts`). */
import { diffPolicySets, parseRename, RenameError, type PolicySetDiff, type Rename } from "../../diff/index.js";
import { formatDiagnostics } from "../../diagnostics/format.js";
import { loadConfig, projectRoot } from "../config.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { diffMarkdown, diffText } from "../diff/render.js";
import { diskSide, gitSide, type Side } from "../diff/sources.js";
import { messageWidth, textWidth } from "../report.js";
import type { DiffFlags } from "./diff.js";

/** The action of `pruneguard diff` (registered in `diff.ts`). */
export async function runDiff(sides: readonly string[], flags: DiffFlags, cli: CliContext): Promise<void> {
  const { io } = cli;
  const renames = stated(flags.rename ?? []);
  const config = await loadConfig(io.cwd);
  const root = await projectRoot(io.cwd, flags.root, config);
  let old: Side;
  let neu: Side;
  if (flags.base !== undefined) {
    neu = await diskSide(sides, io.cwd, root, config.policies, "the working tree");
    // Without paths each side reads the policies its own package.json names: a pull request may move them.
    old = gitSide(flags.base, sides.length > 0 ? sides : null, io.cwd, root);
  } else {
    if (sides.length !== 2) throw new CliError(`diff compares two sides: pruneguard diff <old> <new> (policy files or folders), or pruneguard diff --base <git-rev> [paths...]; got ${sides.length} argument${sides.length === 1 ? "" : "s"}`);
    old = await diskSide([sides[0]!], io.cwd, root, [], "old");
    neu = await diskSide([sides[1]!], io.cwd, root, [], "new");
  }
  for (const side of [old, neu]) {
    if (!side.result.hasErrors) continue;
    const errors = side.result.diagnostics.filter((d) => d.category === "error");
    io.stderr(formatDiagnostics(errors, { sources: side.result.sources, color: io.color, width: messageWidth(io) }));
    throw new CliError(`the ${side === old ? "old" : "new"} side (${side.label}) does not compile, so there is nothing to compare; fix it first (pruneguard check)`);
  }
  let d: PolicySetDiff;
  try {
    d = diffPolicySets(old.policies, neu.policies, { old: old.label, new: neu.label }, { pairSingle: old.singleFile && neu.singleFile, renames });
  } catch (err) {
    if (err instanceof RenameError) throw new CliError(err.message);
    throw err;
  }
  if (flags.format === "json") io.stdout(`${JSON.stringify(d, null, 2)}\n`);
  else if (flags.format === "markdown") io.stdout(diffMarkdown(d));
  else io.stdout(diffText(d, textWidth(io)));
  cli.exit(d.loosens ? ExitCode.diagnostics : ExitCode.ok);
}

/** The renames `--rename` states, read before anything is compiled: a malformed one is a usage error. */
function stated(args: readonly string[]): Rename[] {
  try {
    return args.map(parseRename);
  } catch (err) {
    if (err instanceof RenameError) throw new CliError(err.message);
    throw err;
  }
}
