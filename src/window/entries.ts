/** The window's positions, as the window and recall see them (internal). */
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
  /** What renders in the span's place. */
  text: string;
  /** The digest or compressed form, for recall's answer about a lossy span. */
  replacement: string | null;
}

export type Entry = LiveEntry | GoneEntry;

export function spanIdOf(e: Entry): string {
  return e.state === "live" ? e.span.id : e.spanId;
}

export function kindOf(e: Entry): string {
  return e.state === "live" ? e.span.kind : e.kind;
}
