/** The window as a model and a provider renderer see it. */
import type { PruneMode, Span, SpanMessage } from "../types.js";
import { spanIdOf, type Entry } from "./entries.js";

/** What the window shows in one position, for renderers of provider message shapes. */
export type WindowEntry =
  | { readonly state: "live"; readonly span: Span; readonly handle: string | null; readonly notice: string | null }
  | { readonly state: "pruned"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null; readonly mode: PruneMode; readonly handle: string; readonly text: string }
  | { readonly state: "tombstone"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null; readonly mode: PruneMode; readonly text: string }
  /** A span a resumed window could not bring back: only the process that held it had its bytes. */
  | { readonly state: "lost"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null; readonly text: string }
  /** A range summary: one digest in the place of its members (span ids, one level), recallable by `spanId`. */
  | { readonly state: "summary"; readonly spanId: string; readonly kind: "summary"; readonly members: readonly string[]; readonly message: null; readonly text: string };

/** An internal entry as its public view. */
export function entryView(e: Entry): WindowEntry {
  if (e.state === "live") return { state: "live", span: e.span, handle: e.handle, notice: e.notice };
  if (e.state === "summary") return { state: "summary", spanId: e.spanId, kind: "summary", members: e.members.map(spanIdOf), message: null, text: e.text };
  if (e.state === "pruned") {
    return { state: "pruned", spanId: e.spanId, kind: e.kind, group: e.group, message: e.message, mode: e.mode, handle: e.handle!, text: e.text };
  }
  if (e.state === "lost") return { state: "lost", spanId: e.spanId, kind: e.kind, group: e.group, message: e.message, text: e.text };
  return { state: "tombstone", spanId: e.spanId, kind: e.kind, group: e.group, message: e.message, mode: e.mode, text: e.text };
}

/** What the model reads: live spans with their notices, index lines, tombstones, then loose notices. */
export function renderWindow(entries: readonly WindowEntry[], notices: readonly string[]): string {
  const blocks = entries.map((e) => {
    if (e.state !== "live") return e.text;
    const head = `[${e.span.id} ${e.span.kind}]\n${e.span.text}`;
    return e.notice === null ? head : `${head}\n${e.notice}`;
  });
  return [...blocks, ...notices].join("\n\n");
}
