/**
 * The checks, run over every policy after validation. Each is a pure function of the IR; they run in a
 * fixed order and their results are de-duplicated (an overlay inherits its base's nodes, and a problem in
 * the base is reported once, where it is written).
 */
import { append, dedupeDiagnostics, diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { PolicyIR } from "../ir/schema.js";
import type { Check, CheckContext } from "./context.js";
import { checkHolds } from "./holds.js";
import { checkOverlay } from "./overlay.js";
import { checkPins } from "./pins.js";
import { checkProvenance } from "./provenance.js";
import { checkReferences } from "./references.js";
import { checkRetention } from "./retention.js";
import { checkTombstone } from "./tombstone.js";
import { checkUnprunable } from "./unprunable.js";

export const CHECKS: readonly Check[] = [checkReferences, checkProvenance, checkRetention, checkHolds, checkOverlay, checkPins, checkTombstone, checkUnprunable];

export function runChecks(policies: readonly PolicyIR[]): Diagnostic[] {
  const byFile = new Map(policies.map((p) => [p.file, p]));
  const ctx: CheckContext = { policyByFile: (f) => byFile.get(f) };
  const out: Diagnostic[] = [];
  const byName = new Map<string, PolicyIR>();
  const own = new Map<PolicyIR, Diagnostic[]>();
  for (const p of policies) {
    const other = byName.get(p.name);
    if (other) out.push(diagnostic("PG2005", p.fields.name ?? p.location, { name: p.name, other: `\`${other.file}\`` }));
    else byName.set(p.name, p);
    own.set(p, CHECKS.flatMap((check) => check(p, ctx)));
  }
  for (const [p, ds] of own) append(out, intoOverlay(p, ds, p.extends ? own.get(byFile.get(p.extends.file)!) : undefined));
  return dedupeDiagnostics(out);
}

/**
 * An overlay's diagnostics that its base does not have are caused by the overlay. The checks place them at
 * the overlay property that causes them; one that still points into another file is moved to the
 * overlay's `extendPolicy(...)` call, so no diagnostic an overlay causes is reported in a file it did not change.
 */
function intoOverlay(p: PolicyIR, ds: readonly Diagnostic[], inherited: readonly Diagnostic[] | undefined): Diagnostic[] {
  if (inherited === undefined) return [...ds];
  const keys = new Set(inherited.map(key));
  return ds.map((d) => (d.location === null || d.location.file === p.file || keys.has(key(d)) ? d : { ...d, location: p.location }));
}

const key = (d: Diagnostic): string => JSON.stringify([d.code, d.location, d.message]);
