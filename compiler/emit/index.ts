/**
 * The emitters: one function per output file, each a pure function of the IR. Writing and staleness are
 * here too, so `compile` and `check` agree on what "fresh" means.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import type { PolicyIR } from "../ir/schema.js";
import { emitIrJson } from "./ir-json.js";

/** An output file, its path relative to the output directory. */
export interface EmittedFile {
  readonly path: string;
  readonly contents: string;
}

/** Emitters per policy. The generators issue adds its emitters (types, guard, manifest) here. */
export const POLICY_EMITTERS: ReadonlyArray<(policy: PolicyIR) => EmittedFile> = [emitIrJson];

export function emitAll(policies: readonly PolicyIR[]): EmittedFile[] {
  return policies.flatMap((p) => POLICY_EMITTERS.map((emit) => emit(p))).sort((a, b) => (a.path < b.path ? -1 : 1));
}

export async function writeEmitted(outDir: string, files: readonly EmittedFile[]): Promise<void> {
  for (const f of files) {
    const target = path.join(outDir, f.path);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, f.contents, "utf8");
  }
}

/** Output files that are missing or differ from what would be emitted now. */
export async function staleFiles(outDir: string, files: readonly EmittedFile[]): Promise<string[]> {
  const stale: string[] = [];
  for (const f of files) {
    const current = await readFile(path.join(outDir, f.path), "utf8").catch(() => undefined);
    if (current !== f.contents) stale.push(f.path);
  }
  return stale;
}

export { emitIrJson, irHash } from "./ir-json.js";
