/**
 * Two versions of a policy set compared for review (`pruneguard diff`, the HTML `explain` of an overlay,
 * `expectNoLooserThan` in policy tests): per policy and kind, what changed and what it does to each kind's
 * fate over the session, each change marked loosening, tightening or neutral.
 *
 * The marking is the overlay rule's, not a second copy of it (`checks/overlay.ts`): the old version with
 * one change made is checked as an overlay of the old version. A change the rule refuses loosens; a
 * change whose reverse it refuses tightens; one it allows both ways is neutral (it changes no prune's
 * fate, as `searchTokens` and `compaction` never do). The whole new version is checked too, so a loosening
 * only the changes together make is reported, with the rule's own counterexample.
 *
 * A set of policies is compared pair by pair, each new policy and kind with the old one it replaces
 * (`pairing.ts`), so a rename, a moved file or a kind moved between policies is compared, not read as one
 * removal and one addition; what nothing pairs for certain is held to the fail-closed rule there.
 */
import { checkOverlay } from "../checks/overlay.js";
import { isError, type Diagnostic } from "../diagnostics/diagnostic.js";
import { loosens } from "../analysis/fate.js";
import { segmentAt, timelineOf, type Phase } from "../analysis/timeline.js";
import type { Location } from "../ir/location.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";
import { PRUNE_MODES, type PruneMode } from "../../src/types.js";
import { settingChanges, type Scope, type SettingChange } from "./changes.js";
import { pairPolicies, permitsLossy, refusal, type KindPair, type PairedBy, type PolicyPair, type Rename } from "./pairing.js";

export { compactionText, NONE, settingChanges, type Scope, type SettingChange } from "./changes.js";
export { parseRename, RenameError, type PairedBy, type Rename } from "./pairing.js";

export type Direction = "loosening" | "tightening" | "neutral";

/** What the old and new versions are called in messages: `old`/`new`, or a git revision. */
export interface Labels {
  readonly old: string;
  readonly new: string;
}

/** A rule of the overlay check, as it judged a change: its code, and its message from "but" on. */
export interface RuleFinding {
  readonly code: string;
  readonly message: string;
}

export interface JudgedChange {
  readonly scope: Scope;
  readonly name: string | null;
  readonly setting: string;
  readonly change: SettingChange["change"];
  readonly old: string;
  readonly new: string;
  readonly location: Location | null;
  readonly direction: Direction;
  /**
   * Loosening: what the overlay rule refuses in it (with its counterexample); tightening: what it would
   * refuse in going back; neutral: empty.
   */
  readonly rules: readonly RuleFinding[];
}

/** An age range of a kind's spans over which a prune's fate differs between the versions. */
export interface FateChange {
  readonly kind: string;
  readonly fromMs: number;
  /** `null`: on to the end of a session with no maximum length. */
  readonly toMs: number | null;
  readonly old: Phase;
  readonly new: Phase;
  readonly direction: Direction;
  /** The version whose sessions end before this range begins, if one does (its fate there is what the rule compares). */
  readonly pastSessionOf: "old" | "new" | null;
}

/** A kind paired with an old one of another name: what pairs them, for the reviewer. */
export interface KindRename {
  readonly old: string;
  readonly new: string;
  readonly by: PairedBy;
  readonly because: string;
}

export interface PolicyDiff {
  /** The new version's name, or the old one's when it was removed. */
  readonly name: string;
  /** The old version's name when the two are paired (it differs for a policy renamed), else `null`. */
  readonly oldName: string | null;
  /** How the two versions were paired; `null` for a policy added or removed. */
  readonly pairedBy: PairedBy | null;
  readonly because: string | null;
  /** Kinds compared under another name (their settings are compared as one kind's; the name is a change of its own). */
  readonly renames: readonly KindRename[];
  readonly status: "added" | "removed" | "changed" | "unchanged";
  readonly oldFile: string | null;
  readonly newFile: string | null;
  readonly changes: readonly JudgedChange[];
  readonly fates: readonly FateChange[];
  /** What the overlay rule refuses in the new version as a whole that no single change shows. */
  readonly findings: readonly RuleFinding[];
  readonly loosens: boolean;
  readonly tightens: boolean;
}

/** A kind paired across policies that are not one pair: moved from one policy to another, judged by the overlay rule. */
export interface KindMove {
  readonly old: { readonly policy: string; readonly kind: string; readonly file: string };
  readonly new: { readonly policy: string; readonly kind: string; readonly file: string };
  readonly by: PairedBy;
  readonly because: string;
  readonly direction: Direction;
  readonly rules: readonly RuleFinding[];
}

/**
 * A kind nothing pairs with an old one for certain (added, or paired only by what it backs) that permits a
 * lossy commitment some removed kind refused. It may be that kind under a new name, so it counts as
 * loosening (fail closed) until a stated rename says which kind it replaces.
 */
export interface UnpairedLoosening {
  readonly policy: string;
  readonly kind: string;
  readonly file: string;
  /** The old kind it was paired with by what it backs (a guess), if any; `null` for a kind nothing paired. */
  readonly pairedWith: { readonly policy: string; readonly kind: string } | null;
  /** The modes in which it permits a lossy commitment some removed kind refused. */
  readonly modes: readonly PruneMode[];
  /** Every removed kind that refused one of them, with the modes and why. */
  readonly refusedBy: readonly { readonly policy: string; readonly kind: string; readonly modes: readonly PruneMode[]; readonly why: string }[];
  /** The finding in one bounded sentence: at most three removed kinds named, the rest counted. */
  readonly message: string;
}

export interface PolicySetDiff {
  readonly labels: Labels;
  readonly policies: readonly PolicyDiff[];
  readonly moves: readonly KindMove[];
  readonly unpaired: readonly UnpairedLoosening[];
  readonly loosens: boolean;
}

export const DEFAULT_LABELS: Labels = { old: "old", new: "new" };

export interface DiffSetOptions {
  /** Compare one policy on each side whatever their names (two files given on the command line). */
  readonly pairSingle?: boolean;
  /** Renames the change states (`parseRename`); one naming what is not there throws `RenameError`. */
  readonly renames?: readonly Rename[];
}

/**
 * Compares two policy sets. Each new policy and kind is paired with the old one it replaces (`pairing.ts`:
 * a stated rename, the same name, the two single files, or what it backs) and compared with it setting by
 * setting, under the overlay rule, whatever its name; a kind moved to another policy is judged by the rule
 * too. What nothing pairs is added or removed, and an added kind that permits a lossy commitment a removed
 * kind refused counts as loosening: a rename must not be a way past the comparison.
 */
export function diffPolicySets(old: readonly PolicyIR[], neu: readonly PolicyIR[], labels: Labels = DEFAULT_LABELS, options: DiffSetOptions = {}): PolicySetDiff {
  const pairing = pairPolicies(old, neu, options.renames ?? [], options.pairSingle === true);
  const policies: PolicyDiff[] = [
    ...pairing.policies.map((pp) => diffPair(pp, pairing.kindRenames.filter((k) => k.newPolicy === pp.new), labels)),
    ...pairing.addedPolicies.map(added),
    ...pairing.removedPolicies.map(removed),
  ];
  policies.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const moves = pairing.moves.map((m) => judgeMove(m, labels));
  // A pair by what it backs, or by a kind's name in another policy, is a guess: either side of it may
  // belong with a kind nothing paired. So the fail-closed rule reads guessed pairs as added and removed
  // too, sparing only the guess itself (which the overlay rule has judged); stated renames and a kind's
  // own name in its own policy are taken as given.
  const guessed = [...pairing.kindRenames, ...pairing.moves].filter((k) => k.by !== "rename");
  const addedSide = [...pairing.addedKinds.map((l) => ({ ...l, partner: undefined as KindIR | undefined })), ...guessed.map((g) => ({ policy: g.newPolicy, kind: g.new, partner: g.old }))];
  const removedSide = [...pairing.removedKinds, ...guessed.map((g) => ({ policy: g.oldPolicy, kind: g.old }))];
  const unpaired = addedSide.flatMap(({ policy, kind, partner }): UnpairedLoosening[] => {
    const refusedBy = removedSide.flatMap((r) => {
      if (r.kind === partner) return [];
      const modes = PRUNE_MODES.filter((m) => permitsLossy(policy, kind, m) && refusal(r.policy, r.kind, m) !== undefined);
      const why = [...new Set(modes.map((m) => refusal(r.policy, r.kind, m)!))].join("; ");
      return modes.length > 0 ? [{ policy: r.policy.name, kind: r.kind.name, modes, why }] : [];
    });
    if (refusedBy.length === 0) return [];
    const modes = PRUNE_MODES.filter((m) => refusedBy.some((r) => r.modes.includes(m)));
    const named = refusedBy.slice(0, 3).map((r) => `\`${r.policy}.${r.kind}\` (${r.why})`);
    const more = refusedBy.length > 3 ? ` and ${refusedBy.length - 3} more` : "";
    const partnerPolicy = guessed.find((g) => g.new === kind)?.oldPolicy.name;
    const what = partner === undefined ? "added kind" : `kind (paired with \`${partnerPolicy}.${partner.name}\` only by what it backs)`;
    const message =
      `${what} \`${policy.name}.${kind.name}\` permits a lossy commitment (${modes.join(", ")} with accept_lossy) that removed ${refusedBy.length === 1 ? "kind" : "kinds"} ${named.join(", ")}${more} refused; ` +
      "no stated rename or name pairs them, so it may replace one and counts as loosening (fail closed)";
    return [{ policy: policy.name, kind: kind.name, file: policy.file, pairedWith: partner === undefined ? null : { policy: partnerPolicy!, kind: partner.name }, modes, refusedBy, message }];
  });
  const loosens = policies.some((p) => p.loosens) || moves.some((m) => m.direction === "loosening") || unpaired.length > 0;
  return { labels, policies, moves, unpaired, loosens };
}

/** Two paired versions: the old one with its paired kinds under their new names, compared as `diffPolicy` does, each rename a change of its own. */
function diffPair(pp: PolicyPair, renames: readonly KindPair[], labels: Labels): PolicyDiff {
  const newName = new Map(renames.map((r) => [r.old.name, r.new.name]));
  const old: PolicyIR = { ...pp.old, kinds: pp.old.kinds.map((k) => (newName.has(k.name) ? { ...k, name: newName.get(k.name)! } : k)) };
  const d = diffPolicy(old, pp.new, labels);
  const renamed = renames.map((r): JudgedChange => ({ scope: "kind", name: r.new.name, setting: "name", change: "changed", old: r.old.name, new: r.new.name, location: r.new.fields.store ?? r.new.location, direction: "neutral", rules: [] }));
  const firstKind = d.changes.findIndex((c) => c.scope === "kind");
  const changes = firstKind < 0 ? [...d.changes, ...renamed] : [...d.changes.slice(0, firstKind), ...renamed, ...d.changes.slice(firstKind)];
  return {
    ...d,
    oldName: pp.old.name,
    pairedBy: pp.by,
    because: pp.because,
    renames: renames.map((r) => ({ old: r.old.name, new: r.new.name, by: r.by, because: r.because })),
    changes,
    status: changes.length === 0 && d.fates.length === 0 ? "unchanged" : "changed",
    oldFile: pp.old.file,
  };
}

/**
 * A kind moved between policies, by the overlay rule: each side cut down to the kind and its store (under
 * the new kind's name), so the rule compares the kind, its store, its session and the pins it inherits.
 */
function judgeMove(m: KindPair, labels: Labels): KindMove {
  const only = (p: PolicyIR, k: KindIR): PolicyIR => ({ ...p, kinds: [k], stores: p.stores.filter((s) => s.name === k.store) });
  const old = only(m.oldPolicy, { ...m.old, name: m.new.name });
  const neu = only(m.newPolicy, m.new);
  const forward = overlayErrors(old, neu, labels);
  const reverse = forward.length > 0 ? [] : overlayErrors(neu, old, { old: labels.new, new: labels.old });
  return {
    old: { policy: m.oldPolicy.name, kind: m.old.name, file: m.oldPolicy.file },
    new: { policy: m.newPolicy.name, kind: m.new.name, file: m.newPolicy.file },
    by: m.by,
    because: m.because,
    direction: forward.length > 0 ? "loosening" : reverse.length > 0 ? "tightening" : "neutral",
    rules: forward.length > 0 ? forward : reverse,
  };
}

/** Two versions of one policy. */
export function diffPolicy(old: PolicyIR, neu: PolicyIR, labels: Labels = DEFAULT_LABELS): PolicyDiff {
  const changes = settingChanges(old, neu).map((c) => judge(c, old, labels));
  const fates = neu.kinds.flatMap((k) => {
    const o = old.kinds.find((x) => x.name === k.name);
    return o ? fateChanges(old, neu, k.name) : [];
  });
  // A rule's finding on the whole version that a change already shows (the same rule, the same cause) is
  // not repeated, even where the changes together move its counterexample (the fate rows show where).
  const cause = (f: RuleFinding) => `${f.code} ${f.message.split(": ")[0]}`;
  const shown = new Set(changes.flatMap((c) => (c.direction === "loosening" ? c.rules.map(cause) : [])));
  const findings = overlayErrors(old, neu, labels).filter((f) => !shown.has(cause(f)));
  const loosens = findings.length > 0 || changes.some((c) => c.direction === "loosening") || fates.some((f) => f.direction === "loosening");
  const tightens = changes.some((c) => c.direction === "tightening") || fates.some((f) => f.direction === "tightening");
  return {
    name: neu.name,
    oldName: old.name,
    pairedBy: "name",
    because: null,
    renames: [],
    status: changes.length === 0 && fates.length === 0 ? "unchanged" : "changed",
    oldFile: old.file,
    newFile: neu.file,
    changes,
    fates,
    findings,
    loosens,
    tightens,
  };
}

/** A policy only the new side has: each kind is listed as added, with nothing to compare it with. */
function added(p: PolicyIR): PolicyDiff {
  const changes = settingChanges({ ...p, kinds: [], stores: [] }, p)
    .filter((c) => c.scope === "kind" || c.scope === "store")
    .map((c): JudgedChange => ({ ...strip(c), direction: "neutral", rules: [] }));
  return { name: p.name, oldName: null, pairedBy: null, because: null, renames: [], status: "added", oldFile: null, newFile: p.file, changes, fates: [], findings: [], loosens: false, tightens: false };
}

function removed(p: PolicyIR): PolicyDiff {
  return { name: p.name, oldName: null, pairedBy: null, because: null, renames: [], status: "removed", oldFile: p.file, newFile: null, changes: [], fates: [], findings: [], loosens: false, tightens: false };
}

const strip = (c: SettingChange): Omit<JudgedChange, "direction" | "rules"> => ({
  scope: c.scope,
  name: c.name,
  setting: c.setting,
  change: c.change,
  old: c.old,
  new: c.new,
  location: c.location,
});

/** The overlay rule on one change: the old version with it made, checked as an overlay of the old version, and back. */
function judge(c: SettingChange, old: PolicyIR, labels: Labels): JudgedChange {
  const candidate = c.apply(old);
  const forward = overlayErrors(old, candidate, labels);
  if (forward.length > 0) return { ...strip(c), direction: "loosening", rules: forward };
  const reverse = overlayErrors(candidate, old, { old: labels.new, new: labels.old });
  if (reverse.length > 0) return { ...strip(c), direction: "tightening", rules: reverse };
  return { ...strip(c), direction: "neutral", rules: [] };
}

/** Stands for the base's file, so the check finds the base whatever files the two versions came from. */
const BASE_FILE = "\u0000pruneguard-diff-base";

/**
 * The errors `checkOverlay` reports for `neu` as an overlay of `old` (its warnings are not about
 * tightening), each message from "but" on, named by the labels.
 */
export function overlayErrors(old: PolicyIR, neu: PolicyIR, labels: Labels): RuleFinding[] {
  const base: PolicyIR = { ...old, name: labels.old, file: BASE_FILE };
  const overlay: PolicyIR = { ...neu, name: labels.new, extends: { name: labels.old, file: BASE_FILE } };
  const seen = new Set<string>();
  return checkOverlay(overlay, { policyByFile: (f) => (f === BASE_FILE ? base : undefined) })
    .filter(isError)
    .map(finding)
    .filter((f) => (seen.has(f.message) ? false : (seen.add(f.message), true)));
}

function finding(d: Diagnostic): RuleFinding {
  return { code: d.code, message: d.message.replace(/^overlay `[^`]*` may only tighten `[^`]*`, but /, "") };
}

/**
 * Where kind `name`'s fate differs between the versions, by age range of its spans, up to the longer of
 * the two sessions (the range the overlay rule compares).
 */
function fateChanges(old: PolicyIR, neu: PolicyIR, name: string): FateChange[] {
  const ok = old.kinds.find((k) => k.name === name)!;
  const nk = neu.kinds.find((k) => k.name === name)!;
  const os = old.session.maxLengthMs;
  const ns = neu.session.maxLengthMs;
  const untilMs = os === null || ns === null ? null : Math.max(os, ns);
  const a = timelineOf(ok, old, { untilMs });
  const b = timelineOf(nk, neu, { untilMs });
  const starts = [...new Set([...a.segments, ...b.segments].map((s) => s.fromMs))].sort((x, y) => x - y);
  const out: FateChange[] = [];
  for (const [i, fromMs] of starts.entries()) {
    const toMs = starts[i + 1] ?? untilMs;
    const sa = segmentAt(a, fromMs);
    const sb = segmentAt(b, fromMs);
    if (sa.phase === sb.phase) continue;
    const direction: Direction = loosens(sa.outcome, sb.outcome) ? "loosening" : loosens(sb.outcome, sa.outcome) ? "tightening" : "neutral";
    const pastSessionOf = os !== null && fromMs >= os ? "old" : ns !== null && fromMs >= ns ? "new" : null;
    const last = out.at(-1);
    if (last && last.toMs === fromMs && last.old === sa.phase && last.new === sb.phase && last.pastSessionOf === pastSessionOf) out[out.length - 1] = { ...last, toMs };
    else out.push({ kind: name, fromMs, toMs, old: sa.phase, new: sb.phase, direction, pastSessionOf });
  }
  return out;
}
