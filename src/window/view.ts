/** The window as a model and a provider renderer see it. */
import { frameUntrusted } from "../render/framing.js";
import type { PruneMode, Span, SpanMessage } from "../types.js";
import { goneLine, goneText, spanIdOf, type Entry, type ProviderBlock } from "./entries.js";
import { foldText, summaryRole } from "./fold.js";
import { summaryHeader, summaryText } from "./range.js";

/**
 * What the window shows in one position, for renderers of provider message shapes. `text` is the
 * rendering (runtime line, then any untrusted body framed); `line` is the runtime line alone.
 */
export type WindowEntry =
  | { readonly state: "live"; readonly span: Span; readonly handle: string | null; readonly notice: string | null }
  | {
      readonly state: "pruned"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null;
      readonly mode: PruneMode; readonly handle: string; readonly line: string; readonly text: string;
      /** When the copy may be rotated out, if before the session's horizon (`null`: kept for the session). */
      readonly until: number | null;
    }
  | {
      readonly state: "tombstone"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null;
      readonly mode: PruneMode; readonly line: string; readonly text: string;
    }
  /** A span a resumed window could not bring back: only the process that held it had its bytes. */
  | { readonly state: "lost"; readonly spanId: string; readonly kind: string; readonly group: string | null; readonly message: SpanMessage | null; readonly line: string; readonly text: string }
  /**
   * A fold (`fold.ts`): a run of index lines and tombstones as one runtime line; `spanId` is its key
   * (`span_3-span_90`), which recall takes to list `members` (one level).
   */
  | {
      readonly state: "fold"; readonly spanId: string; readonly kind: "fold"; readonly members: readonly string[];
      /** The role its members had: the model's own turn when they were all its words and tool traffic, else the user's. */
      readonly message: { readonly role: "system" | "user" | "assistant" };
      readonly line: string; readonly text: string;
    }
  /**
   * A range summary: one digest in the place of its members (span ids, one level), recallable by `spanId`;
   * `line` is its header (a runtime line), `text` the header and the digest framed.
   */
  | {
      readonly state: "summary"; readonly spanId: string; readonly kind: "summary"; readonly members: readonly string[];
      /** The role its members had: the model's own turn when they were all its words and tool traffic, else the user's. */
      readonly message: { readonly role: "system" | "user" | "assistant" };
      readonly line: string; readonly text: string;
      /**
       * A summary the provider wrote (its compaction): the block its renderer sends back verbatim, with `line`
       * beside it; every other renderer sends `text`.
       */
      readonly provider?: ProviderBlock;
    };

/** An internal entry as its public view, at time `now`. */
export function entryView(e: Entry, now: number, tombstone: string): WindowEntry {
  if (e.state === "live") return { state: "live", span: e.span, handle: e.handle, notice: e.notice };
  if (e.state === "summary") {
    // Its header says what its members' copies are promised as of now (`summaryHeader`), as an index line does.
    const line = summaryHeader(e.spanId, e.members, now);
    return {
      state: "summary", spanId: e.spanId, kind: "summary", members: e.members.map(spanIdOf), message: { role: summaryRole(e.members) },
      line, text: summaryText(e, now, line), ...(e.provider !== undefined ? { provider: e.provider } : {}),
    };
  }
  if (e.state === "fold") {
    const line = foldText(e, now);
    return { state: "fold", spanId: e.spanId, kind: "fold", members: e.members.map(spanIdOf), message: { role: e.role }, line, text: line };
  }
  if (e.state === "lost") return { state: "lost", spanId: e.spanId, kind: e.kind, group: e.group, message: e.message, line: e.text, text: e.text };
  const common = {
    spanId: e.spanId, kind: e.kind, group: e.group, message: e.message, mode: e.mode, line: goneLine(e, now, tombstone), text: goneText(e, now, tombstone),
  };
  if (e.state === "pruned") return { state: "pruned", ...common, handle: e.handle!, until: e.until };
  return { state: "tombstone", ...common };
}

/** A live span as the model reads it: its header line, its text framed, its notice (a runtime line). */
export function liveBlock(span: Span, notice: string | null, header = `[${span.id} ${span.kind}]`): string {
  const head = `${header}\n${frameUntrusted(span.text)}`;
  return notice === null ? head : `${head}\n${notice}`;
}

/** What the model reads: live spans with their notices, index lines, tombstones, then loose notices. */
export function renderWindow(entries: readonly WindowEntry[], notices: readonly string[]): string {
  const blocks = entries.map((e) => (e.state === "live" ? liveBlock(e.span, e.notice) : e.text));
  return [...blocks, ...notices].join("\n\n");
}
