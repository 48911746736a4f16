/**
 * What every provider integration is: the window rendered to its API's request, the directive tools in
 * its tool shape, and its responses read back as parts a `Transcript` appends. Each provider lives in a
 * folder of its own and is registered once, in `registry.ts`.
 *
 * Shapes are declared structurally so the runtime depends on no SDK; tests hold each rendering, tool list
 * and response to the SDK's own types and checks.
 */
import type { DirectiveTool } from "../tools/schemas.js";
import type { ProviderClearing, ProviderCompaction } from "../window/provider-compaction.js";
import type { RenderSource } from "./conversation.js";

/**
 * One provider: rendering, tool shapes and response reading, each over the provider-neutral pieces. Each
 * provider's members take and give its own API's types (the registry keeps them); this is what they share.
 */
export interface Provider {
  /** Its key in the registry. */
  readonly name: string;
  /** The window as the API's request messages (every rule of `conversation.ts` holds). */
  render(source: RenderSource, options?: object): object;
  /** The directive tools in the API's tool shape, with the agent's own tools when given. */
  tools(tools: readonly DirectiveTool[], options: object): object;
  /**
   * What the model produced in one response, in order, for a transcript to append: read whole before any of
   * it is appended, so a response that cannot be read throws `UnreadableResponse` (naming where) and nothing
   * of it reaches the window.
   */
  read(response: object): readonly ResponsePart[];
  /**
   * The response's key, so a transcript appends it once: for a loop that hands the same response over again
   * (the AI SDK's `prepareStep` gets every step so far), and for a response appended twice by mistake (its
   * compaction would be recorded twice). `null` for a response with no key; absent: every response is new.
   */
  responseKey?(response: object): string | null;
}

/** A tool call the model made, as the transcript appended it. */
export interface ModelToolCall {
  readonly id: string;
  readonly name: string;
  /** As the provider gave them: JSON text (OpenAI) or a parsed object (Anthropic, AI SDK). */
  readonly arguments: unknown;
}

/**
 * One part of a model response. Results come in a response only where the SDK runs the tools inside its
 * own loop (the AI SDK); elsewhere the transcript's `handleToolCalls` produces them.
 */
export type ResponsePart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool-call"; readonly call: ModelToolCall }
  | { readonly type: "tool-result"; readonly id: string; readonly name: string; readonly text: string; readonly isError: boolean }
  | { readonly type: "tool-error"; readonly id: string; readonly name: string; readonly error: unknown }
  /** The provider compacted the context before this response (its block or item, to record and send back). */
  | { readonly type: "compaction"; readonly compaction: ProviderCompaction }
  /** The provider cleared tool uses by an edit pruneguard did not build (Anthropic `applied_edits`). */
  | { readonly type: "provider-cleared"; readonly clearing: ProviderClearing };

/** A value as JSON text; one JSON cannot represent (a cycle, a bigint) as its string form, or as its type's tag. */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      // A null-prototype object, or one whose toString throws: nothing of it can be said, but that it was there.
      return Object.prototype.toString.call(value);
    }
  }
}

// ---- reading a response that is not trusted ----------------------------------------------------------

/**
 * A provider response that cannot be read (a field of the wrong type, where the SDK's types allow none): the
 * message names the field (`tool_calls[0] is not an object`). A transcript throws it, with its method's name,
 * before anything of the response is appended.
 */
export class UnreadableResponse extends TypeError {}

/** `value` as an object (not null, not an array), or an `UnreadableResponse` naming `path`. */
/** A response's own id (Anthropic's `msg_…`, OpenAI's `resp_…`), when it has a non-empty one: its `responseKey`. */
export function responseId(response: object): string | null {
  const id = (response as { readonly id?: unknown }).id;
  return typeof id === "string" && id !== "" ? id : null;
}

export function objectAt(value: unknown, path: string): { readonly [key: string]: unknown } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UnreadableResponse(`${path} is not an object`);
  return value as { readonly [key: string]: unknown };
}

/** `value` as an array, or an `UnreadableResponse` naming `path`. */
export function arrayAt(value: unknown, path: string): readonly unknown[] {
  if (!Array.isArray(value)) throw new UnreadableResponse(`${path} is not an array`);
  return value;
}

/** `value` as an array; `null` and `undefined` (the field left out) as none. */
export function optionalArrayAt(value: unknown, path: string): readonly unknown[] {
  return value === null || value === undefined ? [] : arrayAt(value, path);
}

/** `value` as a string, or an `UnreadableResponse` naming `path`. */
export function stringAt(value: unknown, path: string): string {
  if (typeof value !== "string") throw new UnreadableResponse(`${path} is not a string`);
  return value;
}

