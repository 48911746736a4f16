/**
 * Turning command-line arguments into policy files: a file is itself, a folder means its `**\/*.policy.ts`,
 * anything else is a glob. No arguments means the `policies` of the project configuration, else
 * `policies/**\/*.policy.ts`.
 *
 * Folders are listed by the walk below (`policyFilesIn`), which follows a link to a folder only while it stays
 * inside the project and stops past `MAX_LISTED_ENTRIES`; globs are tinyglobby's, loaded only for a glob or a
 * folder the walk does not take (`compile` and `check` on a folder of policies load no glob library,
 * BENCHMARKS.md, figure 4), and never follow links. Patterns from package.json, which a pull request can
 * plant, must stay inside the project: a link to `/` or a pattern `/**\/*.policy.ts` would otherwise walk the
 * whole machine and print the names it found.
 */
import type { Dirent, Stats } from "node:fs";
import * as path from "node:path";
import { CliError } from "./context.js";

// Built-ins through `process.getBuiltinModule`, as in compiler/emit/files.ts: this module is on the path of a `check` with nothing to do.
const { readdirSync, realpathSync, statSync } = process.getBuiltinModule("node:fs");

/** The most entries (files and folders) one input's walk reads: far past any real tree of policies. */
export const MAX_LISTED_ENTRIES = 100_000;

/** The real path of `p`, or `undefined` when it cannot be had. */
function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

const within = (parent: string, child: string) => child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);

/**
 * Whether a pattern from package.json could name something outside the project: an absolute path, a drive,
 * or a `..` segment in any position (`a/../../b` climbs too).
 */
function leavesProject(pattern: string): boolean {
  return path.isAbsolute(pattern) || /^[A-Za-z]:/.test(pattern) || pattern.split(/[\\/]+/).includes("..");
}

/** The file or folder at `p`, or `undefined` when there is none or it cannot be read. */
function stat(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

export const DEFAULT_POLICY_GLOB = "policies/**/*.policy.ts";
/** The folder the default glob lists. */
const DEFAULT_POLICY_DIR = "policies";
export const POLICY_FILE_GLOB = "**/*.policy.ts";

export interface ResolveOptions {
  /** The arguments came from a file a pull request can plant (package.json), not from the command line: each must stay inside the project. */
  readonly untrusted?: boolean;
}

export async function resolveInputs(args: readonly string[], cwd: string, configured: readonly string[] = [], options: ResolveOptions = {}): Promise<string[]> {
  const fromConfig = args.length === 0 && configured.length > 0;
  const patterns = args.length > 0 ? args : fromConfig ? configured : [DEFAULT_POLICY_GLOB];
  const from = fromConfig ? ' (from package.json "pruneguard".policies)' : "";
  if (fromConfig || options.untrusted === true) {
    const bad = patterns.find(leavesProject);
    if (bad !== undefined) throw new CliError(`the policy pattern ${JSON.stringify(bad).slice(0, 80)}${from} leaves the project: patterns from package.json may only name files inside it`);
  }
  const project = real(cwd) ?? path.resolve(cwd);
  const files = new Set<string>();
  for (const arg of patterns) {
    const abs = path.resolve(cwd, arg);
    const info = stat(abs);
    let found: string[] | undefined;
    if (info?.isDirectory()) found = policyFilesIn(abs, project) ?? (await (await globber()).glob(POLICY_FILE_GLOB, GLOB_OPTIONS(abs)));
    else if (info?.isFile()) found = [abs];
    else {
      // The default glob is the policy files of the `policies` folder: listed as a folder given as an argument is.
      const folder = path.resolve(cwd, DEFAULT_POLICY_DIR);
      if (arg === DEFAULT_POLICY_GLOB && stat(folder)?.isDirectory()) found = policyFilesIn(folder, project);
      if (found === undefined) {
        const { glob, isDynamicPattern } = await globber();
        if (isDynamicPattern(arg)) found = await glob(arg, GLOB_OPTIONS(cwd));
        else throw new CliError(`no such file or directory: ${arg}${from}`);
      }
    }
    if (found.length === 0) {
      throw new CliError(
        args.length > 0 || fromConfig
          ? `no policy files match ${arg}${fromConfig ? ' (from package.json "pruneguard".policies)' : ""}`
          : `no policy files found (looked for ${DEFAULT_POLICY_GLOB}; pass files, folders or globs)`,
      );
    }
    for (const f of found) files.add(f.split(path.sep).join("/"));
  }
  return [...files].sort();
}

const globber = () => import("tinyglobby");

/** How every glob is run: absolute paths, `node_modules` left out, links never followed (the walk's bound is the tree it is in). */
const GLOB_OPTIONS = (cwd: string) => ({ cwd, absolute: true, ignore: ["**/node_modules/**"], followSymbolicLinks: false });

/**
 * Every `*.policy.ts` file below `dir`, as `glob("**\/*.policy.ts", { cwd: dir, absolute: true, ignore:
 * ["**\/node_modules/**"] })` finds them in a folder of plain folders and files, without the glob library:
 * except under a `node_modules` folder and except names starting with `.` (the glob's `dot: false`: it
 * neither matches such a file nor descends into such a folder). Links: a link named like a policy file is
 * listed (the compiler reads it only if it stays inside the project root, PG1018); a link to a folder is
 * followed only when its real path is inside `project` (the project's real path; default: the real path of
 * `dir`), each real folder once, so no link can make the walk leave the project or loop. Anything else that
 * is not a file or a folder (a socket, a FIFO) is passed over. `undefined`, to leave the folder to the glob,
 * at a folder named like a policy file (the glob lists all it holds) or a folder that cannot be read.
 * Throws a `CliError` past `limit` entries (default `MAX_LISTED_ENTRIES`). test/compiler/inputs.test.ts holds it to the glob on
 * trees without links.
 */
export function policyFilesIn(dir: string, project: string | undefined = real(dir), limit = MAX_LISTED_ENTRIES): string[] | undefined {
  const out: string[] = [];
  const pending = [dir];
  const seen = new Set<string>();
  let listed = 0;
  while (pending.length > 0) {
    const folder = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return undefined;
    }
    listed += entries.length;
    if (listed > limit) {
      throw new CliError(`more than ${limit.toLocaleString("en")} files and folders under ${path.relative(process.cwd(), dir) || "."}: name the folders that hold policies`);
    }
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const p = path.join(folder, e.name);
      if (e.isSymbolicLink()) {
        const target = stat(p);
        if (target?.isDirectory()) {
          const to = real(p);
          if (e.name.endsWith(".policy.ts") || e.name === "node_modules" || to === undefined || project === undefined || !within(project, to) || seen.has(to)) continue;
          seen.add(to);
          pending.push(p);
        } else if (e.name.endsWith(".policy.ts")) {
          out.push(p);
        }
      } else if (e.isDirectory()) {
        // The glob takes a folder its pattern matches whole (tinyglobby's `expandDirectories`): every file in it.
        if (e.name.endsWith(".policy.ts")) return undefined;
        if (e.name !== "node_modules") pending.push(p);
      } else if (e.isFile()) {
        if (e.name.endsWith(".policy.ts")) out.push(p);
      }
    }
  }
  return out;
}
