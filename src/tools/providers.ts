/**
 * The directive tools in each provider's request shape, and as an AI SDK `ToolSet` bound to a window.
 * Shapes are declared structurally so the runtime depends on no SDK; tests assign them to each SDK's
 * own request types.
 */
import type { DirectiveOutcome } from "../outcome.js";
import { defaultTools, toolFor, type ToolCall, type ToolCallResult } from "./call.js";
import type { DirectiveTool, ToolInputSchema } from "./schemas.js";

/** Options of the provider tool builders. */
export interface ProviderToolOptions {
  /** Send the strict variant and ask the provider to hold the model to it. Default `false`. */
  readonly strict?: boolean;
}

/** An OpenAI Chat Completions function tool (`ChatCompletionFunctionTool`). */
export interface OpenAIChatTool {
  type: "function";
  function: { name: string; description: string; parameters: ToolInputSchema; strict: boolean };
}

/** The tools for OpenAI Chat Completions (`tools` of `chat.completions.create`). */
export function openAIChatTools(tools: readonly DirectiveTool[] = defaultTools(), options: ProviderToolOptions = {}): OpenAIChatTool[] {
  const strict = options.strict === true;
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: strict ? t.strict.openai : t.inputSchema, strict },
  }));
}

/** An OpenAI Responses API function tool (`FunctionTool`). */
export interface OpenAIResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: ToolInputSchema;
  strict: boolean;
}

/** The tools for the OpenAI Responses API (`tools` of `responses.create`). */
export function openAIResponsesTools(tools: readonly DirectiveTool[] = defaultTools(), options: ProviderToolOptions = {}): OpenAIResponsesTool[] {
  const strict = options.strict === true;
  return tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: strict ? t.strict.openai : t.inputSchema, strict }));
}

/** An Anthropic custom tool (`Tool` of the Messages API). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ToolInputSchema;
  strict?: boolean;
}

/** The tools for Anthropic Messages (`tools` of `messages.create`). */
export function anthropicTools(tools: readonly DirectiveTool[] = defaultTools(), options: ProviderToolOptions = {}): AnthropicTool[] {
  return tools.map((t) =>
    options.strict === true
      ? { name: t.name, description: t.description, input_schema: t.strict.anthropic, strict: true }
      : { name: t.name, description: t.description, input_schema: t.inputSchema },
  );
}

// ---- AI SDK ------------------------------------------------------------------------------------------

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
  execute: (input: unknown) => Promise<AISDKToolResult>;
  toModelOutput: (options: { output: AISDKToolResult }) => AISDKToolOutput;
}

/** What an AI SDK directive tool's `execute` returns (a step's `toolResults[i].output`). */
export interface AISDKToolResult {
  readonly status: DirectiveOutcome["status"];
  readonly text: string;
  readonly isError: boolean;
}

/**
 * The directive tools as an AI SDK 7 `ToolSet` bound to `window`: spread it into `generateText`'s
 * `tools`. Each call runs `window.handleToolCall`; the model reads the window's line back (an invalid
 * directive as `error-text`).
 *
 * Gotcha: arguments that are not JSON at all never reach `execute` — the SDK answers those itself. Pass
 * `repairToolCall: pruneguardRepairToolCall()` to route them to the window too.
 */
export function aiSDKTools(window: ToolCallHandler, tools: readonly DirectiveTool[] = defaultTools(), options: ProviderToolOptions = {}): Record<string, AISDKTool> {
  const out: Record<string, AISDKTool> = {};
  for (const t of tools) {
    out[t.name] = {
      description: t.description,
      // Strict: every property required, optional ones nullable — the form both OpenAI and Anthropic take.
      inputSchema: passThrough(options.strict === true ? t.strict.openai : t.inputSchema),
      ...(options.strict === true ? { strict: true } : {}),
      execute: async (input) => {
        const r = await window.handleToolCall({ name: t.name, arguments: unwrapUnparsed(input) }, tools);
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
