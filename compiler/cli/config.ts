/**
 * Project configuration: the `"pruneguard"` field of `package.json` in the working directory.
 *
 * ```json
 * "pruneguard": { "policies": ["examples/policies"], "out": "generated", "runtimeImport": "../src/index.js" }
 * ```
 *
 * Every entry is optional, and a command-line argument wins over it. Without the field, policies are
 * `policies/**\/*.policy.ts`, output goes to `generated/`, and guards import the runtime as `pruneguard`.
 */
import { readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import { z } from "zod";
import { DEFAULT_EMIT_OPTIONS } from "../emit/files.js";
import { CliError } from "./context.js";

export const ProjectConfig = z.strictObject({
  /** Policy files, folders or globs, relative to the working directory. */
  policies: z.array(z.string().min(1)).min(1).optional(),
  /** The output folder. */
  out: z.string().min(1).optional(),
  /** The module specifier generated guards import the runtime from. */
  runtimeImport: z.string().min(1).optional(),
  /** The project root, relative to the working directory: nothing outside it is read. */
  root: z.string().min(1).optional(),
});
export type ProjectConfig = z.infer<typeof ProjectConfig>;

export const DEFAULT_OUT = "generated";

/** The configuration with defaults filled in (`policies` stays empty: the inputs module has its default). */
export interface ResolvedConfig {
  readonly policies: readonly string[];
  readonly out: string;
  readonly runtimeImport: string;
  readonly root: string;
}

export async function loadConfig(cwd: string): Promise<ResolvedConfig> {
  const file = path.join(cwd, "package.json");
  const text = await readFile(file, "utf8").catch(() => undefined);
  let config: ProjectConfig = {};
  if (text !== undefined) {
    let pkg: unknown;
    try {
      pkg = JSON.parse(text);
    } catch {
      throw new CliError("package.json is not valid JSON");
    }
    const field = typeof pkg === "object" && pkg !== null ? (pkg as Record<string, unknown>)["pruneguard"] : undefined;
    if (field !== undefined) {
      const r = ProjectConfig.safeParse(field);
      if (!r.success) {
        const i = r.error.issues[0]!;
        throw new CliError(`package.json "pruneguard"${i.path.length > 0 ? `.${i.path.join(".")}` : ""}: ${i.message}`);
      }
      config = r.data;
    }
  }
  return {
    policies: config.policies ?? [],
    out: config.out ?? DEFAULT_OUT,
    runtimeImport: config.runtimeImport ?? DEFAULT_EMIT_OPTIONS.runtimeImport,
    root: config.root ?? ".",
  };
}

/** The project root a command reads from (`--root`, else the config's, else the cwd); a usage error unless it is a folder. */
export async function projectRoot(cwd: string, flag: string | undefined, config: ResolvedConfig): Promise<string> {
  const root = flag ?? config.root;
  const info = await stat(path.resolve(cwd, root)).catch(() => undefined);
  if (!info?.isDirectory()) throw new CliError(`the project root ${root}${flag === undefined ? ' (package.json "pruneguard".root)' : ""} is not a folder`);
  return root;
}
