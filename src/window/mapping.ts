/**
 * The reversibility map: for each live span, what a prune would be now (reversible, reversible until a
 * time, lossy only with consent, never) and the window's token pressure. Two forms: `mapWindow` asks each
 * backed span's store for its copy and audits the answer (the `map` directive); `forecastLines` predicts
 * from what the window knows, each copy's age against its store's retention, without asking (`render({ map:
 * true })`). Advisory either way: the check at execution time still decides.
 */
import { computeCheck, unbackedCheck } from "../stores/check.js";
import type { RecordState } from "../stores/records.js";
import type { BackingStore, CheckResult, LookupResult } from "../stores/store.js";
import type { SpanForecast, WindowMap } from "../outcome.js";
import { countTokens } from "../tokens.js";
import { mapDraft } from "./audit-drafts.js";
import type { WindowCore } from "./core.js";
import type { LiveEntry } from "./entries.js";
import { forecastSpan, mapLines } from "./map.js";
import { renderWindow } from "./view.js";

/** The map as the stores answer it now, audited. `raw` is the directive as audited. */
export async function mapWindow(core: WindowCore, raw: string): Promise<WindowMap> {
  const checks = new Map<LiveEntry, CheckResult | null>();
  for (const e of core.state.entries) {
    if (e.state !== "live") continue;
    const store = core.storeOf(e);
    if (store === null) {
      checks.set(e, unbackedCheck());
      continue;
    }
    try {
      const found = await store.lookup(core.session, e.handle === null ? { spanId: e.span.id } : { handle: e.handle });
      checks.set(e, computeCheck(e.handle, e.span.id, e.span.hash, lookupState(found), store));
    } catch {
      checks.set(e, null);
    }
  }
  const budget = core.settings.limits.lossyBudget;
  let lossyUsed = 0;
  if (budget !== null && budget !== undefined) {
    try {
      // The home store's counter is the budget's one count (the commit decides by it too).
      lossyUsed = await core.home.lossySpent(core.session);
      core.state.lossyUsed = lossyUsed;
    } catch {
      lossyUsed = budget; // unknown: forecast no lossy commitment
    }
  }
  const forecasts = spanForecasts(core, (e) => checks.get(e) ?? null, lossyUsed);
  const now = core.now();
  const tokens = { used: countTokens(renderWindow(core.views(), core.notices)), limit: core.settings.limits.maxTokens ?? null };
  const seq = await core.audit(core.home, mapDraft(raw));
  const pending = core.shown.pendingState();
  const line = mapLines(tokens, forecasts, now, pending, core.shown.advice(tokens.used));
  return { op: "map", status: "mapped", tokens, spans: forecasts, line, auditSeq: seq, pending };
}

/** The map's lines as the window predicts them without asking any store, for a rendering of `text`. */
export function forecastLines(core: WindowCore, text: string): string {
  const now = core.now();
  const forecasts = spanForecasts(core, (e) => predictedCheck(e, core.storeOf(e), now), core.state.lossyUsed ?? 0);
  const tokens = { used: countTokens(text), limit: core.settings.limits.maxTokens ?? null };
  return mapLines(tokens, forecasts, now, core.shown.pendingState(), core.shown.advice(tokens.used));
}

/** One forecast per live span, from each member's check (`null`: its store could not be asked). */
function spanForecasts(core: WindowCore, checkOf: (e: LiveEntry) => CheckResult | null, lossyUsed: number): SpanForecast[] {
  const budget = core.settings.limits.lossyBudget;
  const lossyLeft = budget === null || budget === undefined ? Number.POSITIVE_INFINITY : budget - lossyUsed;
  const keep = { now: core.now(), holdUntil: core.holdUntil() };
  const out: SpanForecast[] = [];
  // Each tool call group's live members, gathered once: the map is linear in the window (finding 25.7).
  const groups = new Map<string, LiveEntry[]>();
  for (const e of core.state.entries) {
    if (e.state !== "live" || e.span.group === undefined) continue;
    const members = groups.get(e.span.group);
    if (members === undefined) groups.set(e.span.group, [e]);
    else members.push(e);
  }
  for (const e of core.state.entries) {
    if (e.state !== "live") continue;
    const policy = core.policyOf(e.span.kind);
    const group = e.span.group === undefined ? [e] : groups.get(e.span.group)!;
    const stores = new Set(group.map((m) => core.policyOf(m.span.kind).store).filter((s) => s !== null));
    const checks = group.map(checkOf);
    const blocked = group.some((m) => m !== e && !core.policyOf(m.span.kind).modes.includes("drop")) || stores.size > 1
      ? "tool call group"
      : checks.some((c) => c === null) ? "store unavailable" : null;
    const retentionMs = stores.size === 1 ? core.store([...stores][0]!).retentionMs : null;
    const members = group.map((m) => {
      const p = core.policyOf(m.span.kind);
      return { policy: p, store: p.store === null ? null : core.store(p.store).capabilities, retentionMs };
    });
    out.push(forecastSpan(
      { spanId: e.span.id, kind: e.span.kind, modes: policy.modes, members, lead: group.indexOf(e), checks: checks.map((c) => c ?? unbackedCheck()), blocked },
      { keep, lossyLeft },
    ));
  }
  return out;
}

/** The record state a lookup's answer stands for, as the shared check reads it. */
function lookupState(found: LookupResult): RecordState {
  if (found.status === "found") return { state: "live", handle: found.handle, spanId: found.spanId, hash: found.hash, createdAt: found.createdAt };
  if (found.status === "expired") return { state: "expired", handle: found.handle, spanId: found.spanId };
  return { state: "absent" };
}

/**
 * A live span's check as the window predicts it without asking the store: its copy is there until its
 * retention runs out (rotation may keep it longer, so the forecast errs towards "not reversible").
 */
function predictedCheck(e: LiveEntry, store: BackingStore | null, now: number): CheckResult {
  if (store === null) return unbackedCheck();
  if (e.handle === null || e.copiedAt === null) return computeCheck(null, e.span.id, e.span.hash, { state: "absent" }, store);
  const alive = store.retentionMs === null || now < e.copiedAt + store.retentionMs;
  const state: RecordState = alive
    ? { state: "live", handle: e.handle, spanId: e.span.id, hash: e.span.hash, createdAt: e.copiedAt }
    : { state: "expired", handle: e.handle, spanId: e.span.id };
  return computeCheck(e.handle, e.span.id, e.span.hash, state, store);
}
