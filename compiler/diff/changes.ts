/**
 * What differs between two versions of one policy, setting by setting: the stores (engine, retention,
 * holds, provenance, writability), the kinds (store, modes, lossy rule, re-persist, pins, compress target),
 * the session (length, lossy budget, search and compaction settings), the policy-wide pins and the
 * tombstone. Each change can be applied on its own to the old version, so the overlay rule can judge it
 * alone (`index.ts`). Nothing here decides whether a change loosens: that is the overlay rule's to say.
 */
import { formatDuration } from "../../src/policy/durations.js";
import { DEFAULT_SEARCH_TOKENS } from "../../src/policy/kinds.js";
import { PRUNE_MODES } from "../../src/types.js";
import { describeFate, fateOf } from "../analysis/fate.js";
import type { Location } from "../ir/location.js";
import type { KindIR, PinIR, PolicyIR, SessionIR, StoreIR } from "../ir/schema.js";

export type Scope = "policy" | "session" | "store" | "kind";

/** One setting that differs, with the old version that has only this change (for the overlay rule). */
export interface SettingChange {
  readonly scope: Scope;
  /** The store or kind; `null` for the policy and the session. */
  readonly name: string | null;
  /** `retention`, `modes`, `lossyBudget`…; `store` or `kind` for one added or removed. */
  readonly setting: string;
  readonly change: "added" | "removed" | "changed";
  /** The value as a reviewer reads it (`2h`, `drop, summarize`, `forbid`); `—` where there is none. */
  readonly old: string;
  readonly new: string;
  /** Where it is written: on the new side, or the old one for what was removed. */
  readonly location: Location | null;
  /** The old policy with this one change made. */
  readonly apply: (old: PolicyIR) => PolicyIR;
}

export const NONE = "—";

/** Every setting that differs between `old` and `neu`, in the order a reviewer reads a policy. */
export function settingChanges(old: PolicyIR, neu: PolicyIR): SettingChange[] {
  return [...policyChanges(old, neu), ...sessionChanges(old, neu), ...storeChanges(old, neu), ...kindChanges(old, neu)];
}

const yesNo = (b: boolean): string => (b ? "yes" : "no");
const modesText = (modes: readonly string[]): string => PRUNE_MODES.filter((m) => modes.includes(m)).join(", ") || "none";
const sameModes = (a: readonly string[], b: readonly string[]): boolean => modesText(a) === modesText(b);
const pinKey = (p: PinIR): string => `${p.name}\u0000${p.pattern}`;
const samePins = (a: readonly PinIR[], b: readonly PinIR[]): boolean => [...a.map(pinKey)].sort().join("\n") === [...b.map(pinKey)].sort().join("\n");

/** Pins by name; a pin whose pattern differs on the other side also shows its pattern. */
function pinsText(pins: readonly PinIR[], other: readonly PinIR[]): string {
  if (pins.length === 0) return "none";
  // The other side's patterns by name, not a search of its pins for each pin: each list may hold thousands.
  const patterns = new Map<string, Set<string>>();
  for (const o of other) {
    let known = patterns.get(o.name);
    if (!known) patterns.set(o.name, (known = new Set()));
    known.add(o.pattern);
  }
  const differs = (p: PinIR) => {
    const known = patterns.get(p.name);
    return known !== undefined && (known.size > 1 || !known.has(p.pattern));
  };
  return pins.map((p) => (differs(p) ? `${p.name} /${p.pattern}/` : p.name)).join(", ");
}

export function compactionText(c: SessionIR["compaction"]): string {
  if (c === null) return "default";
  if (c === "immediate") return "immediate";
  const n = (x: number) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${n(c.minFreedTokens)} freed${c.atTokens === null ? "" : ` or ${n(c.atTokens)} rendered`}`;
}

function change(
  scope: Scope,
  name: string | null,
  setting: string,
  old: string,
  neu: string,
  location: Location | null,
  apply: (old: PolicyIR) => PolicyIR,
  kind: SettingChange["change"] = "changed",
): SettingChange {
  return { scope, name, setting, change: kind, old, new: neu, location, apply };
}

function policyChanges(old: PolicyIR, neu: PolicyIR): SettingChange[] {
  const out: SettingChange[] = [];
  if (old.name !== neu.name) out.push(change("policy", null, "name", old.name, neu.name, neu.fields.name ?? neu.location, (p) => p));
  if ((old.extends?.name ?? null) !== (neu.extends?.name ?? null)) {
    // The effective policy is what prunes obey; what a base contributes shows as the settings it changes.
    out.push(change("policy", null, "extends", old.extends?.name ?? "none", neu.extends?.name ?? "none", neu.location, (p) => p));
  }
  if (!samePins(old.pins, neu.pins)) {
    out.push(change("policy", null, "pins", pinsText(old.pins, neu.pins), pinsText(neu.pins, old.pins), neu.fields.pins ?? neu.location, (p) => ({ ...p, pins: neu.pins })));
  }
  if ((old.tombstone?.text ?? null) !== (neu.tombstone?.text ?? null)) {
    const text = (t: PolicyIR["tombstone"]) => (t === null ? "runtime default" : JSON.stringify(t.text));
    out.push(change("policy", null, "tombstone", text(old.tombstone), text(neu.tombstone), neu.tombstone?.location ?? neu.location, (p) => ({ ...p, tombstone: neu.tombstone })));
  }
  return out;
}

function sessionChanges(old: PolicyIR, neu: PolicyIR): SettingChange[] {
  const o = old.session;
  const n = neu.session;
  const at = (field: keyof SessionIR["fields"]) => n.fields[field] ?? n.location;
  const withSession = (patch: Partial<SessionIR>) => (p: PolicyIR): PolicyIR => ({ ...p, session: { ...p.session, ...patch } });
  const out: SettingChange[] = [];
  const length = (ms: number | null) => (ms === null ? "unlimited" : formatDuration(ms));
  if (o.maxLengthMs !== n.maxLengthMs) out.push(change("session", null, "maxLength", length(o.maxLengthMs), length(n.maxLengthMs), at("maxLength"), withSession({ maxLengthMs: n.maxLengthMs })));
  const budget = (b: number | null) => (b === null ? "unlimited" : String(b));
  if (o.lossyBudget !== n.lossyBudget) out.push(change("session", null, "lossyBudget", budget(o.lossyBudget), budget(n.lossyBudget), at("lossyBudget"), withSession({ lossyBudget: n.lossyBudget })));
  const search = (t: number | null) => (t === null ? `default (${DEFAULT_SEARCH_TOKENS})` : String(t));
  if (o.searchTokens !== n.searchTokens) out.push(change("session", null, "searchTokens", search(o.searchTokens), search(n.searchTokens), at("searchTokens"), withSession({ searchTokens: n.searchTokens })));
  const provider = (r: "forbid" | "allow" | null) => (r === null ? "forbid (default)" : r);
  if (provider(o.providerCompaction) !== provider(n.providerCompaction)) {
    out.push(change("session", null, "providerCompaction", provider(o.providerCompaction), provider(n.providerCompaction), at("providerCompaction"), withSession({ providerCompaction: n.providerCompaction })));
  }
  if (compactionText(o.compaction) !== compactionText(n.compaction)) {
    out.push(change("session", null, "compaction", compactionText(o.compaction), compactionText(n.compaction), at("compaction"), withSession({ compaction: n.compaction })));
  }
  return out;
}

const STORE_SETTINGS = [
  { setting: "engine", field: "engine", text: (s: StoreIR) => s.engine },
  { setting: "retention", field: "retention", text: (s: StoreIR) => formatDuration(s.retentionMs) },
  { setting: "holds", field: "holds", text: (s: StoreIR) => yesNo(s.holds) },
  { setting: "distinguishesAbsent", field: "distinguishesAbsent", text: (s: StoreIR) => yesNo(s.distinguishesAbsent) },
  { setting: "writable", field: "writable", text: (s: StoreIR) => yesNo(s.writable) },
] as const;

function storeChanges(old: PolicyIR, neu: PolicyIR): SettingChange[] {
  const out: SettingChange[] = [];
  for (const name of union(old.stores, neu.stores)) {
    const o = old.stores.find((s) => s.name === name);
    const n = neu.stores.find((s) => s.name === name);
    if (!o && n) {
      out.push(change("store", name, "store", NONE, describeStoreShort(n), n.location, (p) => ({ ...p, stores: [...p.stores, n] }), "added"));
    } else if (o && !n) {
      // A store only matters through the kinds it backs; each kind that moved away is a change of its own.
      out.push(change("store", name, "store", describeStoreShort(o), NONE, o.location, (p) => p, "removed"));
    } else if (o && n) {
      for (const s of STORE_SETTINGS) {
        if (s.text(o) === s.text(n)) continue;
        const patch: Partial<StoreIR> =
          s.field === "retention" ? { retentionMs: n.retentionMs } : s.field === "engine" ? { engine: n.engine } : { [s.field]: n[s.field] };
        out.push(change("store", name, s.setting, s.text(o), s.text(n), n.fields[s.field] ?? n.location, (p) => ({ ...p, stores: p.stores.map((x) => (x.name === name ? { ...x, ...patch } : x)) })));
      }
    }
  }
  return out;
}

function kindChanges(old: PolicyIR, neu: PolicyIR): SettingChange[] {
  const out: SettingChange[] = [];
  for (const name of union(old.kinds, neu.kinds)) {
    const o = old.kinds.find((k) => k.name === name);
    const n = neu.kinds.find((k) => k.name === name);
    if (!o && n) {
      out.push(change("kind", name, "kind", NONE, `${describeKindShort(n)}; ${describeFate(fateOf(n, neu))}`, n.location, (p) => withStoreOf(neu, n.store, { ...p, kinds: [...p.kinds, n] }), "added"));
      continue;
    }
    if (o && !n) {
      out.push(change("kind", name, "kind", `${describeKindShort(o)}; ${describeFate(fateOf(o, old))}`, NONE, o.location, (p) => ({ ...p, kinds: p.kinds.filter((k) => k.name !== name) }), "removed"));
      continue;
    }
    if (!o || !n) continue;
    const at = (field: keyof KindIR["fields"]) => n.fields[field] ?? n.location;
    const patch = (fields: Partial<KindIR>) => (p: PolicyIR): PolicyIR => ({ ...p, kinds: p.kinds.map((k) => (k.name === name ? { ...k, ...fields } : k)) });
    if (o.store !== n.store) {
      out.push(change("kind", name, "store", o.store ?? "none", n.store ?? "none", at("store"), (p) => withStoreOf(neu, n.store, patch({ store: n.store })(p))));
    }
    if (!sameModes(o.modes, n.modes)) out.push(change("kind", name, "modes", modesText(o.modes), modesText(n.modes), at("modes"), patch({ modes: n.modes })));
    if (o.lossy !== n.lossy) out.push(change("kind", name, "lossy", o.lossy, n.lossy, at("lossy"), patch({ lossy: n.lossy })));
    if (o.repersist !== n.repersist) out.push(change("kind", name, "repersist", yesNo(o.repersist), yesNo(n.repersist), at("repersist"), patch({ repersist: n.repersist })));
    if (!samePins(o.pins, n.pins)) out.push(change("kind", name, "pins", pinsText(o.pins, n.pins), pinsText(n.pins, o.pins), at("pins"), patch({ pins: n.pins })));
    if (o.compressTargetTokens !== n.compressTargetTokens) {
      const target = (t: number | null) => (t === null ? "default" : `${t} tokens`);
      out.push(change("kind", name, "compressTargetTokens", target(o.compressTargetTokens), target(n.compressTargetTokens), at("compressTargetTokens"), patch({ compressTargetTokens: n.compressTargetTokens })));
    }
  }
  return out;
}

/** `p` with `neu`'s declaration of store `name` when `p` has none by that name (a kind moved to a new store). */
function withStoreOf(neu: PolicyIR, name: string | null, p: PolicyIR): PolicyIR {
  const s = name === null ? undefined : neu.stores.find((x) => x.name === name);
  return s && !p.stores.some((x) => x.name === s.name) ? { ...p, stores: [...p.stores, s] } : p;
}

/** Names on either side: the old side's order, then what the new side adds. */
function union(a: readonly { readonly name: string }[], b: readonly { readonly name: string }[]): string[] {
  return [...new Set([...a.map((x) => x.name), ...b.map((x) => x.name)])];
}

function describeStoreShort(s: StoreIR): string {
  return `${s.engine}, retention ${formatDuration(s.retentionMs)}${s.holds ? "" : ", no holds"}${s.distinguishesAbsent ? "" : ", cannot distinguish absent"}${s.writable ? "" : ", read-only"}`;
}

function describeKindShort(k: KindIR): string {
  return `store ${k.store ?? "none"}; ${modesText(k.modes)}; lossy ${k.lossy}${k.repersist ? "; re-persists" : ""}`;
}
