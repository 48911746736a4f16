/**
 * The emitters: per policy, the IR as JSON, the types module and the guard module; each a pure function
 * of the IR and the options. Writing and staleness (`files.ts`) are re-exported here, so `compile` and
 * `check` agree on what "fresh" means.
 */
import type { PolicyIR } from "../ir/schema.js";
import { DEFAULT_EMIT_OPTIONS, type EmitOptions, type EmittedFile } from "./files.js";
import { emitGuard } from "./guard.js";
import { emitIrJson } from "./ir-json.js";
import { emitTypes } from "./types.js";

/** Emitters per policy, in the order their files are listed. */
export const POLICY_EMITTERS: ReadonlyArray<(policy: PolicyIR, options: EmitOptions) => EmittedFile> = [emitIrJson, emitTypes, emitGuard];

export function emitAll(policies: readonly PolicyIR[], options: Partial<EmitOptions> = {}): EmittedFile[] {
  const o: EmitOptions = { ...DEFAULT_EMIT_OPTIONS, ...options };
  return policies.flatMap((p) => POLICY_EMITTERS.map((emit) => emit(p, o))).sort((a, b) => (a.path < b.path ? -1 : 1));
}

export {
  DEFAULT_EMIT_OPTIONS,
  GENERATED_MARK,
  orphanedFiles,
  removeOrphans,
  staleFiles,
  writeEmitted,
  type EmitOptions,
  type EmittedFile,
  type StaleFile,
} from "./files.js";
export { emitIrJson, irHash } from "./ir-json.js";
export { emitTypes, typesFile } from "./types.js";
export { emitGuard, guardFile, directiveModes } from "./guard.js";
