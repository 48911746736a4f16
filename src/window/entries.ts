/** The window's positions, as the window and recall see them (internal), and how they are made. */
import { contentHash } from "../hash.js";
import { indexLine, replacementHeader, tombstoneLine, uncertainCopyLine } from "../render.js";
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
  notice: string | null;
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
  /** A recall found the copy gone or altered: the line says so from then on. */
  copyLost: boolean;
  /** The digest or compressed form (untrusted text), rendered framed under the line. */
  replacement: string | null;
}

export type Entry = LiveEntry | GoneEntry;

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

/** What replaces a committed span: an index line or a tombstone, or the digest/compressed body under its header. */
export function prunedEntry(
  member: { readonly entry: LiveEntry; readonly mode: PruneMode; readonly body: string | null },
  committed: PruneCommitItem,
  keep: { readonly until: number | null; readonly keptUntil: number | null },
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
    copyLost: false,
    replacement: member.body,
  };
}

/**
 * The runtime line that stands in a pruned span's place at time `now`: it offers a recall only while
 * something still promises the copy (a hold, or retention), and says how long when that ends before the
 * session's horizon. Computed at every render, from the clock, so a lapsed hold is never shown as a recall.
 */
export function goneLine(e: GoneEntry, now: number, tombstone: string): string {
  if (e.state === "tombstone" || e.handle === null) {
    return e.mode === "drop" ? tombstoneLine(e.spanId, tombstone) : replacementHeader(e.spanId, e.mode, null);
  }
  if (e.copyLost) return uncertainCopyLine(e.spanId, e.mode, "lost");
  if (e.keptUntil !== null && now >= e.keptUntil) return uncertainCopyLine(e.spanId, e.mode, "may be lost");
  const remaining = e.until === null ? null : e.until - now;
  return e.mode === "drop" ? indexLine(e.spanId, e.handle, remaining) : replacementHeader(e.spanId, e.mode, e.handle, remaining);
}

/** The line and, framed under it, the digest or compressed body. */
export function goneText(e: GoneEntry, now: number, tombstone: string): string {
  const line = goneLine(e, now, tombstone);
  return e.replacement === null ? line : `${line}\n${frameUntrusted(e.replacement)}`;
}
