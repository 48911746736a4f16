/**
 * A provider's tool call, handled: the call's name picks the directive operation, its arguments (JSON
 * text or an already-parsed value) become the directive, the window disposes of it, and the answer is
 * the exact text to send back as the tool result.
 */
import { frameUntrusted } from "../render/framing.js";
import type { DirectiveOutcome } from "../outcome.js";
import { directiveTools, type DirectiveTool } from "./schemas.js";

/** A tool call as every provider reports one: a name and arguments (JSON text or a parsed value). */
export interface ToolCall {
  readonly name: string;
  readonly arguments: unknown;
  /** The provider's call id, when there is one: a call acted on is folded out of the window at the next compaction point. */
  readonly id?: string;
}

/** What handling a tool call produced. */
export interface ToolCallResult {
  /** The operation the call's name stands for. */
  readonly op: string;
  readonly outcome: DirectiveOutcome;
  /** The text to send back as the tool result. */
  readonly text: string;
  /**
   * The call did not parse as a directive (`invalid`): send the result with the provider's error flag
   * (Anthropic `is_error`, AI SDK `error-text`). A rejected prune is an answer, not an error.
   */
  readonly isError: boolean;
}

let defaults: readonly DirectiveTool[] | undefined;

/** The default tools (`prune`, `recall`, …), built once. */
export function defaultTools(): readonly DirectiveTool[] {
  defaults ??= directiveTools();
  return defaults;
}

/** The tool of `tools` a call names, or `undefined` when it is another tool of the agent's. */
export function toolFor(name: unknown, tools: readonly DirectiveTool[]): DirectiveTool | undefined {
  return typeof name === "string" ? tools.find((t) => t.name === name) : undefined;
}

/**
 * The directive a call stands for: its arguments with the tool's `op`, or — when the arguments are not a
 * JSON object — the arguments themselves, for the window's parser to refuse and audit. Text that is not
 * JSON, or longer than `maxChars` (not parsed at all), is refused here, by its message.
 */
export function directiveOf(tool: DirectiveTool, args: unknown, maxChars: number): { readonly directive: unknown } | { readonly invalid: string } {
  let value = args;
  if (typeof args === "string") {
    // OpenAI sends "{}" for no arguments; some providers send nothing at all.
    if (args.trim() === "") value = {};
    else if (args.length > maxChars) return { invalid: `arguments longer than ${maxChars} characters` };
    else {
      try {
        value = JSON.parse(args) as unknown;
      } catch {
        return { invalid: "arguments are not valid JSON" };
      }
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { directive: value };
  try {
    // The tool's name says the operation; an `op` among the arguments does not override it.
    return { directive: { ...value, op: tool.op } };
  } catch {
    return { directive: value }; // a hostile value (a throwing getter or proxy): the parser refuses it
  }
}

/**
 * The text a model reads back for an outcome: the window's own line, or a recalled span's bytes framed
 * as in `render()` (`render/framing.ts`), so recalled text cannot print a runtime line either. The
 * outcome's `text` keeps the exact bytes.
 */
export function toolResultText(outcome: DirectiveOutcome): string {
  if (outcome.op === "recall" && outcome.status === "found") {
    return `${outcome.spanId} recalled${outcome.handle === null ? "" : ` (${outcome.handle})`}:\n${frameUntrusted(outcome.text)}`;
  }
  if (outcome.op === "recall" && outcome.status === "expanded") return `${outcome.spanId} expanded:\n${outcome.text}`;
  if (outcome.op === "search" && outcome.status !== "invalid") return outcome.text;
  // Group members whose fate differs from the span's are named with their own lines (a call with no store
  // is lost while its result is kept); a decision deferred to the next compaction point says so.
  const lines = [outcome.line];
  if (outcome.op === "prune" && (outcome.status === "reversible" || outcome.status === "lossy")) {
    for (const m of outcome.group) if (m.status !== outcome.status) lines.push(m.line);
  }
  if ("applies" in outcome && outcome.applies.at === "next-compaction") {
    lines.push(outcome.applies.line);
    if (outcome.applies.advice !== null) lines.push(outcome.applies.advice);
  }
  return lines.join("\n");
}

/** The result of a handled call. */
export function toolCallResult(tool: DirectiveTool, outcome: DirectiveOutcome): ToolCallResult {
  return { op: tool.op, outcome, text: toolResultText(outcome), isError: outcome.status === "invalid" };
}
