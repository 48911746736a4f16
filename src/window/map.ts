/**
 * The reversibility map: for every live span, what a prune would be right now — reversible, reversible
 * until a time, lossy only with `accept_lossy`, or never — and the window's token pressure. It is the
 * "trustworthy map of what the runtime has persisted" the reference document says a model lacks, so it
 * can route around holes instead of finding them by trial.
 *
 * Advisory only: it runs the same decision functions as a prune (`decideGroup`) over the copy state it
 * knows, but the check at execution time, inside the store's transaction, still decides. Cheap in
 * tokens by design: one head line and one short line per live span (bounds pinned in tests); a map
 * answered while an earlier map's answer is still in the window lists only what changed since (`mapping.ts`).
 */
import { decideGroup, type MemberInput } from "../decision/group.js";
import type { KeepContext } from "../decision/keep.js";
import type { RejectReason } from "../decision/reasons.js";
import { formatRemaining } from "../render/lines.js";
import { mapPendingLine } from "./compaction.js";
import type { PendingState, SpanForecast, WindowMap } from "../outcome.js";
import type { CheckResult } from "../stores/store.js";
import { PRUNE_MODES, type PruneMode } from "../types.js";

/** One live span as the forecast sees it: its group's members (itself included) and their copy state. */
export interface ForecastInput {
  readonly spanId: string;
  readonly kind: string;
  readonly modes: readonly PruneMode[];
  readonly members: readonly MemberInput[];
  readonly lead: number;
  readonly checks: readonly CheckResult[];
  /** Why the group cannot be pruned at all whatever the store says (a member cannot be dropped), or `null`. */
  readonly blocked: string | null;
}

/** The forecast for one span, from the same decision a prune would run. Pure. */
export function forecastSpan(input: ForecastInput, ctx: { readonly keep: KeepContext; readonly lossyLeft: number }): SpanForecast {
  const base = { spanId: input.spanId, kind: input.kind, modes: PRUNE_MODES.filter((m) => input.modes.includes(m)) };
  if (input.blocked !== null) return { ...base, forecast: "never", until: null, why: input.blocked };
  const plain = decideGroup({ members: input.members, lead: input.lead, acceptLossy: false, lossyLeft: ctx.lossyLeft, keep: ctx.keep }, input.checks);
  if (plain.refusal === null) {
    const lead = plain.decisions[input.lead]!;
    const until = lead.status === "reversible" ? lead.keep.until : null;
    return { ...base, forecast: until === null ? "reversible" : "reversible-until", until, why: null };
  }
  const flagged = decideGroup({ members: input.members, lead: input.lead, acceptLossy: true, lossyLeft: ctx.lossyLeft, keep: ctx.keep }, input.checks);
  if (flagged.refusal === null) return { ...base, forecast: "lossy-with-flag", until: null, why: null };
  const refusing = flagged.refusal;
  return { ...base, forecast: "never", until: null, why: refusing.byLead ? NEVER_WHY[refusing.reason] ?? "lossy forbidden" : "tool call group" };
}

/** Why a span can never be pruned now, in the map's few words: what stands in the way of even a lossy prune. */
const NEVER_WHY: Partial<Record<RejectReason, string>> = {
  "lossy-forbidden": "lossy forbidden",
  "lossy-budget": "lossy budget spent",
  group: "tool call group",
  "store-error": "store unavailable",
};

/**
 * The map's runtime lines: `map: 1234 tokens of 8000, 3 live spans`, then one per span —
 * with `pending: 3 decisions free ~12k tokens; compacting now rewrites ~48k cached tokens` when some are,
 * `span_3 drop,summarize: reversible`, `… reversible for 1h59m`, `… lossy only with accept_lossy`,
 * `… never (lossy forbidden)`. At most 18 o200k tokens a span line (span_99999, all modes, 99h59m).
 */
export function mapLines(
  tokens: WindowMap["tokens"], spans: readonly SpanForecast[], now: number, pending: PendingState | null = null, advice: string | null = null,
): string {
  return [...mapHeadLines(tokens, spans.length, pending, advice), ...spans.map((s) => mapSpanLine(s, now))].join("\n");
}

/** The map's head: its token line, then the advice and the pending line when there are. */
export function mapHeadLines(tokens: WindowMap["tokens"], live: number, pending: PendingState | null, advice: string | null): string[] {
  const head = `map: ${tokens.used} tokens${tokens.limit === null ? "" : ` of ${tokens.limit}`}, ${live} live span${live === 1 ? "" : "s"}`;
  return [head, ...(advice === null ? [] : [advice]), ...(pending === null ? [] : [mapPendingLine(pending)])];
}

/** One live span's line: `span_3 drop,summarize: reversible`. */
export function mapSpanLine(s: SpanForecast, now: number): string {
  return `${s.spanId} ${s.modes.join(",")}: ${forecastWords(s, now)}`;
}

/**
 * A map that refers to an earlier answer still in the window, unchanged (`mapping.ts`): `as the map in span_9
 * says, for every span`, or `…, but for 2 spans:` followed by those spans' lines — a span's new line, or
 * `span_3: no longer live` for one pruned or summarized since.
 */
export function mapSameLine(answerSpanId: string, changed: number): string {
  return `as the map in ${answerSpanId} says, ${changed === 0 ? "for every span" : `but for ${changed} span${changed === 1 ? "" : "s"}:`}`;
}

/** A span the referred map listed that is no longer live. */
export function mapGoneLine(spanId: string): string {
  return `${spanId}: no longer live`;
}

function forecastWords(s: SpanForecast, now: number): string {
  switch (s.forecast) {
    case "reversible":
      return "reversible";
    case "reversible-until":
      return `reversible for ${formatRemaining(s.until! - now)}`;
    case "lossy-with-flag":
      return "lossy only with accept_lossy";
    case "never":
      return `never (${s.why})`;
  }
}
