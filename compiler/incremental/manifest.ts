/**
 * The incremental build's manifest, `<out>/.pruneguard-manifest.json`: for each entry policy file, the
 * content hashes of every file its compilation read (the entry and the bases it extends), the hashes of the
 * files it emitted, its policies' names and its diagnostics (warnings only: a build with errors writes no
 * manifest). Keyed by the compiler's fingerprint and the emit options, so another compiler or other options
 * reuse nothing.
 *
 * It is a cache, not a source of truth: a missing, unreadable or foreign manifest means a full build, and
 * every entry is re-checked against the files on disk before it is reused. Keep it out of version control
 * (like `tsc`'s `.tsbuildinfo`); `pruneguard check` on a fresh clone then compiles every policy.
 */
import { rename, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { z } from "zod";
import { Diagnostic } from "../diagnostics/diagnostic.js";
import { readBounded } from "../emit/files.js";
import { seal, verifySeal } from "./seal.js";

export const MANIFEST_FILE = ".pruneguard-manifest.json";
const MANIFEST_VERSION = 2;
/** A manifest larger than this is not read: about 20,000 entries' worth, far past any real project. */
export const MAX_MANIFEST_BYTES = 32 * 1024 * 1024;

/** A path as the manifest records it: relative, POSIX, at most 1,024 characters (confined by the build). */
const RecordedPath = z.string().min(1).max(1024);
const Hashes = z.record(RecordedPath, z.string().regex(/^[0-9a-f]{64}$/));

export const ManifestUnit = z.strictObject({
  /** Every file the entry's compilation read, by reported path: the entry and its bases. */
  inputs: Hashes,
  /** The files it emitted, by path in the output folder. */
  outputs: Hashes,
  /** The policies it compiled (the entry's and its bases'), to find names two entries share. */
  policies: z.array(z.strictObject({ name: z.string(), file: z.string() })),
  diagnostics: z.array(Diagnostic),
});
export type ManifestUnit = z.infer<typeof ManifestUnit>;

export const Manifest = z.strictObject({
  manifest: z.literal(MANIFEST_VERSION),
  /** `compilerFingerprint()` of the compiler that wrote it. */
  compiler: z.string(),
  /** The options that change the output: the runtime import, and the project root (relative to the cwd). */
  options: z.strictObject({ runtimeImport: z.string(), root: z.string() }),
  /** By entry file, as reported (relative to the working directory). */
  units: z.record(z.string(), ManifestUnit),
});
export type Manifest = z.infer<typeof Manifest>;

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
    const r = Manifest.safeParse(JSON.parse(body));
    return r.success ? r.data : undefined;
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
  const temporary = `${target}.${process.pid}.tmp`;
  await writeFile(temporary, text, "utf8");
  await rename(temporary, target);
}
