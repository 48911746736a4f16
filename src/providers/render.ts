/**
 * Rendering a window to what each provider's API takes: the Vercel AI SDK (`{ system, messages }` with
 * `ModelMessage[]`), OpenAI Chat Completions (`ChatCompletionMessageParam[]`), the OpenAI Responses API
 * (`ResponseInputItem[]`) and Anthropic Messages (`{ system, messages }` with `MessageParam[]`).
 *
 * All four read one provider-neutral `conversation` (see `conversation.ts` for the rules that make every
 * rendering valid for any window state). The shapes are declared structurally so the runtime depends on
 * no SDK; tests assign the output to each SDK's own types and validate it with the SDKs' own checks.
 */
import { contentHash } from "../hash.js";
import { GUTTER } from "../render/framing.js";
import { conversation, entriesOf, type RenderSource } from "./conversation.js";

// ---- Vercel AI SDK ----------------------------------------------------------------------------------

export type AISDKMessage =
  | { role: "user"; content: Array<{ type: "text"; text: string }> }
  | {
      role: "assistant";
      content: Array<{ type: "text"; text: string } | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }>;
    }
  | {
      role: "tool";
      content: Array<{ type: "tool-result"; toolCallId: string; toolName: string; output: { type: "text" | "error-text"; value: string } }>;
    };

/** The window for AI SDK 7: `generateText({ model, instructions: system, messages, tools })`. */
export interface AISDKPrompt {
  /**
   * System spans, joined; absent when there are none. AI SDK 7 calls the system prompt `instructions`
   * (`system` is its deprecated alias), so the result spreads into `generateText({ model, ...toAISDK(win) })`.
   */
  instructions?: string;
  /** No system messages (AI SDK 7 refuses them by default): they are in `instructions`. */
  messages: AISDKMessage[];
}

/** The window as AI SDK `{ instructions, messages }` (`messages` assignable to `ModelMessage[]` from `ai`). */
export function toAISDK(source: RenderSource): AISDKPrompt {
  const system: string[] = [];
  const messages: AISDKMessage[] = [];
  const assistant = (): Extract<AISDKMessage, { role: "assistant" }> => {
    const last = messages[messages.length - 1];
    if (last?.role === "assistant") return last;
    const m: AISDKMessage = { role: "assistant", content: [] };
    messages.push(m);
    return m;
  };
  for (const turn of conversation(source)) {
    if (turn.kind === "text") {
      if (turn.role === "system") system.push(turn.text);
      else if (turn.role === "assistant") assistant().content.push({ type: "text", text: turn.text });
      else {
        const last = messages[messages.length - 1];
        if (last?.role === "user") last.content.push({ type: "text", text: turn.text });
        else messages.push({ role: "user", content: [{ type: "text", text: turn.text }] });
      }
      continue;
    }
    const a = assistant();
    for (const note of turn.notes) a.content.push({ type: "text", text: note });
    for (const p of turn.pairs) a.content.push({ type: "tool-call", toolCallId: p.id, toolName: p.toolName, input: p.input });
    messages.push({
      role: "tool",
      content: turn.pairs.map((p) => ({
        type: "tool-result",
        toolCallId: p.id,
        toolName: p.toolName,
        output: { type: p.isError ? "error-text" : "text", value: p.result },
      })),
    });
  }
  // Anthropic (direct, Bedrock, Vertex) refuses a conversation that opens with the model's turn; every
  // provider takes a neutral opening user turn (the same one `toAnthropic` puts there).
  if (messages[0] !== undefined && messages[0].role !== "user") messages.unshift({ role: "user", content: [{ type: "text", text: ANTHROPIC_OPENING }] });
  return system.length > 0 ? { instructions: system.join("\n\n"), messages } : { messages };
}

// ---- OpenAI Chat Completions ------------------------------------------------------------------------

export type OpenAIMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
    }
  | { role: "tool"; tool_call_id: string; content: string };

/** The window as OpenAI `ChatCompletionMessageParam[]`; a turn's text and calls share one assistant message. */
export function toOpenAI(source: RenderSource): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  for (const turn of conversation(source)) {
    if (turn.kind === "text") {
      out.push({ role: turn.role, content: turn.text });
      continue;
    }
    const toolCalls = turn.pairs.map((p) => ({ id: p.id, type: "function" as const, function: { name: p.toolName, arguments: p.args } }));
    const last = out[out.length - 1];
    if (last?.role === "assistant" && last.tool_calls === undefined && typeof last.content === "string") {
      // The model's text and its calls, as the provider sent them: one message.
      last.content = [last.content, ...turn.notes].join("\n");
      last.tool_calls = toolCalls;
    } else {
      out.push({ role: "assistant", content: turn.notes.length > 0 ? turn.notes.join("\n") : null, tool_calls: toolCalls });
    }
    for (const p of turn.pairs) out.push({ role: "tool", tool_call_id: p.id, content: p.result });
  }
  return out;
}

// ---- OpenAI Responses API ---------------------------------------------------------------------------

export type OpenAIResponsesItem =
  | { type: "message"; role: "system" | "user" | "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string };

/** The window as the Responses API's `input` (`ResponseInputItem[]`): messages, function calls, their outputs. */
export function toOpenAIResponses(source: RenderSource): OpenAIResponsesItem[] {
  const out: OpenAIResponsesItem[] = [];
  for (const turn of conversation(source)) {
    if (turn.kind === "text") {
      out.push({ type: "message", role: turn.role, content: turn.text });
      continue;
    }
    if (turn.notes.length > 0) out.push({ type: "message", role: "assistant", content: turn.notes.join("\n") });
    for (const p of turn.pairs) out.push({ type: "function_call", call_id: p.id, name: p.toolName, arguments: p.args });
    for (const p of turn.pairs) out.push({ type: "function_call_output", call_id: p.id, output: p.result });
  }
  return out;
}

/**
 * A `prompt_cache_key` for the OpenAI requests of one session (Chat Completions and Responses): requests
 * with one key are routed to the same cache, so the prefix a compaction point left stable is read from it.
 * Derived from the session id, hashed, so the id itself is not sent.
 */
export function openAIPromptCacheKey(source: { readonly session: string }): string {
  return `pruneguard-${contentHash(source.session).slice(0, 32)}`;
}

// ---- Anthropic Messages -----------------------------------------------------------------------------

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
  const prompt = renderAnthropic(source);
  if (options.cacheControl === undefined || options.cacheControl === false) return prompt;
  const control: AnthropicCacheControl = options.cacheControl === true ? { type: "ephemeral" } : { type: "ephemeral", ttl: options.cacheControl.ttl };
  const blocks = prompt.messages.flatMap((m) => m.content);
  const mark = (i: number) => {
    if (i >= 0 && i < blocks.length) blocks[i]!.cache_control = control;
  };
  // The compaction point's prefix renders as the first blocks of the whole: the last of them is stable.
  const compacted = Array.isArray(source) ? undefined : (source as { readonly compactedEntries?: number }).compactedEntries;
  if (compacted !== undefined && compacted > 0) {
    const prefix = renderAnthropic(entriesOf(source).slice(0, compacted)).messages.reduce((n, m) => n + m.content.length, 0);
    if (prefix < blocks.length) mark(prefix - 1);
  }
  mark(blocks.length - 1);
  const { system, messages } = prompt;
  return system === undefined ? { messages } : { system: [{ type: "text", text: system, cache_control: control }], messages };
}

/** `toAnthropic` with `cacheControl`: the system prompt is a text block carrying its breakpoint. */
export interface AnthropicCachedPrompt {
  system?: Array<{ type: "text"; text: string; cache_control: AnthropicCacheControl }>;
  messages: AnthropicMessage[];
}

function renderAnthropic(source: RenderSource): AnthropicPrompt {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  const push = (role: "user" | "assistant", blocks: AnthropicBlock[]) => {
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
  if (messages[0]?.role === "assistant") messages.unshift({ role: "user", content: [{ type: "text", text: ANTHROPIC_OPENING }] });
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

/** The user turn put before a conversation that would open with the assistant. */
export const ANTHROPIC_OPENING = "(conversation so far)";
