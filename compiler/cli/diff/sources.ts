/**
 * The two sides `pruneguard diff` compares: policy files and folders on disk, or the same paths as a git
 * revision has them, read with `git ls-tree` and `git show <rev>:<path>` (nothing is checked out, the
 * working tree and index are untouched). Every policy file of the revision under the project root is read,
 * so a policy's base resolves there as it did then; only those under the paths asked for are compared
 * (without paths, those the revision's own package.json names).
 */
import { execFileSync } from "node:child_process";
import { stat } from "node:fs/promises";
import * as path from "node:path";
import { isDynamicPattern } from "tinyglobby";
import { compilePolicies, type CompileResult } from "../../index.js";
import type { PolicyIR } from "../../ir/schema.js";
import { isRecord } from "../../ir/shape.js";
import { parseProjectConfig } from "../config.js";
import { CliError } from "../context.js";
import { DEFAULT_POLICY_GLOB, resolveInputs } from "../inputs.js";

/** One side, compiled: the policies under the paths asked for, and the whole compilation (for its diagnostics). */
export interface Side {
  readonly label: string;
  readonly policies: readonly PolicyIR[];
  readonly result: CompileResult;
  /** Whether the side was one policy file (two such sides are compared whatever their names). */
  readonly singleFile: boolean;
}

const posix = (p: string) => p.split(path.sep).join("/");

/** A side on disk: files, folders or globs, as every command reads them. A path that does not exist is an I/O error. */
export async function diskSide(paths: readonly string[], cwd: string, root: string, configured: readonly string[], label: string): Promise<Side> {
  const entries = await resolveInputs(paths, cwd, configured);
  const result = compilePolicies(entries, { cwd, root });
  const policies = entries.flatMap((e) => result.policies.filter((p) => posix(path.resolve(cwd, p.file)) === e));
  const single = paths.length === 1 && (await stat(path.resolve(cwd, paths[0]!)).catch(() => undefined))?.isFile() === true;
  return { label, policies, result, singleFile: single };
}

/**
 * `paths` (relative to `cwd`) as git revision `rev` has them; `null`: the policies the revision's own
 * package.json configures (or the default), so a change that moves the policies and repoints package.json
 * is compared with what the revision had, not with an empty folder.
 */
export function gitSide(rev: string, requested: readonly string[] | null, cwd: string, root: string): Side {
  const git = (args: readonly string[]): string => {
    try {
      return execFileSync("git", [...args], { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
    } catch (err) {
      const e = err as { code?: string; stderr?: string };
      if (e.code === "ENOENT") throw new CliError("diff --base needs git, which is not on the PATH");
      throw new CliError(`git ${args[0]}: ${(e.stderr ?? String(err)).trim().split("\n")[0] ?? "failed"}`);
    }
  };
  git(["rev-parse", "--is-inside-work-tree"]);
  try {
    execFileSync("git", ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`], { cwd, stdio: "ignore" });
  } catch {
    throw new CliError(`--base ${rev} is not a commit in this repository (fetch it first, e.g. git fetch origin main)`);
  }
  const paths = requested ?? configuredAt(rev, git);
  // Relative to the working directory, as git prints them without --full-name.
  const listed = git(["ls-tree", "-r", "--name-only", "-z", rev, "--", root]).split("\0").filter((f) => f.endsWith(".policy.ts"));
  const files: Record<string, string> = {};
  for (const f of listed) files[f] = git(["show", `${rev}:${f.startsWith("../") ? f : `./${f}`}`]);
  const wanted = paths.map((p) => posix(path.normalize(isDynamicPattern(p) ? staticPrefix(p) : p)).replace(/\/$/, ""));
  const entries = listed.filter((f) => wanted.some((w) => w === "." || f === w || f.startsWith(`${w}/`))).sort();
  const result = compilePolicies({ files, entries }, { cwd: posix(cwd), root });
  const policies = entries.flatMap((e) => result.policies.filter((p) => p.file === posix(path.normalize(e))));
  const single = paths.length === 1 && paths[0]!.endsWith(".policy.ts") && !isDynamicPattern(paths[0]!);
  return { label: rev, policies, result, singleFile: single };
}

/** The `"pruneguard".policies` of package.json as revision `rev` has it in the working directory; the default without one. */
function configuredAt(rev: string, git: (args: readonly string[]) => string): readonly string[] {
  const listed = git(["ls-tree", "--name-only", rev, "--", "package.json"]).trim();
  if (listed === "") return [DEFAULT_POLICY_GLOB];
  let pkg: unknown;
  try {
    pkg = JSON.parse(git(["show", `${rev}:./package.json`]));
  } catch {
    throw new CliError(`package.json at ${rev} is not valid JSON, so diff --base cannot tell which policies it had (name them: pruneguard diff --base ${rev} <paths>)`);
  }
  const field = isRecord(pkg) ? pkg["pruneguard"] : undefined;
  if (field === undefined) return [DEFAULT_POLICY_GLOB];
  const r = parseProjectConfig(field);
  if ("problem" in r) throw new CliError(`package.json "pruneguard"${r.path} at ${rev}: ${r.problem}`);
  return r.config.policies ?? [DEFAULT_POLICY_GLOB];
}

/** The folder part of a glob before its first pattern character: `policies/**\/*.policy.ts` → `policies`. */
function staticPrefix(glob: string): string {
  const parts = posix(glob).split("/");
  const i = parts.findIndex((p) => isDynamicPattern(p));
  return parts.slice(0, i < 0 ? parts.length : i).join("/") || ".";
}
