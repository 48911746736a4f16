/** Provider integration: rendering a window to each API's messages, and appending their responses. */
export { openAIPromptCacheKey, toAISDK, toAnthropic, toOpenAI, toOpenAIResponses } from "./render.js";
export type { AISDKMessage, AISDKPrompt, AnthropicCacheControl, AnthropicCachedPrompt, AnthropicMessage, AnthropicPrompt, AnthropicRenderOptions, OpenAIMessage, OpenAIResponsesItem } from "./render.js";
export type { RenderSource } from "./conversation.js";
export { Transcript } from "./transcript.js";
export type {
  AISDKStep,
  AnthropicResponseBlock,
  KindMapping,
  ModelToolCall,
  ModelToolResult,
  OpenAIChatMessage,
  OpenAIChatResponse,
  OpenAIResponseOutputItem,
  ToolOutput,
  ToolRunner,
  TranscriptOptions,
  TranscriptWindow,
} from "./transcript.js";
