/**
 * The incremental build's manifest, `<out>/.pruneguard-manifest.json`: for each entry policy file, the
 * content hashes of every file its compilation read (the entry, the bases it extends, and the tsconfig.json
 * and package.json files that decided how an extensionless import resolves), the hashes of the
 * files it emitted, its policies' names and its diagnostics (warnings only: a build with errors writes no
 * manifest). Keyed by the compiler's fingerprint and the emit options, so another compiler or other options
 * reuse nothing.
 *
 * It is a cache, not a source of truth: a missing, unreadable or foreign manifest means a full build, and
 * every entry is re-checked against the files on disk before it is reused. Keep it out of version control
 * (like `tsc`'s `.tsbuildinfo`); `pruneguard check` on a fresh clone then compiles every policy.
 */
import * as path from "node:path";
import { isDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import { readBounded, replaceFile } from "../emit/files.js";
import { hasExactKeys, isRecord } from "../ir/shape.js";
import { seal, verifySeal } from "./seal.js";

export const MANIFEST_FILE = ".pruneguard-manifest.json";
const MANIFEST_VERSION = 2;
/** A manifest larger than this is not read: about 20,000 entries' worth, far past any real project. */
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;
/** The longest path a manifest records: relative, POSIX (confined by the build). */
const MAX_RECORDED_PATH = 1024;

/** Content hashes by path. */
export type Hashes = Record<string, string>;

export interface ManifestUnit {
  /** Every file the entry's compilation read, by reported path: the entry, its bases, and the configuration files its extensionless imports resolved under. */
  inputs: Hashes;
  /** The files it emitted, by path in the output folder. */
  outputs: Hashes;
  /** The policies it compiled (the entry's and its bases'), to find names two entries share. */
  policies: Array<{ name: string; file: string }>;
  diagnostics: Diagnostic[];
}

export interface Manifest {
  manifest: typeof MANIFEST_VERSION;
  /** `compilerFingerprint()` of the compiler that wrote it. */
  compiler: string;
  /** The options that change the output: the runtime import, and the project root (relative to the cwd). */
  options: { runtimeImport: string; root: string };
  /** By entry file, as reported (relative to the working directory). */
  units: Record<string, ManifestUnit>;
}

const isHashes = (v: unknown): v is Hashes =>
  isRecord(v) &&
  Object.entries(v).every(([p, h]) => p.length >= 1 && p.length <= MAX_RECORDED_PATH && typeof h === "string" && /^[0-9a-f]{64}$/.test(h));

const isUnit = (v: unknown): v is ManifestUnit =>
  isRecord(v) &&
  hasExactKeys(v, ["inputs", "outputs", "policies", "diagnostics"]) &&
  isHashes(v.inputs) &&
  isHashes(v.outputs) &&
  Array.isArray(v.policies) &&
  v.policies.every((p) => isRecord(p) && hasExactKeys(p, ["name", "file"]) && typeof p.name === "string" && typeof p.file === "string") &&
  Array.isArray(v.diagnostics) &&
  v.diagnostics.every(isDiagnostic);

/**
 * Whether `v` (parsed JSON) is a manifest of this version: exactly the members `writeManifest` writes,
 * each of its type. A plain check rather than a zod schema, so that a `check` with nothing to do never
 * loads zod (BENCHMARKS.md, figure 4); test/compiler/shapes.test.ts holds it to a zod schema of the same shape.
 */
export function isManifest(v: unknown): v is Manifest {
  return (
    isRecord(v) &&
    hasExactKeys(v, ["manifest", "compiler", "options", "units"]) &&
    v.manifest === MANIFEST_VERSION &&
    typeof v.compiler === "string" &&
    isRecord(v.options) &&
    hasExactKeys(v.options, ["runtimeImport", "root"]) &&
    typeof v.options.runtimeImport === "string" &&
    typeof v.options.root === "string" &&
    isRecord(v.units) &&
    Object.values(v.units).every(isUnit)
  );
}

/**
 * The manifest in `outDir`, or `undefined` when there is none, it is larger than `MAX_MANIFEST_BYTES`, its
 * seal does not verify under `key` (another machine's, or planted), or it cannot be read as one. The file is
 * the seal on its first line and the manifest's JSON after it.
 */
export async function readManifest(outDir: string, key: Buffer): Promise<Manifest | undefined> {
  const text = await readBounded(path.join(outDir, MANIFEST_FILE), MAX_MANIFEST_BYTES);
  if (text === undefined) return undefined;
  const newline = text.indexOf("\n");
  if (newline < 0) return undefined;
  const body = text.slice(newline + 1);
  if (!verifySeal(key, body, text.slice(0, newline))) return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return isManifest(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the manifest, sealed (through a temporary file and a rename, so a reader never sees half of it). */
export async function writeManifest(outDir: string, manifest: Manifest, key: Buffer): Promise<void> {
  const target = path.join(outDir, MANIFEST_FILE);
  const body = `${JSON.stringify(manifest)}\n`;
  const text = `${seal(key, body)}\n${body}`;
  if ((await readBounded(target, MAX_MANIFEST_BYTES)) === text) return;
  await replaceFile(target, text);
}
