import { directiveForAudit, type AuditDraft, type AuditRecord } from "./audit.js";
import { compress } from "./compress.js";
import { DEFAULT_LIMITS, HANDLE, parseDirective, SPAN_ID, type DirectiveLimits } from "./directive.js";
import { errorMessage, IrreversiblePruneError } from "./errors.js";
import { decidePrune, lossyRefusal } from "./guard.js";
import { contentHash } from "./hash.js";
import type {
  DirectiveOutcome,
  InvalidOutcome,
  LossyOutcome,
  PruneOutcome,
  RecallOutcome,
  RejectedOutcome,
  RejectReason,
  ReversibleOutcome,
} from "./outcome.js";
import { carryPins, findPins } from "./pins.js";
import {
  DEFAULT_TOMBSTONE,
  indexLine,
  invalidLine,
  rejectionLine,
  rejectionWhy,
  replacementHeader,
  tombstoneLine,
} from "./render.js";
import type { Entry, GoneEntry, LiveEntry } from "./entries.js";
import { recall } from "./recall.js";
import type { BackingStore, CheckResult, PruneDecision, PruneItem } from "./stores/store.js";
import { MemoryStore } from "./stores/memory.js";
import { countTokens } from "./tokens.js";
import {
  failedConditions,
  systemClock,
  type Clock,
  type Conditions,
  type KindPolicy,
  type PinPattern,
  type PruneMode,
  type SessionLimits,
  type Span,
  type SpanMessage,
  type SpanRef,
} from "./types.js";

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



interface Planned {
  entry: LiveEntry;
  mode: PruneMode;
  policy: KindPolicy;
  /** The digest or compressed body (with pins carried), before the header; `null` for drop. */
  body: string | null;
  pinsCarried: readonly string[];
}

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
  #pendingAudit: Array<{ store: BackingStore; draft: AuditDraft }> = [];
  #ended = false;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(options: ContextWindowOptions<K>) {
    if (typeof options.session !== "string" || options.session.length === 0) {
      throw new TypeError("ContextWindow: session must be a non-empty string");
    }
    this.session = options.session;
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
    return this.#pendingAudit.length;
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
    const target = this.#byId.get(spanId);
    if (!target) return this.#reject(spanId, null, mode, "unknown-span", null, raw, `${spanId} is not a span of this window`);
    if (target.state !== "live") {
      return this.#reject(spanId, target.kind, mode, "already-pruned", null, raw, `${spanId} was pruned already`);
    }
    const lead = this.#kinds[target.span.kind as K];
    if (!lead.modes.includes(mode)) {
      return this.#reject(spanId, target.span.kind, mode, "mode-not-allowed", null, raw,
        `kind ${target.span.kind} allows ${lead.modes.join(", ")}, not ${mode}`, target);
    }
    // A tool call and its result prune together: the target in the requested mode, the rest dropped.
    const members = target.span.group === undefined
      ? [target]
      : this.#entries.filter((e): e is LiveEntry => e.state === "live" && e.span.group === target.span.group);
    const plans: Planned[] = [];
    for (const entry of members) {
      const m: PruneMode = entry === target ? mode : "drop";
      const policy = this.#kinds[entry.span.kind as K];
      if (!policy.modes.includes(m)) {
        return this.#reject(spanId, target.span.kind, mode, "group", null, raw,
          `${spanId} is grouped with ${entry.span.id}, whose kind ${entry.span.kind} does not allow ${m}`, target);
      }
      plans.push({ entry, mode: m, policy, ...this.#body(entry.span, m, digest, policy) });
    }
    const storeNames = [...new Set(plans.map((p) => p.policy.store).filter((s): s is string => s !== null))];
    if (storeNames.length > 1) {
      return this.#reject(spanId, target.span.kind, mode, "group", null, raw,
        `${spanId}'s group spans stores ${storeNames.join(" and ")}; it cannot be pruned atomically`, target);
    }
    const store = storeNames.length === 1 ? this.#stores.get(storeNames[0]!)! : this.#auditStore;

    let lossyLeft: number;
    try {
      lossyLeft = await this.#lossyLeft(acceptLossy);
    } catch (err) {
      return this.#storeFailed(target, mode, raw, err);
    }
    const items: PruneItem[] = plans.map((p) => ({
      spanId: p.entry.span.id,
      kind: p.entry.span.kind,
      backed: p.policy.store !== null,
      handle: p.entry.handle,
      hash: p.entry.span.hash,
      text: p.entry.span.text,
    }));
    const decide = (checks: readonly CheckResult[]): PruneDecision[] => {
      let left = lossyLeft;
      const ds = plans.map((p, i) => {
        const d = decidePrune({
          spanId: p.entry.span.id, kind: p.entry.span.kind, hash: p.entry.span.hash, policy: p.policy, mode: p.mode, acceptLossy,
          budgetLeft: left > 0, store: p.policy.store === null ? null : store.capabilities,
          pinsCarried: p.pinsCarried.length, directive: p.entry === target ? raw : null,
        }, checks[i]!);
        if (d.status === "lossy") left--;
        return d;
      });
      if (ds.every((d) => d.status !== "rejected")) return ds;
      // All or nothing: one refused member refuses the group, and every member's record says why.
      return ds.map((d, i) =>
        d.status === "rejected" ? d : { status: "rejected" as const, audit: { ...d.audit, status: "rejected" as const, reason: `group:${plans[i]!.entry === target ? "member-refused" : "lead-refused"}`, handle: checks[i]!.handle } },
      );
    };
    let commit;
    try {
      await this.#flushPendingAudit();
      commit = await store.commitPrune({ session: this.session, items, holdUntil: this.#holdUntil(), decide });
    } catch (err) {
      return this.#storeFailed(target, mode, raw, err);
    }
    const leadIndex = plans.findIndex((p) => p.entry === target);
    const leadCommit = commit.items[leadIndex]!;
    if (leadCommit.decision.status === "rejected") {
      const refusing = commit.items.find((c) => c.decision.status === "rejected" && !c.audit.reason?.startsWith("group:")) ?? leadCommit;
      const reason = (refusing.audit.reason ?? "not-reversible").split(":")[0] as RejectReason;
      const isLead = refusing === leadCommit;
      const why = rejectionWhy(reason, plans[leadIndex]!.policy.store === null ? null : refusing.check, mode);
      return this.#rejected(target, mode, isLead ? reason : "group", refusing.check.conditions, isLead ? why : `group: ${why}`, leadCommit.audit.seq,
        (isLead ? `${spanId} cannot be pruned: ${why}` : `${spanId} is grouped with a span that cannot be pruned: ${why}`) +
          persistFailures(plans), plans[leadIndex]!.policy);
    }
    // Committed: now, and only now, rewrite the window.
    let tokensFreed = 0;
    for (const [i, p] of plans.entries()) tokensFreed += this.#apply(p, commit.items[i]!.decision, commit.items[i]!.handle);
    const groupPruned = plans.filter((p) => p.entry !== target).map((p) => p.entry.span.id);
    const gone = this.#byId.get(spanId) as GoneEntry;
    const pinsCarried = plans[leadIndex]!.pinsCarried;
    if (leadCommit.decision.status === "reversible") {
      return {
        op: "prune", status: "reversible", spanId, kind: gone.kind, mode, handle: leadCommit.handle!,
        conditions: leadCommit.check.conditions, repersisted: leadCommit.decision.repersist, line: gone.text,
        tokensFreed, pinsCarried, groupPruned, auditSeq: leadCommit.audit.seq,
      };
    }
    return {
      op: "prune", status: "lossy", spanId, kind: gone.kind, mode, conditions: leadCommit.check.conditions,
      failed: failedConditions(leadCommit.check.conditions), tombstone: tombstoneLine(spanId, this.#tombstone),
      line: gone.text, tokensFreed, pinsCarried, groupPruned, auditSeq: leadCommit.audit.seq,
    };
  }

  #body(span: Span, mode: PruneMode, digest: string | null, policy: KindPolicy): { body: string | null; pinsCarried: readonly string[] } {
    const pins = this.#pinsFor(policy);
    if (mode === "drop") return { body: null, pinsCarried: [] };
    if (mode === "summarize") {
      const carried = carryPins(span.text, digest ?? "", pins);
      return { body: carried.text, pinsCarried: carried.carried };
    }
    const c = compress(span.text, { targetTokens: policy.compressTargetTokens ?? 200, pins });
    return { body: c.text, pinsCarried: c.carried };
  }

  /** Rewrites one committed span; returns the tokens it freed. */
  #apply(p: Planned, decision: PruneDecision, handle: string | null): number {
    const { span } = p.entry;
    const reversible = decision.status === "reversible";
    const h = reversible ? handle : null;
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
    const seq = await this.#audit(this.#auditStore, {
      op, status: "invalid", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false,
      acceptLossy: false, reason: "parse", pinsCarried: 0, directive: raw,
    });
    const line = invalidLine(message.length > 160 ? `${message.slice(0, 157)}...` : message);
    this.#notices = [...this.#notices, line].slice(-MAX_NOTICES);
    return { op, status: "invalid", issues, message, line, auditSeq: seq };
  }

  /** A refusal decided before any store was consulted (unknown span, wrong mode, group shape). */
  async #reject(
    spanId: string, kind: string | null, mode: PruneMode, reason: RejectReason, conditions: Conditions | null, raw: string,
    message: string, entry?: LiveEntry,
  ): Promise<RejectedOutcome> {
    const store = entry?.store ? this.#stores.get(entry.store)! : this.#auditStore;
    const seq = await this.#audit(store, {
      op: "prune", status: "rejected", spanId: SPAN_ID.test(spanId) ? spanId : null, kind, mode, conditions, handle: entry?.handle ?? null,
      repersisted: false, acceptLossy: false, reason, pinsCarried: 0, directive: raw,
    });
    const why = rejectionWhy(reason, null, mode);
    if (entry) return this.#rejected(entry, mode, reason, conditions, why, seq, message, null);
    const line = rejectionLine(spanId, why, false);
    this.#notices = [...this.#notices, line].slice(-MAX_NOTICES);
    return { op: "prune", status: "rejected", spanId, kind, mode, reason, conditions, failed: [], message, line, auditSeq: seq };
  }

  #rejected(
    entry: LiveEntry, mode: PruneMode, reason: RejectReason, conditions: Conditions | null, why: string, seq: number | null,
    message: string, policy: KindPolicy | null,
  ): RejectedOutcome {
    const lossyPossible = policy !== null && reason === "not-reversible" && lossyRefusal({ acceptLossy: true, policy, budgetLeft: true }) === null;
    const line = rejectionLine(entry.span.id, why, lossyPossible);
    entry.notice = line;
    return {
      op: "prune", status: "rejected", spanId: entry.span.id, kind: entry.span.kind, mode, reason, conditions,
      failed: conditions ? failedConditions(conditions) : [], message, line, auditSeq: seq,
    };
  }

  async #storeFailed(entry: LiveEntry, mode: PruneMode, raw: string, err: unknown): Promise<RejectedOutcome> {
    const message = `${entry.span.id} kept: the store failed during the check (${errorMessage(err)}); nothing was committed`;
    const seq = await this.#audit(this.#auditStore, {
      op: "prune", status: "rejected", spanId: entry.span.id, kind: entry.span.kind, mode, conditions: null, handle: entry.handle,
      repersisted: false, acceptLossy: false, reason: "store-error", pinsCarried: 0, directive: raw,
    });
    return this.#rejected(entry, mode, "store-error", null, rejectionWhy("store-error", null, mode), seq, message, null);
  }

  /** Appends an audit record; if the store fails, keeps it to retry so no decision goes unlogged. */
  async #audit(store: BackingStore, draft: AuditDraft): Promise<number | null> {
    try {
      await this.#flushPendingAudit();
      return (await store.appendAudit(this.session, draft)).seq;
    } catch {
      this.#pendingAudit.push({ store, draft });
      return null;
    }
  }

  async #flushPendingAudit(): Promise<void> {
    while (this.#pendingAudit.length > 0) {
      const next = this.#pendingAudit[0]!;
      await next.store.appendAudit(this.session, next.draft);
      this.#pendingAudit.shift();
    }
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

/** Why members never got a copy, when persisting them on append failed: the root cause of a rejection. */
function persistFailures(plans: readonly { readonly entry: LiveEntry }[]): string {
  const failed = plans.filter((p) => p.entry.persistError !== null);
  return failed.map((p) => `; persisting ${p.entry.span.id} on append failed: ${p.entry.persistError}`).join("");
}
