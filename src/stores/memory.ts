import { EMPTY_CHAIN, isPruneDecision, sealChain, type AuditDraft, type AuditRecord } from "../audit.js";
import { commitResult, lossySpent, planCommit } from "./commit.js";
import { StoreBase } from "./store-options.js";
import { copySearchAnswer, lookupAnswer, readOnly, spanTaken, storeLiteral } from "./records.js";
import type {
  BackingStore, CopySearch, CopySearchRequest, LookupKey, LookupResult, PersistInput, Persisted, PruneCommit, PruneTransaction, RegisteredSpan,
  RotateReport, SpanRegistration,
} from "./store.js";

interface MemRecord {
  handle: string;
  spanId: string;
  kind: string;
  /** `null` once rotated out: the bytes are gone, the marker stays. */
  text: string | null;
  hash: string;
  createdAt: number;
  expiredAt: number | null;
  /** `undefined`: no hold; `null`: held until released; a number: held until then. */
  heldUntil: number | null | undefined;
}

interface MemSession {
  bySpan: Map<string, MemRecord>;
  byHandle: Map<string, MemRecord>;
  nextHandle: number;
  audit: AuditRecord[];
  /** Spans registered in the session, in position order (this store is the session's home store). */
  spans: RegisteredSpan[];
  /** Lossy commitments made in this store plus units reserved for other stores' commitments. */
  lossyUsed: number;
  /** The session's start as the first window to ask recorded it (`sessionStart`); `null` until then. */
  startedAt: number | null;
}

/**
 * A store in process memory: for tests and for kinds whose copies need not outlive the process.
 * Every call is atomic because nothing in it awaits.
 */
export class MemoryStore extends StoreBase implements BackingStore {
  readonly engine = "memory";
  readonly #sessions = new Map<string, MemSession>();
  #closed = false;

  #session(session: string): MemSession {
    if (this.#closed) throw new Error(`store ${this.name} is closed`);
    let s = this.#sessions.get(session);
    if (!s) {
      s = { bySpan: new Map(), byHandle: new Map(), nextHandle: 1, audit: [], spans: [], lossyUsed: 0, startedAt: null };
      this.#sessions.set(session, s);
    }
    return s;
  }

  async persist(input: PersistInput): Promise<Persisted> {
    if (!this.capabilities.writable) throw readOnly(this.name);
    const s = this.#session(input.session);
    const existing = s.bySpan.get(input.spanId);
    if (existing) {
      if (existing.text !== null && existing.hash !== input.hash) throw spanTaken(this.name, input);
      if (existing.text === null) this.#rewrite(existing, input);
      return { handle: existing.handle, createdAt: existing.createdAt };
    }
    const rec = this.#insert(s, input, this.handle(s.nextHandle++));
    return { handle: rec.handle, createdAt: rec.createdAt };
  }

  async commitPrune(txn: PruneTransaction): Promise<PruneCommit> {
    const s = this.#session(txn.session);
    const plan = planCommit(this, txn, {
      find: (item) => (item.handle === null ? s.bySpan.get(item.spanId) : s.byHandle.get(item.handle)),
      own: (spanId) => s.bySpan.get(spanId),
      mint: () => this.handle(s.nextHandle++),
    }, s.lossyUsed);
    for (const w of plan.writes) {
      const input = { ...w.item, session: txn.session };
      const rec = w.repersist === "insert" ? this.#insert(s, input, w.handle) : s.bySpan.get(w.item.spanId)!;
      if (w.repersist === "rewrite") this.#rewrite(rec, input);
      if (w.hold) rec.heldUntil = txn.holdUntil;
    }
    s.lossyUsed += plan.lossy;
    return commitResult(plan, this.#append(txn.session, s, plan.drafts));
  }

  #insert(s: MemSession, input: PersistInput, handle: string): MemRecord {
    const rec: MemRecord = {
      handle, spanId: input.spanId, kind: input.kind, text: input.text, hash: input.hash, createdAt: this.clock.now(), expiredAt: null,
      heldUntil: undefined,
    };
    s.bySpan.set(rec.spanId, rec);
    s.byHandle.set(rec.handle, rec);
    return rec;
  }

  #rewrite(rec: MemRecord, input: PersistInput): void {
    Object.assign(rec, { text: input.text, hash: input.hash, kind: input.kind, createdAt: this.clock.now(), expiredAt: null });
  }

  async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    const s = this.#session(session);
    return lookupAnswer("handle" in key ? s.byHandle.get(key.handle) : s.bySpan.get(key.spanId), this.capabilities);
  }

  /** Scans the session's copies in the order they were persisted. */
  async searchCopies(session: string, request: CopySearchRequest): Promise<CopySearch> {
    const s = this.#sessions.get(session);
    const rows = request.copies.map((c) => {
      const rec = s?.byHandle.get(c.handle);
      if (rec === undefined) return undefined;
      const holds = rec.text !== null && rec.text.includes(storeLiteral(request.literal));
      return { handle: rec.handle, spanId: rec.spanId, kind: rec.kind, hash: rec.hash, rotated: rec.text === null, text: holds ? rec.text : null };
    });
    return copySearchAnswer(request, rows);
  }

  async appendAudit(session: string, draft: AuditDraft): Promise<AuditRecord> {
    return this.#append(session, this.#session(session), [draft])[0]!;
  }

  #append(session: string, s: MemSession, drafts: readonly AuditDraft[]): AuditRecord[] {
    const records = sealChain(s.audit.at(-1) ?? EMPTY_CHAIN, drafts, { at: this.clock.now(), session, store: this.name });
    s.audit.push(...records);
    return records;
  }

  async auditLog(session: string): Promise<AuditRecord[]> {
    return [...(this.#sessions.get(session)?.audit ?? [])];
  }

  async prunesOf(session: string, id: string): Promise<AuditRecord[]> {
    return (this.#sessions.get(session)?.audit ?? []).filter(
      (r) => isPruneDecision(r) && (r.spanId === id || (r.handle !== null && r.handle === id)),
    );
  }

  async countLossy(session: string): Promise<number> {
    return (this.#sessions.get(session)?.audit ?? []).filter((r) => r.status === "lossy").length;
  }

  async registerSpan(session: string, span: SpanRegistration): Promise<RegisteredSpan> {
    const s = this.#session(session);
    const ordinal = s.spans.length + 1;
    const reg: RegisteredSpan = { ...span, spanId: `span_${ordinal}`, ordinal, replacement: null };
    s.spans.push(reg);
    return reg;
  }

  async sessionSpans(session: string): Promise<RegisteredSpan[]> {
    return [...(this.#session(session).spans)];
  }

  async sessionSpanCount(session: string): Promise<number> {
    return this.#session(session).spans.length;
  }

  async lookupSpan(session: string, spanId: string): Promise<RegisteredSpan | null> {
    return this.#session(session).spans.find((r) => r.spanId === spanId) ?? null;
  }

  async sessionStart(session: string, start: number): Promise<number> {
    const s = this.#session(session);
    s.startedAt ??= start;
    return s.startedAt;
  }

  async noteReplacement(session: string, spanId: string, body: string): Promise<void> {
    const s = this.#session(session);
    const i = s.spans.findIndex((r) => r.spanId === spanId);
    if (i >= 0) s.spans[i] = { ...s.spans[i]!, replacement: body };
  }

  async reserveLossy(session: string, budget: number, want: number): Promise<number> {
    const s = this.#session(session);
    const granted = Math.max(0, Math.min(want, budget - s.lossyUsed));
    s.lossyUsed += granted;
    return granted;
  }

  async lossySpent(session: string): Promise<number> {
    const s = this.#sessions.get(session);
    return s === undefined ? 0 : lossySpent(s.lossyUsed, s.audit.filter((r) => r.status === "lossy").length);
  }

  async releaseLossy(session: string, units: number): Promise<void> {
    const s = this.#session(session);
    s.lossyUsed = Math.max(0, s.lossyUsed - Math.max(0, units));
  }

  async releaseHolds(session: string): Promise<number> {
    let n = 0;
    for (const rec of this.#sessions.get(session)?.bySpan.values() ?? []) {
      if (rec.heldUntil !== undefined) {
        rec.heldUntil = undefined;
        n++;
      }
    }
    return n;
  }

  async rotate(): Promise<RotateReport> {
    if (this.#closed) throw new Error(`store ${this.name} is closed`);
    const now = this.clock.now();
    let rotated = 0;
    let keptByHold = 0;
    if (this.retentionMs === null) return { rotated, keptByHold };
    for (const s of this.#sessions.values()) {
      for (const rec of s.bySpan.values()) {
        if (rec.text === null || rec.createdAt + this.retentionMs > now) continue;
        const held = rec.heldUntil === null || (rec.heldUntil !== undefined && rec.heldUntil > now);
        if (held) {
          keptByHold++;
          continue;
        }
        rec.text = null;
        rec.expiredAt = now;
        rec.heldUntil = undefined;
        rotated++;
      }
    }
    return { rotated, keptByHold };
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
