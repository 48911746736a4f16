/**
 * Overlays may only tighten their base. Stated once, per kind, on the kind's fate: for every prune the
 * overlay would execute (a kind, a mode, at some age of the span), the base must execute it at least as
 * recoverably — a prune the base executes reversibly may be rejected under the overlay, never lossy. Beside
 * the fate: no lossy rule, mode or lossy budget the base does not allow, no shorter retention, no lost
 * holds, no dropped pin. Each violation is located at the overlay property that causes it and names a
 * concrete prune, computed from both fates, as its counterexample. Settings that bound what a prune costs
 * (`session.searchTokens`, `session.compaction`) are not compared: they never change a fate, so an overlay
 * may set them either way.
 */
import { formatDuration } from "../../src/policy/durations.js";
import { firstLoosening, fateOf, type Fate } from "../analysis/fate.js";
import { append, diagnostic, excerpt, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import type { KindIR, PinIR, PolicyIR, StoreIR } from "../ir/schema.js";
import { storeOf, type Check } from "./context.js";
import { meantStore } from "./references.js";

export const checkOverlay: Check = (policy, ctx) => {
  if (policy.extends === null) return [];
  const base = ctx.policyByFile(policy.extends.file);
  if (!base) return [];
  const out: Diagnostic[] = [];
  const names = { overlay: policy.name, base: base.name };

  for (const b of base.stores) {
    const o = storeOf(policy, b.name);
    if (o) append(out, compareStores(`store \`${b.name}\``, b, o, undefined, names));
    // A store the base uses and the overlay's kinds all moved away from.
    if (o && o.location.file !== policy.file && !policy.kinds.some((k) => k.store === b.name)) {
      const moved = policy.kinds.find((k) => base.kinds.some((bk) => bk.name === k.name && bk.store === b.name));
      // Not when the kind moved to a misspelling of this store: PG2001 says that, naming this store.
      const misspelt = policy.kinds.some((k) => meantStore(policy, k.store) === b.name);
      if (moved && !misspelt) out.push(diagnostic("PG3004", moved.fields.store ?? moved.location, { store: b.name }));
    }
  }
  for (const bk of base.kinds) {
    const ok = policy.kinds.find((k) => k.name === bk.name);
    if (!ok) continue;
    append(out, compareKinds(bk, ok, base, policy, names));
  }
  append(out, droppedPins("the policy-wide pins", base.pins, policy.pins, policy.fields.pins ?? policy.location, names));

  // A provider's compaction frees spans on the server: an overlay may forbid it, never allow what its base does not.
  if (policy.session.providerCompaction === "allow" && base.session.providerCompaction !== "allow") {
    out.push(diagnostic("PG2108", policy.session.fields.providerCompaction ?? policy.session.location, names));
  }
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
  // With a lossy budget of 0 no prune of the overlay can commit a loss, whatever `lossy` says.
  if (b.lossy === "forbid" && o.lossy === "with-flag" && overlay.session.lossyBudget !== 0) {
    out.push(diagnostic("PG2101", o.fields.lossy ?? o.location, { ...names, kind: o.name, mode: o.modes[0] ?? "drop" }));
  }
  // Each mode once: a list may repeat one thousands of times (PG2002 reports that).
  const baseModes = new Set(b.modes);
  for (const mode of new Set(o.modes)) {
    if (!baseModes.has(mode)) {
      out.push(diagnostic("PG2103", o.fields.modes ?? o.location, { ...names, kind: o.name, mode, baseModes: [...baseModes].join(", ") || "none" }));
    }
  }
  append(out, droppedPins(`kind \`${o.name}\``, b.pins, o.pins, o.fields.pins ?? o.location, names));

  const bs = storeOf(base, b.store);
  const os = storeOf(overlay, o.store);
  // A kind moved to another store is reported at its `store:` line, whatever the new store lacks.
  if (bs && os && b.store !== o.store) append(out, compareStores(`kind \`${o.name}\`'s store (\`${os.name}\`, was \`${bs.name}\`)`, bs, os, o.fields.store ?? o.location, names));
  append(out, fateLoosening(b, o, base, overlay, names));
  return out;
}

/**
 * PG2107: the first prune of the kind that the base executes reversibly and the overlay only as a lossy
 * commitment, reported at each overlay property that causes it on its own (a read-only store *and* a
 * longer session are two diagnostics), or at the first of them when only their combination does. A prune
 * the base never executes and the overlay executes lossily needs `lossy: "with-flag"` where the base
 * forbids it, which PG2101 reports; a shorter retention is PG2102's.
 */
function fateLoosening(b: KindIR, o: KindIR, base: PolicyIR, overlay: PolicyIR, names: Names): Diagnostic[] {
  if (overlay.session.lossyBudget === 0) return []; // no prune of the overlay can be lossy: every one it cannot back is rejected
  const bf = fateOf(b, base);
  const of = fateOf(o, overlay);
  const found = firstLoosening(bf, of, overlay.session.maxLengthMs);
  if (!found || found.was !== "reversible") return [];
  const causes = causesOf(b, o, base, overlay);
  const alone = causes.filter((c) => c.alone !== undefined && firstLoosening(bf, fateOf(c.alone.kind, c.alone.policy), c.alone.policy.session.maxLengthMs)?.was === "reversible");
  // No change loosens on its own: a shorter retention is PG2102's to report; else the combination is, at the first change.
  if (alone.length === 0 && causes.some((c) => c.alone === undefined)) return [];
  const reported = alone.length > 0 ? alone : [causes[0] ?? fallbackCause(o, overlay)];
  const mode = o.modes.find((m) => b.modes.includes(m)) ?? o.modes[0] ?? "drop";
  const when = found.ageMs === 0 ? "right after its append" : `${formatDuration(found.ageMs)} after its append`;
  const counterexample = `a \`${mode}\` of \`${o.name}\` ${when} is reversible under ${names.base} (${why(bf)}) and lossy under ${names.overlay}, executed only with accept_lossy and leaving a tombstone (${why(of)})`;
  return reported.map((c) => diagnostic("PG2107", c.at, { ...names, cause: c.what, counterexample }));
}

const why = (f: Fate): string => f.why.replace(/, and lossy is forbidden$/, "");

interface Cause {
  readonly what: string;
  readonly at: Location;
  /**
   * The base with this one change applied, to tell whether it loosens on its own; `undefined` for a
   * shorter retention, which PG2102 reports at the same property.
   */
  readonly alone: { readonly kind: KindIR; readonly policy: PolicyIR } | undefined;
}

/** The overlay's changes that can change the kind's fate, each with where it is written. */
function causesOf(b: KindIR, o: KindIR, base: PolicyIR, overlay: PolicyIR): Cause[] {
  const bs = storeOf(base, b.store);
  const os = storeOf(overlay, o.store);
  const kindAt = o.fields.store ?? o.location;
  const shorter = (x: StoreIR, y: StoreIR) => y.retentionMs !== null && (x.retentionMs === null || y.retentionMs < x.retentionMs);
  const out: Cause[] = [];
  const withStore = (store: StoreIR): PolicyIR => ({ ...base, stores: [...base.stores.filter((s) => s.name !== store.name), store] });
  if (o.store === null && bs) {
    out.push({ what: `kind \`${o.name}\` has no store where ${base.name} backs it with \`${bs.name}\``, at: kindAt, alone: { kind: { ...b, store: null }, policy: base } });
  } else if (b.store !== o.store && os) {
    const what = `it moves kind \`${o.name}\` to store \`${os.name}\`${bs ? ` (was \`${bs.name}\`)` : ""}`;
    out.push({ what, at: kindAt, alone: bs && shorter(bs, os) ? undefined : { kind: { ...b, store: os.name }, policy: withStore(os) } });
  } else if (bs && os) {
    if (bs.writable && !os.writable) {
      out.push({ what: `store \`${os.name}\` is read-only where ${base.name} declares it writable`, at: os.fields.writable ?? os.location, alone: { kind: b, policy: withStore({ ...bs, writable: false }) } });
    }
    if (bs.distinguishesAbsent && !os.distinguishesAbsent) {
      const what = `store \`${os.name}\` cannot tell "pruned" from "never existed" where ${base.name}'s can`;
      out.push({ what, at: os.fields.distinguishesAbsent ?? os.location, alone: { kind: b, policy: withStore({ ...bs, distinguishesAbsent: false }) } });
    }
    if (shorter(bs, os)) out.push({ what: `store \`${os.name}\` retains for less`, at: os.fields.retention ?? os.location, alone: undefined });
  }
  if (b.repersist && !o.repersist) out.push({ what: `it turns re-persist off for kind \`${o.name}\``, at: o.fields.repersist ?? o.location, alone: { kind: { ...b, repersist: false }, policy: base } });
  const bl = base.session.maxLengthMs;
  const ol = overlay.session.maxLengthMs;
  if (bl !== null && (ol === null || ol > bl)) {
    out.push({
      what: `it lets sessions run ${ol === null ? "without a limit" : `up to ${formatDuration(ol)}`} where ${base.name} stops them at ${formatDuration(bl)}`,
      at: overlay.session.fields.maxLength ?? overlay.session.location,
      alone: { kind: b, policy: { ...base, session: { ...base.session, maxLengthMs: ol } } },
    });
  }
  return out;
}

function fallbackCause(o: KindIR, overlay: PolicyIR): { what: string; at: Location } {
  return { what: `it changes kind \`${o.name}\``, at: o.location.file === overlay.file ? o.location : overlay.location };
}

/** A store the overlay redeclares, or a kind's new store (`at`: the kind's `store:` line), against the base's. */
function compareStores(subject: string, b: StoreIR, o: StoreIR, at: Location | undefined, names: Names): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (b.retentionMs !== o.retentionMs && (b.retentionMs === null || (o.retentionMs !== null && o.retentionMs < b.retentionMs))) {
    out.push(
      diagnostic("PG2102", at ?? o.fields.retention ?? o.location, {
        ...names,
        subject,
        overlayRetention: formatDuration(o.retentionMs),
        baseRetention: formatDuration(b.retentionMs),
      }),
    );
  }
  if (b.holds && !o.holds) out.push(diagnostic("PG2105", at ?? o.fields.holds ?? o.location, { ...names, subject }));
  return out;
}

function droppedPins(subject: string, base: readonly PinIR[], overlay: readonly PinIR[], at: PinIR["location"], names: Names): Diagnostic[] {
  // By a set, not a search of the overlay's pins for each of the base's: each list may hold thousands.
  const kept = new Set(overlay.map((o) => JSON.stringify([o.name, o.pattern])));
  return base.filter((b) => !kept.has(JSON.stringify([b.name, b.pattern]))).map((b) => diagnostic("PG2104", at, { ...names, pin: excerpt(b.name), subject }));
}
