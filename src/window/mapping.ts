/**
 * The reversibility map: for each live span, what a prune would be now (reversible, reversible until a
 * time, lossy only with consent, never) and the window's token pressure. Two forms: `mapWindow` asks each
 * backed span's store for its copy and audits the answer (the `map` directive); `forecastLines` predicts
 * from what the window knows, each copy's age against its store's retention, without asking (`render({ map:
 * true })`). Advisory either way: the check at execution time still decides.
 *
 * A map answered to a tool call while the previous one's answer is still in the window, as it was given (the
 * calls of one response, answered in turn, or a map with nothing changed since), refers to that answer and
 * lists only the spans whose line changed: N map calls in one response cost about N maps, and add about N
 * lines to the window, not N² (each full answer lists every span, the previous answers included).
 */
import { computeCheck, unbackedCheck } from "../stores/check.js";
import type { RecordState } from "../stores/records.js";
import type { BackingStore, CheckResult, LookupResult } from "../stores/store.js";
import type { SpanForecast, WindowMap } from "../outcome.js";
import { mapDraft } from "./audit-drafts.js";
import type { WindowCore } from "./core.js";
import type { LiveEntry } from "./entries.js";
import { forecastSpan, mapGoneLine, mapHeadLines, mapLines, mapSameLine, mapSpanLine } from "./map.js";
import { renderWindow } from "./view.js";

/**
 * The map as the stores answer it now, audited. `raw` is the directive as audited; `callId`: the tool call it
 * answers (its answer may then refer to the previous map's, see the module comment), `null` from code.
 */
export async function mapWindow(core: WindowCore, raw: string, callId: string | null = null): Promise<WindowMap> {
  // A span whose pending prune will not be applied (its copy is no longer promised) is mapped as the live span it is.
  core.settleLapses();
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
  const tokens = { used: core.renderedTokens(renderWindow(core.views(), core.notices)), limit: core.settings.limits.maxTokens ?? null };
  const seq = await core.audit(core.home, mapDraft(raw));
  const pending = core.shown.pendingState();
  const advice = core.shown.advice(tokens.used);
  const line = callId === null
    ? mapLines(tokens, forecasts, now, pending, advice)
    : answerLines(core, callId, mapHeadLines(tokens, forecasts.length, pending, advice), forecasts.map((s) => [s.spanId, mapSpanLine(s, now)] as const));
  return { op: "map", status: "mapped", tokens, spans: forecasts, line, auditSeq: seq, pending };
}

/** The maps answered to tool calls that the next one may refer to: every span's line, and each answer's call and text. */
interface MapAnswers {
  /** Each live span's line as the latest answer stands for it (its own lines, or the ones it refers to and its changes). */
  readonly lines: ReadonlyMap<string, string>;
  /** The answers the latest builds on, the first one a full map: each must still be in the window, as given. */
  readonly chain: ReadonlyArray<{ readonly callId: string; readonly text: string }>;
}

const answered = new WeakMap<WindowCore, MapAnswers>();

/**
 * A map's answer to tool call `callId`: the full map, or — while the previous answer and every one it builds
 * on are live in the window with the text they were given — a reference to it and the lines that changed since
 * (new spans, new fates, spans no longer live), when those are fewer than the full map's. Remembered for the next.
 */
function answerLines(core: WindowCore, callId: string, head: readonly string[], spans: ReadonlyArray<readonly [string, string]>): string {
  const lines = new Map(spans);
  const previous = answered.get(core);
  const at = previous === undefined ? null : answerInWindow(core, previous);
  let text: string | null = null;
  if (previous !== undefined && at !== null) {
    const changed: string[] = [];
    for (const [spanId, line] of spans) if (previous.lines.get(spanId) !== line) changed.push(line);
    for (const spanId of previous.lines.keys()) if (!lines.has(spanId)) changed.push(mapGoneLine(spanId));
    if (changed.length < spans.length) text = [...head, mapSameLine(at, changed.length), ...changed].join("\n");
  }
  const chain = text === null ? [] : [...previous!.chain];
  text ??= [...head, ...spans.map(([, line]) => line)].join("\n");
  chain.push({ callId, text });
  answered.set(core, { lines, chain });
  return text;
}

/**
 * The span id of the latest map answer remembered, when it and every answer it builds on are live in the
 * window as tool results of the map tool with the text they were given; else `null` (folded at a compaction
 * point, pruned, never appended, or another window's).
 */
function answerInWindow(core: WindowCore, answers: MapAnswers): string | null {
  const results = new Map<string, LiveEntry[]>();
  for (const e of core.state.entries) {
    const m = e.state === "live" ? e.span.message : undefined;
    if (m?.role !== "tool-result" || core.state.directiveNames.get(m.toolName) !== "map") continue;
    const same = results.get(m.callId);
    if (same === undefined) results.set(m.callId, [e as LiveEntry]);
    else same.push(e as LiveEntry);
  }
  let at: string | null = null;
  for (const { callId, text } of answers.chain) {
    const found = results.get(callId)?.find((e) => e.span.text === text);
    if (found === undefined) return null;
    at = found.span.id;
  }
  return at;
}

/** The map's lines as the window predicts them without asking any store, for a rendering of `text`. */
export function forecastLines(core: WindowCore, text: string): string {
  const now = core.now();
  const forecasts = spanForecasts(core, (e) => predictedCheck(e, core.storeOf(e), now), core.state.lossyUsed ?? 0);
  const tokens = { used: core.renderedTokens(text), limit: core.settings.limits.maxTokens ?? null };
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
