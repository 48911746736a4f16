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

/** What the transcript reads of a response's `context_management` (beta): the edits the API applied. */
export interface AnthropicContextManagementResponse {
  readonly applied_edits?: ReadonlyArray<{ readonly type: string; readonly cleared_tool_uses?: number; readonly cleared_input_tokens?: number }>;
}

/**
 * An Anthropic `Message` (or `BetaMessage`): its compaction, text and `tool_use` blocks, in order, then the
 * clearing its `context_management` reports.
 */
function* readMessage(message: { readonly content: readonly AnthropicResponseBlock[]; readonly context_management?: AnthropicContextManagementResponse | null }): Generator<ResponsePart> {
  for (const block of message.content) {
    if (block.type === "compaction") {
      const content = (block as { readonly content?: unknown }).content;
      yield { type: "compaction", compaction: { provider: "anthropic", block, summary: typeof content === "string" ? content : null, failed: content === null || content === undefined } };
    } else if (block.type === "text" && typeof block.text === "string") yield { type: "text", text: block.text };
    else if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      yield { type: "tool-call", call: { id: block.id, name: block.name, arguments: block.input ?? {} } };
    }
  }
  // Last, so the line that says so is the newest notice when the model reads the window next.
  for (const edit of message.context_management?.applied_edits ?? []) {
    if (edit.type !== "clear_tool_uses_20250919") continue; // thinking blocks are not rendered by pruneguard; clearing them loses nothing of the window
    yield { type: "provider-cleared", clearing: { provider: "anthropic", edit: edit.type, toolUses: Number(edit.cleared_tool_uses ?? 0), tokens: Number(edit.cleared_input_tokens ?? 0) } };
  }
}

/** Anthropic Messages. */
export const anthropic = {
  name: "anthropic",
  render: toAnthropic,
  tools: anthropicTools,
  read: readMessage,
} as const satisfies Provider;
