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
import { emitIrJson } from "./ir-json.js";
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

export async function writeEmitted(outDir: string, files: readonly EmittedFile[]): Promise<void> {
  for (const f of files) {
    const target = path.join(outDir, f.path);
    await mkdir(path.dirname(target), { recursive: true });
    // Unchanged files are not rewritten, so watchers and incremental builds see only real changes.
    if ((await readFile(target, "utf8").catch(() => undefined)) !== f.contents) await writeFile(target, f.contents, "utf8");
  }
}

/** Why an output file is not fresh. */
export interface StaleFile {
  readonly path: string;
  readonly state: "missing" | "differs" | "orphaned";
}

/**
 * Output files that are missing or differ from what would be emitted now, and generated files (by their
 * header) that no policy emits any more.
 */
export async function staleFiles(outDir: string, files: readonly EmittedFile[]): Promise<StaleFile[]> {
  const stale: StaleFile[] = [];
  for (const f of files) {
    const current = await readFile(path.join(outDir, f.path), "utf8").catch(() => undefined);
    if (current !== f.contents) stale.push({ path: f.path, state: current === undefined ? "missing" : "differs" });
  }
  for (const p of await orphanedFiles(outDir, files)) stale.push({ path: p, state: "orphaned" });
  return stale;
}

/** Files in `outDir` that pruneguard generated but that `files` no longer contains. */
export async function orphanedFiles(outDir: string, files: readonly EmittedFile[]): Promise<string[]> {
  const wanted = new Set(files.map((f) => f.path));
  const names = await readdir(outDir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const name of names.sort()) {
    if (wanted.has(name) || !/\.(types\.ts|guard\.ts|ir\.json)$/.test(name)) continue;
    const text = await readFile(path.join(outDir, name), "utf8").catch(() => "");
    if (text.startsWith(GENERATED_MARK) || text.includes('"generated": "by pruneguard compile; do not edit"')) out.push(name);
  }
  return out;
}

/** Deletes generated files no policy emits any more (a policy was renamed or removed). */
export async function removeOrphans(outDir: string, files: readonly EmittedFile[]): Promise<string[]> {
  const orphans = await orphanedFiles(outDir, files);
  for (const name of orphans) await rm(path.join(outDir, name));
  return orphans;
}

export { emitIrJson, irHash } from "./ir-json.js";
export { emitTypes, typesFile } from "./types.js";
export { emitGuard, guardFile, directiveModes } from "./guard.js";
