/**
 * `ContextWindow`, the facade agent code holds. It owns no decision logic: it runs its operations one at
 * a time (`#serial`), wraps each in its telemetry span, and hands it to the pipeline step that does it —
 * `prune.ts` and `summarize.ts` (plan → commit → apply, through one commit step, `commit-step.ts`),
 * `directives.ts` (the untrusted path), `reads.ts` (recall, search), `mapping.ts` (the reversibility
 * map), `lifecycle.ts` (append, resume, compact, end). The steps share `WindowCore` (`core.ts`): the
 * settings, the state (`state.ts`), what the model was shown (`compaction.ts`), the audit queue and the
 * decisions in doubt (`doubts.ts`).
 */
import { directiveForAudit, type AuditRecord } from "../audit.js";
import { IrreversiblePruneError } from "../errors.js";
import type {
  CompactOutcome, DirectiveOutcome, InvalidOutcome, LossyOutcome, ProviderCompactionOutcome, PruneOutcome, RangeOutcome, RecallOutcome, ReversibleOutcome,
  SearchOutcome, WindowMap,
} from "../outcome.js";
import { parseDirective, type SearchDirective, type SummarizeRangeDirective } from "../directive.js";
import { createTelemetry, decide } from "../telemetry/index.js";
import type { ToolCall, ToolCallResult } from "../tools/call.js";
import type { DirectiveTool } from "../tools/schemas.js";
import type { Span, SpanRef } from "../types.js";
import { WindowCore } from "./core.js";
import { startDraft } from "./audit-drafts.js";
import { answerToolCall, applyDirective, localize, readingId, readToolCall } from "./directives.js";
import { appendSpan, auditLog, checkCopies, compactAsked, endSession, restore } from "./lifecycle.js";
import { forecastLines, mapWindow } from "./mapping.js";
import { resolveWindowOptions, type AppendInput, type ContextWindowOptions, type PruneRequest, type WindowSettings } from "./window-options.js";
import { joinGroupFate, prune } from "./prune.js";
import { recallSpan, searchWindow } from "./reads.js";
import { describeWindow, mintRef, newWindowIdentity, readRef, RefError } from "./refs.js";
import { invalid, refuseForeign } from "./refusals.js";
import {
  planProviderCompaction, recordProviderClearing, recordProviderCompaction, type ProviderClearing, type ProviderCompaction, type ProviderCompactionPlan,
} from "./provider-compaction.js";
import { restoreEntries } from "./resume.js";
import type { SearchRequest } from "./search.js";
import { summarizeRange } from "./summarize.js";
import { renderWindow, type WindowEntry } from "./view.js";

/**
 * The model's context window, with the runtime half of the two-party protocol: the model proposes
 * prunes, the window checks the backing store at execution time and disposes.
 *
 * There is no way to free a span except `prune`, `tryPrune`, `applyDirective` and `summarizeRange`, and
 * all of them go through the same commit step: verify the copy (existence and content hash), confirm the
 * handle, place a hold and append the audit record in one store transaction; only then is the window
 * rewritten.
 */
export class ContextWindow<K extends string = string> {
  readonly session: string;
  readonly #core: WindowCore;
  #tail: Promise<unknown> = Promise.resolve();
  /** Operations queued or running in `#serial`. */
  #queued = 0;

  constructor(options: ContextWindowOptions<K>) {
    const settings: WindowSettings<K> = resolveWindowOptions(options);
    this.session = settings.session;
    const core = new WindowCore(settings as WindowSettings<string>, newWindowIdentity(this.session));
    core.telemetry = createTelemetry(options.telemetry, {
      session: this.session,
      span: (id) => {
        const e = core.state.get(id);
        return e === undefined ? undefined : { kind: e.state === "live" ? e.span.kind : e.kind, store: e.store };
      },
      storeOfKind: (kind) => (core.hasKind(kind) ? core.policyOf(kind).store : undefined),
      homeStore: core.home.name,
    });
    if (options.directiveTools !== undefined) core.learnTools(options.directiveTools);
    this.#core = core;
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
    const core = win.#core;
    const { settings } = core;
    const read = () => restoreEntries({
      session: core.session,
      home: core.home,
      stores: core.distinctStores(),
      store: (name) => settings.stores.get(name),
      policyOf: (kind) => (core.hasKind(kind) ? core.policyOf(kind) : undefined),
      tombstone: settings.tombstone,
      hintTokens: settings.indexHintTokens,
      now: core.startedAt,
      maxLengthMs: settings.limits.maxLengthMs ?? null,
    });
    const restored = await (core.telemetry === null ? read() : core.telemetry.resume(read));
    const named = settings.policyName;
    if (restored.policy !== null && named !== null && restored.policy !== named && settings.policyChange !== "allow") {
      throw new TypeError(
        `ContextWindow.resume: session ${JSON.stringify(core.session)} was written under policy ${restored.policy} (by the latest window to open it), and this window's is ${named}: ` +
          `its modes and lossy budget would change mid-session. Resume it with ${restored.policy}'s guard, or pass policyChange: "allow"`,
      );
    }
    restore(core, restored);
    // Under a policy the chain does not name yet (a change allowed, or a session begun before windows named
    // theirs): recorded now, so the next resume compares with it.
    if (named !== null && restored.policy !== named) await core.audit(core.home, startDraft(named));
    return win;
  }

  /**
   * Appends a span and, when its kind names a store, persists it there first so that a later prune
   * can be reversible. A store failure does not lose the span: it stays live without a handle, and a
   * later prune sees that (and may re-persist).
   */
  append<const P extends K>(input: AppendInput<P>): Promise<SpanRef<P>> {
    return this.#serial(async () => {
      this.#assertOpen();
      const entry = await appendSpan(this.#core, input);
      // A span that arrives after its group was pruned joins the group's fate (`joinGroupFate`).
      await joinGroupFate(this.#core, entry);
      return mintRef(this.#core.self, entry.span.id) as SpanRef<P>;
    });
  }

  /**
   * This window object's identity, as its refs carry it (eight hex digits, random per window): a ref of
   * another window, even of the same session, is refused by `prune`.
   */
  get windowId(): string {
    return this.#core.self.window;
  }

  /**
   * The ref of a span this window holds, from its id (`span_7`, as entries, outcomes and the model name
   * it) or from a ref of this session written down earlier (JSON, a database, a window before a restart).
   * Checked now, never cast: an id this window does not know, a ref of another session, or a span of
   * another kind than `kind` (when given) throws a `RefError`, with both sides named.
   */
  ref<P extends K = K>(id: string, kind?: P): SpanRef<P> {
    const { self } = this.#core;
    const reading = readRef(self, id);
    if (reading.kind === "none") throw new RefError("unknown-span", `${JSON.stringify(String(id).slice(0, 48))} names no span of this window, ${describeWindow(self)}`);
    if (reading.kind === "foreign" && reading.owner.session !== this.session) {
      throw new RefError("foreign-session", `${reading.spanId} is a ref of ${describeWindow(reading.owner)}, not of this window's ${describeWindow(self)}: a span of another session cannot be reached from here`);
    }
    const entry = this.#core.state.get(reading.spanId);
    if (entry === undefined) throw new RefError("unknown-span", `${reading.spanId} is not a span of this window, ${describeWindow(self)}`);
    const actual = entry.state === "live" ? entry.span.kind : entry.kind;
    if (kind !== undefined && actual !== kind) {
      throw new RefError("wrong-kind", `${reading.spanId} is a span of kind ${actual}, not ${String(kind)}`);
    }
    return mintRef(self, reading.spanId) as SpanRef<P>;
  }

  /** The refs of the live spans, in window order: after `resume`, every span that came back, with no cast. */
  refs(): SpanRef<K>[] {
    // A span whose pending prune will not be applied (its copy is no longer promised) is live.
    this.#core.settleLapses();
    const out: SpanRef<K>[] = [];
    for (const e of this.#core.state.entries) if (e.state === "live") out.push(mintRef(this.#core.self, e.span.id) as SpanRef<K>);
    return out;
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
    const core = this.#core;
    return this.#serial(() => decide(core.telemetry, "prune", async () => {
      this.#assertOpen();
      const raw = directiveForAudit({ span: request.span, mode: request.mode, digest: request.digest, acceptLossy: request.acceptLossy });
      // Only a ref of this window names a span here: a ref of another session names another span that has
      // the same id, and a bare id could be anyone's.
      const reading = readRef(core.self, request.span);
      if (reading.kind !== "own") return refuseForeign(core, "prune", reading, request.span, raw, request.mode);
      if (request.mode === "summarize" && (typeof request.digest !== "string" || request.digest.length === 0)) {
        return invalid(core, "prune", [{ path: "digest", message: "summarize needs a digest" }], raw);
      }
      return prune(core, reading.spanId, request.mode, request.digest ?? null, request.acceptLossy === true, raw);
    }));
  }

  /**
   * The untrusted path: model output in (a JSON string or parsed value), an outcome out. Never throws;
   * a bad directive leaves the window unchanged and is audited with its reason.
   */
  applyDirective(input: unknown): Promise<DirectiveOutcome> {
    return this.#serial(() => decide(this.#core.telemetry, null, () => applyDirective(this.#core, input)));
  }

  /**
   * Handles a provider's tool call to one of the directive tools: `{ name, arguments }`, arguments as JSON
   * text or a parsed object (OpenAI strict mode's `null`s read as absent). Never throws.
   *
   * Returns the outcome and the exact text to send back as the tool result, or `null` when the name is
   * not one of `tools` (another tool of the agent's, for the caller to run). Arguments that do not parse
   * are an `invalid` outcome, audited like any directive, with `isError` set.
   */
  async handleToolCall(call: ToolCall, tools?: readonly DirectiveTool[]): Promise<ToolCallResult | null> {
    const reading = readToolCall(this.#core, call, tools);
    if (reading === null) return null;
    const core = this.#core;
    return answerToolCall(core, reading, (d, callId) => this.#serial(() => decide(core.telemetry, null, () => applyDirective(core, d, callId))), (op) => this.#serial(op));
  }

  /**
   * Recall by span id (`span_7`) or handle (`#3`). Three answers that never collapse: `found` (bytes
   * identical to what was pruned), `pruned-unrecoverable`, `unknown` (this window never held it); plus
   * `unavailable` when the store failed and the copy may still exist.
   */
  recall(query: string): Promise<RecallOutcome> {
    const core = this.#core;
    // A ref of another session stays as given, which this window answers truthfully as `unknown`.
    return this.#serial(() => decide(core.telemetry, "recall", () => {
      return recallSpan(core, readingId(core, query) ?? String(query), directiveForAudit({ op: "recall", span_id: query }));
    }));
  }

  /**
   * What the model reads next: live spans, index lines, tombstones and rejection lines, in order. With
   * `{ map: true }`, the reversibility map follows, forecast from what the window knows (each copy's age
   * against its store's retention) without asking the stores; `map()` asks them.
   */
  render(options: { readonly map?: boolean } = {}): string {
    const text = renderWindow(this.entries(), this.#core.notices);
    return options.map === true ? `${text}\n\n${forecastLines(this.#core, text)}` : text;
  }

  /**
   * The reversibility map: for each live span, what a prune would be right now (reversible, reversible
   * until a time, lossy only with `accept_lossy`, never) and the window's token pressure. Advisory: the
   * check at execution time still decides. Asks each backed span's store for its copy (one lookup per
   * span) and audits the answer; the model's form is the directive `{"op":"map"}`.
   */
  map(): Promise<WindowMap> {
    return this.#serial(() => decide(this.#core.telemetry, "map", () => mapWindow(this.#core, directiveForAudit({ op: "map" }))));
  }

  /**
   * Finds text again: an exact substring, or with `regex: true` an RE2 pattern (linear time), over the
   * live spans, the verified copies of pruned spans and what stands in pruned spans' places. The answer
   * lists matching spans with snippets and handles within the policy's search budget, and its coverage
   * names every pruned span that could not be searched (lossy, copy lost, store unreachable): those may
   * have held the text. A bad query is an `invalid` outcome, audited, the window unchanged.
   */
  search(request: string | SearchRequest): Promise<SearchOutcome | InvalidOutcome> {
    const core = this.#core;
    const { query, regex } = typeof request === "string" ? { query: request, regex: false } : request;
    const directive = { op: "search", query, ...(regex === undefined ? {} : { regex }) };
    return this.#serial(() => decide(core.telemetry, "search", async () => {
      const raw = directiveForAudit(directive);
      const parsed = parseDirective(directive, core.settings.directiveLimits);
      if (!parsed.ok) return invalid(core, "search", parsed.issues, raw);
      const d = parsed.directive as SearchDirective;
      return searchWindow(core, d.query, d.regex === true, raw);
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
    const core = this.#core;
    const directive = { op: "summarize_range", from: String(request.from), to: String(request.to), digest: request.digest };
    return this.#serial(() => decide(core.telemetry, "summarize_range", async () => {
      this.#assertOpen();
      const raw = directiveForAudit(directive);
      const { value, foreign } = localize(core, directive);
      const parsed = parseDirective(value, core.settings.directiveLimits);
      if (!parsed.ok) return invalid(core, "summarize_range", parsed.issues, raw);
      if (foreign !== null) return refuseForeign(core, "summarize_range", foreign.reading, foreign.given, raw, "summarize");
      const d = parsed.directive as SummarizeRangeDirective;
      return summarizeRange(core, d.from, d.to, d.digest, raw);
    }));
  }

  /**
   * What a provider's own compaction would do to this window now, span by span, under its policy: the spans
   * it may free with their copies held, the ones it may only lose (lossy commitments the policy allows, within
   * the budget), and the ones the policy keeps — which must be said again after the provider's block. The
   * request builders (`anthropicCompaction`, `openAICompaction`) refuse what this cannot keep true.
   */
  providerCompactionPlan(): Promise<ProviderCompactionPlan> {
    return this.#serial(async () => {
      this.#assertOpen();
      return planProviderCompaction(this.#core);
    });
  }

  /**
   * Records a compaction the provider made (its response's compaction block or item; a `Transcript` calls this
   * for you): every live span before it is pruned through the checks, one audit record each, the lossy budget
   * where it applies; what the check refuses stays live and is said again after the block; the block is kept,
   * in the home store too, and sent back verbatim by its provider's renderer, beside a runtime line whose id
   * recalls what it covered. A failed compaction changes nothing.
   */
  providerCompacted(compaction: ProviderCompaction): Promise<ProviderCompactionOutcome> {
    const core = this.#core;
    return this.#serial(async () => {
      this.#assertOpen();
      const record = () => recordProviderCompaction(core, compaction);
      return core.telemetry === null ? record() : core.telemetry.providerCompaction(record);
    });
  }

  /**
   * Records a clearing the provider reports having done outside pruneguard's checks (Anthropic's
   * `clear_tool_uses` edit, which the request builders refuse): audited, and said to the model in a line.
   */
  providerCleared(clearing: ProviderClearing): Promise<string> {
    const core = this.#core;
    return this.#serial(async () => {
      this.#assertOpen();
      const record = () => recordProviderClearing(core, clearing);
      return core.telemetry === null ? record() : core.telemetry.providerClearing(clearing, record);
    });
  }

  /**
   * The window's positions as the model reads them, for renderers of provider message shapes: as the last
   * compaction point rendered them, then the spans appended since. Decisions since then show at the next
   * compaction point (`compact()`), so consecutive renderings share their whole earlier prefix.
   */
  entries(): WindowEntry[] {
    return [...this.#core.views()];
  }

  /**
   * How many compaction points the window has made: each is a rewrite of what the model reads from the
   * first changed position on (a request after it re-sends that part of the prompt uncached).
   */
  get compactionPoints(): number {
    return this.#core.shown.count;
  }

  /**
   * How many of `entries()` the last compaction point rendered; the rest were appended since. Renderers
   * place a cache breakpoint there (`toAnthropic(win, { cacheControl: true })`): that prefix stays as it is
   * until the next compaction point.
   */
  get compactedEntries(): number {
    return this.#core.shown.compacted;
  }

  /**
   * Applies every pending decision to what the model reads now — a compaction point — and folds away the
   * directive tool calls already acted on (prune, map, compact) with their results. Returns what it freed
   * and what it rewrote. The window does this by itself when the policy's compaction settings say so;
   * call it when you know the cache is cold anyway (after a long pause), or before a summary step.
   */
  compact(): Promise<CompactOutcome> {
    return this.#serial(() => decide(this.#core.telemetry, "compact", () => compactAsked(this.#core, directiveForAudit({ op: "compact" }))));
  }

  /** Lines that are not attached to a span (invalid directives), shown until the next append. */
  notices(): readonly string[] {
    return [...this.#core.notices];
  }

  /** A live span by id or by this window's ref, or `undefined`. */
  span(id: string): Span | undefined {
    const spanId = readingId(this.#core, id);
    if (spanId === null) return undefined;
    this.#core.settleLapses();
    const e = this.#core.state.get(spanId);
    return e?.state === "live" ? e.span : undefined;
  }

  /** Tokens the window costs now, as rendered (o200k_base). */
  tokens(): number {
    return this.#core.renderedTokens(this.render());
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
    const core = this.#core;
    const check = () => checkCopies(core);
    return this.#serial(() => (core.telemetry === null ? check() : core.telemetry.checkCopies(check)));
  }

  /** Every decision of this session, across its stores, oldest first. */
  auditLog(): Promise<AuditRecord[]> {
    // Records waiting to be written (an automatic compaction point's) are written first, when the store can;
    // in turn with the window's operations, so a prune whose transaction is running is written before them.
    return this.#serial(() => auditLog(this.#core));
  }

  /**
   * Audit records not written yet: decisions whose store was failing (retried on the next write), and the
   * window's own compaction points, written with the next record (or by `auditLog()` and `end()`).
   */
  get pendingAudit(): number {
    return this.#core.pendingAudit.size;
  }

  /**
   * Ends the session: releases its holds so their copies age out under normal retention. Recall still
   * answers for what is left; prunes and appends are refused.
   */
  end(): Promise<void> {
    return this.#serial(() => endSession(this.#core));
  }

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
    if (this.#core.ended) throw new Error(`ContextWindow: session ${this.session} has ended`);
  }
}
