/**
 * Every provider, by name. Adding one is its folder and its line here; its name then joins
 * `ProviderName`, and a `Record<ProviderName, …>` anywhere fails to compile until it handles the new one.
 */
import { aiSDK } from "./ai-sdk/ai-sdk-provider.js";
import { anthropic } from "./anthropic/anthropic-provider.js";
import { openAIChat, openAIResponses } from "./openai/openai-provider.js";
import type { Provider } from "./provider.js";

export const PROVIDERS = registry({
  anthropic,
  "openai-chat": openAIChat,
  "openai-responses": openAIResponses,
  "ai-sdk": aiSDK,
});

/** The closed set of providers. */
export type ProviderName = keyof typeof PROVIDERS;

/** One response of provider `N`, as its `read` takes it (`Transcript.appendResponse`). */
export type ProviderResponse<N extends ProviderName> = Parameters<(typeof PROVIDERS)[N]["read"]>[0];

/** Each entry must be a whole `Provider` under its own name; the exact types are kept for callers. */
function registry<const R extends { readonly [N in keyof R]: Provider & { readonly name: N } }>(providers: R): R {
  return providers;
}
