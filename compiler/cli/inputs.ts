/**
 * Turning command-line arguments into policy files: a file is itself, a folder means its `**\/*.policy.ts`,
 * anything else is a glob. No arguments means the `policies` of the project configuration, else
 * `policies/**\/*.policy.ts`.
 */
import { stat } from "node:fs/promises";
import * as path from "node:path";
import { glob, isDynamicPattern } from "tinyglobby";
import { CliError } from "./context.js";

export const DEFAULT_POLICY_GLOB = "policies/**/*.policy.ts";
export const POLICY_FILE_GLOB = "**/*.policy.ts";

export async function resolveInputs(args: readonly string[], cwd: string, configured: readonly string[] = []): Promise<string[]> {
  const fromConfig = args.length === 0 && configured.length > 0;
  const patterns = args.length > 0 ? args : fromConfig ? configured : [DEFAULT_POLICY_GLOB];
  const files = new Set<string>();
  for (const arg of patterns) {
    const abs = path.resolve(cwd, arg);
    const info = await stat(abs).catch(() => undefined);
    let found: string[];
    if (info?.isDirectory()) found = await glob(POLICY_FILE_GLOB, { cwd: abs, absolute: true, ignore: ["**/node_modules/**"] });
    else if (info?.isFile()) found = [abs];
    else if (isDynamicPattern(arg)) found = await glob(arg, { cwd, absolute: true, ignore: ["**/node_modules/**"] });
    else throw new CliError(`no such file or directory: ${arg}${fromConfig ? ' (from package.json "pruneguard".policies)' : ""}`);
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
