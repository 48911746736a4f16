/** What every check receives: one resolved policy and a way to find the policies it builds on. */
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import type { PolicyIR, StoreIR } from "../ir/schema.js";

export interface CheckContext {
  /** The base of an overlay, by file; `undefined` when it could not be read (already reported). */
  policyByFile(file: string): PolicyIR | undefined;
}

/** A check: a pure function from one policy to its diagnostics. */
export type Check = (policy: PolicyIR, ctx: CheckContext) => Diagnostic[];

export function storeOf(policy: PolicyIR, name: string | null): StoreIR | undefined {
  return name === null ? undefined : policy.stores.find((s) => s.name === name);
}

/**
 * The first of `candidates` written in `policy`'s own file, else the first given: a diagnostic an overlay
 * causes points into the overlay, at the property that causes it, while one it inherits stays where the
 * base wrote it (and is reported once).
 */
export function preferOwn(policy: PolicyIR, candidates: ReadonlyArray<Location | undefined>, fallback: Location): Location {
  return candidates.find((c) => c?.file === policy.file) ?? candidates.find((c) => c !== undefined) ?? fallback;
}
