/**
 * A window's positions as one provider-neutral conversation that every renderer can send as is: turns of
 * text, and tool exchanges (calls with their results), whatever state each span is in.
 *
 * The rules that keep every rendering valid, for any window state:
 * - **Pairs by position**: a result answers the earliest unanswered call with its id before it, so a
 *   provider reusing an id makes two pairs, not one; rendered ids are made unique and provider-safe.
 * - **A call without a result yet is held back** (not rendered) until its result is in the window.
 * - **A pair renders together or not at all**: the result follows its call at once, and spans appended
 *   between them come after it. Consecutive calls answered in the window share one exchange.
 * - **Pruned tool content keeps the tool role**: a pruned call still renders as a call (with no
 *   arguments, its index line or tombstone as the model's text before it) and a pruned result as the
 *   result's content, so the exchange stays a valid pair and tool output never speaks in the model's voice.
 * - **A result whose call is not in the window** (a late result of a call pruned before it arrived, or
 *   a call that was never appended) gets its call back from the result's own id and tool name.
 * - **Errors stay errors**: a result appended with `isError` keeps the flag, pruned or not.
 * - **Span text is framed** as in `render()` (`render/framing.ts`), and a window's loose notices (rejections
 *   of unknown or pruned spans, invalid directives) come last, so the model reads them in every shape.
 * - **Tool names are ones every provider takes** (`historyToolName`): the model may have called
 *   `multi_tool_use.parallel`, and a provider refuses history that names it. A call and its result render
 *   the same name, so pairs stay pairs; the window keeps the name as the model sent it.
 */
import { liveBlock, type WindowEntry } from "../window/view.js";
import { jsonText } from "./provider.js";

/** A text turn: a live span (with its id header and notice) or the line that replaced one. */
export interface TextTurn {
  readonly kind: "text";
  readonly role: "system" | "user" | "assistant";
  readonly text: string;
}

/** One call of an exchange with its result. */
export interface ToolPair {
  /** The id to render: the provider's own when it is safe and unique in this rendering, else a derived one. */
  readonly id: string;
  readonly toolName: string;
  /** The call's arguments as JSON text (`{}` when the call was pruned), and parsed, always an object. */
  readonly args: string;
  readonly input: { readonly [key: string]: unknown };
  readonly result: string;
  readonly isError: boolean;
}

/** Calls the model made in one turn and their results, to render as one call message and its answers. */
export interface ToolExchange {
  readonly kind: "tools";
  /** The model's text before its calls: index lines of pruned calls, rejection notices on live ones. */
  readonly notes: readonly string[];
  readonly pairs: readonly ToolPair[];
}

/**
 * A provider's compaction (`window/provider-compaction.ts`): its block, sent back verbatim by the renderer of
 * the provider that wrote it (beside `line`, the runtime line whose id recalls what it covered), and `text`
 * (that line and the summary, framed) by every other renderer.
 */
export interface CompactionTurn {
  readonly kind: "compaction";
  /** The provider whose block it is (`anthropic`, `openai-responses`). */
  readonly provider: string;
  /** The block's JSON text, as the provider sent it. */
  readonly block: string;
  readonly line: string;
  readonly text: string;
}

export type Turn = TextTurn | ToolExchange | CompactionTurn;

/**
 * The user turn put before a conversation that would open with the model's: Anthropic (direct, Bedrock,
 * Vertex) refuses that opening, and every provider takes this one.
 */
export const OPENING_TURN = "(conversation so far)";

/** What renderers take: a window (anything with `entries()`) or its entries. */
export type RenderSource = { entries(): readonly WindowEntry[]; readonly compactedEntries?: number } | readonly WindowEntry[];

export function entriesOf(source: RenderSource): readonly WindowEntry[] {
  return Array.isArray(source) ? source : (source as { entries(): readonly WindowEntry[] }).entries();
}

/** A window's loose notices (`notices()`); entries alone carry none. */
function noticesOf(source: RenderSource): readonly string[] {
  if (Array.isArray(source)) return [];
  const w = source as { notices?: () => readonly string[] };
  return typeof w.notices === "function" ? w.notices() : [];
}

/** Ids every provider accepts: Anthropic's character set, OpenAI's length limit. */
const SAFE_ID = /^[a-zA-Z0-9_-]{1,40}$/;

/**
 * The longest tool name every provider takes: OpenAI function names match `^[a-zA-Z0-9_-]{1,64}$`,
 * Anthropic tool names `^[a-zA-Z0-9_-]{1,128}$`.
 */
export const MAX_TOOL_NAME = 64;
const SAFE_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A tool name as rendered history carries it (finding 25.8): unchanged when every provider takes it; else
 * cut to 64 code points, each outside `[a-zA-Z0-9_-]` replaced by `_` (`multi_tool_use.parallel` →
 * `multi_tool_use_parallel`, `名前 😀` → `____`), and an empty name is `tool`. Deterministic, so every
 * rendering of a call and of its result says the same name.
 */
export function historyToolName(name: string): string {
  if (SAFE_TOOL_NAME.test(name)) return name;
  // Cut first (in code points, so a megabyte name costs no more than a short one), then replaced: ASCII only.
  return Array.from(name.slice(0, 2 * MAX_TOOL_NAME)).slice(0, MAX_TOOL_NAME).join("").replace(/[^a-zA-Z0-9_-]/gu, "_") || "tool";
}

interface Slot {
  readonly role: "system" | "user" | "assistant" | "tool-call" | "tool-result";
  readonly text: string;
  readonly callId: string;
  readonly toolName: string;
  readonly live: boolean;
  readonly isError: boolean;
  /** A live call's rejection notice, said as the model's text before the call. */
  readonly notice: string | null;
  /** A provider's compaction: its block and runtime line. */
  readonly compaction?: { readonly provider: string; readonly block: string; readonly line: string };
}

function slotOf(e: WindowEntry): Slot {
  if (e.state === "live") {
    const m = e.span.message;
    if (m?.role === "tool-call") {
      return { role: "tool-call", text: e.span.text, callId: textOf(m.callId), toolName: textOf(m.toolName), live: true, isError: false, notice: e.notice };
    }
    // Span text framed exactly as in render(): no tool output can print a runtime line (render/framing.ts).
    const text = liveBlock(e.span, e.notice, `[${e.span.id}]`);
    if (m?.role === "tool-result") {
      return { role: "tool-result", text, callId: textOf(m.callId), toolName: textOf(m.toolName), live: true, isError: m.isError === true, notice: null };
    }
    return { role: m?.role ?? "user", text, callId: "", toolName: "", live: true, isError: false, notice: null };
  }
  if (e.state === "summary" && e.provider !== undefined) {
    const compaction = { provider: e.provider.name, block: e.provider.block, line: e.line };
    return { role: "assistant", text: e.text, callId: "", toolName: "", live: false, isError: false, notice: null, compaction };
  }
  const m = e.message;
  if (m === null || (m.role !== "tool-call" && m.role !== "tool-result")) {
    return { role: m?.role ?? "user", text: e.text, callId: "", toolName: "", live: false, isError: false, notice: null };
  }
  return { role: m.role, text: e.text, callId: textOf(m.callId), toolName: textOf(m.toolName), live: false, isError: m.role === "tool-result" && m.isError === true, notice: null };
}

/**
 * A tool message's id or name as text. `append` refuses any other type; a session a store registered before
 * that check (or entries built by hand) may hold a number or an object, which renders as its JSON text, made
 * provider-safe like any id, instead of making every rendering throw.
 */
function textOf(value: unknown): string {
  return typeof value === "string" ? value : jsonText(value);
}

/** The window as turns every provider accepts (see the module comment for the rules). */
export function conversation(source: RenderSource): Turn[] {
  const slots = entriesOf(source).map(slotOf);
  // Pass 1: pair each result with the earliest unanswered call with its id before it.
  const resultOf = new Map<number, number>();
  const open = new Map<string, number[]>();
  for (const [i, s] of slots.entries()) {
    if (s.role === "tool-call") {
      const q = open.get(s.callId);
      if (q) q.push(i);
      else open.set(s.callId, [i]);
    } else if (s.role === "tool-result") {
      const call = open.get(s.callId)?.shift();
      if (call !== undefined) resultOf.set(call, i);
    }
  }
  const answered = new Set(resultOf.values());
  const ids = new Ids();
  const turns: Turn[] = [];
  // The exchange being built, and the results it waits for: once one of them is passed in window order,
  // the model had seen a result, so a later call starts a new turn.
  let exchange: { notes: string[]; pairs: ToolPair[]; results: Set<number>; sealed: boolean } | null = null;
  const close = () => {
    if (exchange) turns.push({ kind: "tools", notes: exchange.notes, pairs: exchange.pairs });
    exchange = null;
  };
  const pairOf = (call: Slot | null, result: Slot): ToolPair => {
    const source = call ?? result;
    const live = call !== null && call.live;
    return {
      id: ids.take(source.callId),
      toolName: historyToolName(source.toolName),
      args: live ? call.text : "{}",
      input: live ? argsObject(call.text) : {},
      result: result.text,
      isError: result.isError,
    };
  };
  // Pass 2: emit in window order; a pair at its call's position.
  for (const [i, s] of slots.entries()) {
    if (s.role === "tool-call") {
      const r = resultOf.get(i);
      if (r === undefined) {
        // Held back while its result is pending; a pruned call with no result is the model's own note.
        if (!s.live) {
          close();
          turns.push({ kind: "text", role: "assistant", text: s.text });
        }
        continue;
      }
      if (exchange?.sealed) close();
      exchange ??= { notes: [], pairs: [], results: new Set(), sealed: false };
      if (!s.live) exchange.notes.push(s.text);
      else if (s.notice !== null) exchange.notes.push(s.notice);
      exchange.pairs.push(pairOf(s, slots[r]!));
      exchange.results.add(r);
      continue;
    }
    if (s.role === "tool-result") {
      if (exchange?.results.has(i)) exchange.sealed = true;
      else if (!answered.has(i)) {
        // No call in the window to answer: the result brings its call back, as an exchange of its own.
        close();
        turns.push({ kind: "tools", notes: [], pairs: [pairOf(null, s)] });
      }
      continue;
    }
    close();
    if (s.compaction !== undefined) turns.push({ kind: "compaction", ...s.compaction, text: s.text });
    else turns.push({ kind: "text", role: s.role, text: s.text });
  }
  close();
  // Lines attached to no span (an invalid directive, a prune of an unknown or pruned span) come last.
  const notices = noticesOf(source);
  if (notices.length > 0) turns.push({ kind: "text", role: "user", text: notices.join("\n") });
  return turns;
}

/**
 * The deepest nesting a call's arguments are parsed to (the directive reader's bound): deeper JSON is valid,
 * but an object that deep is one a serialiser may not write back (10,000 levels made `JSON.stringify` of
 * every later Anthropic and AI SDK request throw), so it is passed as text.
 */
export const MAX_ARGS_DEPTH = 64;

/**
 * A call's arguments as an object: JSON text that is not an object, or nested deeper than `MAX_ARGS_DEPTH`,
 * is passed as `{ raw }`. Every string in it, keys too, is well-formed (finding 25.9): the text is, but a
 * JSON escape (`"\ud800"`) parses to a lone surrogate, which a provider refuses.
 */
function argsObject(text: string): { readonly [key: string]: unknown } {
  if (!deeperThan(text, MAX_ARGS_DEPTH)) {
    try {
      const v = JSON.parse(text) as unknown;
      if (typeof v === "object" && v !== null && !Array.isArray(v)) {
        // A lone surrogate can come only from an escape of one (or from text that is not well-formed itself).
        const lone = !text.isWellFormed() || /\\u[dD][89a-fA-F]/.test(text);
        return (lone ? wellFormed(v) : v) as { readonly [key: string]: unknown };
      }
    } catch {
      // fall through
    }
  }
  return { raw: text };
}

/** Whether JSON text opens more than `max` arrays and objects inside each other (brackets in strings do not count). */
function deeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next unit is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A parsed JSON value with every string and key well-formed; nested at most `MAX_ARGS_DEPTH` deep. */
function wellFormed(v: unknown): unknown {
  if (typeof v === "string") return v.toWellFormed();
  if (Array.isArray(v)) return v.map(wellFormed);
  // `fromEntries` defines each key as an own property: a `__proto__` key stays a key, as `JSON.parse` made it.
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toWellFormed(), wellFormed(x)]));
  return v;
}

/** Rendered call ids: the provider's own when safe and not used yet in this rendering, else a derived one. */
class Ids {
  readonly #used = new Set<string>();
  /** The next suffix to try per base, so an id reused many times costs no more than one used once. */
  readonly #next = new Map<string, number>();
  take(id: string): string {
    const safe = SAFE_ID.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 32) || "call";
    if (!this.#used.has(safe)) {
      this.#used.add(safe);
      return safe;
    }
    const base = safe.slice(0, 32);
    for (let n = this.#next.get(base) ?? 2; ; n++) {
      const candidate = `${base}_${n}`;
      if (!this.#used.has(candidate)) {
        this.#used.add(candidate);
        this.#next.set(base, n + 1);
        return candidate;
      }
    }
  }
}
