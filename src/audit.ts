import type { AuditReason } from "./decision/reasons.js";
import { canonicalJson, contentHash } from "./hash.js";
import type { Conditions, PruneMode } from "./types.js";

/** What a decision was about. */
export type AuditOp = "prune" | "recall" | "map" | "search" | "summarize_range" | "compact" | "start" | "end";

/** Every status a logged decision can end in (prune outcomes and recall answers). */
export type AuditStatus =
  | "reversible"
  | "lossy"
  | "rejected"
  /**
   * A prune decided earlier (`reversible` or `lossy`) that was not applied: its copy stopped being promised
   * before the compaction point that would have applied it, so the span stayed live. Its reason says why
   * (`not-applied:lapsed`, `not-applied:lost`, `not-applied:group`).
   */
  | "kept"
  | "invalid"
  | "found"
  | "pruned-unrecoverable"
  | "unknown"
  | "unavailable"
  /** A map directive was answered. */
  | "mapped"
  /** A compaction point was asked for and made. */
  | "compacted"
  /** A compaction point was asked for, and nothing read differently: none was made (nothing rewritten, none counted). */
  | "unchanged"
  | "match"
  | "no-match"
  | "lost"
  /** A window began writing to the session under a named policy (its first append). */
  | "started"
  /** The session was ended (`end()`): its holds were released after this record. */
  | "ended";

/**
 * One logged decision. Records of a (store, session) form a hash chain: each carries the hash of the one
 * before it, so an edited, dropped or reordered record is detectable (`verifyAuditChain`).
 */
export interface AuditRecord {
  /** 1-based position in this store's chain for this session. */
  readonly seq: number;
  readonly at: number;
  readonly session: string;
  /** The store whose chain holds the record. */
  readonly store: string;
  readonly op: AuditOp | null;
  readonly status: AuditStatus;
  readonly spanId: string | null;
  readonly kind: string | null;
  readonly mode: PruneMode | null;
  /** The check result, when the check ran. */
  readonly conditions: Conditions | null;
  readonly handle: string | null;
  /** The copy had expired and the runtime wrote the window's bytes back before pruning. */
  readonly repersisted: boolean;
  /** The directive carried `accept_lossy: true`. */
  readonly acceptLossy: boolean;
  /** A stable machine-readable reason code for anything but a clean success (`auditReason` writes it). */
  readonly reason: AuditReason | null;
  /** Pinned identifiers carried into the replacement. */
  readonly pinsCarried: number;
  /**
   * Content hash of the span a prune decided about. A window rebuilt after a restart checks a store's
   * copy against it, so a store that returns other bytes under a recomputed hash is caught.
   */
  readonly spanHash: string | null;
  /** The directive as received, truncated to a bounded size (untrusted input is never stored whole). */
  readonly directive: string | null;
  /**
   * A reversible prune whose copy is kept for less than the session's horizon: the time (ms) after which
   * nothing promises it. Absent on every other record (and on records written before it existed).
   */
  readonly until?: number;
  /**
   * When the window decided, on its decision clock (the clock's milliseconds × 1000, plus a counter so
   * that decisions in one millisecond stay in order): what orders one session's records across stores.
   * Absent on records written before the field existed (their `at` orders them).
   */
  readonly decided?: number | undefined;
  readonly prevHash: string;
  readonly hash: string;
}

/**
 * Whether a record is a prune decision about a span that `prunesOf` returns: committed (`reversible`,
 * `lossy`), or not applied after all (`kept`: the span stayed live).
 */
export function isPruneDecision(r: Pick<AuditRecord, "op" | "status">): boolean {
  return r.op === "prune" && (r.status === "reversible" || r.status === "lossy" || r.status === "kept");
}

/** The part of a record the guard decides; the store fills in position, time and the chain. */
export type AuditDraft = Omit<AuditRecord, "seq" | "at" | "session" | "store" | "prevHash" | "hash" | "spanHash" | "until"> & {
  readonly until?: number;
  readonly spanHash?: string | null;
};

export const GENESIS_HASH = "0".repeat(64);

/** The last link of a chain: where the next record attaches. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** The head of a chain with no records yet. */
export const EMPTY_CHAIN: ChainHead = Object.freeze({ seq: 0, hash: GENESIS_HASH });

/**
 * One session's records from several stores, in the order they were decided: each store's chain in its own
 * order, the chains merged by the decision clock where records have it (`at` × 1000 where they do not), a
 * tie going to the store whose name sorts first.
 */
export function inDecisionOrder(records: readonly AuditRecord[]): AuditRecord[] {
  const key = (r: AuditRecord) => r.decided ?? r.at * 1000;
  // Each store's chain stays in its own order (by seq), whatever the decision clocks say: two windows on one
  // session keep a clock each, so a later record can carry an earlier time, and a chain read out of order
  // does not verify. The chains are merged by the time at each one's head.
  const chains = new Map<string, AuditRecord[]>();
  for (const r of records) {
    let chain = chains.get(r.store);
    if (chain === undefined) chains.set(r.store, (chain = []));
    chain.push(r);
  }
  const heads = [...chains.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, chain]) => ({ chain: chain.sort((a, b) => a.seq - b.seq), at: 0 }));
  if (heads.length === 1) return heads[0]!.chain;
  const out: AuditRecord[] = [];
  for (;;) {
    let next: (typeof heads)[number] | undefined;
    for (const h of heads) if (h.at < h.chain.length && (next === undefined || key(h.chain[h.at]!) < key(next.chain[next.at]!))) next = h;
    if (next === undefined) return out;
    out.push(next.chain[next.at++]!);
  }
}

/**
 * A sealed record with its stored form: `JSON.stringify(record)`, built from the text the hash was
 * computed over, so an adapter that stores JSON does not serialise the record a second time.
 */
export interface SealedAudit {
  readonly record: AuditRecord;
  readonly json: string;
}

/** Seals drafts, in order, onto a chain's head; the records link to each other and to the head. */
export function sealChain(head: ChainHead, drafts: readonly AuditDraft[], ctx: { at: number; session: string; store: string }): AuditRecord[] {
  return sealChainJson(head, drafts, ctx).map((s) => s.record);
}

/** `sealChain` for adapters that store each record as JSON: the records and their stored form. */
export function sealChainJson(head: ChainHead, drafts: readonly AuditDraft[], ctx: { at: number; session: string; store: string }): SealedAudit[] {
  let prev = head;
  return drafts.map((draft) => {
    const sealed = sealAuditJson(draft, { seq: prev.seq + 1, at: ctx.at, session: ctx.session, store: ctx.store, prevHash: prev.hash });
    prev = sealed.record;
    return sealed;
  });
}

/** Seals a draft into the next link of a chain. */
export function sealAudit(
  draft: AuditDraft,
  ctx: { seq: number; at: number; session: string; store: string; prevHash: string },
): AuditRecord {
  return sealAuditJson(draft, ctx).record;
}

/** `sealAudit`, with the record's stored form. */
export function sealAuditJson(
  draft: AuditDraft,
  ctx: { seq: number; at: number; session: string; store: string; prevHash: string },
): SealedAudit {
  // Keys written in sorted order, so plain JSON.stringify is the canonical form `verifyAuditChain`
  // recomputes; spreading the two objects instead costs several times the whole hash on a hot path.
  const c = draft.conditions;
  const body: Omit<AuditRecord, "hash"> & { hash?: string } = {
    acceptLossy: draft.acceptLossy,
    at: ctx.at,
    conditions: c === null ? null : { addressability: c.addressability, existence: c.existence, provenance: c.provenance },
    // Left out when absent, so records without it hash as they always did.
    decided: draft.decided,
    directive: draft.directive,
    handle: draft.handle,
    kind: draft.kind,
    mode: draft.mode,
    op: draft.op,
    pinsCarried: draft.pinsCarried,
    prevHash: ctx.prevHash,
    reason: draft.reason,
    repersisted: draft.repersisted,
    seq: ctx.seq,
    session: ctx.session,
    spanHash: draft.spanHash ?? null,
    spanId: draft.spanId,
    status: draft.status,
    store: ctx.store,
  };
  // Last in key order, and only when set, so records without it keep their exact bytes (added after the
  // literal rather than spread into it: a spread builds the record through a slower, generic path).
  if (draft.until !== undefined) (body as { until?: number }).until = draft.until;
  const canonical = JSON.stringify(body);
  const hash = contentHash(ctx.prevHash + "\n" + canonical);
  body.hash = hash;
  // `hash` is the last key of the record, so its JSON is the canonical text with the hash appended: the
  // same bytes `JSON.stringify(record)` writes (a hex digest needs no escaping).
  return { record: body as AuditRecord, json: `${canonical.slice(0, -1)},"hash":"${hash}"}` };
}

/** A break in an audit chain: where it is and why. */
export interface AuditChainBreak {
  readonly seq: number;
  readonly problem: "hash-mismatch" | "prev-mismatch" | "seq-gap";
  readonly detail: string;
}

/**
 * Checks one (store, session) chain, in the order the store returned it. Returns the first break, or
 * `null` when every record links to the one before and its hash matches its content.
 */
export function verifyAuditChain(records: readonly AuditRecord[]): AuditChainBreak | null {
  let prev = GENESIS_HASH;
  let expectedSeq = 1;
  for (const r of records) {
    if (r.seq !== expectedSeq) {
      return { seq: r.seq, problem: "seq-gap", detail: `expected record ${expectedSeq}, found ${r.seq}` };
    }
    if (r.prevHash !== prev) {
      return { seq: r.seq, problem: "prev-mismatch", detail: `record ${r.seq} does not link to record ${r.seq - 1}` };
    }
    const { hash, ...body } = r;
    const recomputed = contentHash(r.prevHash + "\n" + canonicalJson(body));
    if (recomputed !== hash) {
      return { seq: r.seq, problem: "hash-mismatch", detail: `record ${r.seq} was edited after it was written` };
    }
    prev = hash;
    expectedSeq++;
  }
  return null;
}

/**
 * Why a record's stored text is not exactly the canonical serialisation of what it parses to
 * (`JSON.stringify(JSON.parse(text))`: the form every adapter has always written), or `null` when it is.
 *
 * The hash covers the parsed record, so a text that parses to the sealed record but is not its serialisation
 * — a key written twice (`{"status":"rejected",…,"status":"reversible"}`: `JSON.parse` keeps the last value,
 * SQLite's `json_extract` the first), added whitespace, `1.0` for `1` — verifies while other readers of
 * the same text may see other values. `pruneguard audit --verify` refuses such a record as tampered.
 */
export function storedAuditProblem(text: string, parsed: unknown): string | null {
  const canonical = JSON.stringify(parsed);
  if (canonical === text) return null;
  const twice = duplicateKey(text);
  if (twice !== null) return `its stored text names the key ${JSON.stringify(twice)} twice (readers disagree on which value counts)`;
  let i = 0;
  while (i < text.length && text[i] === canonical[i]) i++;
  return `its stored text is not the canonical serialisation of what it parses to (they differ at character ${i})`;
}

/** What a field of a record holds, for `auditRecordTypeProblem`: a test and how a message names it. */
interface FieldType {
  readonly test: (value: unknown) => boolean;
  readonly expected: string;
}

const TEXT: FieldType = { test: (v) => typeof v === "string", expected: "a string" };
const TEXT_OR_NULL: FieldType = { test: (v) => v === null || typeof v === "string", expected: "a string or null" };
const FLAG: FieldType = { test: (v) => typeof v === "boolean", expected: "true or false" };
const NUMBER: FieldType = { test: (v) => typeof v === "number" && Number.isFinite(v), expected: "a number" };
const CONDITIONS: FieldType = {
  test: (v) => v === null || (typeof v === "object" && !Array.isArray(v) &&
    ["addressability", "existence", "provenance"].every((k) => typeof (v as Record<string, unknown>)[k] === "boolean")),
  expected: "null or an object of three flags",
};

/**
 * The type of each field of `AuditRecord`. Those of the first version are required; `spanHash`, `decided`
 * and `until` came later (or are written only when set) and may be absent.
 */
const RECORD_FIELDS: ReadonlyArray<readonly [keyof AuditRecord, FieldType, "required" | "optional"]> = [
  ["seq", { test: (v) => Number.isSafeInteger(v) && (v as number) >= 1, expected: "a whole number from 1" }, "required"],
  ["at", NUMBER, "required"],
  ["session", TEXT, "required"],
  ["store", TEXT, "required"],
  ["op", TEXT_OR_NULL, "required"],
  ["status", TEXT, "required"],
  ["spanId", TEXT_OR_NULL, "required"],
  ["kind", TEXT_OR_NULL, "required"],
  ["mode", TEXT_OR_NULL, "required"],
  ["conditions", CONDITIONS, "required"],
  ["handle", TEXT_OR_NULL, "required"],
  ["repersisted", FLAG, "required"],
  ["acceptLossy", FLAG, "required"],
  ["reason", TEXT_OR_NULL, "required"],
  ["pinsCarried", NUMBER, "required"],
  ["directive", TEXT_OR_NULL, "required"],
  ["prevHash", TEXT, "required"],
  ["hash", TEXT, "required"],
  ["spanHash", TEXT_OR_NULL, "optional"],
  ["decided", NUMBER, "optional"],
  ["until", NUMBER, "optional"],
];

/** A JSON value's type, as a message names it (never the value: it is untrusted). */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "boolean") return "true or false";
  if (typeof value === "number") return Number.isFinite(value) ? "a number" : "a number out of range";
  return `a ${typeof value}`;
}

/**
 * Why a parsed record is not one pruneguard writes — not an object, a field missing or of another type —
 * or `null` when every field has its type. The chain's hash covers whatever the text holds, and anyone with
 * write access can seal a chain of their own (it has no secret), so a record that verifies may still carry
 * a string where a number belongs; what shows records (`pruneguard audit`, its HTML page) relies on the
 * types, and refuses such a record as unreadable. The message names the field and the types, never the value.
 * Fields this code does not know are left alone: a later version may add some.
 */
export function auditRecordTypeProblem(parsed: unknown): string | null {
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return `it is ${jsonType(parsed)}, not a record (a JSON object)`;
  const record = parsed as Record<string, unknown>;
  for (const [field, type, presence] of RECORD_FIELDS) {
    if (!Object.hasOwn(record, field)) {
      if (presence === "required") return `its field "${field}" is missing`;
      continue;
    }
    if (!type.test(record[field])) return `its field "${field}" is ${jsonType(record[field])}, not ${type.expected}`;
  }
  return null;
}

/** The first key written twice in one object of a valid JSON text, or `null`. */
function duplicateKey(text: string): string | null {
  /** Per open container: the keys an object has named so far, `null` for an array. */
  const open: Array<Set<string> | null> = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const keys = open.at(-1);
      if (keyNext && keys instanceof Set) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
      }
      keyNext = false;
      i = j;
    } else if (c === "{") {
      open.push(new Set());
      keyNext = true;
    } else if (c === "[") {
      open.push(null);
      keyNext = false;
    } else if (c === "}" || c === "]") {
      open.pop();
      keyNext = false;
    } else if (c === ",") {
      keyNext = open.at(-1) instanceof Set;
    }
  }
  return null;
}

const MAX_DIRECTIVE_CHARS = 1024;

/** Serialises untrusted input for the audit log, bounded so a megabyte directive is not stored whole. */
export function directiveForAudit(input: unknown): string {
  let text: string;
  try {
    text = typeof input === "string" ? input : (JSON.stringify(input) ?? String(input));
  } catch {
    text = `[unserialisable ${typeof input}]`;
  }
  if (text.length <= MAX_DIRECTIVE_CHARS) return text;
  return `${text.slice(0, MAX_DIRECTIVE_CHARS)}…[${text.length - MAX_DIRECTIVE_CHARS} more chars]`;
}
