/**
 * Keeping a window in step with a provider loop: what the model said (an AI SDK step, an OpenAI Chat
 * Completions or Responses response, an Anthropic message) and the results of its tool calls are appended
 * as spans, with a kind mapping given once; the directive tools' calls are handled by the window.
 *
 * Each provider reads its own responses (its `read`, in the registry); the transcript appends what they
 * hold, the same way for all: `appendResponse(provider, response)` and the per-SDK methods
 * (`appendOpenAIChat`, `appendAnthropic`, `appendAISDKSteps`, …, named shortcuts kept for their callers) take
 * one path. A new provider needs nothing here. Shapes are read structurally, so the runtime depends on no
 * SDK; tests pass each SDK's own objects.
 *
 * Responses are untrusted: each is read whole, and every span it makes is built, before the first is appended.
 * A response that cannot be read (`tool_calls[0] is not an object`, an id that is not a string) is a
 * `TypeError` naming the method and the field, with nothing of it in the window — never a call appended and
 * lost because a later part threw.
 */
import type { SpanMessage, SpanRef } from "../types.js";
import type { AppendInput } from "../window/window-options.js";
import { cutUnits, oneLine } from "../render/framing.js";
import { defaultTools, type ToolCallResult } from "../tools/call.js";
import type { DirectiveTool } from "../tools/schemas.js";
import type { WindowEntry } from "../window/view.js";
import type { ProviderCompactionOutcome } from "../outcome.js";
import type { ProviderClearing, ProviderCompaction } from "../window/provider-compaction.js";
import { refuseToolCollisions, type AgentTools } from "./agent-tools.js";
import type { AISDKPrompt } from "./ai-sdk/ai-sdk-messages.js";
import type { AISDKStep } from "./ai-sdk/ai-sdk-provider.js";
import type { AnthropicContextManagementResponse, AnthropicResponseBlock } from "./anthropic/anthropic-provider.js";
import type { OpenAIChatMessage, OpenAIChatResponse, OpenAIResponseOutputItem } from "./openai/openai-provider.js";
import { jsonText, objectAt, UnreadableResponse, type ModelToolCall, type Provider, type ResponsePart } from "./provider.js";
import { PROVIDERS, type ProviderName, type ProviderResponse } from "./registry.js";

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
  /** Records a provider's compaction (a `ContextWindow` has it); a response carrying one needs it. */
  providerCompacted?(compaction: ProviderCompaction): Promise<ProviderCompactionOutcome>;
  /** Records a provider's clearing done outside the checks. */
  providerCleared?(clearing: ProviderClearing): Promise<string>;
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
 * call the `append…` method for your SDK (or `appendResponse` with the provider's name), and
 * `handleToolCalls` with the calls it returned (or, with the AI SDK, pass `aiSDKPrepareStep()` to
 * `generateText`).
 * Gotcha: render the window (`toOpenAI(win)`, …) for every request; the transcript only appends.
 */
export class Transcript<K extends string, const M extends KindMapping<K> = KindMapping<K>, W extends TranscriptWindow<K> = TranscriptWindow<K>> {
  readonly #window: TranscriptWindow<K>;
  readonly #kinds: KindMapping<K>;
  readonly #tools: readonly DirectiveTool[];
  /** The keys of responses already appended, for providers that hand one over again (`Provider.responseKey`). */
  readonly #seen = new Set<string>();
  /** What the provider's compactions this transcript appended did, in order (`ContextWindow.providerCompacted`). */
  readonly compactions: ProviderCompactionOutcome[] = [];

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
    await this.#window.append(this.#callSpan(call, "toolCall"));
  }

  /** Appends a tool's result, paired with its call by position. */
  async toolResult(result: Pick<ModelToolResult, "id" | "name" | "text" | "isError">): Promise<void> {
    await this.#window.append(this.#resultSpan(result, "toolResult"));
  }

  /**
   * Runs the model's tool calls and appends their results: calls to the directive tools go to the
   * window (`handleToolCall`), the others to `run`. A call with no runner, or whose runner throws, gets an
   * error result, so no call is left unanswered.
   */
  async handleToolCalls(calls: readonly ModelToolCall[], run?: ToolRunner): Promise<ModelToolResult[]> {
    // Every call checked before the first runs: a result that could not be appended would leave its call unanswered.
    if (!Array.isArray(calls)) throw new TypeError("Transcript.handleToolCalls: calls is not an array");
    for (const [i, call] of calls.entries()) checkCall(call, `Transcript.handleToolCalls: calls[${i}]`);
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

  /**
   * Appends one response of a registered provider (`"anthropic"`, `"openai-chat"`, `"openai-responses"`,
   * `"ai-sdk"`), as that provider reads it: its text, its tool calls, a provider compaction or clearing it
   * reports (recorded first). Returns the calls, for `handleToolCalls`. A response the provider's loop hands
   * over again (an AI SDK step) is appended once.
   */
  async appendResponse<N extends ProviderName>(provider: N, response: ProviderResponse<N>): Promise<ModelToolCall[]> {
    if (typeof provider !== "string" || !Object.hasOwn(PROVIDERS, provider)) {
      throw new TypeError(`Transcript: no provider ${JSON.stringify(String(provider))}; one of ${Object.keys(PROVIDERS).join(", ")}`);
    }
    return this.#appendResponses("appendResponse", provider, [response], null);
  }

  // ---- Named shortcuts onto appendResponse, one per SDK entry point ----------------------------------

  // ---- OpenAI -------------------------------------------------------------------------------------

  /**
   * Appends a Chat Completions response (`ChatCompletion`, or its first choice's `message`): its text,
   * then its function calls. Returns the calls, for `handleToolCalls`.
   */
  async appendOpenAIChat(response: OpenAIChatResponse | OpenAIChatMessage): Promise<ModelToolCall[]> {
    return this.#appendResponses("appendOpenAIChat", "openai-chat", [response], null);
  }

  /**
   * Appends a Responses API response (`Response`): its output messages' text, then its function calls. A
   * compaction item in it (automatic compaction, `context_management: openAICompaction(…)`) is recorded first:
   * every span before it is pruned through the checks, and the item is sent back in their place.
   */
  async appendOpenAIResponse(response: { readonly output: readonly OpenAIResponseOutputItem[] }): Promise<ModelToolCall[]> {
    return this.#appendResponses("appendOpenAIResponse", "openai-responses", [response], null);
  }

  /**
   * Records what `client.responses.compact(…)` returned (a `CompactedResponse`): its compaction item stands for
   * the window so far; the user messages it repeats are the window's own spans, which stay as the policy keeps
   * them. Returns what the compaction did.
   */
  async appendOpenAICompaction(compacted: { readonly output: readonly OpenAIResponseOutputItem[] }): Promise<ProviderCompactionOutcome | null> {
    const before = this.compactions.length;
    // Its compaction items only; the user messages it repeats are the window's own spans.
    await this.#appendResponses("appendOpenAICompaction", "openai-responses", [compacted], null, (part) => part.type === "compaction");
    return this.compactions.length > before ? this.compactions.at(-1)! : null;
  }

  // ---- Anthropic ----------------------------------------------------------------------------------

  /**
   * Appends an Anthropic `Message` (or beta `BetaMessage`): its text blocks, then its `tool_use` blocks. Returns
   * the calls. A `compaction` block (`compact_20260112`, see `anthropicCompaction`) is recorded first: every span
   * before it is pruned through the checks, and the block is sent back by `toAnthropicBeta` in their place. A
   * clearing the response reports (`applied_edits`) is audited and said to the model.
   */
  async appendAnthropic(message: { readonly content: readonly AnthropicResponseBlock[]; readonly context_management?: AnthropicContextManagementResponse | null }): Promise<ModelToolCall[]> {
    return this.#appendResponses("appendAnthropic", "anthropic", [message], null);
  }

  // ---- Vercel AI SDK ------------------------------------------------------------------------------

  /**
   * Appends AI SDK step results (`result.steps`, or the `steps` a `prepareStep` receives): text, tool
   * calls and their results (the directive tools' results as the window's text; tool errors as errors).
   * A step already appended is skipped, so passing every step each time is safe. The steps are read whole
   * first: one that cannot be read is an error naming it, with none of them appended.
   */
  async appendAISDKSteps(steps: readonly AISDKStep[]): Promise<void> {
    if (!Array.isArray(steps)) throw new TypeError("Transcript.appendAISDKSteps: steps is not an array");
    await this.#appendResponses("appendAISDKSteps", "ai-sdk", steps, "steps");
  }

  /**
   * A `prepareStep` for `generateText`/`streamText`: appends the steps so far, then sends the window as
   * rendered now — so a prune the model made in one step is what it reads in the next.
   * After the run, `appendAISDKSteps(result.steps)` appends the last step.
   */
  aiSDKPrepareStep(): (options: { readonly steps: readonly AISDKStep[] }) => Promise<AISDKPrompt> {
    return async ({ steps }) => {
      await this.appendAISDKSteps(steps);
      return PROVIDERS["ai-sdk"].render(this.#window);
    };
  }

  /**
   * Appends responses of one provider as it reads them, in order; returns their tool calls. All are read, and
   * every span they make is built, before the first is appended: a response that cannot be read is a
   * `TypeError` from `Transcript.<method>` naming the field (`steps[1].content[0] is not an object` when
   * `many` names the list), and the window is unchanged. `keep` picks the parts to append.
   */
  async #appendResponses(method: string, provider: ProviderName, responses: readonly unknown[], many: string | null, keep?: (part: ResponsePart) => boolean): Promise<ModelToolCall[]> {
    const p: Provider = PROVIDERS[provider];
    const parts: ResponsePart[] = [];
    const keys = new Set<string>();
    for (const [i, response] of responses.entries()) {
      const at = many === null ? "" : `${many}[${i}]`;
      let read: readonly ResponsePart[];
      try {
        objectAt(response, at === "" ? "the response" : at);
        const own = p.responseKey?.(response as object) ?? null;
        if (own !== null) {
          const key = `${provider}:${own}`;
          if (this.#seen.has(key) || keys.has(key)) continue;
          keys.add(key);
        }
        read = p.read(response as object);
      } catch (err) {
        if (!(err instanceof UnreadableResponse)) throw new TypeError(`Transcript.${method}: the response cannot be read (${safeString(err instanceof Error ? err.message : err)})`, { cause: err });
        throw new TypeError(`Transcript.${method}: ${at !== "" && !err.message.startsWith(at) ? `${at}.` : ""}${err.message}`);
      }
      // A response's compaction stands for the prompt that produced it, never for what the response says
      // besides: recorded before the rest of the response (the APIs send the block first anyway), so a tool
      // call of the same response is not folded into a summary the model wrote before it.
      for (const part of read) if (part.type === "compaction" && (keep === undefined || keep(part))) parts.push(part);
      for (const part of read) if (part.type !== "compaction" && (keep === undefined || keep(part))) parts.push(part);
    }
    // Every span built before the first append: a kind mapping that throws, or a window that cannot record a
    // compaction, changes nothing either.
    const steps: Array<() => Promise<unknown>> = [];
    const calls: ModelToolCall[] = [];
    for (const part of parts) {
      switch (part.type) {
        case "text":
          if (part.text.trim() !== "") {
            const span = { kind: this.#kinds.assistant, text: part.text, message: { role: "assistant" } } as const;
            steps.push(() => this.#window.append(span));
          }
          break;
        case "tool-call": {
          const span = this.#callSpan(part.call, method);
          steps.push(() => this.#window.append(span));
          calls.push(part.call);
          break;
        }
        case "tool-result": {
          const span = this.#resultSpan(part, method);
          steps.push(() => this.#window.append(span));
          break;
        }
        case "tool-error": {
          const span = this.#resultSpan({ id: part.id, name: part.name, text: errorText(part.error), isError: true }, method);
          steps.push(() => this.#window.append(span));
          break;
        }
        case "compaction": {
          const record = this.#window.providerCompacted?.bind(this.#window);
          if (record === undefined) throw new TypeError(`Transcript.${method}: the response carries a provider's compaction, and this window cannot record one (it has no providerCompacted)`);
          steps.push(async () => this.compactions.push(await record(part.compaction)));
          break;
        }
        case "provider-cleared": {
          const record = this.#window.providerCleared?.bind(this.#window);
          if (record === undefined) throw new TypeError(`Transcript.${method}: the provider cleared tool uses, and this window cannot record it (it has no providerCleared)`);
          steps.push(() => record(part.clearing));
          break;
        }
        default:
          unhandled(part);
      }
    }
    for (const key of keys) this.#seen.add(key);
    for (const step of steps) await step();
    return calls;
  }

  /** The span of a tool call: its arguments as given when text, else as JSON text. */
  #callSpan(call: ModelToolCall, method: string): AppendInput<K> {
    checkCall(call, `Transcript.${method}: the call`);
    const text = typeof call.arguments === "string" ? call.arguments : jsonText(call.arguments ?? {});
    return { kind: kindOf(this.#kinds.toolCall, call.name), text, message: { role: "tool-call", callId: call.id, toolName: call.name } };
  }

  /** The span of a tool's result. */
  #resultSpan(result: Pick<ModelToolResult, "id" | "name" | "text" | "isError">, method: string): AppendInput<K> {
    checkCall(result, `Transcript.${method}: the result`);
    const message: SpanMessage = { role: "tool-result", callId: result.id, toolName: result.name, ...(result.isError ? { isError: true } : {}) };
    return { kind: kindOf(this.#kinds.toolResult, result.name), text: result.text, message };
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

/** A new kind of response part does not compile until the transcript appends it. */
function unhandled(part: never): never {
  throw new TypeError(`unknown response part ${String((part as { readonly type?: unknown }).type)}`);
}

/** A call (or a result) the window can append: an object whose id and tool name are strings. */
function checkCall(call: unknown, what: string): void {
  if (typeof call !== "object" || call === null) throw new TypeError(`${what} is not an object`);
  const c = call as { readonly id?: unknown; readonly name?: unknown };
  if (typeof c.id !== "string") throw new TypeError(`${what}'s id is not a string`);
  if (typeof c.name !== "string") throw new TypeError(`${what}'s name is not a string`);
}

/** A value as text, whatever it is (a null-prototype object has no string form: its type's tag stands in). */
function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** A tool's failure as its result text: the message, bounded, never empty. */
function errorText(err: unknown): string {
  // Cut on a code point (finding 25.9): a lone surrogate in a tool result makes the provider refuse the request.
  return cutUnits(safeString(err instanceof Error ? err.message : err), MAX_ERROR_CHARS) || "tool failed";
}
