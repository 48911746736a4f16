/**
 * Rendering a window to the Vercel AI SDK: `{ instructions, messages }` with `ModelMessage[]`, from the
 * provider-neutral `conversation` (see `conversation.ts` for the rules that make every rendering valid for
 * any window state).
 */
import { conversation, OPENING_TURN, type RenderSource } from "../conversation.js";

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
    // A provider's compaction block is that provider's to read: here its line and summary, as the model's text.
    if (turn.kind === "compaction") {
      assistant().content.push({ type: "text", text: turn.text });
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
  if (messages[0] !== undefined && messages[0].role !== "user") messages.unshift({ role: "user", content: [{ type: "text", text: OPENING_TURN }] });
  return system.length > 0 ? { instructions: system.join("\n\n"), messages } : { messages };
}
