/**
 * The providers' rules for a conversation, as checks that return what they found wrong (empty when the
 * conversation is valid). Used on renderings of generated window states and by the fake HTTP servers
 * that real SDK clients send their requests to. Each rule is one the provider answers with a 400.
 */
import { convertToLanguageModelPrompt, standardizePrompt } from "ai/internal";
import { modelMessageSchema, type ModelMessage } from "ai";

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/;
const OPENAI_ID_MAX = 40;
/** OpenAI function names (`FunctionDefinition.name` in the SDK: "a-z, A-Z, 0-9, underscores and dashes, maximum length of 64"). */
const OPENAI_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Anthropic tool names, in definitions and in `tool_use` blocks. */
const ANTHROPIC_TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
/** Whitespace as the Anthropic API's checks read it: `\s` and Python's `str.isspace` extras (U+001C–U+001F, NEL). */
const SPACE = "[\\s\\x1c-\\x1f\\x85]";
const BLANK = new RegExp(`^${SPACE}*$`);
const TRAILING_SPACE = new RegExp(`${SPACE}$`);

/**
 * Tool definitions' names: the provider's pattern, and (Anthropic: "Tool names must be unique") one tool
 * per name — a tool set built by spreading the agent's tools and the directive tools could hold two.
 */
export function toolDefinitionProblems(names: readonly unknown[], provider: "openai" | "anthropic"): string[] {
  const pattern = provider === "openai" ? OPENAI_TOOL_NAME : ANTHROPIC_TOOL_NAME;
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [i, name] of names.entries()) {
    if (typeof name !== "string" || !pattern.test(name)) problems.push(`tools[${i}]: name ${JSON.stringify(name)} does not match ${pattern}`);
    else if (provider === "anthropic" && seen.has(name)) problems.push(`tools[${i}]: Tool names must be unique (${name})`);
    else seen.add(name);
  }
  return problems;
}

/**
 * Every string in a request body is well-formed UTF-16 (finding 25.9): a lone surrogate cannot be encoded
 * as UTF-8, and the API answers 400 ("no low surrogate in string").
 */
export function wellFormedProblems(value: unknown, where = "body"): string[] {
  if (typeof value === "string") return value.isWellFormed() ? [] : [`${where}: lone surrogate in ${JSON.stringify(value.slice(0, 80))}`];
  if (Array.isArray(value)) return value.flatMap((v, i) => wellFormedProblems(v, `${where}[${i}]`));
  if (typeof value === "object" && value !== null) {
    // Keys too: a tool call's parsed `input` is sent with its keys as they are.
    return Object.entries(value).flatMap(([k, v]) => [
      ...(k.isWellFormed() ? [] : [`${where}: lone surrogate in the key ${JSON.stringify(k.slice(0, 80))}`]),
      ...wellFormedProblems(v, `${where}.${k.toWellFormed()}`),
    ]);
  }
  return [];
}

/**
 * A request body the SDK can send: `JSON.stringify` writes it (an `input` nested 10,000 levels deep made it
 * throw, so every later request failed). Checked first: the other rules walk the body too.
 */
export function serialisableProblems(value: unknown, where = "body"): string[] {
  try {
    JSON.stringify(value);
    return [];
  } catch (err) {
    return [`${where}: JSON.stringify fails (${err instanceof Error ? err.message : String(err)})`];
  }
}

/** AI SDK 7: `standardizePrompt` (no system messages), `modelMessageSchema`, and the tool-result check of `convertToLanguageModelPrompt`. */
export async function aiSDKProblems(prompt: { instructions?: string; messages: unknown[] }): Promise<string[]> {
  const problems: string[] = serialisableProblems(prompt, "prompt");
  if (problems.length > 0) return problems;
  for (const [i, m] of prompt.messages.entries()) {
    const r = modelMessageSchema.safeParse(m);
    if (!r.success) problems.push(`messages[${i}]: ${r.error.message.slice(0, 200)}`);
  }
  if (problems.length > 0) return problems;
  try {
    const messages = prompt.messages as ModelMessage[];
    const standard = await standardizePrompt(prompt.instructions === undefined ? { messages } : { instructions: prompt.instructions, messages });
    await convertToLanguageModelPrompt({ prompt: standard, supportedUrls: {}, download: undefined });
  } catch (err) {
    problems.push(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  }
  return problems;
}

interface ChatMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: Array<{ id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } }>;
  tool_call_id?: unknown;
}

/**
 * OpenAI Chat Completions: an assistant message with `tool_calls` is followed at once by one `tool`
 * message per call id (and nothing else until all are answered); a `tool` message answers such a call;
 * ids are unique in their message and at most 40 characters; `content` is null only beside `tool_calls`.
 */
export function openAIChatProblems(messages: readonly ChatMessage[]): string[] {
  const problems: string[] = serialisableProblems(messages, "messages");
  if (problems.length > 0) return problems;
  let pending = new Set<string>();
  for (const [i, m] of messages.entries()) {
    const where = `messages[${i}]`;
    if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string" || !pending.delete(m.tool_call_id)) problems.push(`${where}: tool message answers no pending call (${String(m.tool_call_id)})`);
      if (typeof m.content !== "string") problems.push(`${where}: tool content must be a string`);
      continue;
    }
    if (pending.size > 0) problems.push(`${where}: ${String(m.role)} message before the results of ${[...pending].join(", ")}`);
    pending = new Set();
    if (!["system", "developer", "user", "assistant"].includes(String(m.role))) problems.push(`${where}: unknown role ${String(m.role)}`);
    if (m.role === "assistant" && m.tool_calls !== undefined) {
      if (!Array.isArray(m.tool_calls) || m.tool_calls.length === 0) problems.push(`${where}: empty tool_calls`);
      for (const c of m.tool_calls ?? []) {
        if (typeof c.id !== "string" || c.id.length === 0 || c.id.length > OPENAI_ID_MAX) problems.push(`${where}: bad tool call id ${String(c.id)}`);
        else if (pending.has(c.id)) problems.push(`${where}: duplicate tool call id ${c.id}`);
        else pending.add(c.id);
        if (c.type !== "function" || typeof c.function?.name !== "string" || typeof c.function.arguments !== "string") problems.push(`${where}: malformed tool call`);
        else if (!OPENAI_TOOL_NAME.test(c.function.name)) problems.push(`${where}: tool call name ${JSON.stringify(c.function.name)} does not match ${OPENAI_TOOL_NAME}`);
      }
    } else if (typeof m.content !== "string") {
      problems.push(`${where}: content must be a string without tool_calls`);
    }
  }
  if (pending.size > 0) problems.push(`calls without results at the end: ${[...pending].join(", ")}`);
  problems.push(...wellFormedProblems(messages, "messages"));
  return problems;
}

interface ResponsesItem {
  type?: unknown;
  role?: unknown;
  content?: unknown;
  call_id?: unknown;
  name?: unknown;
  arguments?: unknown;
  output?: unknown;
}

/**
 * OpenAI Responses: every `function_call_output` follows a `function_call` with its `call_id`, every
 * `function_call` has its output ("No tool output found for function call"), call ids are unique.
 */
export function openAIResponsesProblems(input: readonly ResponsesItem[]): string[] {
  const problems: string[] = serialisableProblems(input, "input");
  if (problems.length > 0) return problems;
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const [i, item] of input.entries()) {
    const where = `input[${i}]`;
    const type = item.type ?? "message";
    if (type === "function_call") {
      if (typeof item.call_id !== "string" || item.call_id.length === 0) problems.push(`${where}: function_call without call_id`);
      else if (calls.has(item.call_id)) problems.push(`${where}: duplicate call_id ${item.call_id}`);
      else calls.add(item.call_id);
      if (typeof item.name !== "string" || typeof item.arguments !== "string") problems.push(`${where}: malformed function_call`);
      else if (!OPENAI_TOOL_NAME.test(item.name)) problems.push(`${where}: function_call name ${JSON.stringify(item.name)} does not match ${OPENAI_TOOL_NAME}`);
    } else if (type === "function_call_output") {
      if (typeof item.call_id !== "string" || !calls.has(item.call_id)) problems.push(`${where}: No tool call found for function call output with call_id ${String(item.call_id)}`);
      else if (answered.has(item.call_id)) problems.push(`${where}: second output for ${item.call_id}`);
      else answered.add(item.call_id);
      if (typeof item.output !== "string") problems.push(`${where}: output must be a string`);
    } else if (type === "message") {
      if (!["system", "developer", "user", "assistant"].includes(String(item.role))) problems.push(`${where}: unknown role ${String(item.role)}`);
      if (typeof item.content !== "string" && !Array.isArray(item.content)) problems.push(`${where}: message without content`);
    } else {
      problems.push(`${where}: unexpected item type ${String(type)}`);
    }
  }
  for (const id of calls) if (!answered.has(id)) problems.push(`No tool output found for function call ${id}`);
  problems.push(...wellFormedProblems(input, "input"));
  return problems;
}

interface AnthropicBlockLike {
  type?: unknown;
  text?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
  is_error?: unknown;
}

/**
 * Anthropic Messages: the first message is the user's (Bedrock and Vertex refuse others); roles alternate; content is never empty and text is never blank; tool_use ids are
 * unique and match `^[a-zA-Z0-9_-]+$`, names match `^[a-zA-Z0-9_-]{1,128}$`, inputs are objects; the message after one with `tool_use` blocks
 * is a user message that opens with one `tool_result` per call; a `tool_result` answers only those; a
 * final assistant message does not end with whitespace; every string is well-formed.
 */
export function anthropicProblems(body: { system?: unknown; messages: ReadonlyArray<{ role?: unknown; content?: unknown }> }): string[] {
  const problems: string[] = serialisableProblems(body, "body");
  if (problems.length > 0) return problems;
  const ids = new Set<string>();
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system)) problems.push("system must be a string or blocks");
  if (typeof body.system === "string" && BLANK.test(body.system)) problems.push("system: text content blocks must contain non-whitespace text");
  let expected: string[] = [];
  for (const [i, m] of body.messages.entries()) {
    const where = `messages[${i}]`;
    if (m.role !== "user" && m.role !== "assistant") problems.push(`${where}: unknown role ${String(m.role)}`);
    if (i > 0 && body.messages[i - 1]!.role === m.role) problems.push(`${where}: two ${String(m.role)} messages in a row`);
    if (i === 0 && m.role !== "user") problems.push(`${where}: first message must use the "user" role`);
    const blocks: AnthropicBlockLike[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? (m.content as AnthropicBlockLike[]) : [];
    if (blocks.length === 0) problems.push(`${where}: empty content`);
    // The results of the previous message's calls open this message.
    const leading = blocks.slice(0, expected.length);
    if (expected.length > 0) {
      if (m.role !== "user") problems.push(`${where}: tool_use blocks not followed by a user message`);
      const got = leading.filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id));
      if (got.length !== expected.length || got.some((id) => !expected.includes(id))) {
        problems.push(`${where}: tool_use ids found without tool_result blocks immediately after: ${expected.join(", ")}`);
      }
    }
    const calls: string[] = [];
    for (const [j, b] of blocks.entries()) {
      const at = `${where}.content[${j}]`;
      if (b.type === "text") {
        if (typeof b.text !== "string" || BLANK.test(b.text)) problems.push(`${at}: text content blocks must contain non-whitespace text`);
      } else if (b.type === "tool_use") {
        if (m.role !== "assistant") problems.push(`${at}: tool_use in a user message`);
        if (typeof b.id !== "string" || !ANTHROPIC_ID.test(b.id)) problems.push(`${at}: tool_use id ${String(b.id)} does not match ${ANTHROPIC_ID}`);
        else if (ids.has(b.id)) problems.push(`${at}: tool_use ids must be unique (${b.id})`);
        else ids.add(b.id);
        if (typeof b.input !== "object" || b.input === null || Array.isArray(b.input)) problems.push(`${at}: tool_use input must be an object`);
        if (typeof b.name !== "string" || !ANTHROPIC_TOOL_NAME.test(b.name)) problems.push(`${at}: tool_use name ${JSON.stringify(b.name)} does not match ${ANTHROPIC_TOOL_NAME}`);
        if (typeof b.id === "string") calls.push(b.id);
      } else if (b.type === "tool_result") {
        if (j >= expected.length) problems.push(`${at}: unexpected tool_result block (no tool_use right before, or not at the start)`);
        if (typeof b.content !== "string" && !Array.isArray(b.content)) problems.push(`${at}: tool_result content must be a string or blocks`);
        if (b.is_error !== undefined && typeof b.is_error !== "boolean") problems.push(`${at}: is_error must be a boolean`);
      } else {
        problems.push(`${at}: unexpected block type ${String(b.type)}`);
      }
    }
    expected = calls;
  }
  if (expected.length > 0) problems.push(`tool_use without tool_result at the end: ${expected.join(", ")}`);
  // The last turn may be the model's (a prefill); then its content must not end with whitespace.
  const final = body.messages[body.messages.length - 1];
  if (final?.role === "assistant") {
    const blocks = typeof final.content === "string" ? [{ type: "text", text: final.content }] : Array.isArray(final.content) ? (final.content as AnthropicBlockLike[]) : [];
    const last = blocks[blocks.length - 1];
    if (last?.type === "text" && typeof last.text === "string" && TRAILING_SPACE.test(last.text)) {
      problems.push(`messages[${body.messages.length - 1}]: final assistant content cannot end with trailing whitespace`);
    }
  }
  problems.push(...wellFormedProblems(body, "body"));
  return problems;
}
