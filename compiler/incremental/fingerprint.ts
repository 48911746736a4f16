/**
 * The compiler's identity for incremental builds: a hash of everything that decides what a policy compiles
 * to besides the policy itself. A manifest written by another compiler is ignored whole.
 *
 * It hashes the compiler's own code (the `compiler/`, `dsl/` and `src/` modules next to this one, built or
 * source) rather than trusting a version number, so an edited emitter invalidates every cached policy even
 * when nobody bumped the version; and the versions of the packages whose output ends up in generated files
 * or diagnostics (zod's JSON Schema, the TypeScript parser's syntax errors, the tokenizer's counts, re2js).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** Packages whose behaviour reaches the output. */
const DEPENDENCIES = ["zod", "ts-morph", "gpt-tokenizer", "re2js"];
/** The folders, under the root this module is built into, whose code the compiler runs. */
const CODE_FOLDERS = ["compiler", "dsl", "src"];

let cached: string | undefined;

export function compilerFingerprint(): string {
  if (cached !== undefined) return cached;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const hash = createHash("sha256");
  for (const name of DEPENDENCIES) hash.update(`${name}@${packageVersion(name)}\n`);
  for (const folder of CODE_FOLDERS) {
    for (const file of codeFiles(path.join(root, folder))) {
      hash.update(`${path.relative(root, file)}\n`);
      hash.update(readFileSync(file));
    }
  }
  cached = hash.digest("hex");
  return cached;
}

/** The installed version of a package, read from the `package.json` of the folder its entry resolves into. */
function packageVersion(name: string): string {
  try {
    const entry = fileURLToPath(import.meta.resolve(name));
    const marker = `${path.sep}node_modules${path.sep}${name.split("/").join(path.sep)}${path.sep}`;
    const at = entry.lastIndexOf(marker);
    if (at < 0) return "unknown";
    const manifest = path.join(entry.slice(0, at + marker.length), "package.json");
    return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version ?? "unknown";
  } catch {
    return "absent";
  }
}

/** `.js` and `.ts` modules (not declarations or maps) under `dir`, in a stable order. */
function codeFiles(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.(js|ts)$/.test(e.name) && !e.name.endsWith(".d.ts"))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}
