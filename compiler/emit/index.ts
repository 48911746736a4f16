/**
 * The emitters: per policy, the IR as JSON, the types module and the guard module; each a pure function
 * of the IR and the options. Writing and staleness are here too, so `compile` and `check` agree on what
 * "fresh" means.
 */
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import type { PolicyIR } from "../ir/schema.js";
import { GENERATED_MARK } from "./describe.js";
import { emitGuard } from "./guard.js";
import { emitIrJson, IR_GENERATED } from "./ir-json.js";
import { emitTypes } from "./types.js";

/** An output file, its path relative to the output directory. */
export interface EmittedFile {
  readonly path: string;
  readonly contents: string;
}

export interface EmitOptions {
  /**
   * The module specifier generated guards import the runtime from. Default `"pruneguard"`; a repository
   * that compiles `generated/` together with the runtime's sources uses a relative path (`../src/index.js`).
   */
  readonly runtimeImport: string;
}

export const DEFAULT_EMIT_OPTIONS: EmitOptions = Object.freeze({ runtimeImport: "pruneguard" });

/** Emitters per policy, in the order their files are listed. */
export const POLICY_EMITTERS: ReadonlyArray<(policy: PolicyIR, options: EmitOptions) => EmittedFile> = [emitIrJson, emitTypes, emitGuard];

export function emitAll(policies: readonly PolicyIR[], options: Partial<EmitOptions> = {}): EmittedFile[] {
  const o: EmitOptions = { ...DEFAULT_EMIT_OPTIONS, ...options };
  return policies.flatMap((p) => POLICY_EMITTERS.map((emit) => emit(p, o))).sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * Writes the files that differ from what is on disk, several at a time. Unchanged files are not rewritten, so
 * watchers and incremental builds see only real changes. Returns the paths written.
 */
export async function writeEmitted(outDir: string, files: readonly EmittedFile[]): Promise<string[]> {
  const dirs = [...new Set(files.map((f) => path.dirname(path.join(outDir, f.path))))];
  await Promise.all(dirs.map((d) => mkdir(d, { recursive: true })));
  const written = await mapConcurrently(files, async (f) => {
    const target = path.join(outDir, f.path);
    if ((await readFile(target, "utf8").catch(() => undefined)) === f.contents) return undefined;
    await writeFile(target, f.contents, "utf8");
    return f.path;
  });
  return written.filter((p): p is string => p !== undefined);
}

/** File operations in flight at once: enough to overlap the I/O, few enough never to run out of descriptors. */
const IO_CONCURRENCY = 32;

/** `Promise.all(items.map(fn))` with at most `IO_CONCURRENCY` calls pending; results in input order. */
export async function mapConcurrently<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IO_CONCURRENCY, items.length) }, worker));
  return out;
}

/** Why an output file is not fresh. */
export interface StaleFile {
  readonly path: string;
  readonly state: "missing" | "differs" | "orphaned";
}

/**
 * Output files that are missing or differ from what would be emitted now, and generated files (by their
 * header) that no policy emits any more. `outputs` names every file the policies emit when `files` holds
 * only some of them (an incremental build's re-emitted ones; the rest are known fresh).
 */
export async function staleFiles(outDir: string, files: readonly EmittedFile[], outputs: readonly string[] = files.map((f) => f.path)): Promise<StaleFile[]> {
  const current = await mapConcurrently(files, (f) => readFile(path.join(outDir, f.path), "utf8").catch(() => undefined));
  const stale: StaleFile[] = [];
  files.forEach((f, i) => {
    if (current[i] !== f.contents) stale.push({ path: f.path, state: current[i] === undefined ? "missing" : "differs" });
  });
  for (const p of await orphanedFiles(outDir, outputs.map((path) => ({ path })))) stale.push({ path: p, state: "orphaned" });
  return stale;
}

/** An IR file's marker, compact or in the indented form of earlier versions. */
const IR_MARKS = [`"generated":"${IR_GENERATED}"`, `"generated": "${IR_GENERATED}"`];

/** Files in `outDir` that pruneguard generated but that `files` no longer contains. */
export async function orphanedFiles(outDir: string, files: ReadonlyArray<Pick<EmittedFile, "path">>): Promise<string[]> {
  const wanted = new Set(files.map((f) => f.path));
  const names = await readdir(outDir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const name of names.sort()) {
    if (wanted.has(name) || !/\.(types\.ts|guard\.ts|ir\.json)$/.test(name)) continue;
    const text = await readFile(path.join(outDir, name), "utf8").catch(() => "");
    if (text.startsWith(GENERATED_MARK) || IR_MARKS.some((m) => text.includes(m))) out.push(name);
  }
  return out;
}

/** Deletes generated files no policy emits any more (a policy was renamed or removed). */
export async function removeOrphans(outDir: string, files: ReadonlyArray<Pick<EmittedFile, "path">>): Promise<string[]> {
  const orphans = await orphanedFiles(outDir, files);
  for (const name of orphans) await rm(path.join(outDir, name));
  return orphans;
}

export { emitIrJson, irHash } from "./ir-json.js";
export { emitTypes, typesFile } from "./types.js";
export { emitGuard, guardFile, directiveModes } from "./guard.js";
