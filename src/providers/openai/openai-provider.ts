/**
 * OpenAI, as two providers: Chat Completions (`chat.completions.create({ model, messages: toOpenAI(win),
 * tools: openAIChatTools() })`) and the Responses API (`responses.create({ model, input:
 * toOpenAIResponses(win), tools: openAIResponsesTools() })`), and what each returns read back for a
 * `Transcript` (`appendOpenAIChat`, `appendOpenAIResponse`).
 */
import { arrayAt, objectAt, optionalArrayAt, responseId, stringAt, UnreadableResponse, type ModelToolCall, type Provider, type ResponsePart } from "../provider.js";
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

/**
 * A Chat Completions response (`ChatCompletion`, or its first choice's `message`): its text, then its function
 * calls. Read whole, before any of it is appended: a field of the wrong type (a call that is not an object, an
 * id or a name that is not a string) is an `UnreadableResponse` naming it, never a call appended half-way or
 * under an id no renderer can send back.
 */
function readChatCompletion(response: OpenAIChatResponse | OpenAIChatMessage): ResponsePart[] {
  const r = objectAt(response, "the response");
  let message = r;
  let at = "";
  if ("choices" in r) {
    const choices = arrayAt(r.choices, "choices");
    if (choices.length === 0) return [];
    message = objectAt(objectAt(choices[0], "choices[0]").message, "choices[0].message");
    at = "choices[0].message.";
  }
  const parts: ResponsePart[] = [];
  const content = message.content;
  if (typeof content === "string") parts.push({ type: "text", text: content });
  else if (content !== null && content !== undefined) throw new UnreadableResponse(`${at}content is neither a string nor null`);
  for (const [i, entry] of optionalArrayAt(message.tool_calls, `${at}tool_calls`).entries()) {
    const path = `${at}tool_calls[${i}]`;
    const c = objectAt(entry, path);
    if (c.type !== "function") continue; // a custom tool's call (`type: "custom"`) is no function call
    const fn = objectAt(c.function, `${path}.function`);
    const call: ModelToolCall = { id: stringAt(c.id, `${path}.id`), name: stringAt(fn.name, `${path}.function.name`), arguments: fn.arguments };
    parts.push({ type: "tool-call", call });
  }
  return parts;
}

/**
 * The fields of a compaction item as the API returns it (`ResponseCompactionItem`, the SDK's own type; a test
 * holds this list to it): one with another field, or a field of another type, is not the API's and is not sent
 * back. What is sent back is the item's `ResponseCompactionItemParam` fields as they came (`toOpenAIResponses`).
 */
export const COMPACTION_ITEM_FIELDS: ReadonlySet<string> = new Set(["id", "encrypted_content", "type", "created_by"]);

/** Why a compaction item is not one the API returned (see `COMPACTION_ITEM_FIELDS`), or `null`. */
function compactionItemProblem(item: Record<string, unknown>): string | null {
  for (const key of Object.keys(item)) if (!COMPACTION_ITEM_FIELDS.has(key)) return `a field the API does not return: ${JSON.stringify(key.slice(0, 40))}`;
  for (const key of ["id", "created_by"] as const) {
    const v = item[key];
    if (v !== undefined && v !== null && typeof v !== "string") return `${key} is not a string`;
  }
  return null;
}

/** A Responses API `Response`: its output messages' text and its function calls, in order, read whole. */
function readResponse(response: { readonly output: readonly OpenAIResponseOutputItem[] }): ResponsePart[] {
  const parts: ResponsePart[] = [];
  for (const [i, entry] of arrayAt(objectAt(response, "the response").output, "output").entries()) {
    const path = `output[${i}]`;
    const item = objectAt(entry, path);
    if (item.type === "message" && typeof item.content !== "string") {
      // An output message's content is its parts; a message with text for content is an input message
      // (`responses.compact` repeats the user's), which is the window's own span already.
      const text = arrayAt(item.content, `${path}.content`).map((c, j) => {
        const part = objectAt(c, `${path}.content[${j}]`);
        return part.type === "output_text" ? stringAt(part.text, `${path}.content[${j}].text`) : "";
      });
      parts.push({ type: "text", text: text.join("") });
    } else if (item.type === "compaction") {
      // Encrypted: only the API reads its summary. It stands for every item before it. One with no
      // encrypted_content (null, absent or empty) carries nothing and cannot be sent back (the input's
      // compaction item needs the string): a failed compaction, which changes nothing.
      const content = item.encrypted_content;
      const failed = typeof content !== "string" || content === "";
      const malformed = failed ? null : compactionItemProblem(item);
      parts.push({ type: "compaction", compaction: { provider: "openai-responses", block: item, summary: null, failed, ...(malformed === null ? {} : { malformed }) } });
    } else if (item.type === "function_call") {
      const call: ModelToolCall = { id: stringAt(item.call_id, `${path}.call_id`), name: stringAt(item.name, `${path}.name`), arguments: typeof item.arguments === "string" ? item.arguments : "{}" };
      parts.push({ type: "tool-call", call });
    }
  }
  return parts;
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
  // The API's response id (`resp_…`): the same response appended again is appended once.
  responseKey: responseId,
} as const satisfies Provider;
