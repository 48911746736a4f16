/**
 * Rendering a window to Anthropic Messages: `{ system, messages }` with `MessageParam[]`, from the
 * provider-neutral `conversation` (see `conversation.ts` for the rules that make every rendering valid for
 * any window state), with prompt-cache breakpoints on request.
 */
import { GUTTER } from "../../render/framing.js";
import { conversation, entriesOf, OPENING_TURN, type RenderSource } from "../conversation.js";

/** A prompt-cache breakpoint (Anthropic `cache_control`). */
export interface AnthropicCacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

type AnthropicBlock = (
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: { readonly [key: string]: unknown } }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean }
) & { cache_control?: AnthropicCacheControl };

/** Options of `toAnthropic`. */
export interface AnthropicRenderOptions {
  /**
   * Place prompt-cache breakpoints: on the system prompt, on the last block the last compaction point
   * rendered (that prefix stays byte-identical until the next one), and on the last block of the request.
   * Three of the four the API allows, leaving one for the tools (`anthropicTools(…, { cacheControl: true })`).
   * `true` is the default five-minute cache; `{ ttl: "1h" }` the hour-long one.
   */
  readonly cacheControl?: boolean | { readonly ttl: "5m" | "1h" };
}

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

/** A compaction block the beta API returned, sent back exactly as it came (`BetaCompactionBlockParam`). */
export interface AnthropicCompactionBlock {
  [key: string]: unknown;
  type: "compaction";
  content?: string | null;
  encrypted_content?: string | null;
  cache_control?: AnthropicCacheControl | null;
}

/** A message of the beta Messages API (`BetaMessageParam`): it may carry a compaction block. */
export interface AnthropicBetaMessage {
  role: "user" | "assistant";
  content: Array<AnthropicBlock | AnthropicCompactionBlock>;
}

/**
 * The window as Anthropic `{ system?, messages }`: system spans join the top-level `system` string,
 * consecutive same-role content merges into one message (so roles alternate), tool results open the
 * user message that follows their calls, and the first message is a user turn.
 *
 * Whitespace, as the API takes it (finding 25.10): no text block is empty or only whitespace, and when the
 * conversation ends with the model's turn its content does not end with whitespace — a framed span whose
 * text ends in a line break would end with the empty framed line `\n│ `, so trailing whitespace and empty
 * framed lines are cut from that last block (`withoutTrailingSpace`). Nothing else changes.
 */
export function toAnthropic(source: RenderSource): AnthropicPrompt;
export function toAnthropic(source: RenderSource, options: { readonly cacheControl: true | { readonly ttl: "5m" | "1h" } }): AnthropicCachedPrompt;
export function toAnthropic(source: RenderSource, options: AnthropicRenderOptions): AnthropicPrompt | AnthropicCachedPrompt;
export function toAnthropic(source: RenderSource, options: AnthropicRenderOptions = {}): AnthropicPrompt | AnthropicCachedPrompt {
  return withCacheControl(source, options, false) as AnthropicPrompt | AnthropicCachedPrompt;
}

/**
 * The window for the beta Messages API (`client.beta.messages.create`), which takes the provider's compaction
 * blocks: a compaction Anthropic made (`compact_20260112`) is sent back as its block, verbatim, beside the
 * runtime line whose id recalls what it covered. `toAnthropic` (the GA API, which refuses compaction blocks)
 * sends that line and the block's summary as text instead. Otherwise the same rendering, with the same options.
 */
export function toAnthropicBeta(source: RenderSource, options: AnthropicRenderOptions = {}): AnthropicBetaPrompt {
  return withCacheControl(source, options, true);
}

/** `toAnthropicBeta`'s request part: spread it into `client.beta.messages.create({ model, max_tokens, ... })`. */
export interface AnthropicBetaPrompt {
  system?: string | Array<{ type: "text"; text: string; cache_control: AnthropicCacheControl }>;
  messages: AnthropicBetaMessage[];
}

function withCacheControl(source: RenderSource, options: AnthropicRenderOptions, beta: boolean): AnthropicBetaPrompt {
  const prompt = renderAnthropic(source, beta);
  if (options.cacheControl === undefined || options.cacheControl === false) return prompt;
  const control: AnthropicCacheControl = options.cacheControl === true ? { type: "ephemeral" } : { type: "ephemeral", ttl: options.cacheControl.ttl };
  const blocks = prompt.messages.flatMap((m) => m.content);
  const mark = (i: number) => {
    // A compaction block goes back as it came: a breakpoint is never put on it.
    if (i >= 0 && i < blocks.length && blocks[i]!.type !== "compaction") blocks[i]!.cache_control = control;
  };
  // The compaction point's prefix renders as the first blocks of the whole: the last of them is stable.
  const compacted = Array.isArray(source) ? undefined : (source as { readonly compactedEntries?: number }).compactedEntries;
  if (compacted !== undefined && compacted > 0) {
    const prefix = renderAnthropic(entriesOf(source).slice(0, compacted), beta).messages.reduce((n, m) => n + m.content.length, 0);
    if (prefix < blocks.length) mark(prefix - 1);
  }
  mark(blocks.length - 1);
  const { system, messages } = prompt;
  return system === undefined ? { messages } : { system: [{ type: "text", text: system as string, cache_control: control }], messages };
}

/** `toAnthropic` with `cacheControl`: the system prompt is a text block carrying its breakpoint. */
export interface AnthropicCachedPrompt {
  system?: Array<{ type: "text"; text: string; cache_control: AnthropicCacheControl }>;
  messages: AnthropicMessage[];
}

function renderAnthropic(source: RenderSource, beta: boolean): { system?: string; messages: AnthropicBetaMessage[] } {
  const system: string[] = [];
  const messages: AnthropicBetaMessage[] = [];
  const push = (role: "user" | "assistant", blocks: Array<AnthropicBlock | AnthropicCompactionBlock>) => {
    blocks = blocks.filter((b) => b.type !== "text" || !isBlank(b.text));
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const turn of conversation(source)) {
    if (turn.kind === "text") {
      if (turn.role === "system") system.push(turn.text);
      else push(turn.role, [{ type: "text", text: turn.text }]);
      continue;
    }
    if (turn.kind === "compaction") {
      // The API's own block, verbatim (content, encrypted content, signature, tool changes), then the runtime
      // line whose id recalls what it covered; another provider's block is text here.
      if (beta && turn.provider === "anthropic") push("assistant", [JSON.parse(turn.block) as AnthropicCompactionBlock, { type: "text", text: turn.line }]);
      else push("assistant", [{ type: "text", text: turn.text }]);
      continue;
    }
    push("assistant", [
      ...turn.notes.map((text) => ({ type: "text" as const, text })),
      ...turn.pairs.map((p) => ({ type: "tool_use" as const, id: p.id, name: p.toolName, input: p.input })),
    ]);
    push(
      "user",
      turn.pairs.map((p) => ({ type: "tool_result" as const, tool_use_id: p.id, content: p.result, ...(p.isError ? { is_error: true } : {}) })),
    );
  }
  // "final assistant content cannot end with trailing whitespace": the last turn, when it is the model's.
  const final = messages[messages.length - 1];
  if (final?.role === "assistant") {
    for (let b = final.content[final.content.length - 1]; b?.type === "text"; b = final.content[final.content.length - 1]) {
      const text = withoutTrailingSpace(b.text);
      if (text === b.text) break;
      if (text !== "") {
        final.content[final.content.length - 1] = { type: "text", text };
        break;
      }
      final.content.pop();
    }
    if (final.content.length === 0) messages.pop();
  }
  // The API (on Bedrock and Vertex too) takes a user turn first: a window that opens with the model's
  // own words (its earlier turns pruned or never appended) gets a neutral opening turn.
  if (messages[0]?.role === "assistant") messages.unshift({ role: "user", content: [{ type: "text", text: OPENING_TURN }] });
  const systemText = system.join("\n\n");
  return system.length > 0 && !isBlank(systemText) ? { system: systemText, messages } : { messages };
}

/**
 * Whitespace as a provider's check may read it: JavaScript's `\s` and Python's `str.isspace` (which adds
 * the separators U+001C–U+001F and NEL).
 */
const SPACE = /^[\s\x1c-\x1f\x85]$/;

/** Only whitespace (or nothing): the API refuses such a text block. */
function isBlank(text: string): boolean {
  for (const c of text) if (!SPACE.test(c)) return false;
  return true;
}

/**
 * `text` without trailing whitespace, and without the empty framed lines (`\n│`, the gutter once its space
 * is cut) that trimming leaves at its end. Linear: it reads back from the end only while it cuts.
 */
export function withoutTrailingSpace(text: string): string {
  let end = text.length;
  for (;;) {
    while (end > 0 && SPACE.test(text[end - 1]!)) end--;
    if (end >= 2 && text[end - 1] === GUTTER[0] && text[end - 2] === "\n") end -= 2;
    else break;
  }
  return text.slice(0, end);
}

/** The window for Anthropic Messages: spread it into `messages.create({ model, max_tokens, ...toAnthropic(win) })`. */
export interface AnthropicPrompt {
  /** System spans, joined; absent when there are none (an empty system prompt is not sent). */
  system?: string;
  messages: AnthropicMessage[];
}

