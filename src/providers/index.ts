/** Provider integration: rendering a window to each API's messages, its tools, and appending its responses. */
export { toAnthropic, toAnthropicBeta } from "./anthropic/anthropic-messages.js";
export type {
  AnthropicBetaMessage, AnthropicBetaPrompt, AnthropicCacheControl, AnthropicCachedPrompt, AnthropicCompactionBlock, AnthropicMessage, AnthropicPrompt, AnthropicRenderOptions,
} from "./anthropic/anthropic-messages.js";
export { ANTHROPIC_COMPACTION_BETA, anthropicCompaction } from "./anthropic/anthropic-compaction.js";
export type { AnthropicCompactEdit, AnthropicCompactionOptions, AnthropicCompactionRequest } from "./anthropic/anthropic-compaction.js";
export { openAICompaction, openAICompactRequest } from "./openai/openai-compaction.js";
export type { OpenAICompactionOptions } from "./openai/openai-compaction.js";
export type { CompactionWindow } from "./compaction-checks.js";
export { anthropicTools } from "./anthropic/anthropic-tools.js";
export type { AnthropicTool } from "./anthropic/anthropic-tools.js";
export type { AnthropicResponseBlock } from "./anthropic/anthropic-provider.js";
export { openAIPromptCacheKey, toOpenAI, toOpenAIResponses } from "./openai/openai-messages.js";
export type { OpenAIMessage, OpenAIResponsesItem } from "./openai/openai-messages.js";
export { openAIChatTools, openAIResponsesTools } from "./openai/openai-tools.js";
export type { OpenAIChatTool, OpenAIResponsesTool } from "./openai/openai-tools.js";
export type { OpenAIChatMessage, OpenAIChatResponse, OpenAIResponseOutputItem } from "./openai/openai-provider.js";
export { toAISDK } from "./ai-sdk/ai-sdk-messages.js";
export type { AISDKMessage, AISDKPrompt } from "./ai-sdk/ai-sdk-messages.js";
export { aiSDKTools, pruneguardRepairToolCall } from "./ai-sdk/ai-sdk-tools.js";
export type { AISDKTool, AISDKToolOutput, AISDKToolResult, AISDKToolsOptions, PassThroughSchema, ToolCallHandler } from "./ai-sdk/ai-sdk-tools.js";
export type { AISDKStep } from "./ai-sdk/ai-sdk-provider.js";
export type { RenderSource } from "./conversation.js";
export type { AgentToolEntry, AgentTools, ProviderToolOptions, ProviderToolsWith } from "./agent-tools.js";
export type { ModelToolCall } from "./provider.js";
export type { ProviderName, ProviderResponse } from "./registry.js";
export { Transcript } from "./transcript.js";
export type { KindMapping, ModelToolResult, ToolOutput, ToolRunner, TranscriptOptions, TranscriptWindow } from "./transcript.js";
