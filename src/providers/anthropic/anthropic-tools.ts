/**
 * The directive tools in Anthropic's request shape (`tools` of `messages.create`).
 */
import { defaultTools } from "../../tools/call.js";
import type { DirectiveTool, ToolInputSchema } from "../../tools/schemas.js";
import { withAgentTools, type ProviderToolsWith } from "../agent-tools.js";

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
