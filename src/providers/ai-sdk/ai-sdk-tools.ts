/**
 * The directive tools as an AI SDK `ToolSet` bound to a window, and the `repairToolCall` that routes
 * arguments that are not JSON to the window too.
 */
import type { DirectiveOutcome } from "../../outcome.js";
import { defaultTools, toolFor, type ToolCall, type ToolCallResult } from "../../tools/call.js";
import type { DirectiveTool, ToolInputSchema } from "../../tools/schemas.js";
import { refuseToolCollisions } from "../agent-tools.js";

/** What the AI SDK tools need of a window (a `ContextWindow` or a generated guard's window). */
export interface ToolCallHandler {
  handleToolCall(call: ToolCall, tools?: readonly DirectiveTool[]): Promise<ToolCallResult | null>;
}

/**
 * A Standard Schema (what AI SDK 7 takes as `inputSchema`) that shows the model the tool's JSON Schema
 * but lets every input through: the window's parser is the one that judges it, so a malformed directive
 * is audited and answered with the window's own `invalid` line instead of the SDK's generic error.
 */
export interface PassThroughSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: "pruneguard";
    readonly validate: (value: unknown) => { readonly value: unknown };
    readonly jsonSchema: { readonly input: (options?: unknown) => ToolInputSchema; readonly output: (options?: unknown) => ToolInputSchema };
  };
}

function passThrough(schema: ToolInputSchema): PassThroughSchema {
  return {
    "~standard": {
      version: 1,
      vendor: "pruneguard",
      validate: (value) => ({ value }),
      // A copy each time: the SDK adds keywords to the schema it is given, and the tools' own are frozen.
      jsonSchema: { input: () => structuredClone(schema), output: () => structuredClone(schema) },
    },
  };
}

/** The tool result's model output in AI SDK form: the window's line as text, an invalid directive as an error. */
export type AISDKToolOutput = { type: "text"; value: string } | { type: "error-text"; value: string };

/** One directive tool as an AI SDK 7 `Tool` (structurally: `description`, `inputSchema`, `execute`, `toModelOutput`). */
export interface AISDKTool {
  description: string;
  inputSchema: PassThroughSchema;
  /** Set with `{ strict: true }`: providers that support it hold the model to the (OpenAI-strict) schema. */
  strict?: boolean;
  execute: (input: unknown, options?: { readonly toolCallId?: string }) => Promise<AISDKToolResult>;
  toModelOutput: (options: { output: AISDKToolResult }) => AISDKToolOutput;
}

/** What an AI SDK directive tool's `execute` returns (a step's `toolResults[i].output`). */
export interface AISDKToolResult {
  readonly status: DirectiveOutcome["status"];
  readonly text: string;
  readonly isError: boolean;
}

/** Options of `aiSDKTools`: the agent's own tools (required, `{}` for none) and the strict variant to send. */
export interface AISDKToolsOptions<T extends { readonly [name: string]: unknown }> {
  /** Your `ToolSet`: returned with the directive tools, a shared name refused. `{}` when the agent has no tools. */
  readonly agentTools: T;
  /** `true`/`"openai"`: OpenAI's strict variant; `"anthropic"`: Anthropic's (for `@ai-sdk/anthropic`). */
  readonly strict?: boolean | "openai" | "anthropic";
}

/**
 * The directive tools as an AI SDK 7 `ToolSet` bound to `window`, for `generateText`'s `tools`. Each call
 * runs `window.handleToolCall`; the model reads the window's line back (an invalid directive as
 * `error-text`). `agentTools` is required: the result is your tools and the directive tools together, and
 * a name both use throws. Pass `{}` when the agent has no tools of its own.
 *
 * Why required (issue 35): a `ToolSet` is a plain object, so `{ ...myTools, ...aiSDKTools(win) }` replaces
 * the agent's tool of a directive tool's name before any code of ours runs, and the SDK never shows a tool
 * or `prepareStep` the set it was given; no check at a later call can see the tool that was dropped. The
 * only place the two sets meet where a collision can be refused is here.
 *
 * Gotcha: arguments that are not JSON at all never reach `execute` — the SDK answers those itself. Pass
 * `repairToolCall: pruneguardRepairToolCall()` to route them to the window too.
 */
export function aiSDKTools<T extends { readonly [name: string]: unknown }>(
  window: ToolCallHandler,
  tools: readonly DirectiveTool[] = defaultTools(),
  options: AISDKToolsOptions<T>,
): Record<string, T[keyof T] | AISDKTool> {
  // Checked at run time too: JavaScript callers, and `as` casts, skip the type.
  const agentTools = (options as Partial<AISDKToolsOptions<T>> | undefined)?.agentTools;
  if (typeof agentTools !== "object" || agentTools === null || Array.isArray(agentTools)) {
    throw new TypeError(
      "aiSDKTools: pass your own tools as agentTools (an AI SDK ToolSet, or {} when the agent has none): " +
        "the result holds both, and a name both use throws, where { ...myTools, ...aiSDKTools(…) } would replace yours without a word",
    );
  }
  refuseToolCollisions("aiSDKTools", agentTools, tools);
  const out: Record<string, T[keyof T] | AISDKTool> = { ...(agentTools as Record<string, T[keyof T]>) };
  for (const t of tools) {
    out[t.name] = {
      description: t.description,
      // Strict in the provider's own form: OpenAI's (every property required, optional ones nullable, the
      // default for `true`) or Anthropic's (no `pattern` and other keywords its strict mode does not take),
      // for the AI SDK provider the model runs on (`@ai-sdk/openai`, `@ai-sdk/anthropic`).
      inputSchema: passThrough(options.strict === "anthropic" ? t.strict.anthropic : options.strict === true || options.strict === "openai" ? t.strict.openai : t.inputSchema),
      ...(options.strict === undefined || options.strict === false ? {} : { strict: true }),
      execute: async (input, call) => {
        const id = call?.toolCallId;
        const r = await window.handleToolCall({ name: t.name, arguments: unwrapUnparsed(input), ...(typeof id === "string" ? { id } : {}) }, tools);
        // handleToolCall answers null only for a name not in `tools`; this name is.
        return { status: r!.outcome.status, text: r!.text, isError: r!.isError };
      },
      toModelOutput: ({ output }) => (output.isError ? { type: "error-text", value: output.text } : { type: "text", value: output.text }),
    };
  }
  return out;
}

const UNPARSED = "__pruneguard_unparsed_arguments";

/** Arguments the repair function wrapped come back as the raw text, for the window's parser to refuse. */
function unwrapUnparsed(input: unknown): unknown {
  if (typeof input === "object" && input !== null && Object.keys(input).length === 1 && typeof (input as Record<string, unknown>)[UNPARSED] === "string") {
    return (input as Record<string, unknown>)[UNPARSED];
  }
  return input;
}

/**
 * An AI SDK `repairToolCall` for the directive tools: a call whose arguments are not JSON is handed to
 * the tool as its raw text, so the window refuses it, audits it and answers with its own `invalid` line.
 * Calls to other tools are left to the SDK (`null`: not repaired).
 */
export function pruneguardRepairToolCall(tools: readonly DirectiveTool[] = defaultTools()) {
  return async <T extends { readonly toolName: string; readonly input: string }>(options: { readonly toolCall: T }): Promise<T | null> => {
    const { toolCall } = options;
    if (toolFor(toolCall.toolName, tools) === undefined) return null;
    return { ...toolCall, input: JSON.stringify({ [UNPARSED]: toolCall.input }) };
  };
}

