/**
 * What every provider's tool builder shares: the options, and the agent's own tools, checked so that no
 * directive tool takes one's name (finding 25.8).
 */
import type { DirectiveTool } from "../tools/schemas.js";

/** Options of the provider tool builders. */
export interface ProviderToolOptions {
  /** Send the strict variant and ask the provider to hold the model to it. Default `false`. */
  readonly strict?: boolean;
}

/**
 * The builders' options with the agent's own tools: given, the builder refuses a directive tool with the
 * name of one of them (a `TypeError` naming both) and returns the agent's tools first, then the directive
 * tools — the whole `tools` of the request.
 */
export interface ProviderToolsWith<T> extends ProviderToolOptions {
  readonly agentTools?: T;
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
export function withAgentTools<T, D>(where: string, agentTools: readonly T[] | undefined, tools: readonly DirectiveTool[], built: D[]): Array<T | D> {
  if (agentTools === undefined) return built;
  refuseToolCollisions(where, agentTools as AgentTools, tools);
  return [...agentTools, ...built];
}
