/**
 * Anthropic Messages: `messages.create({ model, max_tokens, ...toAnthropic(win), tools: anthropicTools() })`,
 * and the `Message` it returns read back for a `Transcript` (`appendAnthropic`).
 */
import type { Provider, ResponsePart } from "../provider.js";
import { toAnthropic } from "./anthropic-messages.js";
import { anthropicTools } from "./anthropic-tools.js";

/** A content block of an Anthropic `Message`, as far as the transcript reads it. */
export interface AnthropicResponseBlock {
  readonly type: string;
  readonly text?: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
}

/** An Anthropic `Message`'s text and `tool_use` blocks, in order. */
function* readMessage(message: { readonly content: readonly AnthropicResponseBlock[] }): Generator<ResponsePart> {
  for (const block of message.content) {
    if (block.type === "text" && typeof block.text === "string") yield { type: "text", text: block.text };
    else if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      yield { type: "tool-call", call: { id: block.id, name: block.name, arguments: block.input ?? {} } };
    }
  }
}

/** Anthropic Messages. */
export const anthropic = {
  name: "anthropic",
  render: toAnthropic,
  tools: anthropicTools,
  read: readMessage,
} as const satisfies Provider;
