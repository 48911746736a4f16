/**
 * Which old policy and kind each new one replaces, so a rename cannot walk a loosening past the
 * comparison. A policy or kind is paired with its old version by, in order: a rename the change states
 * (`--rename org=acme`, `--rename org.userTurn=acme.turn`), the same name, the two single files given,
 * or what it backs — a policy sharing a store or kind name with exactly one unpaired policy on the other
 * side, a kind whose store (as declared: engine, retention, holds, provenance, writability) and modes
 * match exactly one unpaired kind on the other side, and that one's only match too. The lossy rule is
 * never part of the match: it is what a loosening changes.
 *
 * What is left unpaired is judged fail-closed (`unpairedLoosenings`): an added kind that permits a lossy
 * commitment some removed kind refused may be its replacement, and counts as a loosening.
 */
import { formatDuration } from "../../src/policy/durations.js";
import { PRUNE_MODES, type PruneMode } from "../../src/types.js";
import { Identifier, PolicyName, type KindIR, type PolicyIR, type StoreIR } from "../ir/schema.js";

/** A rename the change states: a policy (`kind: null`) or a kind of a policy, old name → new name. */
export interface Rename {
  readonly old: { readonly policy: string; readonly kind: string | null };
  /** `policy: null`: the kind stays in the policy the old one is paired with (`org.userTurn=turn`). */
  readonly new: { readonly policy: string | null; readonly kind: string | null };
}

/** A rename that cannot be parsed, or names what is not there: a usage error, never ignored. */
export class RenameError extends Error {
  override readonly name = "RenameError";
}

/** How a pair was made: a stated rename, the same name, the two single files compared, or what they back. */
export type PairedBy = "rename" | "name" | "single" | "backing";

const MAX_SHOWN = 60;
/** A name as an error shows it: it comes from a command line, so bounded and with control characters escaped. */
const shown = (s: string): string => JSON.stringify(s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN - 1)}…` : s);

/** `org=acme`, `org.userTurn=acme.turn`, or `org.userTurn=turn` (the kind stays in org's counterpart). */
export function parseRename(text: string): Rename {
  const usage = `expected old=new, a policy (org=acme) or a kind (org.userTurn=acme.turn, or org.userTurn=turn), got ${shown(text)}`;
  const parts = text.split("=");
  if (parts.length !== 2) throw new RenameError(`--rename: ${usage}`);
  const [left, right] = parts as [string, string];
  const side = (s: string): { policy: string | null; kind: string | null } | undefined => {
    const dot = s.split(".");
    if (dot.length === 1) return PolicyName.safeParse(s).success ? { policy: s, kind: null } : Identifier.safeParse(s).success ? { policy: null, kind: s } : undefined;
    if (dot.length === 2 && PolicyName.safeParse(dot[0]).success && Identifier.safeParse(dot[1]).success) return { policy: dot[0]!, kind: dot[1]! };
    return undefined;
  };
  const o = side(left);
  const n = side(right);
  if (!o || !n || o.policy === null) throw new RenameError(`--rename: ${usage}`);
  // `org=acme` is a policy; a kind name on the right needs a kind on the left, and `a.b=c` reads c as a kind.
  if (o.kind === null) {
    if (n.kind !== null && n.policy !== null) throw new RenameError(`--rename: a policy is renamed to a policy, got ${shown(text)}`);
    const name = n.policy ?? n.kind!;
    if (!PolicyName.safeParse(name).success) throw new RenameError(`--rename: ${shown(name)} is not a policy name (lower-case words separated by '-')`);
    return { old: { policy: o.policy, kind: null }, new: { policy: name, kind: null } };
  }
  return { old: { policy: o.policy, kind: o.kind }, new: n.kind === null ? { policy: null, kind: n.policy } : { policy: n.policy, kind: n.kind } };
}

/** A new policy and the old one it replaces. */
export interface PolicyPair {
  readonly old: PolicyIR;
  readonly new: PolicyIR;
  readonly by: PairedBy;
  /** Why, to follow "paired by": `--rename org=acme`, `what they back: both declare store toolLog`… */
  readonly because: string;
}

/** A new kind and the old one it replaces (in paired policies, or moved between policies). */
export interface KindPair {
  readonly oldPolicy: PolicyIR;
  readonly old: KindIR;
  readonly newPolicy: PolicyIR;
  readonly new: KindIR;
  readonly by: PairedBy;
  readonly because: string;
}

/** A kind no pair claims, with its policy. */
export interface LoneKind {
  readonly policy: PolicyIR;
  readonly kind: KindIR;
}

export interface Pairing {
  readonly policies: readonly PolicyPair[];
  readonly addedPolicies: readonly PolicyIR[];
  readonly removedPolicies: readonly PolicyIR[];
  /** Kind pairs inside each policy pair whose names differ (a pair by name needs no entry). */
  readonly kindRenames: readonly KindPair[];
  /** Kinds paired across policies that are not a pair (a stated rename, or one name on each side). */
  readonly moves: readonly KindPair[];
  readonly addedKinds: readonly LoneKind[];
  readonly removedKinds: readonly LoneKind[];
}

const storeText = (s: StoreIR | undefined): string =>
  s === undefined ? "no store" : `${s.engine}, retention ${formatDuration(s.retentionMs)}${s.holds ? "" : ", no holds"}${s.distinguishesAbsent ? "" : ", cannot distinguish absent"}${s.writable ? "" : ", read-only"}`;
const modesOf = (k: KindIR): string => PRUNE_MODES.filter((m) => k.modes.includes(m)).join(", ") || "no modes";
const storeOf = (p: PolicyIR, k: KindIR): StoreIR | undefined => (k.store === null ? undefined : p.stores.find((s) => s.name === k.store));

/** What a kind backs, as the match reads it: its store as declared (not its name, which a rename may change) and its modes. */
export function backing(p: PolicyIR, k: KindIR): string {
  return `${storeText(storeOf(p, k))}; ${modesOf(k)}`;
}

/**
 * The pairs `renames` states and the names and backings imply. A stated rename must name a policy or kind
 * the old side has and the new side lacks, and one the new side has and the old side lacks; each name in at
 * most one rename. Anything else is a `RenameError`.
 */
export function pairPolicies(old: readonly PolicyIR[], neu: readonly PolicyIR[], renames: readonly Rename[], pairSingle: boolean): Pairing {
  const oldByName = new Map(old.map((p) => [p.name, p]));
  const newByName = new Map(neu.map((p) => [p.name, p]));
  const policies: PolicyPair[] = [];
  const usedOld = new Set<PolicyIR>();
  const usedNew = new Set<PolicyIR>();
  const pair = (o: PolicyIR, n: PolicyIR, by: PairedBy, because: string) => {
    policies.push({ old: o, new: n, by, because });
    usedOld.add(o);
    usedNew.add(n);
  };

  for (const r of renames.filter((x) => x.old.kind === null)) {
    const o = oldByName.get(r.old.policy);
    const n = newByName.get(r.new.policy!);
    const text = `--rename ${r.old.policy}=${r.new.policy}`;
    if (!o) throw new RenameError(`${text}: the old side has no policy ${shown(r.old.policy)}`);
    if (!n) throw new RenameError(`${text}: the new side has no policy ${shown(r.new.policy!)}`);
    if (r.old.policy !== r.new.policy && newByName.has(r.old.policy)) throw new RenameError(`${text}: the new side still has policy ${shown(r.old.policy)}, so it is not renamed`);
    if (r.old.policy !== r.new.policy && oldByName.has(r.new.policy!)) throw new RenameError(`${text}: the old side already has policy ${shown(r.new.policy!)}`);
    if (usedOld.has(o) || usedNew.has(n)) throw new RenameError(`${text}: policy ${shown(usedOld.has(o) ? o.name : n.name)} is in another --rename too`);
    pair(o, n, "rename", text);
  }
  if (pairSingle && old.length === 1 && neu.length === 1 && policies.length === 0) {
    pair(old[0]!, neu[0]!, old[0]!.name === neu[0]!.name ? "name" : "single", "the two files given");
  }
  for (const n of neu) {
    const o = oldByName.get(n.name);
    if (o && !usedOld.has(o) && !usedNew.has(n)) pair(o, n, "name", "name");
  }
  // By what they back: a policy renamed keeps some of its stores and kinds; one unpaired candidate each way, or none.
  const shares = (o: PolicyIR, n: PolicyIR): string[] => [
    ...o.stores.filter((s) => n.stores.some((t) => t.name === s.name && storeText(t) === storeText(s))).map((s) => `store ${s.name}`),
    ...o.kinds.filter((k) => n.kinds.some((t) => t.name === k.name)).map((k) => `kind ${k.name}`),
  ];
  const freeOld = old.filter((p) => !usedOld.has(p));
  const freeNew = neu.filter((p) => !usedNew.has(p));
  for (const o of freeOld) {
    const candidates = freeNew.filter((n) => shares(o, n).length > 0);
    if (candidates.length !== 1) continue;
    const n = candidates[0]!;
    if (freeOld.filter((x) => shares(x, n).length > 0).length !== 1) continue;
    const shared = shares(o, n);
    pair(o, n, "backing", `what they back: both declare ${shared.slice(0, 3).join(", ")}${shared.length > 3 ? ` and ${shared.length - 3} more` : ""}`);
  }

  const kindRenames: KindPair[] = [];
  const moves: KindPair[] = [];
  const lonelyOld: LoneKind[] = old.filter((p) => !usedOld.has(p)).flatMap((p) => p.kinds.map((kind) => ({ policy: p, kind })));
  const lonelyNew: LoneKind[] = neu.filter((p) => !usedNew.has(p)).flatMap((p) => p.kinds.map((kind) => ({ policy: p, kind })));
  const partnerOf = (oldPolicy: string) => policies.find((p) => p.old.name === oldPolicy)?.new.name;
  const kindRenamesStated = renames.filter((x) => x.old.kind !== null).map((r) => ({ r, newPolicy: r.new.policy ?? partnerOf(r.old.policy) }));
  const claimedOld = new Set<string>();
  const claimedNew = new Set<string>();
  const key = (p: string, k: string) => `${p}.${k}`;

  for (const { r, newPolicy } of kindRenamesStated) {
    const text = `--rename ${r.old.policy}.${r.old.kind}=${r.new.policy === null ? "" : `${r.new.policy}.`}${r.new.kind}`;
    const op = oldByName.get(r.old.policy);
    if (!op) throw new RenameError(`${text}: the old side has no policy ${shown(r.old.policy)}`);
    if (newPolicy === undefined) throw new RenameError(`${text}: policy ${shown(r.old.policy)} is paired with none on the new side; name the new kind's policy (${r.old.policy}.${r.old.kind}=<policy>.${r.new.kind})`);
    const np = newByName.get(newPolicy);
    if (!np) throw new RenameError(`${text}: the new side has no policy ${shown(newPolicy)}`);
    const ok = op.kinds.find((k) => k.name === r.old.kind);
    const nk = np.kinds.find((k) => k.name === r.new.kind);
    if (!ok) throw new RenameError(`${text}: policy ${op.name} on the old side has no kind ${shown(r.old.kind!)}`);
    if (!nk) throw new RenameError(`${text}: policy ${np.name} on the new side has no kind ${shown(r.new.kind!)}`);
    const counterpart = policies.find((p) => p.old === op)?.new;
    if (counterpart?.kinds.some((k) => k.name === ok.name) && !(counterpart === np && ok.name === nk.name)) {
      throw new RenameError(`${text}: policy ${counterpart.name} on the new side still has kind ${ok.name}, so it is not renamed`);
    }
    const origin = policies.find((p) => p.new === np)?.old;
    if (origin?.kinds.some((k) => k.name === nk.name) && !(origin === op && ok.name === nk.name)) throw new RenameError(`${text}: policy ${origin.name} on the old side already has kind ${nk.name}`);
    if (claimedOld.has(key(op.name, ok.name)) || claimedNew.has(key(np.name, nk.name))) throw new RenameError(`${text}: that kind is in another --rename too`);
    claimedOld.add(key(op.name, ok.name));
    claimedNew.add(key(np.name, nk.name));
    const kp: KindPair = { oldPolicy: op, old: ok, newPolicy: np, new: nk, by: "rename", because: text };
    if (counterpart === np) kindRenames.push(kp);
    else moves.push(kp);
  }

  for (const { old: o, new: n } of policies) {
    const freeO = o.kinds.filter((k) => !claimedOld.has(key(o.name, k.name)) && !n.kinds.some((x) => x.name === k.name));
    const freeN = n.kinds.filter((k) => !claimedNew.has(key(n.name, k.name)) && !o.kinds.some((x) => x.name === k.name));
    for (const k of o.kinds) {
      if (!n.kinds.some((x) => x.name === k.name)) continue;
      claimedOld.add(key(o.name, k.name));
      claimedNew.add(key(n.name, k.name));
    }
    for (const ok of freeO) {
      const b = backing(o, ok);
      const matches = freeN.filter((k) => backing(n, k) === b);
      if (matches.length !== 1 || freeO.filter((k) => backing(o, k) === b).length !== 1) continue;
      const nk = matches[0]!;
      claimedOld.add(key(o.name, ok.name));
      claimedNew.add(key(n.name, nk.name));
      kindRenames.push({ oldPolicy: o, old: ok, newPolicy: n, new: nk, by: "backing", because: `what they back: the same store and modes (${b})` });
    }
    for (const k of freeO) if (!claimedOld.has(key(o.name, k.name))) lonelyOld.push({ policy: o, kind: k });
    for (const k of freeN) if (!claimedNew.has(key(n.name, k.name))) lonelyNew.push({ policy: n, kind: k });
  }

  // Kinds of policies no pair claims: a stated move was taken above; one name on each side is a kind moved.
  const oldLeft = lonelyOld.filter((l) => !claimedOld.has(key(l.policy.name, l.kind.name)));
  const newLeft = lonelyNew.filter((l) => !claimedNew.has(key(l.policy.name, l.kind.name)));
  const removedKinds: LoneKind[] = [];
  for (const l of oldLeft) {
    const same = newLeft.filter((x) => x.kind.name === l.kind.name);
    if (same.length === 1 && oldLeft.filter((x) => x.kind.name === l.kind.name).length === 1) {
      const m = same[0]!;
      claimedNew.add(key(m.policy.name, m.kind.name));
      moves.push({ oldPolicy: l.policy, old: l.kind, newPolicy: m.policy, new: m.kind, by: "name", because: "its name, in another policy" });
    } else removedKinds.push(l);
  }
  const addedKinds = newLeft.filter((l) => !claimedNew.has(key(l.policy.name, l.kind.name)));
  return {
    policies,
    addedPolicies: neu.filter((p) => !usedNew.has(p)),
    removedPolicies: old.filter((p) => !usedOld.has(p)),
    kindRenames,
    moves,
    addedKinds,
    removedKinds,
  };
}

/** Whether a prune of kind `k` of policy `p` in `mode` may commit a loss: the mode allowed, lossy with the flag, and a lossy budget above 0. */
export function permitsLossy(p: PolicyIR, k: KindIR, mode: PruneMode): boolean {
  return k.modes.includes(mode) && k.lossy === "with-flag" && p.session.lossyBudget !== 0;
}

/** Why kind `k` refuses a lossy commitment in `mode`, or `undefined` when it permits one. */
export function refusal(p: PolicyIR, k: KindIR, mode: PruneMode): string | undefined {
  if (!k.modes.includes(mode)) return `it has no ${mode}`;
  if (k.lossy === "forbid") return "lossy forbid";
  if (p.session.lossyBudget === 0) return "lossy budget 0";
  return undefined;
}
