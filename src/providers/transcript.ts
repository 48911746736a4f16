/**
 * Keeping a window in step with a provider loop: what the model said (an AI SDK step, an OpenAI Chat
 * Completions or Responses response, an Anthropic message) and the results of its tool calls are appended
 * as spans, with a kind mapping given once; the directive tools' calls are handled by the window.
 *
 * Shapes are read structurally, so the runtime depends on no SDK; tests pass each SDK's own objects.
 */
import type { SpanMessage, SpanRef } from "../types.js";
import type { AppendInput } from "../window/options.js";
import { cutUnits, oneLine } from "../render/framing.js";
import { defaultTools, type ToolCallResult } from "../tools/call.js";
import { refuseToolCollisions, type AgentTools } from "../tools/providers.js";
import type { DirectiveTool } from "../tools/schemas.js";
import { toAISDK, type AISDKMessage, type AISDKPrompt } from "./render.js";
import type { WindowEntry } from "../window/view.js";

/** Which span kind each part of a conversation is appended as. */
export interface KindMapping<K extends string> {
  readonly system?: K;
  readonly user: K;
  readonly assistant: K;
  /** The kind of a tool call, or a function of the tool's name. */
  readonly toolCall: K | ((toolName: string) => K);
  /** The kind of a tool result, or a function of the tool's name. */
  readonly toolResult: K | ((toolName: string) => K);
}

/** What the transcript needs of a window: a `ContextWindow` or a generated guard's window. */
export interface TranscriptWindow<K extends string> {
  append<P extends K>(input: AppendInput<P>): Promise<SpanRef<P, string>>;
  handleToolCall(call: { readonly name: string; readonly arguments: unknown }, tools?: readonly DirectiveTool[]): Promise<ToolCallResult | null>;
  entries(): readonly WindowEntry[];
}

/** A tool call the model made, as the transcript appended it. */
export interface ModelToolCall {
  readonly id: string;
  readonly name: string;
  /** As the provider gave them: JSON text (OpenAI) or a parsed object (Anthropic, AI SDK). */
  readonly arguments: unknown;
}

/** A tool result to send back, as the transcript appended it. */
export interface ModelToolResult {
  readonly id: string;
  readonly name: string;
  readonly text: string;
  readonly isError: boolean;
  /** Set when the call was one of the directive tools. */
  readonly directive: ToolCallResult | null;
}

/** What an agent's own tool returns: text, or text with an error flag. A thrown error is an error result. */
export type ToolOutput = string | { readonly text: string; readonly isError?: boolean };

/** Runs one of the agent's own tools (any call that is not a directive tool). */
export type ToolRunner = (call: ModelToolCall) => ToolOutput | Promise<ToolOutput>;

/** Options of a `Transcript`. */
export interface TranscriptOptions {
  /** The directive tools whose calls go to the window (`directiveTools()`, renamed or not). Default: the default tools. */
  readonly tools?: readonly DirectiveTool[];
  /**
   * Your own tools (names, a provider's tool list or an AI SDK `ToolSet`): the transcript refuses, with a
   * `TypeError` naming both, a directive tool with the name of one of them — whose calls would otherwise go
   * to the window and never to your runner.
   */
  readonly agentTools?: AgentTools;
}

/** The longest text taken from an error thrown by a tool runner. */
const MAX_ERROR_CHARS = 2_000;

/**
 * A window's transcript of a provider loop.
 *
 * When to use: once per window, with the kind mapping of your policy; then after each model response
 * call the `append…` method for your SDK, and `handleToolCalls` with the calls it returned (or, with the
 * AI SDK, pass `aiSDKPrepareStep()` to `generateText`).
 * Gotcha: render the window (`toOpenAI(win)`, …) for every request; the transcript only appends.
 */
export class Transcript<K extends string, const M extends KindMapping<K> = KindMapping<K>, W extends TranscriptWindow<K> = TranscriptWindow<K>> {
  readonly #window: TranscriptWindow<K>;
  readonly #kinds: KindMapping<K>;
  readonly #tools: readonly DirectiveTool[];
  readonly #steps = new Set<string>();

  /**
   * `tools`: the directive tools (an array, as before), or options with them and your own tools, so a
   * directive tool cannot take one of your tools' names (finding 25.8).
   */
  constructor(window: W & TranscriptWindow<K>, kinds: M & KindMapping<K>, tools: readonly DirectiveTool[] | TranscriptOptions = defaultTools()) {
    const options: TranscriptOptions = Array.isArray(tools) ? { tools } : (tools as TranscriptOptions);
    this.#window = window;
    this.#kinds = kinds;
    this.#tools = options.tools ?? defaultTools();
    if (options.agentTools !== undefined) refuseToolCollisions("Transcript", options.agentTools, this.#tools);
  }

  /** Appends a user turn. */
  user(text: string): Promise<RefOf<W, M["user"]>> {
    return this.#append(this.#kinds.user, text, { role: "user" }) as Promise<RefOf<W, M["user"]>>;
  }

  /** Appends a system span (the mapping's `system` kind, else its `user` kind). */
  system(text: string): Promise<RefOf<W, SystemKind<K, M>>> {
    return this.#append(this.#kinds.system ?? this.#kinds.user, text, { role: "system" }) as Promise<RefOf<W, SystemKind<K, M>>>;
  }

  /** Appends the model's text turn. */
  assistant(text: string): Promise<RefOf<W, M["assistant"]>> {
    return this.#append(this.#kinds.assistant, text, { role: "assistant" }) as Promise<RefOf<W, M["assistant"]>>;
  }

  /** Appends a tool call the model made. */
  async toolCall(call: ModelToolCall): Promise<void> {
    const text = typeof call.arguments === "string" ? call.arguments : jsonText(call.arguments ?? {});
    await this.#append(kindOf(this.#kinds.toolCall, call.name), text, { role: "tool-call", callId: call.id, toolName: call.name });
  }

  /** Appends a tool's result, paired with its call by position. */
  async toolResult(result: Pick<ModelToolResult, "id" | "name" | "text" | "isError">): Promise<void> {
    const message: SpanMessage = { role: "tool-result", callId: result.id, toolName: result.name, ...(result.isError ? { isError: true } : {}) };
    await this.#append(kindOf(this.#kinds.toolResult, result.name), result.text, message);
  }

  /**
   * Runs the model's tool calls and appends their results: calls to the directive tools go to the
   * window (`handleToolCall`), the others to `run`. A call with no runner, or whose runner throws, gets an
   * error result, so no call is left unanswered.
   */
  async handleToolCalls(calls: readonly ModelToolCall[], run?: ToolRunner): Promise<ModelToolResult[]> {
    const out: ModelToolResult[] = [];
    for (const call of calls) {
      const directive = await this.#window.handleToolCall(call, this.#tools);
      let text: string;
      let isError: boolean;
      if (directive !== null) {
        ({ text, isError } = directive);
      } else if (run === undefined) {
        text = `no tool named ${oneLine(String(call.name), 64)}`; // the model's name, quoted on one line
        isError = true;
      } else {
        try {
          const r = await run(call);
          text = typeof r === "string" ? r : String(r.text);
          isError = typeof r !== "string" && r.isError === true;
        } catch (err) {
          text = errorText(err);
          isError = true;
        }
      }
      const result = { id: call.id, name: call.name, text, isError, directive };
      await this.toolResult(result);
      out.push(result);
    }
    return out;
  }

  // ---- OpenAI -------------------------------------------------------------------------------------

  /**
   * Appends a Chat Completions response (`ChatCompletion`, or its first choice's `message`): its text,
   * then its function calls. Returns the calls, for `handleToolCalls`.
   */
  async appendOpenAIChat(response: OpenAIChatResponse | OpenAIChatMessage): Promise<ModelToolCall[]> {
    const message = "choices" in response ? response.choices[0]?.message : response;
    if (!message) return [];
    if (typeof message.content === "string" && message.content.trim() !== "") await this.assistant(message.content);
    const calls: ModelToolCall[] = [];
    for (const c of message.tool_calls ?? []) {
      if (c.type !== "function" || !("function" in c) || c.function === undefined) continue;
      calls.push({ id: c.id, name: c.function.name, arguments: c.function.arguments });
    }
    for (const c of calls) await this.toolCall(c);
    return calls;
  }

  /** Appends a Responses API response (`Response`): its output messages' text, then its function calls. */
  async appendOpenAIResponse(response: { readonly output: readonly OpenAIResponseOutputItem[] }): Promise<ModelToolCall[]> {
    const calls: ModelToolCall[] = [];
    for (const item of response.output) {
      if (item.type === "message" && Array.isArray(item.content)) {
        const parts = item.content as ReadonlyArray<{ readonly type?: unknown; readonly text?: unknown }>;
        const text = parts.map((p) => (p.type === "output_text" && typeof p.text === "string" ? p.text : "")).join("");
        if (text.trim() !== "") await this.assistant(text);
      } else if (item.type === "function_call" && typeof item.call_id === "string" && typeof item.name === "string") {
        const call = { id: item.call_id, name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : "{}" };
        await this.toolCall(call);
        calls.push(call);
      }
    }
    return calls;
  }

  // ---- Anthropic ----------------------------------------------------------------------------------

  /** Appends an Anthropic `Message`: its text blocks, then its `tool_use` blocks. Returns the calls. */
  async appendAnthropic(message: { readonly content: readonly AnthropicResponseBlock[] }): Promise<ModelToolCall[]> {
    const calls: ModelToolCall[] = [];
    for (const block of message.content) {
      if (block.type === "text" && typeof block.text === "string" && block.text.trim() !== "") await this.assistant(block.text);
      else if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
        const call = { id: block.id, name: block.name, arguments: block.input ?? {} };
        await this.toolCall(call);
        calls.push(call);
      }
    }
    return calls;
  }

  // ---- Vercel AI SDK ------------------------------------------------------------------------------

  /**
   * Appends AI SDK step results (`result.steps`, or the `steps` a `prepareStep` receives): text, tool
   * calls and their results (the directive tools' results as the window's text; tool errors as errors).
   * A step already appended is skipped, so passing every step each time is safe.
   */
  async appendAISDKSteps(steps: readonly AISDKStep[]): Promise<void> {
    for (const step of steps) {
      const key = `${String(step.callId)}:${String(step.stepNumber)}`;
      if (this.#steps.has(key)) continue;
      this.#steps.add(key);
      for (const part of step.content) {
        if (part.type === "text" && typeof part.text === "string" && part.text.trim() !== "") await this.assistant(part.text);
        else if (part.type === "tool-call" && !part.providerExecuted) {
          await this.toolCall({ id: String(part.toolCallId), name: String(part.toolName), arguments: part.input ?? {} });
        } else if (part.type === "tool-result" && !part.providerExecuted) {
          const { text, isError } = aiSDKOutputText(part.output);
          await this.toolResult({ id: String(part.toolCallId), name: String(part.toolName), text, isError });
        } else if (part.type === "tool-error" && !part.providerExecuted) {
          await this.toolResult({ id: String(part.toolCallId), name: String(part.toolName), text: errorText(part.error), isError: true });
        }
      }
    }
  }

  /**
   * A `prepareStep` for `generateText`/`streamText`: appends the steps so far, then sends the window as
   * rendered now — so a prune the model made in one step is what it reads in the next.
   * After the run, `appendAISDKSteps(result.steps)` appends the last step.
   */
  aiSDKPrepareStep(): (options: { readonly steps: readonly AISDKStep[] }) => Promise<AISDKPrompt> {
    return async ({ steps }) => {
      await this.appendAISDKSteps(steps);
      return toAISDK(this.#window);
    };
  }

  #append(kind: K, text: string, message: SpanMessage): Promise<SpanRef<K, string>> {
    return this.#window.append({ kind, text, message });
  }
}

/**
 * The ref a window's `append` returns for kind `P`: a guard's window brands it with its policy
 * (`"~policy"`), so a transcript's ref compiles on that policy's windows only; a plain `ContextWindow`
 * gives a ref of no known policy. Either way the prune's rule comes from the window it is pruned on.
 */
export type RefOf<W, P extends string> = W extends { readonly "~policy"?: infer Policy extends string } ? SpanRef<P, Policy> : SpanRef<P>;

/** The kind a transcript's system spans get: the mapping's `system`, else its `user`. */
type SystemKind<K extends string, M extends KindMapping<K>> = M["system"] extends K ? M["system"] : M["user"];

function kindOf<K extends string>(k: K | ((toolName: string) => K), toolName: string): K {
  return typeof k === "function" ? k(toolName) : k;
}

/** A tool result's text as the model read it: a directive tool's line, text outputs, else JSON. */
function aiSDKOutputText(output: unknown): { text: string; isError: boolean } {
  if (typeof output === "string") return { text: output, isError: false };
  if (typeof output === "object" && output !== null) {
    const o = output as { text?: unknown; isError?: unknown; status?: unknown };
    // What the directive tools' `execute` returns.
    if (typeof o.text === "string" && typeof o.isError === "boolean" && typeof o.status === "string") return { text: o.text, isError: o.isError };
  }
  return { text: jsonText(output), isError: false };
}

/** A value as JSON text; one JSON cannot represent (a cycle, a bigint) as its string form. */
function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// ---- the response shapes read (structural subsets of the SDKs' types) ----------------------------

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
}

export interface AnthropicResponseBlock {
  readonly type: string;
  readonly text?: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
}

export interface AISDKStep {
  readonly callId?: string;
  readonly stepNumber: number;
  readonly content: ReadonlyArray<{
    readonly type: string;
    readonly text?: string;
    readonly toolCallId?: string;
    readonly toolName?: string;
    readonly input?: unknown;
    readonly output?: unknown;
    readonly error?: unknown;
    readonly providerExecuted?: boolean;
  }>;
}

/** A tool's failure as its result text: the message, bounded, never empty. */
function errorText(err: unknown): string {
  // Cut on a code point (finding 25.9): a lone surrogate in a tool result makes the provider refuse the request.
  return cutUnits(String(err instanceof Error ? err.message : err), MAX_ERROR_CHARS) || "tool failed";
}
