import { directiveForAudit, type AuditDraft, type AuditRecord } from "../audit.js";
import { decideGroup, type GroupDecision } from "../decision/group.js";
import { DEFAULT_LIMITS, HANDLE, parseDirective, SPAN_ID, type DirectiveLimits } from "../directive.js";
import { errorMessage, IrreversiblePruneError } from "../errors.js";
import { contentHash } from "../hash.js";
import type { DirectiveOutcome, InvalidOutcome, LossyOutcome, PruneOutcome, RecallOutcome, RejectedOutcome, ReversibleOutcome } from "../outcome.js";
import { findPins } from "../pins.js";
import { DEFAULT_TOMBSTONE, indexLine, invalidLine, rejectionWhy, replacementHeader, tombstoneLine } from "../render.js";
import { MemoryStore } from "../stores/memory.js";
import type { BackingStore, CheckResult, PruneCommitItem, PruneDecision, PruneItem } from "../stores/store.js";
import { countTokens } from "../tokens.js";
import { systemClock, type Clock, type KindPolicy, type PinPattern, type PruneMode, type SessionLimits, type Span, type SpanMessage, type SpanRef } from "../types.js";
import { checkedPruneDraft, invalidDraft, refusedPruneDraft } from "./audit-drafts.js";
import { PendingAudit } from "./audit-queue.js";
import type { Entry, GoneEntry, LiveEntry } from "./entries.js";
import { committedOutcome, rejectedOutcome } from "./outcomes.js";
import { persistFailures, planPrune, type PlannedMember, type PlanRejectReason, type PrunePlan } from "./plan.js";
import { recall } from "./recall.js";

/** Options of a `ContextWindow`. `kinds` is the runtime form of a policy (generated guards pass it). */
export interface ContextWindowOptions<K extends string> {
  /** The session this window belongs to; every store call is scoped to it. */
  readonly session: string;
  readonly kinds: { readonly [P in K]: KindPolicy };
  /** The stores kinds name, by name. */
  readonly stores: { readonly [name: string]: BackingStore };
  readonly clock?: Clock;
  readonly limits?: SessionLimits;
  /** Pins for every kind (merged with each kind's own). */
  readonly pins?: readonly PinPattern[];
  /** Tombstone wording with `{span}`; at most 13 tokens when filled. */
  readonly tombstone?: string;
  /**
   * The store that logs decisions touching no store (invalid directives, unbacked kinds). Default: the
   * first store in `stores`, or a private in-memory one when there is none.
   */
  readonly auditStore?: string;
  readonly directiveLimits?: Partial<DirectiveLimits>;
}

/** A span to append. */
export interface AppendInput<K extends string> {
  readonly kind: K;
  readonly text: string;
  /** Tool call/result group: members prune together or not at all. Defaults to a tool message's `callId`. */
  readonly group?: string;
  /** Its place in a provider conversation, for `toOpenAI` / `toAnthropic` / `toAISDK`. */
  readonly message?: SpanMessage;
}

/** A prune written in code: the typed path. */
export interface PruneRequest<K extends string = string> {
  readonly span: SpanRef<K>;
  readonly mode: PruneMode;
  /** Required for `summarize`: the digest that replaces the span. */
  readonly digest?: string;
  /** Accept an irreversible loss when the copy cannot be verified (only where the kind allows it). */
  readonly acceptLossy?: boolean;
}

/** What the window shows in one position, for renderers of provider message shapes. */
export type WindowEntry =
  | { readonly state: "live"; readonly span: Span; readonly handle: string | null; readonly notice: string | null }
  | { readonly state: "pruned"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null; readonly mode: PruneMode; readonly handle: string; readonly text: string }
  | { readonly state: "tombstone"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null; readonly mode: PruneMode; readonly text: string };



const MAX_NOTICES = 3;

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
  readonly #kinds: { readonly [P in K]: KindPolicy };
  readonly #stores: ReadonlyMap<string, BackingStore>;
  readonly #auditStore: BackingStore;
  readonly #clock: Clock;
  readonly #limits: SessionLimits;
  readonly #pins: readonly PinPattern[];
  readonly #tombstone: string;
  readonly #directiveLimits: DirectiveLimits;
  readonly #startedAt: number;
  readonly #entries: Entry[] = [];
  readonly #byId = new Map<string, Entry>();
  #notices: string[] = [];
  #nextSpan = 1;
  #lossyUsed: number | null = null;
  readonly #pendingAudit: PendingAudit;
  #ended = false;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(options: ContextWindowOptions<K>) {
    if (typeof options.session !== "string" || options.session.length === 0) {
      throw new TypeError("ContextWindow: session must be a non-empty string");
    }
    this.session = options.session;
    this.#pendingAudit = new PendingAudit(options.session);
    this.#kinds = freezeKinds(options.kinds);
    this.#stores = new Map(Object.entries(options.stores));
    this.#clock = options.clock ?? systemClock;
    this.#limits = options.limits ?? {};
    this.#pins = options.pins ?? [];
    this.#tombstone = options.tombstone ?? DEFAULT_TOMBSTONE;
    this.#directiveLimits = options.directiveLimits ? { ...DEFAULT_LIMITS, ...options.directiveLimits } : DEFAULT_LIMITS;
    this.#startedAt = this.#clock.now();
    if (!this.#tombstone.includes("{span}")) throw new TypeError("ContextWindow: tombstone must contain {span}");
    const prefixes = new Map<string, string>();
    for (const [name, policy] of Object.entries<KindPolicy>(this.#kinds)) {
      if (policy.store !== null && !this.#stores.has(policy.store)) {
        throw new TypeError(`ContextWindow: kind ${name} names store ${policy.store}, which is not in stores`);
      }
      if (policy.modes.length === 0) throw new TypeError(`ContextWindow: kind ${name} allows no prune mode`);
      // Compiles and safety-checks the kind's pins now, so a bad pattern fails here, not mid-prune.
      try {
        findPins("", this.#pinsFor(policy));
      } catch (err) {
        throw new TypeError(`ContextWindow: kind ${name} has an unusable pin pattern: ${errorMessage(err)}`);
      }
    }
    for (const [name, store] of this.#stores) {
      const other = prefixes.get(store.handlePrefix);
      if (other !== undefined && other !== name) {
        throw new TypeError(
          `ContextWindow: stores ${other} and ${name} both mint ${store.handlePrefix}#n handles; give one a handlePrefix`,
        );
      }
      prefixes.set(store.handlePrefix, name);
    }
    if (options.auditStore !== undefined) {
      const s = this.#stores.get(options.auditStore);
      if (!s) throw new TypeError(`ContextWindow: auditStore ${options.auditStore} is not in stores`);
      this.#auditStore = s;
    } else {
      this.#auditStore = this.#stores.values().next().value ?? new MemoryStore({ name: "audit", clock: this.#clock });
    }
  }

  /**
   * Appends a span and, when its kind names a store, persists it there first so that a later prune
   * can be reversible. A store failure does not lose the span: it stays live without a handle, and a
   * later prune sees that (and may re-persist).
   */
  append<P extends K>(input: AppendInput<P>): Promise<SpanRef<P>> {
    return this.#serial(() => this.#append(input));
  }

  async #append<P extends K>(input: AppendInput<P>): Promise<SpanRef<P>> {
    this.#assertOpen();
    const policy = this.#kinds[input.kind] as KindPolicy | undefined;
    if (policy === undefined || !Object.hasOwn(this.#kinds, input.kind)) {
      throw new TypeError(`ContextWindow.append: unknown kind ${String(input.kind)}`);
    }
    if (typeof input.text !== "string") throw new TypeError("ContextWindow.append: text must be a string");
    // A lone surrogate has no UTF-8 form: every store would keep U+FFFD instead, under the same hash, and
    // recall would return other code units. Make the text well-formed once, here, so all copies agree.
    const text = input.text.toWellFormed();
    const id = `span_${this.#nextSpan++}`;
    const hash = contentHash(text);
    const message = input.message;
    const group = input.group ?? (message && "callId" in message ? `call:${message.callId}` : undefined);
    const span: Span = {
      id, kind: input.kind, text, tokens: countTokens(text), hash,
      ...(group !== undefined ? { group } : {}),
      ...(message !== undefined ? { message } : {}),
    };
    const entry: LiveEntry = { state: "live", pos: this.#entries.length, span, handle: null, store: policy.store, persistError: null, notice: null };
    if (policy.store !== null) {
      const store = this.#stores.get(policy.store)!;
      if (store.capabilities.writable) {
        try {
          const persisted = await store.persist({ session: this.session, spanId: id, kind: input.kind, text, hash });
          entry.handle = persisted.handle;
        } catch (err) {
          entry.persistError = errorMessage(err);
        }
      }
    }
    this.#entries.push(entry);
    this.#byId.set(id, entry);
    this.#notices = [];
    return id as SpanRef<P>;
  }

  /**
   * The typed path: prunes or throws `IrreversiblePruneError` (with the audited outcome) when the runtime
   * cannot prove the prune reversible and no allowed lossy commitment was requested.
   */
  async prune(request: PruneRequest<K>): Promise<ReversibleOutcome | LossyOutcome> {
    const outcome = await this.tryPrune(request);
    if (outcome.status === "rejected" || outcome.status === "invalid") throw new IrreversiblePruneError(outcome);
    return outcome;
  }

  /** The typed path without the throw: every outcome comes back as data. */
  tryPrune(request: PruneRequest<K>): Promise<PruneOutcome> {
    return this.#serial(() => this.#tryPrune(request));
  }

  async #tryPrune(request: PruneRequest<K>): Promise<PruneOutcome> {
    this.#assertOpen();
    const raw = directiveForAudit({ span: request.span, mode: request.mode, digest: request.digest, acceptLossy: request.acceptLossy });
    if (request.mode === "summarize" && (typeof request.digest !== "string" || request.digest.length === 0)) {
      return this.#invalid("prune", [{ path: "digest", message: "summarize needs a digest" }], raw);
    }
    return this.#execute(String(request.span), request.mode, request.digest ?? null, request.acceptLossy === true, raw);
  }

  /**
   * The untrusted path: model output in (a JSON string or parsed value), an outcome out. Never throws;
   * a bad directive leaves the window unchanged and is audited with its reason.
   */
  applyDirective(input: unknown): Promise<DirectiveOutcome> {
    return this.#serial(() => this.#applyDirective(input));
  }

  async #applyDirective(input: unknown): Promise<DirectiveOutcome> {
    // Read untrusted input exactly once: a getter must not show the audit log one value and the parser
    // another.
    const value = snapshot(input);
    const raw = directiveForAudit(value);
    try {
      const parsed = parseDirective(value, this.#directiveLimits);
      if (!parsed.ok) return await this.#invalid(parsed.op, parsed.issues, raw);
      const d = parsed.directive;
      if (d.op === "recall") return await this.#recall(d.span_id, raw);
      if (this.#ended) return await this.#invalid("prune", [{ path: "", message: "the session has ended" }], raw);
      return await this.#execute(d.span_id, d.mode, d.digest ?? null, d.accept_lossy === true, raw);
    } catch (err) {
      // Only a defect in the runtime itself gets here; the model still gets data, not an exception.
      return this.#invalid(null, [{ path: "", message: `internal error: ${errorMessage(err)}` }], raw).catch(() => ({
        op: null, status: "invalid", issues: [], message: "internal error", line: invalidLine("internal error"), auditSeq: null,
      }) satisfies InvalidOutcome);
    }
  }

  /**
   * Recall by span id (`span_7`) or handle (`#3`). Three answers that never collapse: `found` (bytes
   * identical to what was pruned), `pruned-unrecoverable`, `unknown` (this window never held it); plus
   * `unavailable` when the store failed and the copy may still exist.
   */
  recall(query: string): Promise<RecallOutcome> {
    return this.#serial(() => this.#recall(String(query), directiveForAudit({ op: "recall", span_id: query })));
  }

  /** What the model reads next: live spans, index lines, tombstones and rejection lines, in order. */
  render(): string {
    const blocks = this.entries().map((e) => {
      if (e.state !== "live") return e.text;
      const head = `[${e.span.id} ${e.span.kind}]\n${e.span.text}`;
      return e.notice === null ? head : `${head}\n${e.notice}`;
    });
    return [...blocks, ...this.#notices].join("\n\n");
  }

  /** The window's positions as data, for renderers of provider message shapes. */
  entries(): WindowEntry[] {
    return this.#entries.map((e): WindowEntry => {
      if (e.state === "live") return { state: "live", span: e.span, handle: e.handle, notice: e.notice };
      if (e.state === "pruned") {
        return { state: "pruned", spanId: e.spanId, kind: e.kind, group: e.group, message: e.message, mode: e.mode, handle: e.handle!, text: e.text };
      }
      return { state: "tombstone", spanId: e.spanId, kind: e.kind, group: e.group, message: e.message, mode: e.mode, text: e.text };
    });
  }

  /** Lines that are not attached to a span (invalid directives), shown until the next append. */
  notices(): readonly string[] {
    return [...this.#notices];
  }

  /** A live span by id, or `undefined`. */
  span(id: string): Span | undefined {
    const e = this.#byId.get(id);
    return e?.state === "live" ? e.span : undefined;
  }

  /** Tokens the window costs now, as rendered (o200k_base). */
  tokens(): number {
    return countTokens(this.render());
  }

  /** Every decision of this session, across its stores, oldest first. */
  async auditLog(): Promise<AuditRecord[]> {
    const all: AuditRecord[] = [];
    for (const store of this.#distinctStores()) all.push(...(await store.auditLog(this.session)));
    return all.sort((a, b) => a.at - b.at || a.store.localeCompare(b.store) || a.seq - b.seq);
  }

  /** Decisions whose audit record could not be written yet (a store was failing); retried on the next write. */
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
      for (const store of this.#distinctStores()) await store.releaseHolds(this.session);
    });
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * Runs window operations one at a time, in call order. Two prunes of one span issued concurrently
   * would otherwise both pass the check before either rewrote the window.
   */
  #serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(op, op);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  #assertOpen(): void {
    if (this.#ended) throw new Error(`ContextWindow: session ${this.session} has ended`);
  }

  #distinctStores(): BackingStore[] {
    return [...new Set([...this.#stores.values(), this.#auditStore])];
  }

  #pinsFor(policy: KindPolicy): PinPattern[] {
    return [...this.#pins, ...(policy.pins ?? [])];
  }

  async #execute(spanId: string, mode: PruneMode, digest: string | null, acceptLossy: boolean, raw: string): Promise<PruneOutcome> {
    const planned = planPrune(
      {
        find: (id) => this.#byId.get(id),
        groupMembers: (group) => this.#entries.filter((e): e is LiveEntry => e.state === "live" && e.span.group === group),
        policyOf: (kind) => this.#kinds[kind as K],
        pinsFor: (policy) => this.#pinsFor(policy),
        store: (name) => this.#stores.get(name)!,
        auditStore: this.#auditStore,
      },
      spanId, mode, digest,
    );
    if ("refusal" in planned) {
      const { reason, kind, message, entry } = planned.refusal;
      return this.#refuseEarly({ spanId, kind, mode, reason: { code: reason }, message, entry, raw });
    }
    const { plan } = planned;
    let lossyLeft: number;
    try {
      lossyLeft = await this.#lossyLeft(acceptLossy);
    } catch (err) {
      return this.#storeFailed(plan.target, mode, raw, err);
    }
    const items: PruneItem[] = plan.members.map((p) => ({
      spanId: p.entry.span.id,
      kind: p.entry.span.kind,
      backed: p.policy.store !== null,
      handle: p.entry.handle,
      hash: p.entry.span.hash,
      text: p.entry.span.text,
    }));
    const members = plan.members.map((p) => ({ policy: p.policy, store: p.policy.store === null ? null : plan.store.capabilities }));
    // The store calls `decide` inside its transaction once per attempt; the attempt that commits is the last.
    const last: { refusal: GroupDecision["refusal"] } = { refusal: null };
    const decide = (checks: readonly CheckResult[]): PruneDecision[] => {
      const group = decideGroup({ members, lead: plan.lead, acceptLossy, lossyLeft }, checks);
      last.refusal = group.refusal;
      return group.decisions.map((d, i) => {
        const p = plan.members[i]!;
        const audit = checkedPruneDraft(
          {
            spanId: p.entry.span.id, kind: p.entry.span.kind, hash: p.entry.span.hash, mode: p.mode, acceptLossy,
            pinsCarried: p.pinsCarried.length, directive: i === plan.lead ? raw : null,
          },
          d,
          checks[i]!,
        );
        return d.status === "reversible" ? { status: d.status, repersist: d.repersist, hold: true, audit } : { status: d.status, audit };
      });
    };
    let commit;
    try {
      await this.#pendingAudit.flush();
      commit = await plan.store.commitPrune({ session: this.session, items, holdUntil: this.#holdUntil(), decide });
    } catch (err) {
      return this.#storeFailed(plan.target, mode, raw, err);
    }
    const lead = commit.items[plan.lead]!;
    if (last.refusal !== null) return this.#refuseChecked(plan, mode, lead, commit.items, last.refusal);
    // Committed: now, and only now, rewrite the window.
    let tokensFreed = 0;
    for (const [i, p] of plan.members.entries()) tokensFreed += this.#apply(p, commit.items[i]!);
    const gone = this.#byId.get(spanId) as GoneEntry;
    return committedOutcome(
      {
        spanId, kind: gone.kind, mode, line: gone.text, tokensFreed, pinsCarried: plan.members[plan.lead]!.pinsCarried,
        groupPruned: plan.members.filter((p) => p.entry !== plan.target).map((p) => p.entry.span.id),
      },
      lead,
      this.#tombstone,
    );
  }

  /** Rewrites one committed span; returns the tokens it freed. */
  #apply(p: PlannedMember, committed: PruneCommitItem): number {
    const { span } = p.entry;
    const reversible = committed.decision.status === "reversible";
    const h = reversible ? committed.handle : null;
    let text: string;
    if (p.body === null) text = h !== null ? indexLine(span.id, h) : tombstoneLine(span.id, this.#tombstone);
    else text = `${replacementHeader(span.id, p.mode as Exclude<PruneMode, "drop">, h)}\n${p.body}`;
    const gone: GoneEntry = {
      state: reversible ? "pruned" : "tombstone",
      spanId: span.id,
      kind: span.kind,
      group: span.group ?? null,
      message: span.message ?? null,
      hash: span.hash,
      mode: p.mode,
      handle: h,
      store: p.entry.store,
      text,
      replacement: p.body,
    };
    this.#entries[p.entry.pos] = gone;
    this.#byId.set(span.id, gone);
    if (!reversible && this.#lossyUsed !== null) this.#lossyUsed++;
    return span.tokens - countTokens(text);
  }

  async #lossyLeft(acceptLossy: boolean): Promise<number> {
    const budget = this.#limits.lossyBudget;
    if (!acceptLossy || budget === null || budget === undefined) return Number.POSITIVE_INFINITY;
    if (this.#lossyUsed === null) {
      let used = 0;
      for (const s of this.#distinctStores()) used += await s.countLossy(this.session);
      this.#lossyUsed = used;
    }
    return budget - this.#lossyUsed;
  }

  #holdUntil(): number | null {
    const max = this.#limits.maxLengthMs;
    return max === null || max === undefined ? null : this.#startedAt + max;
  }

  #recall(query: string, raw: string): Promise<RecallOutcome> {
    return recall(query, raw, {
      session: this.session,
      tombstone: this.#tombstone,
      find: (q) => this.#byId.get(q) ?? (HANDLE.test(q) ? this.#entries.find((e) => e.handle === q) : undefined),
      storeOf: (e) => (e.store === null ? this.#auditStore : this.#stores.get(e.store)!),
      stores: () => this.#distinctStores(),
      auditStore: this.#auditStore,
      audit: (store, draft) => this.#audit(store, draft),
    });
  }

  async #invalid(op: "prune" | "recall" | null, issues: InvalidOutcome["issues"], raw: string): Promise<InvalidOutcome> {
    const message = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ") || "invalid directive";
    const seq = await this.#audit(this.#auditStore, invalidDraft(op, raw));
    const line = invalidLine(message.length > 160 ? `${message.slice(0, 157)}...` : message);
    this.#notice(line);
    return { op, status: "invalid", issues, message, line, auditSeq: seq };
  }

  /** A refusal decided before any store was consulted (unknown span, wrong mode, group shape). */
  async #refuseEarly(r: {
    spanId: string; kind: string | null; mode: PruneMode; reason: { readonly code: PlanRejectReason };
    message: string; entry: LiveEntry | null; raw: string;
  }): Promise<RejectedOutcome> {
    const { entry } = r;
    const store = entry?.store ? this.#stores.get(entry.store)! : this.#auditStore;
    const seq = await this.#audit(store, refusedPruneDraft({
      spanId: SPAN_ID.test(r.spanId) ? r.spanId : null, kind: r.kind, mode: r.mode, handle: entry?.handle ?? null, conditions: null,
      reason: r.reason, directive: r.raw,
    }));
    const outcome = rejectedOutcome({
      spanId: entry?.span.id ?? r.spanId, kind: entry?.span.kind ?? r.kind, mode: r.mode, reason: r.reason.code, conditions: null,
      why: rejectionWhy(r.reason.code, null, r.mode), message: r.message, auditSeq: seq, lossyHintPolicy: null,
    });
    if (entry) entry.notice = outcome.line;
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
    plan.target.notice = outcome.line;
    return outcome;
  }

  async #storeFailed(entry: LiveEntry, mode: PruneMode, raw: string, err: unknown): Promise<RejectedOutcome> {
    const message = `${entry.span.id} kept: the store failed during the check (${errorMessage(err)}); nothing was committed`;
    const seq = await this.#audit(this.#auditStore, refusedPruneDraft({
      spanId: entry.span.id, kind: entry.span.kind, mode, handle: entry.handle, conditions: null, reason: { code: "store-error" }, directive: raw,
    }));
    const outcome = rejectedOutcome({
      spanId: entry.span.id, kind: entry.span.kind, mode, reason: "store-error", conditions: null,
      why: rejectionWhy("store-error", null, mode), message, auditSeq: seq, lossyHintPolicy: null,
    });
    entry.notice = outcome.line;
    return outcome;
  }

  #notice(line: string): void {
    this.#notices = [...this.#notices, line].slice(-MAX_NOTICES);
  }

  #audit(store: BackingStore, draft: AuditDraft): Promise<number | null> {
    return this.#pendingAudit.append(store, draft);
  }
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

/** A frozen copy of the kinds, so a caller mutating its policy object cannot change a live window's rules. */
function freezeKinds<K extends string>(kinds: { readonly [P in K]: KindPolicy }): { readonly [P in K]: KindPolicy } {
  const out: Record<string, KindPolicy> = Object.create(null) as Record<string, KindPolicy>;
  for (const [name, k] of Object.entries<KindPolicy>(kinds)) {
    out[name] = Object.freeze({
      ...k,
      modes: Object.freeze([...k.modes]),
      ...(k.pins ? { pins: Object.freeze(k.pins.map((p) => Object.freeze({ ...p }))) } : {}),
    });
  }
  return Object.freeze(out) as { readonly [P in K]: KindPolicy };
}
