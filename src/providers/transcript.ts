/**
 * Keeping a window in step with a provider loop: what the model said (an AI SDK step, an OpenAI Chat
 * Completions or Responses response, an Anthropic message) and the results of its tool calls are appended
 * as spans, with a kind mapping given once; the directive tools' calls are handled by the window.
 *
 * Each provider reads its own responses (its `read`, in the registry); the transcript appends what they
 * hold, the same way for all: `appendResponse(provider, response)` is the one path, and the per-SDK methods
 * (`appendOpenAIChat`, `appendAnthropic`, `appendAISDKSteps`, …) are named shortcuts onto it, kept for
 * their callers. A new provider needs nothing here. Shapes are read structurally, so the runtime depends on
 * no SDK; tests pass each SDK's own objects.
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
import { jsonText, type ModelToolCall, type Provider, type ResponsePart } from "./provider.js";
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
    const p: Provider = PROVIDERS[provider];
    if (p.responseKey !== undefined) {
      const key = `${provider}:${p.responseKey(response)}`;
      if (this.#seen.has(key)) return [];
      this.#seen.add(key);
    }
    return this.#appendParts(p.read(response));
  }

  // ---- Named shortcuts onto appendResponse, one per SDK entry point ----------------------------------

  // ---- OpenAI -------------------------------------------------------------------------------------

  /**
   * Appends a Chat Completions response (`ChatCompletion`, or its first choice's `message`): its text,
   * then its function calls. Returns the calls, for `handleToolCalls`.
   */
  async appendOpenAIChat(response: OpenAIChatResponse | OpenAIChatMessage): Promise<ModelToolCall[]> {
    return this.appendResponse("openai-chat", response);
  }

  /**
   * Appends a Responses API response (`Response`): its output messages' text, then its function calls. A
   * compaction item in it (automatic compaction, `context_management: openAICompaction(…)`) is recorded first:
   * every span before it is pruned through the checks, and the item is sent back in their place.
   */
  async appendOpenAIResponse(response: { readonly output: readonly OpenAIResponseOutputItem[] }): Promise<ModelToolCall[]> {
    return this.appendResponse("openai-responses", response);
  }

  /**
   * Records what `client.responses.compact(…)` returned (a `CompactedResponse`): its compaction item stands for
   * the window so far; the user messages it repeats are the window's own spans, which stay as the policy keeps
   * them. Returns what the compaction did.
   */
  async appendOpenAICompaction(compacted: { readonly output: readonly OpenAIResponseOutputItem[] }): Promise<ProviderCompactionOutcome | null> {
    const before = this.compactions.length;
    for (const item of compacted.output) if (item.type === "compaction") await this.appendResponse("openai-responses", { output: [item] });
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
    return this.appendResponse("anthropic", message);
  }

  // ---- Vercel AI SDK ------------------------------------------------------------------------------

  /**
   * Appends AI SDK step results (`result.steps`, or the `steps` a `prepareStep` receives): text, tool
   * calls and their results (the directive tools' results as the window's text; tool errors as errors).
   * A step already appended is skipped, so passing every step each time is safe.
   */
  async appendAISDKSteps(steps: readonly AISDKStep[]): Promise<void> {
    for (const step of steps) await this.appendResponse("ai-sdk", step);
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

  /** Appends a response's parts as its provider read them, in order; returns its tool calls. */
  async #appendParts(parts: Iterable<ResponsePart>): Promise<ModelToolCall[]> {
    const calls: ModelToolCall[] = [];
    for (const part of parts) {
      switch (part.type) {
        case "text":
          if (part.text.trim() !== "") await this.assistant(part.text);
          break;
        case "tool-call":
          await this.toolCall(part.call);
          calls.push(part.call);
          break;
        case "tool-result":
          await this.toolResult(part);
          break;
        case "tool-error":
          await this.toolResult({ id: part.id, name: part.name, text: errorText(part.error), isError: true });
          break;
        case "compaction": {
          if (this.#window.providerCompacted === undefined) throw new TypeError("Transcript: the response carries a provider's compaction, and this window cannot record one (it has no providerCompacted)");
          this.compactions.push(await this.#window.providerCompacted(part.compaction));
          break;
        }
        case "provider-cleared":
          if (this.#window.providerCleared === undefined) throw new TypeError("Transcript: the provider cleared tool uses, and this window cannot record it (it has no providerCleared)");
          await this.#window.providerCleared(part.clearing);
          break;
        default:
          unhandled(part);
      }
    }
    return calls;
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

/** A tool's failure as its result text: the message, bounded, never empty. */
function errorText(err: unknown): string {
  // Cut on a code point (finding 25.9): a lone surrogate in a tool result makes the provider refuse the request.
  return cutUnits(String(err instanceof Error ? err.message : err), MAX_ERROR_CHARS) || "tool failed";
}
