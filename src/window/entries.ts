/** The window's positions, as the window and recall see them (internal), and how they are made. */
import { contentHash } from "../hash.js";
import { chooseHint, type Hint } from "../hint.js";
import { formatUntil, indexLine, indexLineTokens, replacementHeader, tombstoneLine, uncertainCopyLine } from "../render/lines.js";
import { frameUntrusted } from "../render/framing.js";
import type { PruneCommitItem } from "../stores/store.js";
import { countTokens } from "../tokens.js";
import type { PruneMode, Span, SpanMessage } from "../types.js";

export interface LiveEntry {
  state: "live";
  /** Its index in the window's entries: positions never move, a pruned span is replaced in place. */
  pos: number;
  span: Span;
  handle: string | null;
  store: string | null;
  /** Why persisting on append failed, if it did (the prune will see no handle). */
  persistError: string | null;
  /** When the store wrote its copy (the start of its retention), if it did. */
  copiedAt: number | null;
  /** A runtime line under the span (a refusal, a prune not applied), shown until a compaction point clears it. */
  notice: string | null;
  /**
   * How many compaction points the window had made when `notice` was set: the first compaction point after
   * that shows it under the span, the next one clears it (`WindowCore.compactNow`). Absent with no notice.
   */
  noticeAt?: number;
  /**
   * A rendering read the window (`views()`) while the notice stood under the span: only then may a compaction
   * point clear it, so a line placed and cleared with no rendering in between is not lost on the model.
   */
  noticeSeen?: boolean;
  /**
   * The hint its index line will carry if it is dropped, chosen when it was appended (`chooseHint`: a
   * regex scan and a token count, ~2–4 µs, paid once per span so a prune does not); `null` for none,
   * absent when not chosen yet (a span put back by a resume: chosen when it is pruned).
   */
  hint?: Hint | null;
}

export interface GoneEntry {
  state: "pruned" | "tombstone";
  spanId: string;
  kind: string;
  group: string | null;
  message: SpanMessage | null;
  hash: string;
  mode: PruneMode;
  handle: string | null;
  store: string | null;
  /**
   * A reversible prune whose copy is kept for less than the session's horizon: when it may be rotated
   * out (the outcome's and the audit record's `until`). `null` when it is kept for the whole session.
   */
  until: number | null;
  /**
   * When nothing promises the copy any longer (its hold lapses, or its retention ends), `null` when
   * never within the session. From then on the line stops offering a recall.
   */
  keptUntil: number | null;
  /** When the store's retention alone lets the copy go (`Keep.retainedUntil`): `null` never, `undefined` not known. */
  retainedUntil?: number | null;
  /** A recall found the copy gone or altered: the line says so from then on. */
  copyLost: boolean;
  /**
   * A reading of the clock found the promise lapsed (`promiseLapsed`): it stays lapsed, whatever the clock
   * says later (an NTP step back does not bring a copy back). Absent until then.
   */
  lapsed?: true;
  /** What a dropped span held, in a few words of the hint alphabet, shown on its index line; `null` for none. */
  hint: string | null;
  /** The tokens `: hint` adds to the index line, counted when the hint was chosen (0 without one). */
  hintTokens: number;
  /** The digest or compressed form (untrusted text), rendered framed under the line. */
  replacement: string | null;
}

/**
 * A span of the session that a window resumed after a restart cannot bring back: it was never pruned, and
 * its bytes lived only in the process that held it (an unbacked kind, or a copy that is gone).
 */
export interface LostEntry {
  state: "lost";
  spanId: string;
  kind: string;
  group: string | null;
  message: SpanMessage | null;
  hash: string;
  handle: null;
  store: string | null;
  /** `span_5 lost in a restart, contents unknown`. */
  text: string;
}


/**
 * A range summary: one digest in the place of a contiguous run of spans (and earlier digests), which it
 * keeps as its members — one level of the tree. Every member's bytes are held by its store, so recall of
 * the summary expands one level and recall of a member gives its bytes.
 */
export interface SummaryEntry {
  state: "summary";
  /** A span id the window minted for the summary (`span_21`): recall names it like any span. */
  spanId: string;
  kind: "summary";
  /** The entries it replaced, in window order: pruned spans (index lines) and lower summaries. */
  members: Entry[];
  /** The model's digest with the members' pinned identifiers carried (at most `MAX_SUMMARY_IDS`; the rest are found by a search of the members). */
  digest: string;
  /** Every pinned identifier of the members, carried up to the next level. */
  ids: readonly string[];
  /** What renders in its place: a header naming the range and the recall key, then the digest. */
  text: string;
  handle: null;
  store: null;
  replacement: null;
  /**
   * Set when the provider wrote the summary (`provider-compaction.ts`): its compaction block or item as
   * the response carried it, JSON text, sent back to that provider byte for byte in the summary's place.
   */
  provider?: ProviderBlock;
}

/** A provider's compaction block (Anthropic) or item (OpenAI Responses), kept opaque. */
export interface ProviderBlock {
  /** The provider whose renderer sends it back (`anthropic`, `openai-responses`). */
  readonly name: string;
  /** The block as JSON text, exactly as received (key order kept, so it re-serializes to the same bytes). */
  readonly block: string;
}

/**
 * A run of index lines and tombstones folded into one runtime line at a compaction point (`fold.ts`): the
 * members stay as they were — each recallable by its own id or handle, each searched — and recall of the
 * fold's key (`span_3-span_90`) lists them, one level of the tree.
 */
export interface FoldEntry {
  state: "fold";
  /** The fold's key: its first and last span ids (`span_3-span_90`), which recall takes. */
  spanId: string;
  kind: "fold";
  /** The entries it folded, in window order: index lines, tombstones and lower folds. */
  members: Entry[];
  /** Its one line (`foldLine`). */
  text: string;
  /** The role it renders in, worked out once from its members (`summaryRole`). */
  role: "system" | "user" | "assistant";
  handle: null;
  store: null;
  replacement: null;
  group: null;
}

export type Entry = LiveEntry | GoneEntry | LostEntry | SummaryEntry | FoldEntry;

export function spanIdOf(e: Entry): string {
  return e.state === "live" ? e.span.id : e.spanId;
}

export function kindOf(e: Entry): string {
  return e.state === "live" ? e.span.kind : e.kind;
}

/** A new span: well-formed text, its hash and token count, and its group (a tool message's call by default). */
export function newSpan(id: string, input: { readonly kind: string; readonly text: string; readonly group?: string; readonly message?: SpanMessage }): Span {
  // A lone surrogate has no UTF-8 form: every store would keep U+FFFD instead, under the same hash, and
  // recall would return other code units. Make the text well-formed once, here, so all copies agree.
  const text = input.text.toWellFormed();
  const message = input.message;
  const group = input.group ?? (message && "callId" in message ? `call:${message.callId}` : undefined);
  return {
    id, kind: input.kind, text, tokens: countTokens(text), hash: contentHash(text),
    ...(group !== undefined ? { group } : {}),
    ...(message !== undefined ? { message } : {}),
  };
}

/**
 * The tool call/result groups of a window, by position: a result joins the earliest call with its id
 * that has no result yet, and a call reusing an id already answered starts a group of its own
 * (`call:c1`, then `call:c1#2`), so a provider reusing ids never ties two pairs' fates together.
 */
export class CallGroups {
  readonly #waiting = new Map<string, string[]>();
  readonly #made = new Map<string, number>();

  /** The group of a span about to be appended: its own, or one by position for a tool message. */
  groupFor(input: { readonly group?: string; readonly message?: SpanMessage }): { group?: string } {
    if (input.group !== undefined) return { group: input.group };
    const m = input.message;
    if (m === undefined || !("callId" in m)) return {};
    if (m.role === "tool-result") {
      const waiting = this.#waiting.get(m.callId)?.shift();
      if (waiting !== undefined) return { group: waiting };
      return { group: this.#fresh(m.callId) };
    }
    const group = this.#fresh(m.callId);
    const q = this.#waiting.get(m.callId);
    if (q) q.push(group);
    else this.#waiting.set(m.callId, [group]);
    return { group };
  }

  #fresh(callId: string): string {
    const n = (this.#made.get(callId) ?? 0) + 1;
    this.#made.set(callId, n);
    return n === 1 ? `call:${callId}` : `call:${callId}#${n}`;
  }
}

/** What replaces a committed span: an index line or a tombstone, or the digest/compressed body under its header. */
export function prunedEntry(
  member: { readonly entry: LiveEntry; readonly mode: PruneMode; readonly body: string | null },
  committed: PruneCommitItem,
  keep: { readonly until: number | null; readonly keptUntil: number | null; readonly retainedUntil?: number | null },
  hintTokens = 0,
): GoneEntry {
  const { span } = member.entry;
  const reversible = committed.decision.status === "reversible";
  const handle = reversible ? committed.handle : null;
  return {
    state: reversible ? "pruned" : "tombstone",
    spanId: span.id,
    kind: span.kind,
    group: span.group ?? null,
    message: span.message ?? null,
    hash: span.hash,
    mode: member.mode,
    handle,
    store: member.entry.store,
    until: reversible ? keep.until : null,
    keptUntil: reversible ? keep.keptUntil : null,
    ...(reversible && keep.retainedUntil !== undefined ? { retainedUntil: keep.retainedUntil } : {}),
    copyLost: false,
    // A drop's index line names what the span held; the hint is of the hint alphabet (`hint.ts`), never framed text.
    ...hintFields(reversible && member.body === null ? (member.entry.hint !== undefined ? member.entry.hint : chooseHint(span, hintTokens)) : null),
    replacement: member.body,
  };
}

/**
 * Whether nothing promises a reversibly pruned span's copy any longer at `now`: its `keptUntil` (the hold's
 * end, or its retention's, whichever is later) has come. The one test of a lapse, for every line, fold,
 * summary header, range plan and pending decision. A lapse once found is remembered on the entry (`lapsed`):
 * a clock stepping back (an NTP correction) does not make a line offer a recall again. A copy found lost is
 * not a lapse (its line says `lost`); callers that treat both alike test `copyLost` too.
 */
export function promiseLapsed(e: Pick<GoneEntry, "keptUntil" | "lapsed">, now: number): boolean {
  if (e.lapsed === true) return true;
  if (e.keptUntil === null || now < e.keptUntil) return false;
  e.lapsed = true;
  lapsesFound++;
  return true;
}

/**
 * How many lapses `promiseLapsed` has found, in this process: a reader that found one at a later clock than
 * the pending decisions last looked at (`lapse.ts`) makes them look again, even if the clock then steps back.
 */
export let lapsesFound = 0;

/** Whether a line's copy can no longer be recalled as pruned: found lost, or its promise lapsed (`promiseLapsed`). */
export function copyUnpromised(e: GoneEntry, now: number): boolean {
  return e.copyLost || promiseLapsed(e, now);
}

/**
 * The runtime line that stands in a pruned span's place at time `now`: it offers a recall only while
 * something still promises the copy (a hold, or retention), and says how long when that ends before the
 * session's horizon. Computed at every render, from the clock, so a lapsed hold is never shown as a recall.
 */
export function goneLine(e: GoneEntry, now: number, tombstone: string): string {
  // A span pruned without a body in its place (a drop, or a member of a range summary) stands as an index line.
  const bare = e.replacement === null;
  const mode: PruneMode = bare ? "drop" : e.mode;
  if (e.state === "tombstone" || e.handle === null) {
    return bare ? tombstoneLine(e.spanId, tombstone) : replacementHeader(e.spanId, e.mode as Exclude<PruneMode, "drop">, null);
  }
  if (e.copyLost) return uncertainCopyLine(e.spanId, mode, "lost", e.hint);
  if (promiseLapsed(e, now)) return uncertainCopyLine(e.spanId, mode, "may be lost", e.hint);
  const until = e.until === null ? null : formatUntil(e.until, now);
  return bare ? indexLine(e.spanId, e.handle, e.hint, until) : replacementHeader(e.spanId, e.mode as Exclude<PruneMode, "drop">, e.handle, until);
}

/**
 * The o200k tokens of `goneText`: a plain index line is counted from its shape (`indexLineTokens`, the
 * common case on the prune path), anything else by the tokenizer.
 */
export function goneTokens(e: GoneEntry, now: number, tombstone: string): number {
  const plainIndex = e.state === "pruned" && e.replacement === null && e.handle !== null && !e.copyLost && e.until === null && !promiseLapsed(e, now);
  return plainIndex ? indexLineTokens(e.spanId, e.handle!, e.hint, e.hintTokens) : countTokens(goneText(e, now, tombstone));
}

/** A gone entry's hint fields from a chosen hint. */
export function hintFields(hint: Hint | null): Pick<GoneEntry, "hint" | "hintTokens"> {
  return hint === null ? { hint: null, hintTokens: 0 } : { hint: hint.text, hintTokens: hint.suffixTokens };
}

/** The line and, framed under it, the digest or compressed body. */
export function goneText(e: GoneEntry, now: number, tombstone: string): string {
  const line = goneLine(e, now, tombstone);
  return e.replacement === null ? line : `${line}\n${frameUntrusted(e.replacement)}`;
}

/**
 * A note the home store keeps under a span id (a range summary's, a provider's compaction), read back: its
 * fields, for the caller to check one by one, when it is the note registered (`hash`) and parses as JSON;
 * `null` for a note gone, altered or not JSON (what it stood for is then drawn from its members).
 */
export function registeredNote<T>(note: string | null, hash: string): Partial<T> | null {
  if (note === null || contentHash(note) !== hash) return null;
  try {
    const parsed = JSON.parse(note) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Partial<T>) : null;
  } catch {
    return null;
  }
}
