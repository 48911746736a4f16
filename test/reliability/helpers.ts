/**
 * Shared pieces of the reliability suites: run sizes, the policy they exercise, a fault-injecting store
 * wrapper, and snapshots that let a test say "unchanged or fully committed".
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AuditRecord } from "../../src/audit.js";
import { contentHash } from "../../src/hash.js";
import type { BackingStore } from "../../src/stores/store.js";
import type { KindPolicy } from "../../src/types.js";
import type { WindowEntry } from "../../src/window/view.js";
import type { ContextWindow } from "../../src/window/window.js";

export const HOUR = 3_600_000;

/**
 * How many runs a property makes. `PRUNEGUARD_FUZZ_RUNS=100000 npx vitest run test/reliability` soaks
 * every suite at that size; unset, each suite uses its own default, sized so the whole folder stays
 * well under a minute on a 2-core machine.
 */
export function fuzzRuns(defaultRuns: number): number {
  const raw = process.env["PRUNEGUARD_FUZZ_RUNS"];
  if (raw === undefined || raw === "") return defaultRuns;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`PRUNEGUARD_FUZZ_RUNS must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Whether a soak size was asked for (tests then lift their timeouts). */
export const soaking = (process.env["PRUNEGUARD_FUZZ_RUNS"] ?? "") !== "";

/** A per-test timeout that grows with the run count, so a soak is not cut short by vitest. */
export function timeoutFor(defaultRuns: number, msPerRun: number, floorMs = 30_000): number {
  return Math.max(floorMs, fuzzRuns(defaultRuns) * msPerRun * 3);
}

/**
 * The policy every reliability suite runs against: one kind per fate a prune can have.
 * - `tool`: backed, every mode, lossy with the flag, re-persists an expired copy;
 * - `plain`: backed, no re-persist, so a rotated copy makes the prune lossy-or-rejected;
 * - `locked`: backed, lossy forbidden: never tombstones;
 * - `scratch`: unbacked, lossy with the flag;
 * - `sealed`: unbacked and lossy forbidden: can never be pruned.
 */
export const KINDS = {
  tool: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag", repersist: true, compressTargetTokens: 30 },
  plain: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  locked: { store: "log", modes: ["summarize", "compress"], lossy: "forbid", compressTargetTokens: 30 },
  scratch: { store: null, modes: ["drop", "summarize"], lossy: "with-flag" },
  sealed: { store: null, modes: ["drop"], lossy: "forbid" },
} as const satisfies Record<string, KindPolicy>;
export type Kind = keyof typeof KINDS;
export const KIND_NAMES = Object.keys(KINDS) as Kind[];

/** Retention of the `log` store in the suites. */
export const RETENTION_MS = 2 * HOUR;

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `pruneguard-${label}-`));
}

// ----------------------------------------------------------------------------------------------------
// Fault injection

/** The methods of `BackingStore`, in the order the suites name them. */
export const STORE_METHODS = [
  "persist", "commitPrune", "lookup", "appendAudit", "auditLog", "searchCopies", "countLossy", "releaseHolds", "rotate", "close",
  "registerSpan", "sessionSpans", "sessionSpanCount", "noteReplacement", "reserveLossy", "releaseLossy", "sessionStart", "lossySpent",
] as const;
export type StoreMethod = (typeof STORE_METHODS)[number];

export interface FaultPlan {
  /** 1-based index of the first call that fails; `Infinity` never fails. */
  failAt: number;
  /** `once`: only call `failAt` fails; `persistent`: every call from `failAt` on fails. */
  mode: "once" | "persistent";
}

/**
 * A store wrapper that fails the Nth call made through it (once, or persistently from N on) before the
 * call reaches the store — the way SQLite's test harness injects an I/O error at every call in turn.
 * `calls` records every call's method name so a test can walk N over all of them.
 */
export class FaultyStore implements BackingStore {
  readonly calls: StoreMethod[] = [];
  plan: FaultPlan = { failAt: Number.POSITIVE_INFINITY, mode: "once" };
  readonly inner: BackingStore;

  constructor(inner: BackingStore) {
    this.inner = inner;
  }

  get name() { return this.inner.name; }
  get capabilities() { return this.inner.capabilities; }
  get retentionMs() { return this.inner.retentionMs; }
  get handlePrefix() { return this.inner.handlePrefix; }

  /** Starts counting calls afresh and arms the plan. */
  arm(plan: FaultPlan): void {
    this.calls.length = 0;
    this.plan = plan;
  }

  disarm(): void {
    this.plan = { failAt: Number.POSITIVE_INFINITY, mode: "once" };
  }

  async #call<T>(method: StoreMethod, run: () => Promise<T>): Promise<T> {
    this.calls.push(method);
    const n = this.calls.length;
    const { failAt, mode } = this.plan;
    if (n === failAt || (mode === "persistent" && n >= failAt)) throw new Error(`injected fault at call ${n} (${method})`);
    return run();
  }

  persist(...a: Parameters<BackingStore["persist"]>) { return this.#call("persist", () => this.inner.persist(...a)); }
  commitPrune(...a: Parameters<BackingStore["commitPrune"]>) { return this.#call("commitPrune", () => this.inner.commitPrune(...a)); }
  lookup(...a: Parameters<BackingStore["lookup"]>) { return this.#call("lookup", () => this.inner.lookup(...a)); }
  appendAudit(...a: Parameters<BackingStore["appendAudit"]>) { return this.#call("appendAudit", () => this.inner.appendAudit(...a)); }
  auditLog(...a: Parameters<BackingStore["auditLog"]>) { return this.#call("auditLog", () => this.inner.auditLog(...a)); }
  searchCopies(...a: Parameters<BackingStore["searchCopies"]>) { return this.#call("searchCopies", () => this.inner.searchCopies(...a)); }
  countLossy(...a: Parameters<BackingStore["countLossy"]>) { return this.#call("countLossy", () => this.inner.countLossy(...a)); }
  releaseHolds(...a: Parameters<BackingStore["releaseHolds"]>) { return this.#call("releaseHolds", () => this.inner.releaseHolds(...a)); }
  rotate() { return this.#call("rotate", () => this.inner.rotate()); }
  registerSpan(...a: Parameters<BackingStore["registerSpan"]>) { return this.#call("registerSpan", () => this.inner.registerSpan(...a)); }
  sessionSpans(...a: Parameters<BackingStore["sessionSpans"]>) { return this.#call("sessionSpans", () => this.inner.sessionSpans(...a)); }
  sessionSpanCount(...a: Parameters<NonNullable<BackingStore["sessionSpanCount"]>>) { return this.#call("sessionSpanCount", () => this.inner.sessionSpanCount!(...a)); }
  noteReplacement(...a: Parameters<BackingStore["noteReplacement"]>) { return this.#call("noteReplacement", () => this.inner.noteReplacement(...a)); }
  reserveLossy(...a: Parameters<BackingStore["reserveLossy"]>) { return this.#call("reserveLossy", () => this.inner.reserveLossy(...a)); }
  releaseLossy(...a: Parameters<BackingStore["releaseLossy"]>) { return this.#call("releaseLossy", () => this.inner.releaseLossy(...a)); }
  sessionStart(...a: Parameters<BackingStore["sessionStart"]>) { return this.#call("sessionStart", () => this.inner.sessionStart(...a)); }
  lossySpent(...a: Parameters<BackingStore["lossySpent"]>) { return this.#call("lossySpent", () => this.inner.lossySpent(...a)); }
  close() { return this.inner.close(); }
}

// ----------------------------------------------------------------------------------------------------
// Snapshots and shared invariant checks

/** What a window shows, as comparable data. */
export function windowSnapshot(win: ContextWindow): WindowEntry[] {
  return structuredClone(win.entries());
}

/** The store-side state of a list of span ids in one session: what lookups answer. */
export async function storeSnapshot(store: BackingStore, session: string, spanIds: readonly string[]) {
  const out: Record<string, unknown> = {};
  for (const id of spanIds) out[id] = await store.lookup(session, { spanId: id });
  return { records: out, audit: (await store.auditLog(session)).map(stripVolatile) };
}

function stripVolatile(r: AuditRecord) {
  return { seq: r.seq, status: r.status, spanId: r.spanId, reason: r.reason, hash: r.hash };
}

/**
 * Invariant 1: every span the window freed is either an index line whose handle resolves, in this
 * session, to byte-identical text, or a tombstone. `originals` maps span id to the bytes appended.
 * Returns the problems found (empty when the invariant holds).
 */
export async function freedSpanProblems(win: ContextWindow, store: BackingStore, originals: ReadonlyMap<string, string>): Promise<string[]> {
  const problems: string[] = [];
  for (const e of win.entries()) {
    // A fold's members are index lines checked by recall in test/window/long-sessions.test.ts; these sessions are
    // too short to fold (a run folds from 16 items on).
    if (e.state === "live" || e.state === "lost" || e.state === "summary" || e.state === "fold") continue;
    if (e.state === "tombstone") {
      if (!/unrecoverable|original unrecoverable/.test(e.text)) problems.push(`${e.spanId}: tombstone without the unrecoverable marker`);
      continue;
    }
    const text = originals.get(e.spanId);
    const r = await store.lookup(win.session, { handle: e.handle });
    if (r.status !== "found") problems.push(`${e.spanId}: freed under ${e.handle} but the store answers ${r.status}`);
    else if (r.text !== text || r.hash !== contentHash(text ?? "")) problems.push(`${e.spanId}: ${e.handle} resolves to other bytes`);
  }
  return problems;
}

// ----------------------------------------------------------------------------------------------------
// Breaking invariants on purpose

/**
 * Test-only store wrappers that each break one promise the runtime relies on, so a suite can be seen
 * to fail when its invariant is broken: `PRUNEGUARD_SABOTAGE=<name> npx vitest run test/reliability`
 * must fail (and does; each test's comment says how). Unset, stores are used as they are.
 */
export const SABOTAGE = {
  /** Reversible prunes place no hold, so rotation deletes copies the window freed. */
  "skip-hold": (s: BackingStore): BackingStore => override(s, {
    commitPrune: (txn) => s.commitPrune({
      ...txn,
      decide: (checks, left) => txn.decide(checks, left).map((d) => (d.status === "reversible" ? { ...d, hold: false } : d)),
    }),
  }),
  /** Recall decisions are not logged (every third one is answered with a record that is never stored). */
  "drop-audit": (s: BackingStore): BackingStore => {
    let n = 0;
    return override(s, {
      appendAudit: async (session, draft) => {
        if (draft.op === "recall" && ++n % 3 === 0) {
          const log = await s.auditLog(session);
          return { ...draft, spanHash: draft.spanHash ?? null, seq: log.length + 1, at: 0, session, store: s.name, prevHash: "", hash: "" };
        }
        return s.appendAudit(session, draft);
      },
    });
  },
  /** The store forgets it ever had a rotated record: lookups answer `absent` instead of `expired`. */
  "expired-as-absent": (s: BackingStore): BackingStore => override(s, {
    lookup: async (session, key) => {
      const r = await s.lookup(session, key);
      return r.status === "expired" ? { status: "absent" } : r;
    },
  }),
  /** Lookups hand back text with a character changed and a hash recomputed to match it. */
  "alter-bytes": (s: BackingStore): BackingStore => override(s, {
    lookup: async (session, key) => {
      const r = await s.lookup(session, key);
      if (r.status !== "found" || r.text.length === 0) return r;
      const text = `${r.text.slice(0, -1)}${r.text.endsWith("x") ? "y" : "x"}`;
      return { ...r, text, hash: contentHash(text) };
    },
  }),
} as const satisfies Record<string, (s: BackingStore) => BackingStore>;

export type SabotageName = keyof typeof SABOTAGE;

/** Applies `PRUNEGUARD_SABOTAGE` (if set) to a store. */
export function maybeSabotage(store: BackingStore): BackingStore {
  const name = process.env["PRUNEGUARD_SABOTAGE"];
  if (name === undefined || name === "") return store;
  if (!(name in SABOTAGE)) throw new RangeError(`PRUNEGUARD_SABOTAGE: unknown ${name}; one of ${Object.keys(SABOTAGE).join(", ")}`);
  return SABOTAGE[name as SabotageName](store);
}

function override(inner: BackingStore, methods: Partial<BackingStore>): BackingStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (Object.hasOwn(methods, prop)) return (methods as Record<PropertyKey, unknown>)[prop];
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
