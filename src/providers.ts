/**
 * Rendering a window to the message arrays providers accept: the Vercel AI SDK (`ModelMessage[]`),
 * OpenAI Chat Completions (`ChatCompletionMessageParam[]`) and Anthropic Messages (`MessageParam[]`).
 *
 * The shapes are declared structurally here so the runtime depends on no SDK; tests assign the output
 * to each SDK's own types. Two rules hold in every shape:
 * - a tool call and its result appear together or not at all (the window prunes groups atomically, and
 *   a pruned pair becomes plain text), so no provider ever sees an orphaned tool message;
 * - index lines and tombstones are text parts in the pruned span's place, so the model keeps its handles;
 * - span text is framed exactly as in `render()` (`render/framing.ts`), so no tool output can forge a
 *   runtime line; pass the window's `notices()` to render the lines attached to no span.
 */
import { liveBlock, type WindowEntry } from "./window/view.js";
import type { SpanMessage } from "./types.js";

type Role = "system" | "user" | "assistant";

/** One position, normalised: live text, a live tool call/result, or the text that replaced a span. */
type Item =
  | { readonly kind: "text"; readonly role: Role; readonly text: string }
  | { readonly kind: "call"; readonly callId: string; readonly toolName: string; readonly args: string }
  | { readonly kind: "result"; readonly callId: string; readonly toolName: string; readonly text: string };

function items(entries: readonly WindowEntry[], notices: readonly string[]): Item[] {
  const out: Item[] = [];
  for (const e of entries) {
    const message: SpanMessage | null = e.state === "live" ? (e.span.message ?? null) : e.message;
    if (e.state === "live") {
      if (message?.role === "tool-call") {
        out.push({ kind: "call", callId: message.callId, toolName: message.toolName, args: e.span.text });
        // A rejection notice on a call has nowhere to go inside the call itself; say it as text.
        if (e.notice !== null) out.push({ kind: "text", role: "assistant", text: e.notice });
      } else if (message?.role === "tool-result") {
        out.push({ kind: "result", callId: message.callId, toolName: message.toolName, text: liveBlock(e.span, e.notice, `[${e.span.id}]`) });
      } else {
        out.push({ kind: "text", role: message?.role ?? "user", text: liveBlock(e.span, e.notice, `[${e.span.id}]`) });
      }
      continue;
    }
    // What replaced a tool message is the assistant's own note; other spans keep their role.
    const role: Role = message === null ? "user" : message.role === "tool-call" || message.role === "tool-result" ? "assistant" : message.role;
    out.push({ kind: "text", role, text: e.text });
  }
  // Lines attached to no span (an invalid directive, a prune of an unknown span) come last, as the runtime's.
  if (notices.length > 0) out.push({ kind: "text", role: "user", text: notices.join("\n") });
  return adjoinResults(out);
}

/**
 * Providers require a tool result right after the message that made the call. Spans appended between
 * a call and its result (a note, a user turn) are moved after the result; the pair itself never moves.
 */
function adjoinResults(list: Item[]): Item[] {
  const out: Item[] = [];
  const waiting: Item[] = [];
  const open = new Set<string>();
  for (const it of list) {
    if (it.kind === "call") {
      open.add(it.callId);
      out.push(it);
    } else if (it.kind === "result" && open.delete(it.callId)) {
      out.push(it);
      if (open.size === 0) out.push(...waiting.splice(0));
    } else if (open.size > 0) {
      waiting.push(it);
    } else {
      out.push(it);
    }
  }
  out.push(...waiting);
  return out;
}

/** Parses a tool call's arguments; a span whose text is not JSON is passed as `{ raw }`. */
function args(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { raw: text };
  }
}

// ---- Vercel AI SDK ----------------------------------------------------------------------------------

export type AISDKMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: Array<{ type: "text"; text: string }> }
  | {
      role: "assistant";
      content: Array<{ type: "text"; text: string } | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }>;
    }
  | { role: "tool"; content: Array<{ type: "tool-result"; toolCallId: string; toolName: string; output: { type: "text"; value: string } }> };

/** The window as AI SDK `ModelMessage[]` (assignable to `ModelMessage[]` from `ai`). */
export function toAISDK(entries: readonly WindowEntry[], notices: readonly string[] = []): AISDKMessage[] {
  const out: AISDKMessage[] = [];
  for (const it of items(entries, notices)) {
    const last = out[out.length - 1];
    if (it.kind === "text" && it.role === "system") out.push({ role: "system", content: it.text });
    else if (it.kind === "text" && it.role === "user") {
      if (last?.role === "user") last.content.push({ type: "text", text: it.text });
      else out.push({ role: "user", content: [{ type: "text", text: it.text }] });
    } else if (it.kind === "text" || it.kind === "call") {
      const part = it.kind === "text"
        ? ({ type: "text", text: it.text } as const)
        : ({ type: "tool-call", toolCallId: it.callId, toolName: it.toolName, input: args(it.args) } as const);
      if (last?.role === "assistant") last.content.push(part);
      else out.push({ role: "assistant", content: [part] });
    } else {
      const part = { type: "tool-result", toolCallId: it.callId, toolName: it.toolName, output: { type: "text", value: it.text } } as const;
      if (last?.role === "tool") last.content.push(part);
      else out.push({ role: "tool", content: [part] });
    }
  }
  return out;
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

/** The window as OpenAI `ChatCompletionMessageParam[]`; consecutive calls share one assistant message. */
export function toOpenAI(entries: readonly WindowEntry[], notices: readonly string[] = []): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  for (const it of items(entries, notices)) {
    const last = out[out.length - 1];
    if (it.kind === "call") {
      const call = { id: it.callId, type: "function" as const, function: { name: it.toolName, arguments: it.args } };
      if (last?.role === "assistant" && last.tool_calls) last.tool_calls.push(call);
      else out.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (it.kind === "result") {
      out.push({ role: "tool", tool_call_id: it.callId, content: it.text });
    } else if (it.role === "assistant") {
      out.push({ role: "assistant", content: it.text });
    } else {
      out.push({ role: it.role, content: it.text });
    }
  }
  return out;
}

// ---- Anthropic Messages -----------------------------------------------------------------------------

type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

/**
 * The window as Anthropic `{ system, messages }`: system spans join the top-level `system` string,
 * consecutive same-role content merges into one message, tool results are user-role blocks.
 */
export function toAnthropic(entries: readonly WindowEntry[], notices: readonly string[] = []): { system: string; messages: AnthropicMessage[] } {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  const push = (role: "user" | "assistant", block: AnthropicBlock) => {
    const last = messages[messages.length - 1];
    if (last?.role === role) last.content.push(block);
    else messages.push({ role, content: [block] });
  };
  for (const it of items(entries, notices)) {
    if (it.kind === "text" && it.role === "system") system.push(it.text);
    else if (it.kind === "text") push(it.role === "assistant" ? "assistant" : "user", { type: "text", text: it.text });
    else if (it.kind === "call") push("assistant", { type: "tool_use", id: it.callId, name: it.toolName, input: args(it.args) });
    else push("user", { type: "tool_result", tool_use_id: it.callId, content: it.text });
  }
  return { system: system.join("\n\n"), messages };
}
