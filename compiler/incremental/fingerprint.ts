/**
 * The compiler's identity for incremental builds: a hash of everything that decides what a policy compiles
 * to besides the policy itself. A manifest written by another compiler is ignored whole.
 *
 * It hashes the compiler's own code (the `compiler/`, `dsl/` and `src/` modules next to this one, built or
 * source) rather than trusting a version number, so an edited emitter invalidates every cached policy even
 * when nobody bumped the version; and the versions of the packages whose output ends up in generated files
 * or diagnostics (zod's JSON Schema, the TypeScript parser's syntax errors, the tokenizer's counts, re2js).
 *
 * Computing it means resolving four packages and listing and reading some 130 modules on every `compile`
 * and `check`, so the build does it once: `npm run build` runs `write-fingerprint.js` after `tsc`, which
 * writes `fingerprint.json` next to this module with the fingerprint and the size and modification time of
 * every file it was computed from (each code module, each package's `package.json`). A compile trusts the
 * recorded fingerprint only while every one of those files still has its recorded size and time — one
 * `stat` each, nothing resolved, listed or read — and otherwise computes it as before. Any emit of an edited
 * module (`tsc` without the script, `tsc --watch`, a hand edit) rewrites that module and so changes its
 * time, and an install of another version of a package rewrites its `package.json`: the stale record is not
 * used, and the edited emitter still invalidates every cached policy. Run from sources (the tests), there is
 * no record and the sources are hashed.
 */
import * as path from "node:path";

// Built-ins through `process.getBuiltinModule`, as in compiler/emit/files.ts: this module is on the path of a `check` with nothing to do.
const { createHash } = process.getBuiltinModule("node:crypto");
const { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } = process.getBuiltinModule("node:fs");
const { fileURLToPath } = process.getBuiltinModule("node:url");

/** Packages whose behaviour reaches the output. */
const DEPENDENCIES = ["zod", "ts-morph", "gpt-tokenizer", "re2js"];
/** The folders, under the root this module is built into, whose code the compiler runs. */
const CODE_FOLDERS = ["compiler", "dsl", "src"];
/** The root this module is built (or written) into: `dist/` or the repository. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Where the build records the fingerprint, relative to the root. */
export const BUILT_FINGERPRINT = path.join("compiler", "incremental", "fingerprint.json");

let cached: string | undefined;

export function compilerFingerprint(): string {
  cached ??= builtFingerprint(ROOT) ?? computeFingerprint(ROOT).fingerprint;
  return cached;
}

/**
 * The fingerprint of the compiler under `root`: the packages' versions, then every code module's path and
 * bytes in a stable order; with the files it was computed from (absolute paths), or `null` when a package's
 * version could not be read from a file (then nothing could tell a later install from this one).
 */
export function computeFingerprint(root: string): { fingerprint: string; files: string[] | null } {
  const hash = createHash("sha256");
  let files: string[] | null = [];
  for (const name of DEPENDENCIES) {
    const { version, manifest } = packageVersion(name);
    hash.update(`${name}@${version}\n`);
    if (manifest === null) files = null;
    else files?.push(manifest);
  }
  for (const { file, name } of codeFiles(root)) {
    hash.update(`${name}\n`);
    hash.update(readFileSync(file));
    files?.push(file);
  }
  return { fingerprint: hash.digest("hex"), files };
}

/** What the build records: the fingerprint, and the size and modification time of each file it came from. */
interface BuiltFingerprint {
  readonly fingerprint: string;
  /** `[path relative to the root, size in bytes, mtimeMs]`. */
  readonly files: ReadonlyArray<readonly [string, number, number]>;
}

/**
 * Writes `fingerprint.json` under `root` (the build's last step) and returns the fingerprint. When it cannot
 * be guarded (a package without a readable `package.json`), removes any earlier record instead.
 */
export function writeBuiltFingerprint(root: string = ROOT): string {
  const { fingerprint, files } = computeFingerprint(root);
  const target = path.join(root, BUILT_FINGERPRINT);
  if (files === null) {
    rmSync(target, { force: true });
    return fingerprint;
  }
  const built: BuiltFingerprint = {
    fingerprint,
    files: files.map((f) => {
      const st = statSync(f);
      // Relative to the root, packages too: a copy of the build elsewhere checks the packages beside it.
      return [path.relative(root, f), st.size, st.mtimeMs] as const;
    }),
  };
  writeFileSync(target, `${JSON.stringify(built)}\n`);
  return fingerprint;
}

/**
 * The fingerprint the build recorded under `root`, when every file it came from is still there with the same
 * size and modification time; `undefined` when there is no record, it cannot be read, or any file differs.
 */
export function builtFingerprint(root: string): string | undefined {
  let built: BuiltFingerprint;
  try {
    built = JSON.parse(readFileSync(path.join(root, BUILT_FINGERPRINT), "utf8")) as BuiltFingerprint;
  } catch {
    return undefined;
  }
  if (typeof built?.fingerprint !== "string" || !Array.isArray(built.files) || built.files.length === 0) return undefined;
  for (const entry of built.files) {
    if (!Array.isArray(entry) || typeof entry[0] !== "string") return undefined;
    const st = statSync(path.resolve(root, entry[0]), { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || st.size !== entry[1] || st.mtimeMs !== entry[2]) return undefined;
  }
  return built.fingerprint;
}

/** The installed version of a package, read from the `package.json` of the folder its entry resolves into. */
function packageVersion(name: string): { version: string; manifest: string | null } {
  let manifest: string;
  try {
    const entry = fileURLToPath(import.meta.resolve(name));
    const marker = `${path.sep}node_modules${path.sep}${name.split("/").join(path.sep)}${path.sep}`;
    const at = entry.lastIndexOf(marker);
    if (at < 0) return { version: "unknown", manifest: null };
    manifest = path.join(entry.slice(0, at + marker.length), "package.json");
  } catch {
    return { version: "absent", manifest: null };
  }
  try {
    return { version: (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version ?? "unknown", manifest };
  } catch {
    return { version: "absent", manifest: null };
  }
}

/**
 * `.js` and `.ts` modules (not declarations or maps) of the code folders, folder by folder, each in a stable
 * order, with their paths from the folders' root (`src/hash.js`). The folders are under `root`, except in the
 * published CLI: it depends on the `pruneguard` package rather than carrying the runtime (`.ci/pack.mjs`), so
 * there `dsl` and `src` are that package's, and its code changes the fingerprint as the CLI's own does.
 */
function codeFiles(root: string): Array<{ file: string; name: string }> {
  return CODE_FOLDERS.flatMap((folder) => {
    const base = folder !== "compiler" && !existsSync(path.join(root, folder)) ? runtimeRoot() : root;
    return readdirSync(path.join(base, folder), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.(js|ts)$/.test(e.name) && !e.name.endsWith(".d.ts"))
      .map((e) => path.join(e.parentPath, e.name))
      .sort()
      .map((file) => ({ file, name: path.relative(base, file) }));
  });
}

/** The `dist/` folder of the `pruneguard` package this module resolves (its entry is `dist/src/index.js`). */
function runtimeRoot(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.resolve("pruneguard"))), "..");
}
