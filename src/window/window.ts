import { directiveForAudit, inDecisionOrder, type AuditDraft, type AuditRecord } from "../audit.js";
import type { GroupDecision } from "../decision/group.js";
import { KEPT_FOR_SESSION, type Keep } from "../decision/keep.js";
import { HANDLE, parseDirective, SPAN_ID } from "../directive.js";
import { errorMessage, IrreversiblePruneError, OutcomeUnknownError } from "../errors.js";
import { contentHash } from "../hash.js";
import { grewLine, invalidLine, rangeRejectionLine, rejectionWhy } from "../render.js";
import { cutUnits } from "../render/framing.js";
import { computeCheck, unbackedCheck } from "../stores/check.js";
import type { RecordState } from "../stores/records.js";
import type {
  CompactOutcome, DirectiveOutcome, InvalidOutcome, LossyOutcome, PruneOutcome, RangeOutcome, RangeRejectedOutcome, RecallOutcome, RejectedOutcome, RejectReason,
  RangeSummaryOutcome, ReversibleOutcome, SearchOutcome,
} from "../outcome.js";
import type { SummarizeRangeDirective } from "../directive.js";
import { commitRange, planRange, verifyPrunedMembers, summaryEntry, type RangePlan } from "./range.js";
import { compileQuery } from "../search/query.js";
import type { BackingStore, CheckResult, LookupResult, PruneCommit, PruneCommitItem, PruneItem } from "../stores/store.js";
import { countTokens } from "../tokens.js";
import { DEFAULT_SEARCH_TOKENS } from "../policy/kinds.js";
import { defaultTools, directiveOf, toolCallResult, toolFor, type ToolCall, type ToolCallResult } from "../tools/call.js";
import type { DirectiveTool } from "../tools/schemas.js";
import type { KindPolicy, PinPattern, PruneMode, Span, SpanRef } from "../types.js";
import { compactDraft, invalidDraft, mapDraft, refusedPruneDraft } from "./audit-drafts.js";
import { decider } from "./decide.js";
import { PendingAudit } from "./audit-queue.js";
import { CallGroups, goneText, goneTokens, newSpan, prunedEntry, spanIdOf, type Entry, type GoneEntry, type LiveEntry } from "./entries.js";
import { forecastSpan, mapLines } from "./map.js";
import { kindPins, resolveWindowOptions, type AppendInput, type ContextWindowOptions, type PruneRequest, type WindowSettings } from "./options.js";
import { committedOutcome, rejectedOutcome } from "./outcomes.js";
import { persistFailures, planPrune, type PlannedMember, type PlanRejectReason, type PrunePlan } from "./plan.js";
import { recall } from "./recall.js";
import { restoreEntries, SUMMARY_KIND, type Restored } from "./resume.js";
import { search, type SearchRequest } from "./search.js";
import { compactedLine, ShownWindow } from "./compaction.js";
import type { CompactionReport, SpanForecast, WhenApplied, WindowMap } from "../outcome.js";
import { entryView, renderWindow, type WindowEntry } from "./view.js";
import { describeWindow, foreignRefMessage, mintRef, newWindowIdentity, readRef, RefError, type RefReading, type WindowIdentity } from "./refs.js";
import { createTelemetry, decide, type Telemetry } from "../telemetry.js";

const MAX_NOTICES = 3;

/** The fields of a directive that name a span, and so may hold a ref. */
const REF_FIELDS = ["span_id", "from", "to"] as const;

/** What a ref reads as when it is not one of this window's. */
type ForeignReading = Exclude<RefReading, { kind: "own" }>;

type DirectiveOp = NonNullable<InvalidOutcome["op"]>;

/** Directive operations whose calls fold away once applied: their effect is in the window's own lines. */
const FOLDED_OPS: ReadonlySet<string> = new Set(["prune", "map", "compact"]);

/**
 * The model's context window, with the runtime half of the two-party protocol: the model proposes
 * prunes, the window checks the backing store at execution time and disposes.
 *
 * There is no way to free a span except `prune`, `tryPrune` and `applyDirective`, and all three go
 * through the same check: verify the copy (existence and content hash), confirm the handle, place a hold
 * and append the audit record in one store transaction; only then is the window rewritten.
 */
export class ContextWindow<K extends string = string> {
  readonly session: string;
  /** Whose refs this window takes: its session, and this window object (`refs.ts`). */
  readonly #self: WindowIdentity;
  readonly #settings: WindowSettings<K>;
  /**
   * The session's start: `limits.maxLengthMs` counts from it. The window's own creation until the home
   * store says (at resume, or at the first append); then the session's, whichever window began it.
   */
  #startedAt: number;
  #startSettled = false;
  readonly #entries: Entry[] = [];
  readonly #byId = new Map<string, Entry>();
  /** What the model reads: the positions as the last compaction point rendered them, then later appends. */
  readonly #shown: ShownWindow;
  /** Directive tool calls acted on (prune, map, compact), by call id: folded out at the next compaction point. */
  readonly #foldable = new Set<string>();
  /** Spans folded out of the window (runtime traffic): recall still answers for them; search does not name them. */
  readonly #folded = new Set<string>();
  /** The directive tools' names the window was handed (`handleToolCall`): their calls and answers, answered or not, are not searched. */
  readonly #directiveNames = new Set<string>();
  readonly #seenTools = new WeakSet<readonly DirectiveTool[]>();
  #notices: string[] = [];
  readonly #calls = new CallGroups();
  /** Groups with a pruned member, and whether any went lossy: a late member joins that fate. */
  readonly #prunedGroups = new Map<string, "reversible" | "lossy">();
  readonly #pendingAudit: PendingAudit;
  #ended = false;
  /** Lossy commitments of this session as last counted (for the map's forecasts only); `null`: not counted yet. */
  #lossyUsed: number | null = null;
  #lastDecided = 0;
  /** Prunes whose COMMIT was sent but whose answer was lost, by the span ids of their members. */
  readonly #doubts = new Map<string, Doubt>();
  #tail: Promise<unknown> = Promise.resolve();
  /** Operations queued or running in `#serial`. */
  #queued = 0;
  /** OpenTelemetry spans and metrics of the decisions (src/telemetry.ts); `null`: none, at no cost. */
  readonly #telemetry: Telemetry | null;

  constructor(options: ContextWindowOptions<K>) {
    this.#settings = resolveWindowOptions(options);
    this.session = this.#settings.session;
    this.#self = newWindowIdentity(this.session);
    this.#startedAt = Math.floor(this.#settings.clock.now());
    this.#pendingAudit = new PendingAudit(this.session);
    this.#shown = new ShownWindow(this.#settings.limits.compaction, this.#settings.limits.maxTokens ?? null);
    this.#telemetry = createTelemetry(options.telemetry, {
      session: this.session,
      span: (id) => {
        const e = this.#byId.get(id);
        return e === undefined ? undefined : { kind: e.state === "live" ? e.span.kind : e.kind, store: e.store };
      },
      storeOfKind: (kind) => (Object.hasOwn(this.#settings.kinds, kind) ? this.#settings.kinds[kind as K].store : undefined),
    });
  }

  /**
   * Opens the window of an existing session — after a restart, or in a second process — from its stores:
   * every span the session registered comes back in its place, live (its copy read back and checked
   * against the hash the audit chain recorded for it, else the one it was registered with), pruned (its
   * index line or digest, from the audit record of its prune, its copy checked against that record's hash:
   * a copy gone or altered comes back as `copy lost`) or as a tombstone; a span whose bytes only a process
   * now gone had comes back as `span_5 lost in a restart, contents unknown`, and recall of it answers
   * `lost`, never `unknown`. The session keeps its horizon: `limits.maxLengthMs` counts from the session's
   * start as the home store keeps it, not from the resume. New spans continue the session's numbering: ids
   * are minted by the home store, so two processes resuming one session never collide.
   *
   * Give it the same kinds, stores and `auditStore` (the home store) as the windows that wrote the
   * session. Throws a `StoreError` when a store cannot be read: a guess would be worse than no window.
   */
  static async resume<K extends string>(options: ContextWindowOptions<K>): Promise<ContextWindow<K>> {
    const win = new ContextWindow(options);
    const settings = win.#settings;
    const restore = () => restoreEntries({
      session: win.session,
      home: settings.auditStore,
      stores: win.#distinctStores(),
      store: (name) => settings.stores.get(name),
      policyOf: (kind) => (Object.hasOwn(settings.kinds, kind) ? settings.kinds[kind as K] : undefined),
      tombstone: settings.tombstone,
      hintTokens: settings.indexHintTokens,
      now: win.#startedAt,
      maxLengthMs: settings.limits.maxLengthMs ?? null,
    });
    const restored: Restored = await (win.#telemetry === null ? restore() : win.#telemetry.resume(restore));
    win.#lastDecided = restored.lastDecided;
    // The session's horizon is the one it began with, not one restarted by the resume.
    win.#startedAt = restored.startedAt;
    win.#startSettled = true;
    for (const e of restored.entries) {
      win.#entries.push(e);
      win.#byId.set(e.state === "live" ? e.span.id : e.spanId, e);
      // Tool call/result pairing goes on where it stopped: a result for a call made before the restart joins it.
      const message = e.state === "live" ? e.span.message : e.state === "summary" ? undefined : e.message ?? undefined;
      if (message !== undefined) win.#calls.groupFor({ message });
      if ((e.state === "pruned" || e.state === "tombstone") && e.group !== null && win.#prunedGroups.get(e.group) !== "lossy") {
        win.#prunedGroups.set(e.group, e.state === "tombstone" ? "lossy" : "reversible");
      }
    }
    // A restart is a compaction point: the resumed window renders what the session decided.
    win.#compactNow();
    return win;
  }

  /**
   * Appends a span and, when its kind names a store, persists it there first so that a later prune
   * can be reversible. A store failure does not lose the span: it stays live without a handle, and a
   * later prune sees that (and may re-persist).
   */
  append<const P extends K>(input: AppendInput<P>): Promise<SpanRef<P>> {
    return this.#serial(() => this.#append(input));
  }

  async #append<P extends K>(input: AppendInput<P>): Promise<SpanRef<P>> {
    this.#assertOpen();
    const policy = this.#settings.kinds[input.kind] as KindPolicy | undefined;
    if (policy === undefined || !Object.hasOwn(this.#settings.kinds, input.kind)) {
      throw new TypeError(`ContextWindow.append: unknown kind ${String(input.kind)}`);
    }
    if (typeof input.text !== "string") throw new TypeError("ContextWindow.append: text must be a string");
    // The session's start is kept by the home store (the first window's wins), so every window of the
    // session, resumed or in another process, counts `limits.maxLengthMs` from the same time. Nothing can
    // be pruned before a first append, so nothing was decided with this window's own start.
    if (!this.#startSettled) {
      this.#startedAt = await this.#settings.auditStore.sessionStart(this.session, this.#startedAt);
      this.#startSettled = true;
    }
    // The home store mints the id and records the span (never its bytes), so a process that resumes the
    // session puts it back in its place or says it was lost; without that record it fails closed.
    const draft = newSpan("span_0", { ...input, ...this.#calls.groupFor(input) });
    const registered = await this.#settings.auditStore.registerSpan(this.session, {
      kind: draft.kind, hash: draft.hash, group: draft.group ?? null, message: draft.message ?? null, store: policy.store,
    });
    const span: Span = { ...draft, id: registered.spanId };
    const entry: LiveEntry = { state: "live", pos: this.#entries.length, span, handle: null, store: policy.store, persistError: null, copiedAt: null, notice: null };
    if (policy.store !== null) {
      const store = this.#settings.stores.get(policy.store)!;
      if (store.capabilities.writable) {
        try {
          const persisted = await store.persist({ session: this.session, spanId: span.id, kind: span.kind, text: span.text, hash: span.hash });
          entry.handle = persisted.handle;
          entry.copiedAt = persisted.createdAt;
        } catch (err) {
          entry.persistError = errorMessage(err);
          this.#telemetry?.storeFailure("append", policy.store, err);
        }
      }
    }
    this.#entries.push(entry);
    this.#byId.set(span.id, entry);
    this.#notices = [];
    this.#shown.appended(entryView(entry, this.#settings.clock.now(), this.#settings.tombstone));
    await this.#joinGroupFate(entry);
    return mintRef(this.#self, span.id) as SpanRef<P>;
  }

  /**
   * This window object's identity, as its refs carry it (eight hex digits, random per window): a ref of
   * another window, even of the same session, is refused by `prune`.
   */
  get windowId(): string {
    return this.#self.window;
  }

  /**
   * The ref of a span this window holds, from its id (`span_7`, as entries, outcomes and the model name
   * it) or from a ref of this session written down earlier (JSON, a database, a window before a restart).
   * Checked now, never cast: an id this window does not know, a ref of another session, or a span of
   * another kind than `kind` (when given) throws a `RefError`, with both sides named.
   */
  ref<P extends K = K>(id: string, kind?: P): SpanRef<P> {
    const reading = readRef(this.#self, id);
    if (reading.kind === "none") throw new RefError("unknown-span", `${JSON.stringify(String(id).slice(0, 48))} names no span of this window, ${describeWindow(this.#self)}`);
    if (reading.kind === "foreign" && reading.owner.session !== this.session) {
      throw new RefError("foreign-session", `${reading.spanId} is a ref of ${describeWindow(reading.owner)}, not of this window's ${describeWindow(this.#self)}: a span of another session cannot be reached from here`);
    }
    const entry = this.#byId.get(reading.spanId);
    if (entry === undefined) throw new RefError("unknown-span", `${reading.spanId} is not a span of this window, ${describeWindow(this.#self)}`);
    const actual = entry.state === "live" ? entry.span.kind : entry.kind;
    if (kind !== undefined && actual !== kind) {
      throw new RefError("wrong-kind", `${reading.spanId} is a span of kind ${actual}, not ${String(kind)}`);
    }
    return mintRef(this.#self, reading.spanId) as SpanRef<P>;
  }

  /** The refs of the live spans, in window order: after `resume`, every span that came back, with no cast. */
  refs(): SpanRef<K>[] {
    const out: SpanRef<K>[] = [];
    for (const e of this.#entries) if (e.state === "live") out.push(mintRef(this.#self, e.span.id) as SpanRef<K>);
    return out;
  }

  /**
   * A span that arrives after its group was pruned (the result of a call the model pruned while the call
   * was pending) joins the group's fate: it is dropped through the same check, as a lossy commitment
   * only if the group's was one. If the check refuses, it stays live with the rejection line.
   */
  async #joinGroupFate(entry: LiveEntry): Promise<void> {
    const group = entry.span.group;
    if (group === undefined) return;
    const fate = this.#prunedGroups.get(group);
    if (fate === undefined) return;
    const lossy = fate === "lossy";
    const raw = directiveForAudit({ op: "prune", span_id: entry.span.id, mode: "drop", ...(lossy ? { accept_lossy: true } : {}), joins: group });
    await decide(this.#telemetry, "prune", () => this.#execute(entry.span.id, "drop", null, lossy, raw));
  }

  /**
   * The code path: prunes or throws `IrreversiblePruneError` (with the audited outcome) when the runtime
   * cannot prove the prune reversible and no allowed lossy commitment was requested.
   */
  async prune(request: PruneRequest<K>): Promise<ReversibleOutcome | LossyOutcome> {
    const outcome = await this.tryPrune(request);
    if (outcome.status === "rejected" || outcome.status === "invalid") throw new IrreversiblePruneError(outcome);
    return outcome;
  }

  /** The code path without the throw: every outcome comes back as data. */
  tryPrune(request: PruneRequest<K>): Promise<PruneOutcome> {
    return this.#serial(() => decide(this.#telemetry, "prune", () => this.#tryPrune(request)));
  }

  async #tryPrune(request: PruneRequest<K>): Promise<PruneOutcome> {
    this.#assertOpen();
    const raw = directiveForAudit({ span: request.span, mode: request.mode, digest: request.digest, acceptLossy: request.acceptLossy });
    // Only a ref of this window names a span here: a ref of another session names another span that has
    // the same id, and a bare id could be anyone's.
    const reading = readRef(this.#self, request.span);
    if (reading.kind !== "own") return this.#refuseForeign("prune", reading, request.span, raw, request.mode);
    if (request.mode === "summarize" && (typeof request.digest !== "string" || request.digest.length === 0)) {
      return this.#invalid("prune", [{ path: "digest", message: "summarize needs a digest" }], raw);
    }
    return this.#execute(reading.spanId, request.mode, request.digest ?? null, request.acceptLossy === true, raw);
  }

  /**
   * The untrusted path: model output in (a JSON string or parsed value), an outcome out. Never throws;
   * a bad directive leaves the window unchanged and is audited with its reason.
   */
  applyDirective(input: unknown): Promise<DirectiveOutcome> {
    return this.#serial(() => decide(this.#telemetry, null, () => this.#applyDirective(input)));
  }

  async #applyDirective(input: unknown): Promise<DirectiveOutcome> {
    // Read untrusted input exactly once: a getter must not show the audit log one value and the parser
    // another.
    const given = snapshot(input);
    const raw = directiveForAudit(given);
    try {
      const { value, foreign } = this.#localize(given);
      const parsed = parseDirective(value, this.#settings.directiveLimits);
      if (!parsed.ok) return await this.#invalid(parsed.op, parsed.issues, raw);
      const d = parsed.directive;
      if (foreign !== null) return await this.#refuseForeign(d.op, foreign.reading, foreign.given, raw, d.op === "prune" ? d.mode : "summarize");
      if (d.op === "recall") return await this.#recall(d.span_id, raw);
      if (d.op === "map") return await this.#map(raw);
      if (d.op === "search") return await this.#search(d.query, d.regex === true, raw);
      if (this.#ended) return await this.#invalid(d.op, [{ path: "", message: "the session has ended" }], raw);
      if (d.op === "summarize_range") return await this.#summarizeRange(d.from, d.to, d.digest, raw);
      if (d.op === "compact") return await this.#compactAsked(raw);
      return await this.#execute(d.span_id, d.mode, d.digest ?? null, d.accept_lossy === true, raw);
    } catch (err) {
      // Only a defect in the runtime itself gets here; the model still gets data, not an exception.
      return this.#invalid(null, [{ path: "", message: `internal error: ${errorMessage(err)}` }], raw).catch(() => ({
        op: null, status: "invalid", issues: [], message: "internal error", line: invalidLine("internal error"), auditSeq: null,
      }) satisfies InvalidOutcome);
    }
  }

  /**
   * Handles a provider's tool call to one of the directive tools: `{ name, arguments }`, arguments as JSON
   * text or a parsed object (OpenAI strict mode's `null`s read as absent). Never throws.
   *
   * Returns the outcome and the exact text to send back as the tool result, or `null` when the name is
   * not one of `tools` (another tool of the agent's, for the caller to run). Arguments that do not parse
   * are an `invalid` outcome, audited like any directive, with `isError` set.
   */
  async handleToolCall(call: ToolCall, tools: readonly DirectiveTool[] = defaultTools()): Promise<ToolCallResult | null> {
    let name: unknown;
    let args: unknown;
    try {
      ({ name, arguments: args } = call);
    } catch {
      return null; // not a readable call at all
    }
    if (!this.#seenTools.has(tools)) {
      this.#seenTools.add(tools);
      for (const t of tools) this.#directiveNames.add(t.name);
    }
    const tool = toolFor(name, tools);
    if (tool === undefined) return null;
    let id: unknown;
    try {
      id = (call as { readonly id?: unknown }).id;
    } catch {
      id = undefined; // a hostile call object: nothing to fold by
    }

    const d = directiveOf(tool, args, this.#settings.directiveLimits.maxDirectiveChars);
    const outcome = "directive" in d
      ? await this.applyDirective(d.directive)
      : await this.#serial(() => decide(this.#telemetry, tool.op, () => this.#invalid(tool.op, [{ path: "", message: d.invalid }], directiveForAudit(args))));
    // A call the window acted on and answered in full is runtime traffic: folded at the next compaction point.
    // Search and recall answers stay: they carry text the model asked for.
    if (typeof id === "string" && FOLDED_OPS.has(tool.op) && outcome.status !== "invalid") this.#foldable.add(id);
    return toolCallResult(tool, outcome);
  }

  /**
   * Recall by span id (`span_7`) or handle (`#3`). Three answers that never collapse: `found` (bytes
   * identical to what was pruned), `pruned-unrecoverable`, `unknown` (this window never held it); plus
   * `unavailable` when the store failed and the copy may still exist.
   */
  recall(query: string): Promise<RecallOutcome> {
    // A ref of another session stays as given, which this window answers truthfully as `unknown`.
    return this.#serial(() => decide(this.#telemetry, "recall", () => {
      return this.#recall(this.#readingId(query) ?? String(query), directiveForAudit({ op: "recall", span_id: query }));
    }));
  }

  /**
   * What the model reads next: live spans, index lines, tombstones and rejection lines, in order. With
   * `{ map: true }`, the reversibility map follows, forecast from what the window knows (each copy's age
   * against its store's retention) without asking the stores; `map()` asks them.
   */
  render(options: { readonly map?: boolean } = {}): string {
    const text = renderWindow(this.entries(), this.#notices);
    if (options.map !== true) return text;
    const forecasts = this.#forecasts((e) => predictedCheck(e, this.#storeOf(e), this.#settings.clock.now()), this.#lossyUsed ?? 0);
    const tokens = { used: countTokens(text), limit: this.#settings.limits.maxTokens ?? null };
    return `${text}\n\n${mapLines(tokens, forecasts, this.#settings.clock.now(), this.#shown.pendingState())}`;
  }

  /**
   * The reversibility map: for each live span, what a prune would be right now (reversible, reversible
   * until a time, lossy only with `accept_lossy`, never) and the window's token pressure. Advisory: the
   * check at execution time still decides. Asks each backed span's store for its copy (one lookup per
   * span) and audits the answer; the model's form is the directive `{"op":"map"}`.
   */
  map(): Promise<WindowMap> {
    return this.#serial(() => decide(this.#telemetry, "map", () => this.#map(directiveForAudit({ op: "map" }))));
  }

  async #map(raw: string): Promise<WindowMap> {
    const checks = new Map<LiveEntry, CheckResult | null>();
    for (const e of this.#entries) {
      if (e.state !== "live") continue;
      const store = this.#storeOf(e);
      if (store === null) {
        checks.set(e, unbackedCheck());
        continue;
      }
      try {
        const found = await store.lookup(this.session, e.handle === null ? { spanId: e.span.id } : { handle: e.handle });
        checks.set(e, computeCheck(e.handle, e.span.id, e.span.hash, lookupState(found), store));
      } catch {
        checks.set(e, null);
      }
    }
    let lossyLeft: number;
    try {
      lossyLeft = await this.#lossyLeft(true);
    } catch {
      lossyLeft = 0;
    }
    const budget = this.#settings.limits.lossyBudget;
    const forecasts = this.#forecasts((e) => checks.get(e) ?? null, budget === null || budget === undefined ? 0 : budget - lossyLeft);
    const now = this.#settings.clock.now();
    const tokens = { used: countTokens(renderWindow(this.entries(), this.#notices)), limit: this.#settings.limits.maxTokens ?? null };
    const seq = await this.#audit(this.#settings.auditStore, mapDraft(raw));
    const pending = this.#shown.pendingState();
    return { op: "map", status: "mapped", tokens, spans: forecasts, line: mapLines(tokens, forecasts, now, pending), auditSeq: seq, pending };
  }

  /** One forecast per live span, from each member's check (`null`: its store could not be asked). */
  #forecasts(checkOf: (e: LiveEntry) => CheckResult | null, lossyUsed: number): SpanForecast[] {
    const budget = this.#settings.limits.lossyBudget;
    const lossyLeft = budget === null || budget === undefined ? Number.POSITIVE_INFINITY : budget - lossyUsed;
    const keep = { now: this.#settings.clock.now(), holdUntil: this.#holdUntil() };
    const out: SpanForecast[] = [];
    // Each tool call group's live members, gathered once: the map is linear in the window (finding 25.7).
    const groups = new Map<string, LiveEntry[]>();
    for (const e of this.#entries) {
      if (e.state !== "live" || e.span.group === undefined) continue;
      const members = groups.get(e.span.group);
      if (members === undefined) groups.set(e.span.group, [e]);
      else members.push(e);
    }
    for (const e of this.#entries) {
      if (e.state !== "live") continue;
      const policy = this.#settings.kinds[e.span.kind as K];
      const group = e.span.group === undefined ? [e] : groups.get(e.span.group)!;
      const stores = new Set(group.map((m) => this.#settings.kinds[m.span.kind as K].store).filter((s) => s !== null));
      const checks = group.map(checkOf);
      const blocked = group.some((m) => m !== e && !this.#settings.kinds[m.span.kind as K].modes.includes("drop")) || stores.size > 1
        ? "tool call group"
        : checks.some((c) => c === null) ? "store unavailable" : null;
      const retentionMs = stores.size === 1 ? this.#settings.stores.get([...stores][0]!)!.retentionMs : null;
      const members = group.map((m) => {
        const p = this.#settings.kinds[m.span.kind as K];
        return { policy: p, store: p.store === null ? null : this.#settings.stores.get(p.store)!.capabilities, retentionMs };
      });
      out.push(forecastSpan(
        { spanId: e.span.id, kind: e.span.kind, modes: policy.modes, members, lead: group.indexOf(e), checks: checks.map((c) => c ?? unbackedCheck()), blocked },
        { keep, lossyLeft },
      ));
    }
    return out;
  }

  #isDirectiveTraffic(e: Entry): boolean {
    const m = e.state === "live" ? e.span.message : undefined;
    // By the tool's name, not the call id: a provider may reuse an id for one of the agent's own tools.
    return m !== undefined && "callId" in m && this.#directiveNames.has(m.toolName);
  }

  #storeOf(e: LiveEntry): BackingStore | null {
    return e.store === null ? null : this.#settings.stores.get(e.store)!;
  }

  /**
   * Finds text again: an exact substring, or with `regex: true` an RE2 pattern (linear time), over the
   * live spans, the verified copies of pruned spans and what stands in pruned spans' places. The answer
   * lists matching spans with snippets and handles within the policy's search budget, and its coverage
   * names every pruned span that could not be searched (lossy, copy lost, store unreachable): those may
   * have held the text. A bad query is an `invalid` outcome, audited, the window unchanged.
   */
  search(request: string | SearchRequest): Promise<SearchOutcome | InvalidOutcome> {
    const { query, regex } = typeof request === "string" ? { query: request, regex: false } : request;
    const directive = { op: "search", query, ...(regex === undefined ? {} : { regex }) };
    return this.#serial(() => decide(this.#telemetry, "search", async () => {
      const raw = directiveForAudit(directive);
      const parsed = parseDirective(directive, this.#settings.directiveLimits);
      if (!parsed.ok) return this.#invalid("search", parsed.issues, raw);
      const d = parsed.directive as Extract<typeof parsed.directive, { op: "search" }>;
      return this.#search(d.query, d.regex === true, raw);
    }));
  }

  /**
   * Replaces the run of positions `from`…`to` (live spans, spans pruned earlier, earlier summaries) with
   * one digest, keeping the tree: recall of the summary expands one level, recall of a member gives its
   * bytes. Every live member's copy is checked and held in one store transaction, all or nothing, and
   * every pinned identifier of the members is carried into the digest. Never lossy: a run with a member
   * that cannot be held is refused, and so is a run over a tombstone.
   */
  summarizeRange(request: { readonly from: string; readonly to: string; readonly digest: string }): Promise<RangeOutcome | InvalidOutcome> {
    const directive = { op: "summarize_range", from: String(request.from), to: String(request.to), digest: request.digest };
    return this.#serial(() => decide(this.#telemetry, "summarize_range", async () => {
      this.#assertOpen();
      const raw = directiveForAudit(directive);
      const { value, foreign } = this.#localize(directive);
      const parsed = parseDirective(value, this.#settings.directiveLimits);
      if (!parsed.ok) return this.#invalid("summarize_range", parsed.issues, raw);
      if (foreign !== null) return this.#refuseForeign("summarize_range", foreign.reading, foreign.given, raw, "summarize");
      const d = parsed.directive as SummarizeRangeDirective;
      return this.#summarizeRange(d.from, d.to, d.digest, raw);
    }));
  }

  /**
   * The window's positions as the model reads them, for renderers of provider message shapes: as the last
   * compaction point rendered them, then the spans appended since. Decisions since then show at the next
   * compaction point (`compact()`), so consecutive renderings share their whole earlier prefix.
   */
  entries(): WindowEntry[] {
    // Due (the pending decisions pay for the rewrite, or the window is at its limit): applied now, once for
    // every decision since the last rendering, so a batch of prune calls is one rewrite. A shown line whose
    // promise lapsed would offer a recall that can no longer be honoured: rewritten now too.
    if (this.#shown.due() || this.#shown.lapsed(this.#settings.clock.now())) this.#compactAutomatically();
    return [...this.#shown.views()];
  }

  /**
   * How many compaction points the window has made: each is a rewrite of what the model reads from the
   * first changed position on (a request after it re-sends that part of the prompt uncached).
   */
  get compactionPoints(): number {
    return this.#shown.count;
  }

  /**
   * How many of `entries()` the last compaction point rendered; the rest were appended since. Renderers
   * place a cache breakpoint there (`toAnthropic(win, { cacheControl: true })`): that prefix stays as it is
   * until the next compaction point.
   */
  get compactedEntries(): number {
    return this.#shown.compacted;
  }

  /**
   * Applies every pending decision to what the model reads now — a compaction point — and folds away the
   * directive tool calls already acted on (prune, map, compact) with their results. Returns what it freed
   * and what it rewrote. The window does this by itself when the policy's compaction settings say so;
   * call it when you know the cache is cold anyway (after a long pause), or before a summary step.
   */
  compact(): Promise<CompactOutcome> {
    return this.#serial(() => decide(this.#telemetry, "compact", () => this.#compactAsked(directiveForAudit({ op: "compact" }))));
  }

  /** A compaction point asked for, audited like every directive. */
  async #compactAsked(raw: string): Promise<CompactOutcome> {
    const report = this.#compactNow();
    const seq = await this.#audit(this.#settings.auditStore, compactDraft(raw));
    return { op: "compact", status: "compacted", ...report, line: compactedLine(report), auditSeq: seq };
  }

  /**
   * A compaction point the window makes by itself, inside a rendering: audited like one asked for, with no
   * directive. A rendering cannot await a store, so the record is queued and written, in decision order,
   * with the next record (or by `auditLog()` and `end()`); it says when the window wrote it, not when it
   * compacted. One that applied and folded nothing (a lapsed promise rewritten) is not audited.
   */
  #compactAutomatically(): void {
    const report = this.#compactNow();
    if (report.applied > 0 || report.folded > 0) this.#pendingAudit.defer(this.#settings.auditStore, { ...compactDraft(null), decided: this.#decide(1) });
  }

  /** The compaction point itself: synchronous, it touches no store (every decision it applies is committed). */
  #compactNow(): CompactionReport {
    const now = this.#settings.clock.now();
    const before = this.#shown.views();
    const pending = this.#shown.pendingCount;
    const rewritten = this.#shown.rewriteTokens();
    const folded = this.#fold();
    const views = this.#entries.map((e) => entryView(e, now, this.#settings.tombstone));
    const tokens = (vs: readonly WindowEntry[]) => vs.reduce((n, v) => n + (v.state === "live" ? v.span.tokens : countTokens(v.text)), 0);
    const freed = before.length === 0 ? 0 : tokens(before) - tokens(views);
    this.#shown.reset(views, this.#nextLapse(now));
    const report = { applied: pending, folded, freedTokens: freed, rewrittenTokens: pending === 0 && folded === 0 ? 0 : rewritten };
    this.#telemetry?.compaction(report, this.#shown.count);
    return report;
  }

  /**
   * Removes the directive tool calls acted on since the last compaction point, with their results: the index
   * lines say what they did, and each would otherwise be re-sent in every later request. A call whose result
   * has not arrived stays, and so does its result's pair: nothing is left orphaned.
   */
  #fold(): number {
    if (this.#foldable.size === 0) return 0;
    const sides = new Map<string, number>();
    for (const e of this.#entries) {
      const m = e.state === "live" ? e.span.message : undefined;
      // By id and name: a provider may reuse an id for one of the agent's own tools, which never folds.
      if (m !== undefined && "callId" in m && this.#foldable.has(m.callId) && this.#directiveNames.has(m.toolName)) {
        sides.set(m.callId, (sides.get(m.callId) ?? 0) | (m.role === "tool-call" ? 1 : 2));
      }
    }
    const complete = new Set([...sides].filter(([, bits]) => bits === 3).map(([id]) => id));
    let folded = 0; // spans removed: each complete call and its result
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const e = this.#entries[i]!;
      const m = e.state === "live" ? e.span.message : undefined;
      if (e.state !== "live" || m === undefined || !("callId" in m) || !complete.has(m.callId) || !this.#directiveNames.has(m.toolName)) continue;
      this.#entries.splice(i, 1);
      this.#folded.add(e.span.id);
      folded++;
    }
    for (const id of complete) this.#foldable.delete(id);
    if (folded > 0) for (const [i, e] of this.#entries.entries()) if (e.state === "live") e.pos = i;
    return complete.size;
  }

  /** When the first shown line offering a recall stops being true: a copy's promise lapses. */
  #nextLapse(now: number): number {
    let next = Number.POSITIVE_INFINITY;
    const walk = (list: readonly Entry[]) => {
      for (const e of list) {
        if (e.state === "summary") walk(e.members);
        else if (e.state === "pruned" && !e.copyLost && e.keptUntil !== null && e.keptUntil > now && e.keptUntil < next) next = e.keptUntil;
      }
    };
    walk(this.#entries);
    return next;
  }

  /**
   * After a decision changed `spanIds` (freeing `freed` tokens when applied): applied now when every
   * decision is a compaction point ("immediate"), else at the next compaction point — at the latest the
   * next rendering once the pending decisions are due.
   */
  #decided(spanIds: readonly string[], freed: number): WhenApplied {
    this.#shown.decided(spanIds, freed);
    if (!this.#shown.immediate) return this.#shown.applied();
    this.#compactNow();
    return { at: "now" };
  }

  /** Lines that are not attached to a span (invalid directives), shown until the next append. */
  notices(): readonly string[] {
    return [...this.#notices];
  }

  /** A live span by id or by this window's ref, or `undefined`. */
  span(id: string): Span | undefined {
    const spanId = this.#readingId(id);
    if (spanId === null) return undefined;
    const e = this.#byId.get(spanId);
    return e?.state === "live" ? e.span : undefined;
  }

  /** Tokens the window costs now, as rendered (o200k_base). */
  tokens(): number {
    return countTokens(this.render());
  }

  /**
   * Asks the stores whether every reversibly pruned span's copy is still there and byte-identical, and
   * marks those that are not, so their lines stop offering a recall. Time-based lapses (a hold past the
   * session's horizon, retention running out) need no call: `render()` reads them from the clock. This
   * catches the rest — a copy deleted or altered behind the runtime's back — at one lookup per pruned
   * span; call it before an inference when the store is shared with other writers. Returns how many
   * copies it found lost. A store that fails is skipped (its lines stay as they were).
   */
  checkCopies(): Promise<number> {
    const check = async (): Promise<number> => {
      let lost = 0;
      // Members of range summaries too: an expansion shows their lines.
      const all: Entry[] = [];
      const walk = (list: readonly Entry[]) => {
        for (const e of list) {
          all.push(e);
          if (e.state === "summary") walk(e.members);
        }
      };
      walk(this.#entries);
      for (const e of all) {
        if (e.state !== "pruned" || e.copyLost || e.handle === null || e.store === null) continue;
        let found;
        try {
          found = await this.#settings.stores.get(e.store)!.lookup(this.session, { handle: e.handle });
        } catch {
          continue;
        }
        if (found.status !== "found" || found.hash !== e.hash || contentHash(found.text) !== e.hash) {
          e.copyLost = true;
          lost++;
        }
      }
      // Lines that offered a recall of a lost copy stop offering it now.
      if (lost > 0) this.#compactNow();
      return lost;
    };
    return this.#serial(() => (this.#telemetry === null ? check() : this.#telemetry.checkCopies(check)));
  }

  /** Every decision of this session, across its stores, oldest first. */
  async auditLog(): Promise<AuditRecord[]> {
    // Records waiting to be written (an automatic compaction point's) are written first, when the store can.
    if (this.#pendingAudit.size > 0) await this.#pendingAudit.flush().catch(() => undefined);
    const all: AuditRecord[] = [];
    for (const store of this.#distinctStores()) all.push(...(await store.auditLog(this.session)));
    return inDecisionOrder(all);
  }

  /**
   * Audit records not written yet: decisions whose store was failing (retried on the next write), and the
   * window's own compaction points, written with the next record (or by `auditLog()` and `end()`).
   */
  get pendingAudit(): number {
    return this.#pendingAudit.size;
  }

  /**
   * Ends the session: releases its holds so their copies age out under normal retention. Recall still
   * answers for what is left; prunes and appends are refused.
   */
  end(): Promise<void> {
    return this.#serial(async () => {
      if (this.#ended) return;
      this.#ended = true;
      // The holds are released below: from then on a pruned span's copy is kept only by its store's
      // retention, and a line must not offer a recall past it. What was decided and not yet applied is
      // applied now, so the last rendering shows every decision the session made.
      const rekept = this.#releaseKeeps(this.#settings.clock.now());
      if (rekept || this.#shown.pendingCount > 0) this.#compactAutomatically();
      if (this.#pendingAudit.size > 0) await this.#pendingAudit.flush().catch(() => undefined);
      for (const store of this.#distinctStores()) await store.releaseHolds(this.session);
    });
  }

  /**
   * What keeps each pruned span's copy once the session's holds are released: its store's retention from
   * when the copy was written, or nothing known (then the line stops offering a recall now). Returns
   * whether any line's promise changed.
   */
  #releaseKeeps(now: number): boolean {
    let changed = false;
    const walk = (list: readonly Entry[]) => {
      for (const e of list) {
        if (e.state === "summary") walk(e.members);
        if (e.state !== "pruned" || e.handle === null || e.copyLost || e.store === null) continue;
        if (!this.#settings.stores.get(e.store)!.capabilities.holds) continue; // nothing held: its promise stands
        const kept = e.retainedUntil === undefined ? now : e.retainedUntil;
        if (kept === e.keptUntil) continue;
        e.keptUntil = kept;
        if (kept !== null) e.until = kept;
        changed = true;
      }
    };
    walk(this.#entries);
    return changed;
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * Runs window operations one at a time, in call order. Two prunes of one span issued concurrently
   * would otherwise both pass the check before either rewrote the window.
   */
  #serial<T>(op: () => Promise<T>): Promise<T> {
    // With nothing queued, the operation starts now rather than a microtask later; it is still the only
    // one running, since every later call queues behind it until it settles.
    const idle = this.#queued === 0;
    this.#queued++;
    let run: Promise<T>;
    if (!idle) run = this.#tail.then(op, op);
    else {
      try {
        run = op();
      } catch (err) {
        run = Promise.reject(err as Error);
      }
    }
    const settled = () => void this.#queued--;
    this.#tail = run.then(settled, settled);
    return run;
  }

  #assertOpen(): void {
    if (this.#ended) throw new Error(`ContextWindow: session ${this.session} has ended`);
  }

  #distinctStores(): BackingStore[] {
    return [...new Set([...this.#settings.stores.values(), this.#settings.auditStore])];
  }

  #pinsFor(policy: KindPolicy): readonly PinPattern[] {
    return kindPins(this.#settings.pins, policy);
  }

  async #execute(spanId: string, mode: PruneMode, digest: string | null, acceptLossy: boolean, raw: string): Promise<PruneOutcome> {
    // No prune in doubt (the common case): no promise to await.
    if (this.#doubts.size > 0 && !(await this.#settle(spanId))) {
      const entry = this.#byId.get(spanId);
      return this.#refuseEarly({
        spanId, kind: entry ? (entry.state === "live" ? entry.span.kind : entry.kind) : null, mode, reason: { code: "outcome-unknown" },
        message: `${spanId} kept: an earlier prune of it may have committed, and the store still cannot say whether it did`,
        entry: entry?.state === "live" ? entry : null, raw,
      });
    }
    const planned = planPrune(
      {
        find: (id) => (this.#folded.has(id) ? undefined : this.#byId.get(id)),
        groupMembers: (group) => this.#entries.filter((e): e is LiveEntry => e.state === "live" && e.span.group === group),
        policyOf: (kind) => this.#settings.kinds[kind as K],
        pinsFor: (policy) => this.#pinsFor(policy),
        store: (name) => this.#settings.stores.get(name)!,
        auditStore: this.#settings.auditStore,
      },
      // Made well-formed like span text at append: JSON can carry a lone surrogate, which providers refuse.
      spanId, mode, digest === null ? null : digest.toWellFormed(),
    );
    if ("refusal" in planned) {
      const { reason, kind, message, entry } = planned.refusal;
      return this.#refuseEarly({ spanId, kind, mode, reason: { code: reason }, message, entry, raw });
    }
    const { plan } = planned;
    const home = this.#settings.auditStore;
    // The body that replaces the span is noted in the home store before the prune commits, so a process
    // that resumes the session can render it.
    try {
      for (const p of plan.members) if (p.body !== null) await home.noteReplacement(this.session, p.entry.span.id, p.body);
    } catch (err) {
      return this.#storeFailed(plan.target, mode, raw, err);
    }
    // One lossy budget per session, kept on the home store's counter: counted inside the commit
    // transaction when the prune commits there, reserved on the counter beforehand when it commits in
    // another store (units no lossy commitment used are given back; a crash in between keeps them spent).
    const budget = this.#settings.limits.lossyBudget;
    const counted = acceptLossy && budget !== null && budget !== undefined;
    const inTransaction = counted && plan.store === home;
    let reserved = 0;
    /** The session's lossy units left as the commit transaction counted them (for telemetry), `null`: not counted. */
    let lossyCounted: number | null = null;
    if (counted && !inTransaction) {
      try {
        reserved = await home.reserveLossy(this.session, budget, plan.members.length);
      } catch (err) {
        return this.#storeFailed(plan.target, mode, raw, err);
      }
    }
    const giveBack = async (used: number) => {
      if (reserved > used) await home.releaseLossy(this.session, reserved - used).catch(() => undefined);
    };
    const items: PruneItem[] = plan.members.map((p) => ({
      spanId: p.entry.span.id,
      kind: p.entry.span.kind,
      backed: p.policy.store !== null,
      handle: p.entry.handle,
      hash: p.entry.span.hash,
      text: p.entry.span.text,
    }));
    const members = plan.members.map((p) => ({
      policy: p.policy, store: p.policy.store === null ? null : plan.store.capabilities, retentionMs: plan.store.retentionMs,
    }));
    // The store calls `decide` inside its transaction once per attempt; the attempt that commits is the last.
    const { decide, last } = decider({
      members, lead: plan.lead, acceptLossy, keep: { now: this.#settings.clock.now(), holdUntil: this.#holdUntil() },
      decided: this.#decide(plan.members.length),
      // The budget left: counted in the transaction on the home store, or what was reserved on it beforehand.
      lossyLeft: (left: number) => {
        if (inTransaction) lossyCounted = left;
        return !counted ? Number.POSITIVE_INFINITY : inTransaction ? left : Math.min(reserved, left);
      },
      subjects: plan.members.map((p, i) => ({
        spanId: p.entry.span.id, kind: p.entry.span.kind, hash: p.entry.span.hash, mode: p.mode, acceptLossy,
        pinsCarried: p.pinsCarried.length, directive: i === plan.lead ? raw : null,
      })),
    });
    // Records waiting go first, so the chain keeps decision order. A failure here is the audit queue's, not
    // this prune's: nothing of the prune was sent, so it is a store failure, never a prune in doubt.
    if (this.#pendingAudit.size > 0) {
      try {
        await this.#pendingAudit.flush();
      } catch (err) {
        await giveBack(0);
        return this.#storeFailed(plan.target, mode, raw, err);
      }
    }
    let commit: PruneCommit;
    try {
      commit = await plan.store.commitPrune({
        session: this.session, items, holdUntil: this.#holdUntil(), decide, ...(inTransaction ? { lossyBudget: budget } : {}),
      });
    } catch (err) {
      if (err instanceof OutcomeUnknownError) return this.#doubt(plan, mode, raw, err, giveBack, () => last.keeps);
      await giveBack(0);
      return this.#storeFailed(plan.target, mode, raw, err);
    }
    if (reserved > 0) await giveBack(lossyCount(commit));
    if (lossyCounted !== null) this.#telemetry?.note({ "pruneguard.lossy_budget.left": lossyCounted - lossyCount(commit) });
    return this.#committed(plan, mode, commit, last.refusal, last.keeps);
  }

  /** The outcome of a prune the store committed (or refused inside its transaction); rewrites the window. */
  #committed(plan: PrunePlan, mode: PruneMode, commit: PruneCommit, refusal: GroupDecision["refusal"], keeps: readonly (Keep | null)[]): PruneOutcome {
    const lead = commit.items[plan.lead]!;
    if (refusal !== null) return this.#refuseChecked(plan, mode, lead, commit.items, refusal);
    // Committed: now, and only now, rewrite the window.
    let tokensFreed = 0;
    const now = this.#settings.clock.now();
    for (const [i, p] of plan.members.entries()) tokensFreed += this.#apply(p, commit.items[i]!, keeps[i] ?? null, now);
    const spanId = plan.target.span.id;
    const gone = this.#byId.get(spanId) as GoneEntry;
    const applies = this.#decided(plan.members.map((p) => p.entry.span.id), tokensFreed);
    return committedOutcome(
      {
        spanId, kind: gone.kind, mode, line: goneText(gone, now, this.#settings.tombstone), tokensFreed, applies,
        // A replacement larger than the span (a long digest, or any line in place of a tiny span) is allowed, and said.
        grew: tokensFreed < 0 ? grewLine(spanId, -tokensFreed) : null,
        pinsCarried: plan.members[plan.lead]!.pinsCarried,
        groupPruned: plan.members.filter((p) => p.entry !== plan.target).map((p) => p.entry.span.id),
        group: plan.members.flatMap((p) => {
          const member = this.#byId.get(p.entry.span.id);
          if (p.entry === plan.target || member === undefined || (member.state !== "pruned" && member.state !== "tombstone")) return [];
          return [{ spanId: member.spanId, status: member.state === "tombstone" ? "lossy" as const : "reversible" as const, line: goneText(member, now, this.#settings.tombstone) }];
        }),
      },
      lead,
      this.#settings.tombstone,
      gone.until,
    );
  }

  /**
   * The store sent COMMIT and the answer was lost, and reading back what committed failed too. Until the
   * window learns the outcome, every directive for the group's spans first asks again; none can commit a
   * second record for the same decision.
   */
  #doubt(
    plan: PrunePlan, mode: PruneMode, raw: string, err: OutcomeUnknownError, giveBack: (used: number) => Promise<void>,
    keeps: () => readonly (Keep | null)[],
  ): RejectedOutcome {
    const doubt: Doubt = {
      resolve: () => err.resolve() as Promise<PruneCommit | null>,
      finish: async (commit) => {
        for (const p of plan.members) this.#doubts.delete(p.entry.span.id);
        if (commit === null) {
          await giveBack(0);
          await this.#storeFailed(plan.target, mode, raw, err.cause ?? err);
          return;
        }
        await giveBack(lossyCount(commit));
        // Apply what committed, as the original directive would have; the refusal of a group member
        // committed only audit records, so nothing changes in the window.
        if (commit.items.every((it) => it.decision.status !== "rejected")) {
          const now = this.#settings.clock.now();
          let freed = 0;
          for (const [i, p] of plan.members.entries()) if (this.#byId.get(p.entry.span.id) === p.entry) freed += this.#apply(p, commit.items[i]!, keeps()[i] ?? null, now);
          this.#decided(plan.members.map((p) => p.entry.span.id), freed);
        }
      },
    };
    for (const p of plan.members) this.#doubts.set(p.entry.span.id, doubt);
    const outcome: RejectedOutcome = rejectedOutcome({
      spanId: plan.target.span.id, kind: plan.target.span.kind, mode, reason: "outcome-unknown", conditions: null,
      why: rejectionWhy("outcome-unknown", null, mode),
      message: `${plan.target.span.id} kept for now: the store may have committed the prune, but its answer was lost (${errorMessage(err)}); the next directive for it reads back what committed first`,
      auditSeq: null, lossyHintPolicy: null,
    });
    this.#noticeOn(plan.target, outcome.line);
    return outcome;
  }

  /**
   * A range summary whose COMMIT answer was lost, and whose read-back failed too: the store may have
   * committed it. Held in doubt exactly as a prune is (one `Doubt` for every member of the run): the window keeps
   * the run as it was, and the next directive for any member — a prune or another summary — reads back what
   * committed first and applies it; nothing is committed twice.
   */
  #rangeInDoubt(
    plan: RangePlan, summaryId: string, digest: string, from: string, to: string, raw: string,
    lost: { readonly unknown: OutcomeUnknownError; readonly keeps: () => readonly (Keep | null)[]; readonly refused: () => boolean },
  ): RangeRejectedOutcome {
    const doubt: Doubt = {
      resolve: () => lost.unknown.resolve() as Promise<PruneCommit | null>,
      finish: async (commit) => {
        for (const m of plan.members) this.#doubts.delete(spanIdOf(m));
        // Nothing committed, or the store refused a member inside its transaction: the run stays as it is.
        if (commit === null || lost.refused()) return;
        // The doubt kept every member from changing, but positions before the run may have (another summary).
        const start = this.#entries.indexOf(plan.members[0]!);
        if (start >= 0 && plan.members.every((m, i) => this.#entries[start + i] === m)) {
          this.#applyRange({ ...plan, start }, summaryId, digest, commit, lost.keeps(), commit.items[0]!.audit.seq);
          return;
        }
        // The run is no longer whole: each live member still shows what the store committed for it.
        const now = this.#settings.clock.now();
        let freed = 0;
        for (const [i, e] of plan.live.entries()) {
          if (this.#byId.get(e.span.id) !== e) continue;
          const member: PlannedMember = { entry: e, mode: "summarize", policy: this.#settings.kinds[e.span.kind as K], body: null, pinsCarried: [] };
          freed += this.#apply(member, commit.items[i]!, lost.keeps()[i] ?? null, now);
        }
        this.#decided(plan.live.map((e) => e.span.id), freed);
      },
    };
    for (const m of plan.members) this.#doubts.set(spanIdOf(m), doubt);
    const message = `${from}–${to} kept for now: the store may have committed the summary, but its answer was lost (${errorMessage(lost.unknown)}); the next directive for its spans reads back what committed first`;
    const line = rangeRejectionLine(from, to, message);
    this.#notice(line);
    return { op: "summarize_range", status: "rejected", from, to, reason: "outcome-unknown", message, line, auditSeq: null };
  }

  /**
   * Settles an earlier prune of `spanId` whose outcome is unknown: `true` when there is none or it is now
   * known (and applied), `false` when the store still cannot say.
   */
  /** Settles every decision in doubt it can; returns the span ids still in doubt. */
  async #settleAll(): Promise<ReadonlySet<string>> {
    if (this.#doubts.size === 0) return new Set();
    for (const spanId of [...new Set(this.#doubts.keys())]) if (this.#doubts.has(spanId)) await this.#settle(spanId);
    return new Set(this.#doubts.keys());
  }

  async #settle(spanId: string): Promise<boolean> {
    const doubt = this.#doubts.get(spanId);
    if (doubt === undefined) return true;
    let commit: PruneCommit | null;
    try {
      commit = await doubt.resolve();
    } catch {
      return false;
    }
    await doubt.finish(commit);
    return true;
  }

  /** Rewrites one committed span; returns the tokens it freed. */
  #apply(member: PlannedMember, committed: PruneCommitItem, keep: Keep | null, now: number): number {
    const gone = prunedEntry(member, committed, keep ?? { until: null, keptUntil: null }, this.#settings.indexHintTokens);
    this.#entries[member.entry.pos] = gone;
    this.#byId.set(gone.spanId, gone);
    if (gone.group !== null && this.#prunedGroups.get(gone.group) !== "lossy") this.#prunedGroups.set(gone.group, gone.state === "tombstone" ? "lossy" : "reversible");
    if (gone.state === "tombstone" && this.#lossyUsed !== null) this.#lossyUsed++;
    return member.entry.span.tokens - goneTokens(gone, now, this.#settings.tombstone);
  }

  /** Lossy commitments the session may still make, counted from the stores' logs (for the map). */
  #lossyLeft(acceptLossy: boolean): number | Promise<number> {
    const budget = this.#settings.limits.lossyBudget;
    if (!acceptLossy || budget === null || budget === undefined) return Number.POSITIVE_INFINITY;
    return (async () => {
      // The home store's counter is the budget's one count (the commit decides by it too).
      const used = await this.#settings.auditStore.lossySpent(this.session);
      this.#lossyUsed = used;
      return budget - used;
    })();
  }

  #holdUntil(): number | null {
    const max = this.#settings.limits.maxLengthMs;
    return max === null || max === undefined ? null : this.#startedAt + max;
  }

  async #recall(query: string, raw: string): Promise<RecallOutcome> {
    // A span whose prune is in doubt is still live here: try to settle it, and answer from the window if
    // the store still cannot say (the bytes are the window's either way).
    await this.#settle(query);
    return recall(query, raw, {
      session: this.session,
      tombstone: this.#settings.tombstone,
      now: () => this.#settings.clock.now(),
      find: (q) => this.#byId.get(q) ?? (HANDLE.test(q) ? this.#entries.find((e) => e.handle === q) : undefined),
      storeOf: (e) => (e.store === null ? this.#settings.auditStore : this.#settings.stores.get(e.store)!),
      stores: () => this.#distinctStores(),
      auditStore: this.#settings.auditStore,
      audit: (store, draft) => this.#audit(store, draft),
      copyLost: (entry) => {
        entry.copyLost = true;
        // Its line must stop offering the recall now, not at the next compaction point.
        this.#compactNow();
      },
    });
  }

  async #search(text: string, regex: boolean, raw: string): Promise<SearchOutcome | InvalidOutcome> {
    const compiled = compileQuery(text, regex, this.#settings.directiveLimits.maxQueryChars);
    if (!compiled.ok) return this.#invalid("search", [{ path: "query", message: compiled.message }], raw);
    return search(compiled.query, raw, {
      session: this.session,
      // The directive tools' own calls and answers are the runtime's traffic, not what the model looks for.
      entries: () => (this.#directiveNames.size === 0 ? this.#entries : this.#entries.filter((e) => !this.#isDirectiveTraffic(e))),
      store: (name) => this.#settings.stores.get(name)!,
      auditStore: this.#settings.auditStore,
      budgetTokens: this.#settings.limits.searchTokens ?? DEFAULT_SEARCH_TOKENS,
      audit: (store, draft) => this.#audit(store, draft),
      // The session's spans besides this window's: folded traffic and the directive tools' own are this window's.
      sessionSpans: async () => {
        const home = this.#settings.auditStore;
        // The session's span ids are span_1 … span_<n>: when this window knows each of them, no other window
        // appended any, and the registry (a row per span) need not be read.
        if (home.sessionSpanCount !== undefined && this.#knowsSpans(await home.sessionSpanCount(this.session))) return [];
        return (await home.sessionSpans(this.session)).map((s) => s.spanId).filter((id) => {
          const e = this.#byId.get(id);
          return !this.#folded.has(id) && (e === undefined || !this.#isDirectiveTraffic(e));
        });
      },
    });
  }

  /** Whether the window holds every one of `span_1` … `span_<n>`. */
  #knowsSpans(n: number): boolean {
    if (n > this.#byId.size) return false;
    for (let k = 1; k <= n; k++) if (!this.#byId.has(`span_${k}`)) return false;
    return true;
  }

  async #summarizeRange(from: string, to: string, digest: string, raw: string): Promise<RangeOutcome> {
    digest = digest.toWellFormed(); // as at append: a lone surrogate from JSON is not sent on
    // A prune or summary in doubt over any span: read back what committed before planning over it.
    const unsettled = await this.#settleAll();
    const planned = planRange(
      { entries: this.#entries, now: this.#settings.clock.now(), policyOf: (kind) => this.#settings.kinds[kind as K], pinsFor: (policy) => this.#pinsFor(policy) },
      from, to,
    );
    const refuse = async (reason: RejectReason, message: string, auditSeq?: number | null): Promise<RangeRejectedOutcome> => {
      const seq = auditSeq !== undefined ? auditSeq : await this.#audit(this.#settings.auditStore, refusedPruneDraft({
        spanId: from, kind: null, mode: "summarize", handle: null, conditions: null, reason: { code: reason as Exclude<RejectReason, "not-reversible" | "lossy-forbidden" | "lossy-budget"> }, directive: raw,
      }));
      const line = rangeRejectionLine(from, to, message);
      this.#notice(line);
      return { op: "summarize_range", status: "rejected", from, to, reason, message, line, auditSeq: seq };
    };
    if ("refusal" in planned) return refuse(planned.refusal.reason, planned.refusal.message);
    let { plan } = planned;
    const doubted = plan.members.map(spanIdOf).find((id) => unsettled.has(id));
    if (doubted !== undefined) {
      return refuse("outcome-unknown", `${doubted} kept: an earlier decision over it may have committed, and the store still cannot say whether it did`);
    }
    // Members pruned earlier: their copies must still be there, and give the digest their pinned ids.
    let verified;
    try {
      verified = await verifyPrunedMembers(plan, {
        lookup: (store, handle) => this.#settings.stores.get(store)!.lookup(this.session, { handle }),
        pinsFor: (kind) => this.#pinsFor(this.#settings.kinds[kind as K]),
      });
    } catch (err) {
      return refuse("store-error", `the store failed before the summary (${errorMessage(err)}); nothing was committed`);
    }
    if ("refusal" in verified) return refuse(verified.refusal.reason, verified.refusal.message);
    plan = { ...plan, ids: [...new Set([...plan.ids, ...verified.ids])] };
    // The summary's id is minted by the home store like any span's, so no other process can take it.
    let summaryId: string;
    try {
      summaryId = (await this.#settings.auditStore.registerSpan(this.session, { kind: SUMMARY_KIND, hash: contentHash(digest), group: null, message: null, store: null })).spanId;
    } catch (err) {
      return refuse("store-error", `the store failed before the summary (${errorMessage(err)}); nothing was committed`);
    }
    let commit: PruneCommit | null = null;
    let keeps: readonly (Keep | null)[] = [];
    let auditSeq: number | null;
    if (plan.live.length > 0) {
      const store = this.#settings.stores.get(this.#settings.kinds[plan.live[0]!.span.kind as K].store!)!;
      let result;
      try {
        await this.#pendingAudit.flush();
        result = await commitRange(plan, raw, {
          session: this.session, store, holdUntil: this.#holdUntil(), policyOf: (kind) => this.#settings.kinds[kind as K],
          keep: { now: this.#settings.clock.now(), holdUntil: this.#holdUntil() }, decided: this.#decide(plan.live.length),
        });
      } catch (err) {
        return refuse("store-error", `the store failed during the check (${errorMessage(err)}); nothing was committed`);
      }
      if ("unknown" in result) return this.#rangeInDoubt(plan, summaryId, digest, from, to, raw, result);
      if ("refusal" in result) return refuse(result.refusal.reason, result.refusal.message, result.refusal.auditSeq);
      commit = result.commit;
      keeps = result.keeps;
      auditSeq = commit.items[0]!.audit.seq;
    } else {
      // Every member is held already (index lines and lower summaries): the decision touches no copy.
      auditSeq = await this.#audit(this.#settings.auditStore, {
        op: "prune", status: "reversible", spanId: summaryId, kind: "summary", mode: "summarize", conditions: null, handle: null,
        repersisted: false, acceptLossy: false, reason: null, pinsCarried: 0, directive: raw,
      });
    }
    return this.#applyRange(plan, summaryId, digest, commit, keeps, auditSeq);
  }

  /** A range summary the store committed (or that touched no copy): rewrites the window. */
  #applyRange(plan: RangePlan, summaryId: string, digest: string, commit: PruneCommit | null, keeps: readonly (Keep | null)[], auditSeq: number | null): RangeSummaryOutcome {
    // Committed: now, and only now, rewrite the window.
    const now = this.#settings.clock.now();
    const tombstone = this.#settings.tombstone;
    const before = plan.members.reduce(
      (n, e) => n + (e.state === "live" ? e.span.tokens : e.state === "summary" || e.state === "lost" ? countTokens(e.text) : goneTokens(e, now, tombstone)),
      0,
    );
    const pruned: Array<{ spanId: string; handle: string; repersisted: boolean }> = [];
    const members = plan.members.map((e): Entry => {
      if (e.state !== "live") return e;
      const i = plan.live.indexOf(e);
      const item = commit!.items[i]!;
      const gone = prunedEntry({ entry: e, mode: "summarize", body: null }, item, keeps[i] ?? KEPT_FOR_SESSION, this.#settings.indexHintTokens);
      this.#byId.set(gone.spanId, gone);
      // A call summarized while its result was pending: the result joins the group's fate when it arrives.
      if (gone.group !== null && !this.#prunedGroups.has(gone.group)) this.#prunedGroups.set(gone.group, "reversible");
      pruned.push({ spanId: gone.spanId, handle: gone.handle!, repersisted: item.decision.status === "reversible" && item.decision.repersist });
      return gone;
    });
    const { entry, carried } = summaryEntry(summaryId, members, digest, plan.ids);
    this.#entries.splice(plan.start, plan.members.length, entry);
    for (const [i, e] of this.#entries.entries()) if (e.state === "live") e.pos = i;
    this.#byId.set(summaryId, entry);
    const tokensFreed = before - countTokens(entry.text);
    const applies = this.#decided([summaryId, ...members.map(spanIdOf)], tokensFreed);
    return {
      op: "summarize_range", status: "summarized", spanId: summaryId, members: members.map(spanIdOf), pruned,
      line: entry.text, tokensFreed, pinsCarried: carried, auditSeq, applies,
    };
  }

  async #invalid(op: "prune" | "recall" | "map" | "search" | "summarize_range" | "compact" | null, issues: InvalidOutcome["issues"], raw: string): Promise<InvalidOutcome> {
    // A message that already names its field ("accept_lossy must be …") is not prefixed with it again.
    const message = issues.map((i) => (i.path && !i.message.startsWith(`${i.path} `) ? `${i.path}: ${i.message}` : i.message)).join("; ") || "invalid directive";
    const seq = await this.#audit(this.#settings.auditStore, invalidDraft(op, raw));
    const line = invalidLine(message.length > 160 ? `${cutUnits(message, 157)}...` : message); // on a code point (finding 25.9)
    this.#notice(line);
    return { op, status: "invalid", issues, message, line, auditSeq: seq };
  }

  /**
   * The span id a read (recall, `span`) names: a bare id, or a ref of this session, whichever window of it
   * made the ref (a window before a restart, another process): the session's ids name the same spans in
   * all of them. `null` for a ref of another session or anything else. Only reads take this; a prune
   * takes a ref of this window alone.
   */
  #readingId(value: unknown): string | null {
    const reading = readRef(this.#self, value);
    if (reading.kind === "own" || reading.kind === "bare") return reading.spanId;
    return reading.kind === "foreign" && reading.owner.session === this.session ? reading.spanId : null;
  }

  /**
   * A directive given as data (code builds them from refs): its refs read as the span ids the parser
   * knows. A ref of this window becomes its id; a ref of another window becomes its id too, so the rest of
   * the directive is still checked, and is returned to be refused once it parses.
   */
  #localize(value: unknown): { readonly value: unknown; readonly foreign: { readonly reading: Extract<RefReading, { kind: "foreign" }>; readonly given: string } | null } {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { value, foreign: null };
    let out: Record<string, unknown> | null = null;
    let foreign: { readonly reading: Extract<RefReading, { kind: "foreign" }>; readonly given: string } | null = null;
    for (const field of REF_FIELDS) {
      const given = Object.hasOwn(value, field) ? (value as Record<string, unknown>)[field] : undefined;
      if (typeof given !== "string" || SPAN_ID.test(given)) continue;
      const reading = readRef(this.#self, given);
      if (reading.kind !== "own" && reading.kind !== "foreign") continue;
      out ??= { ...(value as Record<string, unknown>) };
      out[field] = reading.spanId;
      if (reading.kind === "foreign") foreign ??= { reading, given };
    }
    return { value: out ?? value, foreign };
  }

  /**
   * Code named a span by something that is not a ref of this window. Refused before anything is looked
   * up, so another window's span of the same id is never touched; audited as refused, with the ref as
   * given. No line is rendered: the model asked for nothing, and its window stays as it was.
   */
  #refuseForeign(op: "prune", reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<RejectedOutcome>;
  #refuseForeign(op: "summarize_range", reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<RangeRejectedOutcome>;
  #refuseForeign(op: Exclude<DirectiveOp, "prune" | "summarize_range">, reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<InvalidOutcome>;
  #refuseForeign(op: DirectiveOp, reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<DirectiveOutcome>;
  async #refuseForeign(op: DirectiveOp, reading: ForeignReading, given: unknown, raw: string, mode: PruneMode): Promise<DirectiveOutcome> {
    const message = foreignRefMessage(this.#self, reading, given);
    const auditSeq = await this.#audit(this.#settings.auditStore, refusedPruneDraft({
      spanId: null, kind: null, mode, handle: null, conditions: null, reason: { code: "foreign-ref" }, directive: raw,
    }));
    const spanId = reading.kind === "none" ? "(not a ref)" : reading.spanId;
    if (op === "summarize_range") {
      return { op, status: "rejected", from: spanId, to: spanId, reason: "foreign-ref", message, line: rangeRejectionLine(spanId, spanId, message), auditSeq };
    }
    if (op !== "prune") return { op, status: "invalid", issues: [{ path: "span_id", message }], message, line: invalidLine(message), auditSeq };
    return rejectedOutcome({
      spanId, kind: null, mode, reason: "foreign-ref", conditions: null, why: rejectionWhy("foreign-ref", null, mode), message,
      auditSeq, lossyHintPolicy: null, live: false,
    });
  }

  /** A refusal decided before any store was consulted (unknown span, wrong mode, group shape). */
  async #refuseEarly(r: {
    spanId: string; kind: string | null; mode: PruneMode; reason: { readonly code: PlanRejectReason };
    message: string; entry: LiveEntry | null; raw: string;
  }): Promise<RejectedOutcome> {
    const { entry } = r;
    const store = entry?.store ? this.#settings.stores.get(entry.store)! : this.#settings.auditStore;
    const seq = await this.#audit(store, refusedPruneDraft({
      spanId: SPAN_ID.test(r.spanId) ? r.spanId : null, kind: r.kind, mode: r.mode, handle: entry?.handle ?? null, conditions: null,
      reason: r.reason, directive: r.raw,
    }));
    const outcome = rejectedOutcome({
      spanId: entry?.span.id ?? r.spanId, kind: entry?.span.kind ?? r.kind, mode: r.mode, reason: r.reason.code, conditions: null,
      why: rejectionWhy(r.reason.code, null, r.mode), message: r.message, auditSeq: seq, lossyHintPolicy: null, live: entry !== null,
    });
    if (entry) this.#noticeOn(entry, outcome.line);
    else this.#notice(outcome.line);
    return outcome;
  }

  /** The store decided, and a member refused: the group stays, and the lead's line says which and why. */
  #refuseChecked(
    plan: PrunePlan, mode: PruneMode, lead: PruneCommitItem, items: readonly PruneCommitItem[],
    refusal: NonNullable<GroupDecision["refusal"]>,
  ): RejectedOutcome {
    const refusing = items[refusal.member]!;
    const spanId = plan.target.span.id;
    const why = rejectionWhy(refusal.reason, plan.members[plan.lead]!.policy.store === null ? null : refusing.check, mode);
    const message = (refusal.byLead ? `${spanId} cannot be pruned: ${why}` : `${spanId} is grouped with a span that cannot be pruned: ${why}`) +
      persistFailures(plan.members);
    const outcome = rejectedOutcome({
      spanId, kind: plan.target.span.kind, mode, reason: refusal.byLead ? refusal.reason : "group", conditions: refusing.check.conditions,
      why: refusal.byLead ? why : `group: ${why}`, message, auditSeq: lead.audit.seq, lossyHintPolicy: plan.members[plan.lead]!.policy,
    });
    this.#noticeOn(plan.target, outcome.line);
    return outcome;
  }

  async #storeFailed(entry: LiveEntry, mode: PruneMode, raw: string, err: unknown): Promise<RejectedOutcome> {
    const message = `${entry.span.id} kept: the store failed during the check (${errorMessage(err)}); nothing was committed`;
    const seq = await this.#audit(this.#settings.auditStore, refusedPruneDraft({
      spanId: entry.span.id, kind: entry.span.kind, mode, handle: entry.handle, conditions: null, reason: { code: "store-error" }, directive: raw,
    }));
    const outcome = rejectedOutcome({
      spanId: entry.span.id, kind: entry.span.kind, mode, reason: "store-error", conditions: null,
      why: rejectionWhy("store-error", null, mode), message, auditSeq: seq, lossyHintPolicy: null,
    });
    this.#noticeOn(entry, outcome.line);
    return outcome;
  }

  #notice(line: string): void {
    this.#notices = [...this.#notices, line].slice(-MAX_NOTICES);
  }

  /**
   * A rejection line for a live span: rendered under the span from the next compaction point on, and at
   * the end of the window until then (a line inserted mid-window would rewrite every cached token after it).
   */
  #noticeOn(entry: LiveEntry, line: string): void {
    entry.notice = line;
    if (this.#shown.immediate) this.#compactNow();
    else this.#notice(line);
  }

  #audit(store: BackingStore, draft: AuditDraft): Promise<number | null> {
    return this.#pendingAudit.append(store, { ...draft, decided: this.#decide(1) });
  }

  /**
   * Takes `n` consecutive values of the decision clock: never below the clock's milliseconds × 1000,
   * always above the last value taken (in this process, or in the session's records when it resumed).
   */
  #decide(n: number): number {
    const first = Math.max(Math.floor(this.#settings.clock.now()) * 1000, this.#lastDecided + 1);
    this.#lastDecided = first + n - 1;
    return first;
  }
}

/** A prune whose outcome is unknown: how to ask the store again, and what to do with the answer. */
interface Doubt {
  resolve(): Promise<PruneCommit | null>;
  finish(commit: PruneCommit | null): Promise<void>;
}

function lossyCount(commit: PruneCommit): number {
  return commit.items.filter((it) => it.decision.status === "lossy").length;
}

/** A plain-data copy of untrusted input, taken once; an unreadable value becomes a marker string. */
function snapshot(input: unknown): unknown {
  if (typeof input === "string" || input === null || typeof input !== "object") return input;
  try {
    // structuredClone reads each property once and keeps non-JSON values (a Boolean object stays one,
    // so it still fails the schema); proxies and functions cannot be cloned and end up invalid.
    return structuredClone(input);
  } catch {
    return "[unreadable directive]";
  }
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
