/**
 * Rendering a window to OpenAI: Chat Completions (`ChatCompletionMessageParam[]`) and the Responses API
 * (`ResponseInputItem[]`), both from the provider-neutral `conversation` (see `conversation.ts` for the
 * rules that make every rendering valid for any window state), and the prompt-cache key their requests share.
 */
import { contentHash } from "../../hash.js";
import { conversation, type RenderSource } from "../conversation.js";

// ---- Chat Completions ---------------------------------------------------------------------------------

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
    // Chat Completions has no compaction item: the model reads the compaction's line and summary as text.
    if (turn.kind === "compaction") {
      out.push({ role: "assistant", content: turn.text });
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

// ---- Responses API ------------------------------------------------------------------------------------

export type OpenAIResponsesItem =
  | { type: "message"; role: "system" | "user" | "assistant"; content: string }
  /**
   * A compaction item the API returned, sent back as `ResponseCompactionItemParam`: its `type`, `encrypted_content`
   * and `id` exactly as they came, nothing else (`COMPACTION_ITEM_PARAM_FIELDS`).
   */
  | { type: "compaction"; encrypted_content: string; id?: string | null }
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
    if (turn.kind === "compaction") {
      // The API's own item, verbatim, when it wrote it; the runtime line after it names what it covered.
      if (turn.provider === "openai-responses") {
        out.push(compactionItemParam(turn.block));
        out.push({ type: "message", role: "assistant", content: turn.line });
      } else out.push({ type: "message", role: "assistant", content: turn.text });
      continue;
    }
    if (turn.notes.length > 0) out.push({ type: "message", role: "assistant", content: turn.notes.join("\n") });
    for (const p of turn.pairs) out.push({ type: "function_call", call_id: p.id, name: p.toolName, arguments: p.args });
    for (const p of turn.pairs) out.push({ type: "function_call_output", call_id: p.id, output: p.result });
  }
  return out;
}

/**
 * The fields of `ResponseCompactionItemParam`, the compaction item the API's `input` takes (a test holds this list
 * to the SDK's type). The output item (`ResponseCompactionItem`) may also carry `created_by`, which the param does
 * not list: it stays in the window's note of the item, and is not sent back.
 */
export const COMPACTION_ITEM_PARAM_FIELDS: ReadonlySet<string> = new Set(["type", "encrypted_content", "id"]);

/**
 * The noted item (its JSON text) as the API's `input` takes it back: the param's fields, each value and their
 * order exactly as the API wrote them, so the item's JSON is the one it returned less what the param has not.
 */
function compactionItemParam(block: string): Extract<OpenAIResponsesItem, { type: "compaction" }> {
  const item = JSON.parse(block) as Record<string, unknown>;
  const param = Object.fromEntries(Object.entries(item).filter(([key]) => COMPACTION_ITEM_PARAM_FIELDS.has(key)));
  return param as Extract<OpenAIResponsesItem, { type: "compaction" }>;
}

/**
 * A `prompt_cache_key` for the OpenAI requests of one session (Chat Completions and Responses): requests
 * with one key are routed to the same cache, so the prefix a compaction point left stable is read from it.
 * Derived from the session id, hashed, so the id itself is not sent.
 */
export function openAIPromptCacheKey(source: { readonly session: string }): string {
  return `pruneguard-${contentHash(source.session).slice(0, 32)}`;
}
