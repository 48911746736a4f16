import { sealAudit, GENESIS_HASH, type AuditDraft, type AuditRecord } from "../audit.js";
import { systemClock, type Clock } from "../types.js";
import { computeCheck, decideAll, lookupAnswer, recordState, spanTaken, formatHandle, resolveCapabilities, resolveHandlePrefix, resolveRetention, unbackedCheck } from "./check.js";
import type {
  BackingStore,
  LookupKey,
  LookupResult,
  PersistInput,
  Persisted,
  PruneCommit,
  PruneTransaction,
  RotateReport,
  StoreCapabilities,
  StoreOptions,
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
}

/**
 * A store in process memory: for tests and for kinds whose copies need not outlive the process.
 * Every call is atomic because nothing in it awaits.
 */
export class MemoryStore implements BackingStore {
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  readonly retentionMs: number | null;
  readonly handlePrefix: string;
  readonly #clock: Clock;
  readonly #sessions = new Map<string, MemSession>();
  #closed = false;

  constructor(options: StoreOptions) {
    this.name = options.name;
    this.retentionMs = resolveRetention(options.name, options.retentionMs);
    this.capabilities = resolveCapabilities(options);
    this.handlePrefix = resolveHandlePrefix(options.name, options.handlePrefix);
    this.#clock = options.clock ?? systemClock;
  }

  #session(session: string): MemSession {
    if (this.#closed) throw new Error(`store ${this.name} is closed`);
    let s = this.#sessions.get(session);
    if (!s) {
      s = { bySpan: new Map(), byHandle: new Map(), nextHandle: 1, audit: [] };
      this.#sessions.set(session, s);
    }
    return s;
  }

  async persist(input: PersistInput): Promise<Persisted> {
    if (!this.capabilities.writable) throw new Error(`store ${this.name} is read-only`);
    const s = this.#session(input.session);
    const now = this.#clock.now();
    const existing = s.bySpan.get(input.spanId);
    if (existing) {
      if (existing.text !== null && existing.hash !== input.hash) throw new Error(spanTaken(this.name, input));
      if (existing.text === null) {
        Object.assign(existing, { text: input.text, hash: input.hash, kind: input.kind, createdAt: now, expiredAt: null });
      }
      return { handle: existing.handle, createdAt: existing.createdAt };
    }
    const rec: MemRecord = {
      handle: formatHandle(this.handlePrefix, s.nextHandle++),
      spanId: input.spanId,
      kind: input.kind,
      text: input.text,
      hash: input.hash,
      createdAt: now,
      expiredAt: null,
      heldUntil: undefined,
    };
    s.bySpan.set(rec.spanId, rec);
    s.byHandle.set(rec.handle, rec);
    return { handle: rec.handle, createdAt: now };
  }

  async commitPrune(txn: PruneTransaction): Promise<PruneCommit> {
    const s = this.#session(txn.session);
    const records = txn.items.map((item) =>
      !item.backed ? undefined : item.handle === null ? s.bySpan.get(item.spanId) : s.byHandle.get(item.handle),
    );
    const checks = txn.items.map((item, i) =>
      item.backed ? computeCheck(item.handle, item.spanId, item.hash, recordState(records[i]), this) : unbackedCheck(),
    );
    const decisions = decideAll(txn, checks);
    // Validate every decision before the first write, so a bad one leaves nothing half-applied.
    decisions.forEach((d, i) => {
      const item = txn.items[i]!;
      if (d.status !== "reversible") return;
      if (!item.backed) throw new Error(`store ${this.name}: reversible decision for unbacked span ${item.spanId}`);
      if (d.repersist && !this.capabilities.writable) throw new Error(`store ${this.name} is read-only`);
      if (!d.repersist && !s.bySpan.get(item.spanId)) throw new Error(`store ${this.name}: no record for ${item.spanId}`);
    });
    const now = this.#clock.now();
    const out = txn.items.map((item, i) => {
      const decision = decisions[i]!;
      const check = checks[i]!;
      let handle: string | null = null;
      if (decision.status === "reversible") {
        let target = s.bySpan.get(item.spanId);
        if (decision.repersist) {
          if (target) {
            Object.assign(target, { text: item.text, hash: item.hash, kind: item.kind, createdAt: now, expiredAt: null });
          } else {
            target = {
              handle: formatHandle(this.handlePrefix, s.nextHandle++), spanId: item.spanId, kind: item.kind, text: item.text, hash: item.hash,
              createdAt: now, expiredAt: null, heldUntil: undefined,
            };
            s.bySpan.set(target.spanId, target);
            s.byHandle.set(target.handle, target);
          }
        }
        if (decision.hold && this.capabilities.holds) target!.heldUntil = txn.holdUntil;
        handle = target!.handle;
      }
      const audit = this.#append(txn.session, s, handle === null ? decision.audit : { ...decision.audit, handle });
      return { check, decision, handle, audit };
    });
    return { items: out };
  }

  async lookup(session: string, key: LookupKey): Promise<LookupResult> {
    const s = this.#session(session);
    return lookupAnswer("handle" in key ? s.byHandle.get(key.handle) : s.bySpan.get(key.spanId), this.capabilities);
  }

  async appendAudit(session: string, draft: AuditDraft): Promise<AuditRecord> {
    return this.#append(session, this.#session(session), draft);
  }

  #append(session: string, s: MemSession, draft: AuditDraft): AuditRecord {
    const last = s.audit[s.audit.length - 1];
    const rec = sealAudit(draft, {
      seq: (last?.seq ?? 0) + 1,
      at: this.#clock.now(),
      session,
      store: this.name,
      prevHash: last?.hash ?? GENESIS_HASH,
    });
    s.audit.push(rec);
    return rec;
  }

  async auditLog(session: string): Promise<AuditRecord[]> {
    return [...(this.#sessions.get(session)?.audit ?? [])];
  }

  async countLossy(session: string): Promise<number> {
    return (this.#sessions.get(session)?.audit ?? []).filter((r) => r.status === "lossy").length;
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
    const now = this.#clock.now();
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
