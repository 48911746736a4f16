/**
 * The two sides `pruneguard diff` compares: policy files and folders on disk, or the same paths as a git
 * revision has them, listed with `git ls-tree` and read with `git cat-file` (nothing is checked out, the
 * working tree and index are untouched). Every policy file of the revision under the project root can be
 * read, so a policy's base resolves there as it did then; only those under the paths asked for are compared
 * (without paths, those the revision's own package.json names). A file is read only when the compilation
 * asks for it, and only when the size the listing gave is within what the compiler reads from disk: a
 * larger one is PG1024 at it, as on disk, without its bytes ever being loaded.
 */
import { execFileSync } from "node:child_process";
import { stat } from "node:fs/promises";
import * as path from "node:path";
import { isDynamicPattern } from "tinyglobby";
import { compilePolicies, createSourceHost, type CompileResult } from "../../index.js";
import { MAX_POLICY_BYTES, type LazyFile } from "../../frontend/host.js";
import { MAX_CONFIG_BYTES } from "../../frontend/resolution.js";
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

/** How long one git command of `diff --base` may take: it only lists and reads objects the clone has. */
const GIT_TIMEOUT_MS = 60_000;
/**
 * Git reads objects the clone has and asks no one: a partial clone does not fetch a missing object on demand
 * (git 2.44 and later), and nothing prompts for credentials.
 */
const GIT_ENV = { ...process.env, GIT_NO_LAZY_FETCH: "1", GIT_TERMINAL_PROMPT: "0" };

/**
 * `paths` (relative to `cwd`) as git revision `rev` has them; `null`: the policies the revision's own
 * package.json configures (or the default), so a change that moves the policies and repoints package.json
 * is compared with what the revision had, not with an empty folder.
 */
export function gitSide(rev: string, requested: readonly string[] | null, cwd: string, root: string): Side {
  /** Git's output; `maxBuffer` bounds it (a listing of a huge tree is an error, not memory exhausted). */
  const git = (args: readonly string[], maxBuffer = MAX_LISTING_BYTES): string => {
    try {
      return execFileSync("git", [...args], { cwd, encoding: "utf8", maxBuffer, stdio: ["ignore", "pipe", "pipe"], timeout: GIT_TIMEOUT_MS, env: GIT_ENV });
    } catch (err) {
      const e = err as { code?: string; stderr?: string };
      if (e.code === "ENOENT") throw new CliError("diff --base needs git, which is not on the PATH");
      if (e.code === "ETIMEDOUT") throw new CliError(`git ${args[0]} did not finish in ${GIT_TIMEOUT_MS / 1000} s (a partial clone fetching objects?); fetch the base first`);
      if (e.code === "ENOBUFS") throw new CliError(`git ${args[0]} printed more than ${maxBuffer.toLocaleString("en-US")} bytes, more than diff --base reads`);
      throw new CliError(`git ${args[0]}: ${(e.stderr ?? String(err)).trim().split("\n")[0] ?? "failed"}`);
    }
  };
  git(["rev-parse", "--is-inside-work-tree"]);
  // The commit, once: a branch name could move between the reads below, its commit cannot.
  let commit: string;
  try {
    commit = execFileSync("git", ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: GIT_TIMEOUT_MS, env: GIT_ENV }).trim();
  } catch {
    throw new CliError(`--base ${rev} is not a commit in this repository (fetch it first, e.g. git fetch origin main)`);
  }
  const paths = requested ?? configuredAt(rev, commit, git);
  // Relative to the working directory, as git prints them without --full-name; with each blob's size.
  const listed = blobs(git(["ls-tree", "-r", "-l", "-z", commit, "--", root])).filter((b) => b.path.endsWith(".policy.ts"));
  // Read when the compiler asks, by object id; the host never asks for one larger than it reads (PG1024).
  const files: Record<string, LazyFile> = {};
  for (const b of listed) files[b.path] = { size: b.size, read: () => git(["cat-file", "blob", b.object], MAX_POLICY_BYTES + 1) };
  const wanted = paths.map((p) => posix(path.normalize(isDynamicPattern(p) ? staticPrefix(p) : p)).replace(/\/$/, ""));
  const entries = listed.map((b) => b.path).filter((f) => wanted.some((w) => w === "." || f === w || f.startsWith(`${w}/`))).sort();
  const host = createSourceHost({ lazyFiles: files, cwd: posix(cwd), root });
  const result = compilePolicies({ files: {}, entries }, { host });
  const policies = entries.flatMap((e) => result.policies.filter((p) => p.file === posix(path.normalize(e))));
  const single = paths.length === 1 && paths[0]!.endsWith(".policy.ts") && !isDynamicPattern(paths[0]!);
  return { label: rev, policies, result, singleFile: single };
}

/** The `"pruneguard".policies` of package.json as revision `rev` (`commit`) has it in the working directory; the default without one. */
function configuredAt(rev: string, commit: string, git: (args: readonly string[], maxBuffer?: number) => string): readonly string[] {
  const listed = blobs(git(["ls-tree", "-l", "-z", commit, "--", "package.json"]))[0];
  if (listed === undefined) return [DEFAULT_POLICY_GLOB];
  // Bounded as every configuration file the compiler reads.
  if (listed.size > MAX_CONFIG_BYTES) {
    throw new CliError(`package.json at ${rev} is ${listed.size.toLocaleString("en-US")} bytes, more than the ${MAX_CONFIG_BYTES / 1024 / 1024} MiB the compiler reads of a configuration file, so diff --base cannot tell which policies it had (name them: pruneguard diff --base ${rev} <paths>)`);
  }
  let pkg: unknown;
  try {
    pkg = JSON.parse(git(["cat-file", "blob", listed.object], MAX_CONFIG_BYTES + 1));
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`package.json at ${rev} is not valid JSON, so diff --base cannot tell which policies it had (name them: pruneguard diff --base ${rev} <paths>)`);
  }
  const field = isRecord(pkg) ? pkg["pruneguard"] : undefined;
  if (field === undefined) return [DEFAULT_POLICY_GLOB];
  const r = parseProjectConfig(field);
  if ("problem" in r) throw new CliError(`package.json "pruneguard"${r.path} at ${rev}: ${r.problem}`);
  return r.config.policies ?? [DEFAULT_POLICY_GLOB];
}

/** The most `git ls-tree` may print: 64 MiB is a listing of some half a million files. */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/** The blobs (files and links, not submodules) of `git ls-tree -l -z` output: path, object id and size. */
function blobs(listing: string): Array<{ readonly path: string; readonly object: string; readonly size: number }> {
  const out: Array<{ path: string; object: string; size: number }> = [];
  for (const line of listing.split("\0")) {
    // `<mode> SP <type> SP <object> SP <size, padded>` TAB `<path>`.
    const tab = line.indexOf("\t");
    if (tab < 0) continue;
    const [, type, object, size] = line.slice(0, tab).trim().split(/ +/);
    if (type !== "blob" || object === undefined || !/^\d+$/.test(size ?? "")) continue;
    out.push({ path: line.slice(tab + 1), object, size: Number(size) });
  }
  return out;
}

/** The folder part of a glob before its first pattern character: `policies/**\/*.policy.ts` → `policies`. */
function staticPrefix(glob: string): string {
  const parts = posix(glob).split("/");
  const i = parts.findIndex((p) => isDynamicPattern(p));
  return parts.slice(0, i < 0 ? parts.length : i).join("/") || ".";
}
