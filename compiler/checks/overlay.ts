/**
 * Overlays may only tighten their base. Stated once: for every prune the overlay would execute (a kind, a
 * mode, with or without accept_lossy), the base must execute it too, at least as recoverably; and every
 * pin the base carries, the overlay carries. Each violation names the rule and a concrete counterexample.
 */
import { formatDuration } from "../../dsl/durations.js";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { KindIR, PinIR, PolicyIR, StoreIR } from "../ir/schema.js";
import { storeOf, type Check } from "./context.js";

export const checkOverlay: Check = (policy, ctx) => {
  if (policy.extends === null) return [];
  const base = ctx.policyByFile(policy.extends.file);
  if (!base) return [];
  const out: Diagnostic[] = [];
  const names = { overlay: policy.name, base: base.name };

  for (const b of base.stores) {
    const o = storeOf(policy, b.name);
    if (o && o !== b) out.push(...compareStores(`store \`${b.name}\``, b, o, o.fields.retention ?? o.location, names));
  }
  for (const bk of base.kinds) {
    const ok = policy.kinds.find((k) => k.name === bk.name);
    if (!ok) continue;
    out.push(...compareKinds(bk, ok, base, policy, names));
  }
  out.push(...droppedPins("the policy-wide pins", base.pins, policy.pins, policy.fields.pins ?? policy.location, names));

  const bb = base.session.lossyBudget;
  const ob = policy.session.lossyBudget;
  if (bb !== null && (ob === null || ob > bb)) {
    out.push(
      diagnostic("PG2106", policy.session.fields.lossyBudget ?? policy.session.location, {
        ...names,
        overlayBudget: ob === null ? "unlimited" : ob,
        baseBudget: bb,
      }),
    );
  }
  return out;
};

type Names = { readonly overlay: string; readonly base: string };

function compareKinds(b: KindIR, o: KindIR, base: PolicyIR, overlay: PolicyIR, names: Names): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (b.lossy === "forbid" && o.lossy === "with-flag") {
    out.push(diagnostic("PG2101", o.fields.lossy ?? o.location, { ...names, kind: o.name, mode: o.modes[0] ?? "drop" }));
  }
  for (const mode of o.modes) {
    if (!b.modes.includes(mode)) {
      out.push(diagnostic("PG2103", o.fields.modes ?? o.location, { ...names, kind: o.name, mode, baseModes: b.modes.join(", ") || "none" }));
    }
  }
  out.push(...droppedPins(`kind \`${o.name}\``, b.pins, o.pins, o.fields.pins ?? o.location, names));

  const bs = storeOf(base, b.store);
  const os = storeOf(overlay, o.store);
  const at = o.fields.store ?? o.location;
  if (bs && o.store === null) {
    out.push(
      diagnostic("PG2105", at, {
        ...names,
        subject: `kind \`${o.name}\` has no store where ${names.base} backs it with \`${bs.name}\``,
        consequence: `a prune of \`${o.name}\` that is reversible under ${names.base} is lossy under ${names.overlay}`,
      }),
    );
  } else if (bs && os && b.store !== o.store) {
    out.push(...compareStores(`kind \`${o.name}\`'s store (\`${os.name}\`, was \`${bs.name}\`)`, bs, os, at, names));
  }
  return out;
}

function compareStores(subject: string, b: StoreIR, o: StoreIR, at: StoreIR["location"], names: Names): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (b.retentionMs !== o.retentionMs && (b.retentionMs === null || (o.retentionMs !== null && o.retentionMs < b.retentionMs))) {
    out.push(
      diagnostic("PG2102", at, {
        ...names,
        subject,
        overlayRetention: formatDuration(o.retentionMs),
        baseRetention: formatDuration(b.retentionMs),
      }),
    );
  }
  if (b.holds && !o.holds) {
    out.push(
      diagnostic("PG2105", o.fields.holds ?? at, {
        ...names,
        subject: `${subject} cannot place holds`,
        consequence: "the copy of a reversibly pruned span can rotate out before the session ends, so recall finds it lost, which the base prevents",
      }),
    );
  }
  if (b.distinguishesAbsent && !o.distinguishesAbsent) {
    out.push(
      diagnostic("PG2105", o.fields.distinguishesAbsent ?? at, {
        ...names,
        subject: `${subject} cannot distinguish absent`,
        consequence: "every prune to it becomes lossy, where the base could prune reversibly",
      }),
    );
  }
  return out;
}

function droppedPins(subject: string, base: readonly PinIR[], overlay: readonly PinIR[], at: PinIR["location"], names: Names): Diagnostic[] {
  return base
    .filter((b) => !overlay.some((o) => o.name === b.name && o.pattern === b.pattern))
    .map((b) => diagnostic("PG2104", at, { ...names, pin: b.name, subject }));
}
