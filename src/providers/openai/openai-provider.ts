/**
 * OpenAI, as two providers: Chat Completions (`chat.completions.create({ model, messages: toOpenAI(win),
 * tools: openAIChatTools() })`) and the Responses API (`responses.create({ model, input:
 * toOpenAIResponses(win), tools: openAIResponsesTools() })`), and what each returns read back for a
 * `Transcript` (`appendOpenAIChat`, `appendOpenAIResponse`).
 */
import type { ModelToolCall, Provider, ResponsePart } from "../provider.js";
import { toOpenAI, toOpenAIResponses } from "./openai-messages.js";
import { openAIChatTools, openAIResponsesTools } from "./openai-tools.js";

// ---- the response shapes read (structural subsets of the SDK's types) -------------------------------

export interface OpenAIChatMessage {
  readonly content?: string | null;
  readonly tool_calls?: ReadonlyArray<{ readonly id: string; readonly type: string; readonly function?: { readonly name: string; readonly arguments: string } }> | null;
}

export interface OpenAIChatResponse {
  readonly choices: ReadonlyArray<{ readonly message: OpenAIChatMessage }>;
}

export interface OpenAIResponseOutputItem {
  readonly type: string;
  readonly content?: unknown;
  readonly call_id?: unknown;
  readonly name?: unknown;
  readonly arguments?: unknown;
  readonly encrypted_content?: unknown;
}

/** A Chat Completions response (`ChatCompletion`, or its first choice's `message`): its text, then its function calls. */
function* readChatCompletion(response: OpenAIChatResponse | OpenAIChatMessage): Generator<ResponsePart> {
  const message = "choices" in response ? response.choices[0]?.message : response;
  if (!message) return;
  if (typeof message.content === "string") yield { type: "text", text: message.content };
  // All calls are read before the first is appended: a malformed entry throws with none of them in the window.
  const calls: ModelToolCall[] = [];
  for (const c of message.tool_calls ?? []) {
    if (c.type !== "function" || !("function" in c) || c.function === undefined) continue;
    calls.push({ id: c.id, name: c.function.name, arguments: c.function.arguments });
  }
  for (const call of calls) yield { type: "tool-call", call };
}

/** A Responses API `Response`: its output messages' text and its function calls, in order. */
function* readResponse(response: { readonly output: readonly OpenAIResponseOutputItem[] }): Generator<ResponsePart> {
  for (const item of response.output) {
    if (item.type === "message" && Array.isArray(item.content)) {
      const parts = item.content as ReadonlyArray<{ readonly type?: unknown; readonly text?: unknown }>;
      yield { type: "text", text: parts.map((p) => (p.type === "output_text" && typeof p.text === "string" ? p.text : "")).join("") };
    } else if (item.type === "compaction") {
      // Encrypted: only the API reads its summary. It stands for every item before it. One with no
      // encrypted_content (null, absent or empty) carries nothing and cannot be sent back (the input's
      // compaction item needs the string): a failed compaction, which changes nothing.
      const content = item.encrypted_content;
      yield { type: "compaction", compaction: { provider: "openai-responses", block: item, summary: null, failed: typeof content !== "string" || content === "" } };
    } else if (item.type === "function_call" && typeof item.call_id === "string" && typeof item.name === "string") {
      yield { type: "tool-call", call: { id: item.call_id, name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : "{}" } };
    }
  }
}

/** OpenAI Chat Completions. */
export const openAIChat = {
  name: "openai-chat",
  render: toOpenAI,
  tools: openAIChatTools,
  read: readChatCompletion,
} as const satisfies Provider;

/** The OpenAI Responses API. */
export const openAIResponses = {
  name: "openai-responses",
  render: toOpenAIResponses,
  tools: openAIResponsesTools,
  read: readResponse,
} as const satisfies Provider;
