/**
 * What every step of the window's pipeline shares: the settings, the state, what the model was shown, the
 * audit queue, the decisions in doubt, the decision clock — and the few services the steps call (audit a
 * draft, say a line, record a decision for the next compaction point, make a compaction point). The steps
 * (`prune.ts`, `summarize.ts`, `directives.ts`, `mapping.ts`, `recall.ts`, `search.ts`, `lifecycle.ts`)
 * are functions of this; `ContextWindow` only sequences them.
 */
import type { AuditDraft } from "../audit.js";
import type { CompactionReport, WhenApplied } from "../outcome.js";
import type { BackingStore } from "../stores/store.js";
import type { KindPolicy, PinPattern } from "../types.js";
import type { Telemetry } from "../telemetry/index.js";
import { countTokens } from "../tokens.js";
import type { DirectiveTool } from "../tools/schemas.js";
import { PendingAudit } from "./audit-queue.js";
import { ShownWindow } from "./compaction.js";
import { Doubts } from "./doubts.js";
import { PendingDecisions, type PendingDecision } from "./lapse.js";
import { copyUnpromised, spanIdOf, type Entry, type LiveEntry } from "./entries.js";
import { kindPins, type WindowSettings } from "./window-options.js";
import type { PlanContext } from "./plan.js";
import type { WindowIdentity } from "./refs.js";
import { WindowState } from "./state.js";
import { entryView, type WindowEntry } from "./view.js";
import { compactDraft } from "./audit-drafts.js";

/** Lines not attached to a span (invalid directives) the window keeps, newest last. */
const MAX_NOTICES = 3;

export class WindowCore {
  readonly session: string;
  /** Whose refs this window takes: its session, and this window object (`refs.ts`). */
  readonly self: WindowIdentity;
  readonly settings: WindowSettings<string>;
  readonly state = new WindowState();
  /** What the model reads: the positions as the last compaction point rendered them, then later appends. */
  readonly shown: ShownWindow;
  readonly pendingAudit: PendingAudit;
  readonly doubts = new Doubts();
  /** The decisions since the last compaction point, with what they replaced: not applied if a copy's promise ends first (`lapse.ts`). */
  readonly pendingDecisions = new PendingDecisions();
  /** Live entries with a line under them (`noticeUnder`): each is cleared at the compaction point after the one that showed it. */
  readonly #noticed = new Set<LiveEntry>();
  /** OpenTelemetry spans and metrics of the decisions (src/telemetry/index.ts); `null`: none, at no cost. */
  telemetry: Telemetry | null = null;
  /**
   * The session's start: `limits.maxLengthMs` counts from it. The window's own creation until the home
   * store says (at resume, or at the first append); then the session's, whichever window began it.
   */
  startedAt: number;
  startSettled = false;
  ended = false;
  /** The last value the decision clock gave (in this process, or in the session's records when it resumed). */
  lastDecided = 0;
  notices: readonly string[] = [];
  readonly #seenTools = new WeakSet<readonly DirectiveTool[]>();
  /** What planning a prune reads from this window (`plan.ts`): made once, not per prune. */
  readonly planContext: PlanContext = ((core: WindowCore): PlanContext => ({
    find: (id) => (core.state.folded.has(id) ? undefined : core.state.get(id)),
    groupMembers: (group) => core.state.groupMembers(group),
    policyOf: (kind) => core.policyOf(kind),
    pinsFor: (policy) => core.pinsFor(policy),
    store: (name) => core.store(name),
    get auditStore() {
      return core.home;
    },
  }))(this);

  constructor(settings: WindowSettings<string>, self: WindowIdentity) {
    this.settings = settings;
    this.session = settings.session;
    this.self = self;
    this.startedAt = Math.floor(settings.clock.now());
    this.pendingAudit = new PendingAudit(this.session);
    this.shown = new ShownWindow(settings.limits.compaction, settings.limits.maxTokens ?? null);
  }

  now(): number {
    return this.settings.clock.now();
  }

  policyOf(kind: string): KindPolicy {
    return this.settings.kinds[kind]!;
  }

  hasKind(kind: string): boolean {
    return Object.hasOwn(this.settings.kinds, kind);
  }

  store(name: string): BackingStore {
    return this.settings.stores.get(name)!;
  }

  get home(): BackingStore {
    return this.settings.auditStore;
  }

  /** The store an entry's copy is in, `null` for an unbacked kind. */
  storeOf(e: { readonly store: string | null }): BackingStore | null {
    return e.store === null ? null : this.store(e.store);
  }

  /** Every store the window writes to, the home store included, each once. */
  distinctStores(): BackingStore[] {
    return [...new Set([...this.settings.stores.values(), this.settings.auditStore])];
  }

  pinsFor(policy: KindPolicy): readonly PinPattern[] {
    return kindPins(this.settings.pins, policy);
  }

  /**
   * When the session's holds lapse (`limits.maxLengthMs` after its start, rounded up to a whole millisecond),
   * `null`: when it ends — also for a horizon past the largest exact integer, which no store could record
   * and no clock reaches.
   */
  holdUntil(): number | null {
    const max = this.settings.limits.maxLengthMs;
    if (max === null || max === undefined) return null;
    const until = Math.ceil(this.startedAt + max);
    return Number.isSafeInteger(until) ? until : null;
  }

  /**
   * Takes `n` consecutive values of the decision clock: never below the clock's milliseconds × 1000,
   * always above the last value taken (in this process, or in the session's records when it resumed).
   */
  decide(n: number): number {
    const first = Math.max(Math.floor(this.now()) * 1000, this.lastDecided + 1);
    this.lastDecided = first + n - 1;
    return first;
  }

  /** Appends a decision's record after every record waiting; its seq, or `null` while its store fails. */
  audit(store: BackingStore, draft: AuditDraft): Promise<number | null> {
    return this.pendingAudit.append(store, { ...draft, decided: this.decide(1) });
  }

  /** The directive tools the window was handed (`handleToolCall`): their calls and answers are runtime traffic. */
  learnTools(tools: readonly DirectiveTool[]): void {
    if (this.#seenTools.has(tools)) return;
    this.#seenTools.add(tools);
    for (const t of tools) this.state.directiveNames.set(t.name, t.op);
    if (this.state.resumedResults.size > 0) this.state.learnedTools();
  }

  /** A line not attached to a span, shown at the end of the window until the next append. */
  notice(line: string): void {
    this.notices = [...this.notices, line].slice(-MAX_NOTICES);
  }

  /**
   * A rejection line for a live span: rendered under the span from the next compaction point on, and at
   * the end of the window until then (a line inserted mid-window would rewrite every cached token after it).
   */
  noticeOn(entry: LiveEntry, line: string): void {
    this.noticeUnder(entry, line);
    if (this.shown.immediate) this.compactNow();
    else this.notice(line);
  }

  /**
   * Puts `line` under a live span: the next compaction point renders it there, and the one after clears it
   * (it would otherwise be re-sent with every request for the rest of the session). Both are compaction
   * points, where the rendering is rewritten from the first changed position anyway; in between, the line
   * stays as it was rendered, so the prefix stays byte-identical.
   */
  noticeUnder(entry: LiveEntry, line: string): void {
    entry.notice = line;
    entry.noticeAt = this.shown.count;
    delete entry.noticeSeen;
    this.#noticed.add(entry);
  }

  /**
   * Clears every line under a span that a compaction point before this one showed and a rendering read since
   * (`views()`): a line shown by a compaction point that no rendering read (a `checkCopies()` that found a
   * copy lost, then `compact()`) stays until one has.
   */
  #clearShownNotices(): void {
    for (const e of this.#noticed) {
      if ((e.noticeAt ?? 0) >= this.shown.count || e.noticeSeen !== true) continue;
      e.notice = null;
      delete e.noticeAt;
      delete e.noticeSeen;
      this.#noticed.delete(e);
    }
  }

  /** Pending decisions whose copies are no longer promised are not applied (`lapse.ts`); between compaction points. */
  settleLapses(): void {
    if (this.pendingDecisions.size > 0) this.pendingDecisions.settle(this, false);
  }

  /**
   * After a decision changed `spanIds` (freeing `freed` tokens when applied): applied now when every
   * decision is a compaction point ("immediate"), else at the next compaction point — at the latest the
   * next rendering once the pending decisions are due. `pending` is what it replaced, kept until it is
   * applied: a decision whose copy's promise ends first is not (`lapse.ts`).
   */
  decided(spanIds: readonly string[], freed: number, pending: PendingDecision | null): WhenApplied {
    if (pending !== null) this.pendingDecisions.record(pending);
    this.shown.decided(spanIds, freed);
    if (!this.shown.immediate) return this.shown.applied();
    this.compactNow();
    return { at: "now" };
  }

  /**
   * The compaction point itself: synchronous, it touches no store (every decision it applies is committed).
   * What the model reads is rendered anew and compared with what it was shown: a rendering that reads the
   * same is no compaction point (nothing is rewritten, nothing counted), and the comparison reuses every
   * unchanged position's token count, so a compaction point costs about one rendering however long the
   * session.
   */
  compactNow(): CompactionReport & { readonly made: boolean } {
    const now = this.now();
    // Lines under spans a compaction point showed already go; then pending decisions whose copies are no
    // longer promised are put back live, with a line that this compaction point shows (`lapse.ts`).
    if (this.#noticed.size > 0) this.#clearShownNotices();
    const notApplied = this.pendingDecisions.size > 0 ? this.pendingDecisions.settle(this, true) : 0;
    // Everything still pending is applied now.
    this.pendingDecisions.clear();
    const pending = this.shown.pendingCount;
    const folded = this.state.foldDirectiveCalls();
    // Runs of index lines a pending decision touched fold into one line each (every run after a resume);
    // with nothing pending no run was touched, and the fold pass is skipped.
    if (this.shown.views().length === 0) this.state.foldIndex(null, now);
    else if (pending > 0) this.state.foldIndex((e) => this.shown.isPending(spanIdOf(e)), now);
    if (this.state.foldsStale) this.state.refreshFolds();
    const { views, firstChange } = this.shown.reconcile(this.state.entries.map((e) => entryView(e, now, this.settings.tombstone)));
    if (firstChange < 0) {
      // A promise that lapsed where no line shows it (a folded or summarized member): the next lapse is later.
      this.shown.unchanged(this.shown.lapsed(now) ? nextLapse(this.state.all(), now) : null);
      return { applied: pending, folded, freedTokens: 0, rewrittenTokens: 0, notApplied, made: false };
    }
    const shownBefore = this.shown.views().length;
    const before = this.shown.totalTokens;
    const rewritten = this.shown.tokensFrom(firstChange);
    this.shown.reset(views, nextLapse(this.state.all(), now));
    const report = { applied: pending, folded, freedTokens: shownBefore === 0 ? 0 : before - this.shown.totalTokens, rewrittenTokens: rewritten, notApplied };
    this.telemetry?.compaction(report, this.shown.count);
    return { ...report, made: true };
  }

  /**
   * A compaction point the window makes by itself, inside a rendering: audited like one asked for, with no
   * directive. A rendering cannot await a store, so the record is queued and written, in decision order,
   * with the next record (or by `auditLog()` and `end()`); it says when the window wrote it, not when it
   * compacted. One that applied and folded nothing (a lapsed promise rewritten) is not audited.
   */
  compactAutomatically(): void {
    const { made, applied, folded } = this.compactNow();
    if (made && (applied > 0 || folded > 0)) this.pendingAudit.defer(this.home, { ...compactDraft(null), decided: this.decide(1) });
  }

  /** The last rendering counted, and its count. */
  #counted: { readonly text: string; readonly tokens: number } | null = null;

  /**
   * The tokens of `text`, a rendering of the window (`render()`, the map's count): counted again only when it
   * differs from the last rendering counted, so maps and `tokens()` with nothing changed in between count once.
   */
  renderedTokens(text: string): number {
    if (this.#counted?.text !== text) this.#counted = { text, tokens: countTokens(text) };
    return this.#counted.tokens;
  }

  /** The window's positions as the model reads them now, applying what is due first. */
  views(): readonly WindowEntry[] {
    // A pending decision whose copy is no longer promised is not applied: its span stays as it is shown.
    this.settleLapses();
    // Due (the pending decisions pay for the rewrite, or the window is at its limit): applied now, once for
    // every decision since the last rendering, so a batch of prune calls is one rewrite. A shown line whose
    // promise lapsed would offer a recall that can no longer be honoured: rewritten now too.
    if (this.shown.due() || this.shown.lapsed(this.now())) this.compactAutomatically();
    if (this.#noticed.size > 0) {
      for (const e of this.#noticed) if ((e.noticeAt ?? 0) < this.shown.count) e.noticeSeen = true;
    }
    return this.shown.views();
  }
}

/** When the first line offering a recall stops being true: a copy's promise lapses. */
export function nextLapse(entries: Iterable<Entry>, now: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const e of entries) {
    if (e.state === "pruned" && e.keptUntil !== null && e.keptUntil < next && !copyUnpromised(e, now)) next = e.keptUntil;
  }
  return next;
}
