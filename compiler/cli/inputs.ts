/**
 * Turning command-line arguments into policy files: a file is itself, a folder means its `**\/*.policy.ts`,
 * anything else is a glob. No arguments means the `policies` of the project configuration, else
 * `policies/**\/*.policy.ts`.
 *
 * Globs are tinyglobby's, loaded only for a glob or a folder the plain walk below does not take:
 * `compile` and `check` on a folder of policies load no glob library (BENCHMARKS.md, figure 4).
 */
import type { Dirent, Stats } from "node:fs";
import * as path from "node:path";
import { CliError } from "./context.js";

// Built-ins through `process.getBuiltinModule`, as in compiler/emit/files.ts: this module is on the path of a `check` with nothing to do.
const { readdirSync, statSync } = process.getBuiltinModule("node:fs");

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

export async function resolveInputs(args: readonly string[], cwd: string, configured: readonly string[] = []): Promise<string[]> {
  const fromConfig = args.length === 0 && configured.length > 0;
  const patterns = args.length > 0 ? args : fromConfig ? configured : [DEFAULT_POLICY_GLOB];
  const files = new Set<string>();
  for (const arg of patterns) {
    const abs = path.resolve(cwd, arg);
    const info = stat(abs);
    let found: string[] | undefined;
    if (info?.isDirectory()) found = policyFilesIn(abs) ?? (await (await globber()).glob(POLICY_FILE_GLOB, { cwd: abs, absolute: true, ignore: ["**/node_modules/**"] }));
    else if (info?.isFile()) found = [abs];
    else {
      // The default glob is the policy files of the `policies` folder: listed as a folder given as an argument is.
      const folder = path.resolve(cwd, DEFAULT_POLICY_DIR);
      if (arg === DEFAULT_POLICY_GLOB && stat(folder)?.isDirectory()) found = policyFilesIn(folder);
      if (found === undefined) {
        const { glob, isDynamicPattern } = await globber();
        if (isDynamicPattern(arg)) found = await glob(arg, { cwd, absolute: true, ignore: ["**/node_modules/**"] });
        else throw new CliError(`no such file or directory: ${arg}${fromConfig ? ' (from package.json "pruneguard".policies)' : ""}`);
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

/**
 * What `glob("**\/*.policy.ts", { cwd: dir, absolute: true, ignore: ["**\/node_modules/**"] })` finds in a
 * folder of plain folders and files, without the glob library: every `*.policy.ts` file below `dir`, except
 * under a `node_modules` folder and except names starting with `.` (the glob's `dot: false`: it neither
 * matches such a file nor descends into such a folder). `undefined`, to leave the folder to the glob, at
 * the first thing the two could read differently: a link, anything but a file or a folder, a folder named
 * like a policy file (the glob lists all it holds), an error.
 * test/compiler/inputs.test.ts holds the two to one answer.
 */
export function policyFilesIn(dir: string): string[] | undefined {
  const out: string[] = [];
  const pending = [dir];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      if (e.isDirectory()) {
        // The glob takes a folder its pattern matches whole (tinyglobby's `expandDirectories`): every file in it.
        if (e.name.endsWith(".policy.ts")) return undefined;
        if (e.name !== "node_modules") pending.push(path.join(folder, e.name));
      } else if (e.isFile()) {
        if (e.name.endsWith(".policy.ts")) out.push(path.join(folder, e.name));
      } else {
        return undefined;
      }
    }
  }
  return out;
}
