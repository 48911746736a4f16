/**
 * Structural semantics: every kind names a declared store and allows at least one mode; every store is used.
 * A misspelt store name is one mistake: PG2001 names the store it is closest to, and that store is not also
 * reported unused (PG3004), since the kind meant it.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import { closest } from "../frontend/suggest.js";
import type { PolicyIR } from "../ir/schema.js";
import { preferOwn, storeOf, type Check } from "./context.js";

/** The declared store an unknown store name most likely misspells; `undefined` when it names a declared one, or none is close. */
export function meantStore(policy: PolicyIR, name: string | null): string | undefined {
  if (name === null || storeOf(policy, name)) return undefined;
  return closest(name, policy.stores.map((s) => s.name));
}

export const checkReferences: Check = (policy) => {
  const out: Diagnostic[] = [];
  const declared = policy.stores.map((s) => `\`${s.name}\``).join(", ") || "none";
  const meant = new Set<string>();
  for (const kind of policy.kinds) {
    if (kind.store !== null && !storeOf(policy, kind.store)) {
      const near = meantStore(policy, kind.store);
      const store = near === undefined ? undefined : storeOf(policy, near);
      if (near !== undefined) meant.add(near);
      out.push(
        diagnostic(
          "PG2001",
          kind.fields.store ?? kind.location,
          { kind: kind.name, store: kind.store, declared, suggestion: near === undefined ? "" : `; did you mean \`${near}\`?` },
          store ? [{ message: `store \`${store.name}\` is declared here`, location: store.location }] : [],
        ),
      );
    }
    if (kind.modes.length === 0) out.push(diagnostic("PG2003", kind.fields.modes ?? kind.location, { kind: kind.name }));
    const dup = kind.modes.find((m, i) => kind.modes.indexOf(m) !== i);
    if (dup) out.push(diagnostic("PG2002", kind.fields.modes ?? kind.location, { what: `mode of kind \`${kind.name}\``, name: dup }));
    if (kind.repersist) {
      const store = storeOf(policy, kind.store);
      const reason = kind.store === null ? "it has no store" : store && !store.writable ? `store \`${store.name}\` is not writable` : undefined;
      if (reason) out.push(diagnostic("PG3003", preferOwn(policy, [kind.fields.repersist, kind.fields.store, store?.fields.writable], kind.location), { kind: kind.name, reason }));
    }
  }
  for (const store of policy.stores) {
    // A store an overlay inherits is the overlay check's: unused in the base, the base reports it; used
    // there and abandoned here, the overlay check reports it at the `store:` line that moved away.
    const inherited = policy.extends !== null && store.location.file !== policy.file;
    if (!inherited && !meant.has(store.name) && !policy.kinds.some((k) => k.store === store.name)) out.push(diagnostic("PG3004", store.location, { store: store.name }));
  }
  return out;
};
