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
import * as path from "node:path";
import { DEFAULT_EMIT_OPTIONS, readBoundedSync } from "../emit/files.js";
import { isRecord } from "../ir/shape.js";
import { isInside, resolvePath } from "../frontend/paths.js";
import { CliError } from "./context.js";

// Built-ins through `process.getBuiltinModule`, as in compiler/emit/files.ts: this module is on the path of a `check` with nothing to do.
const { lstatSync, realpathSync, statSync } = process.getBuiltinModule("node:fs");

/** The largest package.json read: far past any real one (a planted link to `/dev/zero` must not be read whole). */
export const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;

export interface ProjectConfig {
  /** Policy files, folders or globs, relative to the working directory. */
  readonly policies?: readonly string[];
  /** The output folder. */
  readonly out?: string;
  /** The module specifier generated guards import the runtime from. */
  readonly runtimeImport?: string;
  /** The project root, relative to the working directory: nothing outside it is read. */
  readonly root?: string;
}

const STRING_KEYS = ["out", "runtimeImport", "root"] as const;
const KEYS: readonly string[] = ["policies", ...STRING_KEYS];

/**
 * A value from package.json as an error shows it: JSON, at most 60 characters, with control, bidirectional
 * and other invisible characters escaped — the file may come from a pull request, and the message goes to a
 * terminal.
 */
function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  const cut = text.length > 60 ? `${text.slice(0, 57)}…` : text;
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The `"pruneguard"` field as a `ProjectConfig`, or the first problem with it: the member's path and what
 * is wrong. Written out rather than with zod, which every command would load at start-up for four members
 * (~30 ms; BENCHMARKS.md, figure 4).
 */
export function parseProjectConfig(field: unknown): { config: ProjectConfig } | { path: string; problem: string } {
  const what = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `${typeof v} ${shown(v)}`);
  if (!isRecord(field)) return { path: "", problem: `expected an object, got ${what(field)}` };
  const unknown = Object.keys(field).filter((k) => !KEYS.includes(k));
  if (unknown.length > 0) return { path: "", problem: `unknown key${unknown.length > 1 ? "s" : ""} ${unknown.slice(0, 5).map(shown).join(", ")}${unknown.length > 5 ? ", …" : ""} (known: ${KEYS.join(", ")})` };
  const { policies } = field;
  if (policies !== undefined) {
    if (!Array.isArray(policies)) return { path: ".policies", problem: `expected an array of policy files, folders or globs, got ${what(policies)}` };
    if (policies.length === 0) return { path: ".policies", problem: "expected at least one entry (leave it out for the default, policies/**/*.policy.ts)" };
    const bad = policies.findIndex((p) => typeof p !== "string" || p.length === 0);
    if (bad >= 0) return { path: `.policies.${bad}`, problem: `expected a non-empty string, got ${what(policies[bad])}` };
  }
  for (const key of STRING_KEYS) {
    const v = field[key];
    if (v !== undefined && (typeof v !== "string" || v.length === 0)) return { path: `.${key}`, problem: `expected a non-empty string, got ${what(v)}` };
  }
  return { config: field as ProjectConfig };
}

export const DEFAULT_OUT = "generated";

/** The configuration with defaults filled in (`policies` stays empty: the inputs module has its default). */
export interface ResolvedConfig {
  readonly policies: readonly string[];
  readonly out: string;
  readonly runtimeImport: string;
  readonly root: string;
}

export async function loadConfig(cwd: string): Promise<ResolvedConfig> {
  const text = readPackageJson(cwd);
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
      const r = parseProjectConfig(field);
      if ("problem" in r) throw new CliError(`package.json "pruneguard"${r.path}: ${r.problem}`);
      config = r.config;
    }
  }
  return {
    policies: config.policies ?? [],
    out: config.out ?? DEFAULT_OUT,
    runtimeImport: config.runtimeImport ?? DEFAULT_EMIT_OPTIONS.runtimeImport,
    root: config.root ?? ".",
  };
}

/**
 * The text of `<cwd>/package.json`, or `undefined` when there is none. A link is followed only to a file inside
 * the project (as a checkout under a build tool's sandbox has it); anything that is not a regular file (a FIFO,
 * a device), or is larger than `MAX_PACKAGE_JSON_BYTES`, is a usage error, never read.
 */
function readPackageJson(cwd: string): string | undefined {
  const file = path.join(cwd, "package.json");
  if (readOr(() => lstatSync(file)) === undefined) return undefined;
  const target = readOr(() => realpathSync(file));
  const project = readOr(() => realpathSync(cwd)) ?? path.resolve(cwd);
  if (target === undefined) throw new CliError("package.json is a link that leads nowhere");
  if (!isInside(project, target)) throw new CliError("package.json is a link that leads outside the project: it is not read");
  const info = readOr(() => statSync(target));
  if (!info?.isFile()) throw new CliError("package.json is not a regular file: it is not read");
  if (info.size > MAX_PACKAGE_JSON_BYTES) throw new CliError(`package.json is larger than ${MAX_PACKAGE_JSON_BYTES / 1024 / 1024} MiB: it is not read`);
  const text = readBoundedSync(target, MAX_PACKAGE_JSON_BYTES);
  if (text === undefined) throw new CliError("package.json could not be read");
  return text;
}

/** The project root a command reads from (`--root`, else the config's, else the cwd); a usage error unless it is a folder. */
export async function projectRoot(cwd: string, flag: string | undefined, config: ResolvedConfig): Promise<string> {
  const root = flag ?? config.root;
  // The root bounds what the compiler may read (links and imports out of it are refused). The repository may
  // narrow it, not widen it: a pull request that set it to "/" would let a policy's imports reach any file.
  if (flag === undefined && !isInside(resolvePath(cwd, "."), resolvePath(cwd, root))) {
    throw new CliError('package.json "pruneguard".root is outside the project: it may only narrow what the compiler reads (pass --root to widen it)');
  }
  const info = readOr(() => statSync(path.resolve(cwd, root)));
  if (!info?.isDirectory()) throw new CliError(`the project root ${root}${flag === undefined ? ' (package.json "pruneguard".root)' : ""} is not a folder`);
  return root;
}

/** What `read` returns, or `undefined` when it throws (a missing or unreadable file). */
function readOr<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
