/**
 * What `explain` says about a policy, once, for every format: text for terminals, JSON for tools,
 * markdown for pull requests, one HTML page for reviewers. Each renderer reads this and nothing else.
 */
import { formatDuration } from "../../../src/policy/durations.js";
import { DEFAULT_SEARCH_TOKENS } from "../../../src/policy/kinds.js";
import { presetPins } from "../../../src/policy/pins.js";
import { describeFate, fateOf } from "../../analysis/fate.js";
import { timelineOf, type Timeline } from "../../analysis/timeline.js";
import { diffPolicy, type PolicyDiff } from "../../diff/index.js";
import { describeCompaction } from "../../emit/describe.js";
import type { KindIR, PolicyIR } from "../../ir/schema.js";
import { most } from "../table.js";

export interface StoreView {
  readonly name: string;
  readonly engine: string;
  readonly retention: string;
  readonly holds: boolean;
  readonly distinguishesAbsent: boolean;
  readonly writable: boolean;
  /** The kinds it backs. */
  readonly kinds: readonly string[];
}

export interface KindView {
  readonly name: string;
  readonly store: string | null;
  /** `toolLog (sqlite)`, or `none`. */
  readonly storeText: string;
  readonly retention: string | null;
  readonly holds: boolean | null;
  readonly modes: readonly string[];
  readonly lossy: string;
  readonly repersist: boolean;
  /** The policy-wide pins, then the kind's own. */
  readonly pins: readonly string[];
  /** `always reversible`, and why. */
  readonly fate: string;
  readonly why: string;
  readonly timeline: Timeline;
  /** The same kind under the base, for an overlay (to the same end); `null` otherwise. */
  readonly baseTimeline: Timeline | null;
  /** What a lossy summarize keeps and loses, or why there is none. */
  readonly keeps: string;
}

export interface PolicyView {
  readonly name: string;
  readonly file: string;
  readonly extends: string | null;
  readonly session: string;
  readonly compaction: string;
  /** Whether sessions may use a provider's own compaction, and what pruneguard does about it. */
  readonly providerCompaction: string;
  readonly pins: string;
  readonly tombstone: string;
  readonly stores: readonly StoreView[];
  readonly kinds: readonly KindView[];
  /** The end of the session axis the timelines are drawn to: the session's length, or a span that shows every change. */
  readonly axisMs: number;
  /** Whether sessions have no maximum length (the axis is then only as long as the changes need). */
  readonly unlimited: boolean;
  /** An overlay against its base, change by change (all tightening, or it would not compile); `null` otherwise. */
  readonly againstBase: PolicyDiff | null;
}

/** The view of `p`; `all` holds the policies compiled with it (an overlay's base among them). */
export function policyView(p: PolicyIR, all: readonly PolicyIR[]): PolicyView {
  const base = p.extends ? all.find((b) => b.file === p.extends!.file) : undefined;
  const session = base ? longer(p.session.maxLengthMs, base.session.maxLengthMs) : p.session.maxLengthMs;
  // Each to its own policy's session, drawn on one axis: an overlay's shorter sessions end before its base's.
  const timelines = p.kinds.map((k) => timelineOf(k, p));
  const baseTimelines = p.kinds.map((k) => {
    const bk = base?.kinds.find((x) => x.name === k.name);
    return base && bk ? timelineOf(bk, base) : null;
  });
  const unlimited = session === null;
  const changes = [...timelines, ...baseTimelines].flatMap((t) => t?.segments.map((s) => s.fromMs) ?? []);
  const axisMs = session ?? most(changes.map((a) => a * 2), 3_600_000);
  return {
    name: p.name,
    file: p.file,
    extends: p.extends?.name ?? null,
    session: `max ${p.session.maxLengthMs === null ? "unlimited" : formatDuration(p.session.maxLengthMs)}, lossy budget ${p.session.lossyBudget ?? "unlimited"}, search answers up to ${p.session.searchTokens ?? `${DEFAULT_SEARCH_TOKENS} (default)`} tokens`,
    compaction: describeCompaction(p.session.compaction),
    providerCompaction: p.session.providerCompaction === "allow"
      ? "allowed, checked: before each request, and every span it compacts is pruned through the checks"
      : `forbidden${p.session.providerCompaction === null ? " (default)" : ""}: the request builders refuse to turn it on`,
    pins: p.pins.map((x) => x.name).join(", ") || "none",
    tombstone: p.tombstone ? JSON.stringify(p.tombstone.text) : "runtime default",
    stores: p.stores.map((s) => ({
      name: s.name,
      engine: s.engine,
      retention: formatDuration(s.retentionMs),
      holds: s.holds,
      distinguishesAbsent: s.distinguishesAbsent,
      writable: s.writable,
      kinds: p.kinds.filter((k) => k.store === s.name).map((k) => k.name),
    })),
    kinds: p.kinds.map((k, i) => {
      const s = p.stores.find((x) => x.name === k.store);
      const fate = fateOf(k, p);
      return {
        name: k.name,
        store: k.store,
        storeText: s ? `${s.name} (${s.engine})` : "none",
        retention: s ? formatDuration(s.retentionMs) : null,
        holds: s ? s.holds : null,
        modes: k.modes,
        lossy: k.lossy,
        repersist: k.repersist,
        pins: [...new Set([...p.pins, ...k.pins].map((x) => x.name))],
        fate: describeFate(fate),
        why: fate.why.replaceAll("`", ""),
        timeline: timelines[i]!,
        baseTimeline: baseTimelines[i] ?? null,
        keeps: keepsText(k, p),
      };
    }),
    axisMs,
    unlimited,
    againstBase: base ? againstBase(base, p) : null,
  };
}

/** An overlay against its base: its name and `extends` differ by definition, so only what it changes in effect. */
export function againstBase(base: PolicyIR, p: PolicyIR): PolicyDiff {
  const d = diffPolicy(base, p, { old: base.name, new: p.name });
  return { ...d, changes: d.changes.filter((c) => !(c.scope === "policy" && (c.setting === "name" || c.setting === "extends"))) };
}

const longer = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : Math.max(a, b));

/**
 * What a lossy summarize of the kind keeps: the classes it pins (presets by name, custom pins by theirs)
 * and the preset classes it does not, which survive only if the digest happens to repeat them. `null`
 * when the kind can never be summarized lossily.
 */
export function lossySummarizeKeeps(k: KindIR, p: PolicyIR): { kept: string[]; lost: string[] } | null {
  if (!k.modes.includes("summarize") || k.lossy === "forbid") return null;
  const pinned = [...p.pins, ...k.pins];
  const kept = [...new Set(pinned.map((x) => x.preset ?? `${x.name} (custom)`))];
  const lost = Object.keys(presetPins).filter((name) => !pinned.some((x) => x.preset === name));
  return { kept, lost };
}

function keepsText(k: KindIR, p: PolicyIR): string {
  const c = lossySummarizeKeeps(k, p);
  if (c === null) return `no lossy summarize (${k.modes.includes("summarize") ? "lossy forbidden" : "summarize not allowed"})`;
  return `keeps ${c.kept.join(", ") || "nothing"}; loses ${c.lost.join(", ") || "no preset class"}`;
}
