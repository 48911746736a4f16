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
 */
import { checkOverlay } from "../checks/overlay.js";
import { isError, type Diagnostic } from "../diagnostics/diagnostic.js";
import { loosens } from "../analysis/fate.js";
import { segmentAt, timelineOf, type Phase } from "../analysis/timeline.js";
import type { Location } from "../ir/location.js";
import type { PolicyIR } from "../ir/schema.js";
import { settingChanges, type Scope, type SettingChange } from "./changes.js";

export { compactionText, NONE, settingChanges, type Scope, type SettingChange } from "./changes.js";

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

export interface PolicyDiff {
  /** The new version's name, or the old one's when it was removed. */
  readonly name: string;
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

export interface PolicySetDiff {
  readonly labels: Labels;
  readonly policies: readonly PolicyDiff[];
  readonly loosens: boolean;
}

export const DEFAULT_LABELS: Labels = { old: "old", new: "new" };

/**
 * Compares two policy sets: policies of the same name are two versions of one; a name on one side only is
 * a policy added or removed. With `pairSingle`, one policy on each side is compared whatever their names
 * (a policy renamed, or two files given on the command line).
 */
export function diffPolicySets(old: readonly PolicyIR[], neu: readonly PolicyIR[], labels: Labels = DEFAULT_LABELS, options: { readonly pairSingle?: boolean } = {}): PolicySetDiff {
  const policies: PolicyDiff[] = [];
  if (options.pairSingle === true && old.length === 1 && neu.length === 1) {
    policies.push(diffPolicy(old[0]!, neu[0]!, labels));
  } else {
    for (const n of neu) {
      const o = old.find((p) => p.name === n.name);
      policies.push(o ? diffPolicy(o, n, labels) : added(n));
    }
    for (const o of old) if (!neu.some((p) => p.name === o.name)) policies.push(removed(o));
  }
  policies.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { labels, policies, loosens: policies.some((p) => p.loosens) };
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
  return { name: p.name, status: "added", oldFile: null, newFile: p.file, changes, fates: [], findings: [], loosens: false, tightens: false };
}

function removed(p: PolicyIR): PolicyDiff {
  return { name: p.name, status: "removed", oldFile: p.file, newFile: null, changes: [], fates: [], findings: [], loosens: false, tightens: false };
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
