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

/**
 * The agent's own tools, given so that no directive tool can take one's name: a provider's tool list
 * (OpenAI Chat `{ function: { name } }` or `{ custom: { name } }`, OpenAI Responses and Anthropic
 * `{ name }`; entries without a name, such as built-in tools, are skipped), an AI SDK `ToolSet` (its keys),
 * or the names themselves.
 */
export type AgentTools = ReadonlyArray<string | AgentToolEntry> | { readonly [name: string]: unknown };

/** One entry of a provider's tool list, as far as its name goes. */
export type AgentToolEntry = { readonly name?: unknown; readonly function?: unknown; readonly custom?: unknown };

/** The names `agentTools` holds. */
export function agentToolNames(agentTools: AgentTools): string[] {
  if (!Array.isArray(agentTools)) return Object.keys(agentTools);
  const names: string[] = [];
  for (const t of agentTools as ReadonlyArray<string | AgentToolEntry>) {
    if (typeof t === "string") names.push(t);
    else if (typeof t === "object" && t !== null) {
      const name = t.name ?? nameOf(t.function) ?? nameOf(t.custom);
      if (typeof name === "string") names.push(name);
    }
  }
  return names;
}

function nameOf(v: unknown): unknown {
  return typeof v === "object" && v !== null ? (v as { readonly name?: unknown }).name : undefined;
}

/**
 * Throws when one of the agent's tools and a directive tool have one name (finding 25.8): merged into one
 * tool set, one would replace the other without a word, and a call the agent's runner should get would go
 * to the window (or the other way round). The error names both and says how to rename the directive tool.
 */
export function refuseToolCollisions(where: string, agentTools: AgentTools, tools: readonly DirectiveTool[]): void {
  const own = new Set(agentToolNames(agentTools));
  for (const t of tools) {
    if (!own.has(t.name)) continue;
    throw new TypeError(
      `${where}: your tool ${JSON.stringify(t.name)} and the directive tool ${JSON.stringify(t.name)} (the ${t.op} operation) have one name, ` +
        `so one would silently replace the other; rename the directive tool with directiveTools({ names: { ${t.op}: "context_${t.op}" } }) ` +
        "and pass those tools to every builder and to the Transcript, or rename yours",
    );
  }
}

/** The agent's tools, checked against `tools` (when given), then the directive tools: the list to send. */
function withAgentTools<T, D>(where: string, agentTools: readonly T[] | undefined, tools: readonly DirectiveTool[], built: D[]): Array<T | D> {
  if (agentTools === undefined) return built;
  refuseToolCollisions(where, agentTools as AgentTools, tools);
  return [...agentTools, ...built];
}

/**
 * The builders' options with the agent's own tools: given, the builder refuses a directive tool with the
 * name of one of them (a `TypeError` naming both) and returns the agent's tools first, then the directive
 * tools — the whole `tools` of the request.
 */
export interface ProviderToolsWith<T> extends ProviderToolOptions {
  readonly agentTools?: T;
}

/** An OpenAI Chat Completions function tool (`ChatCompletionFunctionTool`). */
export interface OpenAIChatTool {
  type: "function";
  function: { name: string; description: string; parameters: ToolInputSchema; strict: boolean };
}

/** The tools for OpenAI Chat Completions (`tools` of `chat.completions.create`); with `agentTools`, yours first (see `ProviderToolsWith`). */
export function openAIChatTools<T = never>(tools: readonly DirectiveTool[] = defaultTools(), options: ProviderToolsWith<readonly T[]> = {}): Array<T | OpenAIChatTool> {
  const strict = options.strict === true;
  const built = tools.map((t): OpenAIChatTool => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: strict ? t.strict.openai : t.inputSchema, strict },
  }));
  return withAgentTools("openAIChatTools", options.agentTools, tools, built);
}

/** An OpenAI Responses API function tool (`FunctionTool`). */
export interface OpenAIResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: ToolInputSchema;
  strict: boolean;
}

/** The tools for the OpenAI Responses API (`tools` of `responses.create`); with `agentTools`, yours first (see `ProviderToolsWith`). */
export function openAIResponsesTools<T = never>(
  tools: readonly DirectiveTool[] = defaultTools(),
  options: ProviderToolsWith<readonly T[]> = {},
): Array<T | OpenAIResponsesTool> {
  const strict = options.strict === true;
  const built = tools.map((t): OpenAIResponsesTool => ({ type: "function", name: t.name, description: t.description, parameters: strict ? t.strict.openai : t.inputSchema, strict }));
  return withAgentTools("openAIResponsesTools", options.agentTools, tools, built);
}

/** An Anthropic custom tool (`Tool` of the Messages API). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ToolInputSchema;
  strict?: boolean;
  cache_control?: { type: "ephemeral"; ttl?: "5m" | "1h" };
}

/**
 * The tools for Anthropic Messages (`tools` of `messages.create`); with `agentTools`, yours first (see
 * `ProviderToolsWith`). `cacheControl: true` puts a prompt-cache breakpoint on the last tool, so the
 * tools are cached apart from the conversation (the fourth breakpoint `toAnthropic`'s `cacheControl` leaves).
 */
export function anthropicTools<T = never>(
  tools: readonly DirectiveTool[] = defaultTools(),
  options: ProviderToolsWith<readonly T[]> & { readonly cacheControl?: boolean | { readonly ttl: "5m" | "1h" } } = {},
): Array<T | AnthropicTool> {
  const built = tools.map((t): AnthropicTool =>
    options.strict === true
      ? { name: t.name, description: t.description, input_schema: t.strict.anthropic, strict: true }
      : { name: t.name, description: t.description, input_schema: t.inputSchema },
  );
  if (options.cacheControl !== undefined && options.cacheControl !== false && built.length > 0) {
    built[built.length - 1]!.cache_control = options.cacheControl === true ? { type: "ephemeral" } : { type: "ephemeral", ttl: options.cacheControl.ttl };
  }
  return withAgentTools("anthropicTools", options.agentTools, tools, built);
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
