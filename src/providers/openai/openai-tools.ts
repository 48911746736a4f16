/**
 * The directive tools in OpenAI's request shapes: Chat Completions and the Responses API.
 */
import { defaultTools } from "../../tools/call.js";
import type { DirectiveTool, ToolInputSchema } from "../../tools/schemas.js";
import { withAgentTools, type ProviderToolsWith } from "../agent-tools.js";

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
