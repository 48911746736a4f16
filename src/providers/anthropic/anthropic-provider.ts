/**
 * Anthropic Messages: `messages.create({ model, max_tokens, ...toAnthropic(win), tools: anthropicTools() })`,
 * and the `Message` it returns read back for a `Transcript` (`appendAnthropic`).
 */
import { arrayAt, objectAt, optionalArrayAt, responseId, stringAt, type Provider, type ResponsePart } from "../provider.js";
import { oneLine } from "../../render/framing.js";
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
 * clearing its `context_management` reports. Read whole, before any of it is appended: a field of the wrong
 * type is an `UnreadableResponse` naming it.
 */
function readMessage(message: { readonly content: readonly AnthropicResponseBlock[]; readonly context_management?: AnthropicContextManagementResponse | null }): ResponsePart[] {
  const m = objectAt(message, "the response");
  const parts: ResponsePart[] = [];
  for (const [i, entry] of arrayAt(m.content, "content").entries()) {
    const path = `content[${i}]`;
    const block = objectAt(entry, path);
    if (block.type === "compaction") {
      // The block's content is `string | null` (`BetaCompactionBlockParam`): null says the compaction failed,
      // and any other value is no summary the API would take back, so it compacts nothing either (failed). A
      // response's block carries no `cache_control` (a request's may): one that does is not the API's, and sent
      // back as it came it would add a fifth cache breakpoint to a request that has four, which the API refuses.
      const content = block.content;
      const failed = typeof content !== "string" || Object.hasOwn(block, "cache_control");
      const malformed = failed ? null : compactionBlockProblem(block);
      parts.push({
        type: "compaction",
        compaction: { provider: "anthropic", block, summary: typeof content === "string" ? content : null, failed, ...(malformed === null ? {} : { malformed }) },
      });
    } else if (block.type === "text") parts.push({ type: "text", text: stringAt(block.text, `${path}.text`) });
    else if (block.type === "tool_use") {
      parts.push({ type: "tool-call", call: { id: stringAt(block.id, `${path}.id`), name: stringAt(block.name, `${path}.name`), arguments: block.input ?? {} } });
    }
  }
  // Last, so the line that says so is the newest notice when the model reads the window next.
  const managed = m.context_management;
  const edits = managed === null || managed === undefined ? [] : optionalArrayAt(objectAt(managed, "context_management").applied_edits, "context_management.applied_edits");
  for (const [i, entry] of edits.entries()) {
    const edit = objectAt(entry, `context_management.applied_edits[${i}]`);
    // Every version of the tool-result clearing (`clear_tool_uses_20250919` and any later one) is recorded; thinking
    // blocks are not rendered by pruneguard, so clearing them loses nothing of the window.
    if (typeof edit.type !== "string" || !edit.type.startsWith("clear_tool_uses")) continue;
    parts.push({ type: "provider-cleared", clearing: { provider: "anthropic", edit: oneLine(edit.type, 80), toolUses: count(edit.cleared_tool_uses), tokens: count(edit.cleared_input_tokens) } });
  }
  return parts;
}

/**
 * The fields a compaction block sent back may carry: `BetaCompactionBlockParam`'s (the SDK's own type; a test
 * holds this list to it, so a field the SDK adds fails there until it is listed). `cache_control` is the
 * request's own (a response's block with one is not the API's, above).
 */
export const COMPACTION_BLOCK_FIELDS: ReadonlySet<string> = new Set(["type", "content", "encrypted_content", "signature", "tool_changes", "cache_control"]);

/** The entries a block's `tool_changes` holds (`BetaRequestToolAdditionBlock`, `BetaRequestToolRemovalBlock`; held to the SDK by the same test). */
export const TOOL_CHANGE_TYPES: ReadonlySet<string> = new Set(["tool_addition", "tool_removal"]);

/**
 * The fields of a `tool_changes` entry as a response carries it (`BetaResponseToolAdditionBlock`,
 * `BetaResponseToolRemovalBlock`, each also a field of the request's entry; held to the SDK by the same test).
 * The request's entry may add `cache_control`, which a response's does not carry: one that does is not the API's.
 */
export const TOOL_CHANGE_FIELDS: ReadonlySet<string> = new Set(["type", "tool"]);

/**
 * Why a compaction block the response carried is not one the API takes back as `BetaCompactionBlockParam`, or
 * `null`: a field the type does not declare, one of another type, or an empty summary (the SDK: "Empty string
 * content is not allowed"). Sent back anyway, every later request would be refused.
 */
function compactionBlockProblem(block: Record<string, unknown>): string | null {
  for (const key of Object.keys(block)) if (!COMPACTION_BLOCK_FIELDS.has(key)) return `a field the API does not take: ${JSON.stringify(key.slice(0, 40))}`;
  if (block.content === "") return "an empty summary";
  for (const key of ["encrypted_content", "signature"] as const) {
    const v = block[key];
    if (v !== undefined && v !== null && typeof v !== "string") return `${key} is not a string`;
  }
  const changes = block.tool_changes;
  if (changes !== undefined && changes !== null) {
    if (!Array.isArray(changes)) return "tool_changes is not an array";
    for (const c of changes) {
      if (typeof c !== "object" || c === null || !TOOL_CHANGE_TYPES.has((c as { type?: unknown }).type as string)) return "tool_changes holds an entry that is not a tool addition or removal";
      const tool = (c as { tool?: unknown }).tool;
      if (typeof tool !== "object" || tool === null || Array.isArray(tool)) return "a tool change has no tool";
      if (typeof (tool as { type?: unknown }).type !== "string") return "a tool change's tool has no type";
      for (const key of Object.keys(c)) if (!TOOL_CHANGE_FIELDS.has(key)) return `a tool change with a field the API does not take: ${JSON.stringify(key.slice(0, 40))}`;
    }
  }
  return null;
}

/** A count the API reports: a finite number not below 0, else 0. */
function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** Anthropic Messages. */
export const anthropic = {
  name: "anthropic",
  render: toAnthropic,
  tools: anthropicTools,
  read: readMessage,
  // The API's message id (`msg_…`): the same message appended again is appended once.
  responseKey: responseId,
} as const satisfies Provider;
