/**
 * Tool definitions for models, generated from the directive schema: one tool per operation of the
 * directive union (`prune`, `recall`, and any operation added to it later), each with a root
 * `type: "object"` and `additionalProperties: false`, in three variants:
 *
 * - `inputSchema`: the zod schema as JSON Schema, minus `op` (the tool's name says it);
 * - `strict.openai`: OpenAI strict mode — every property required, optional ones nullable (the parser
 *   reads `null` as absent), only keywords strict mode supports;
 * - `strict.anthropic`: Anthropic strict tool use — optional properties stay optional (not nullable),
 *   keywords its grammar does not take (`pattern`, lengths) left out.
 *
 * The strict variants loosen nothing the runtime relies on: every call still goes through the window's
 * parser, which enforces the full schema (patterns, lengths, modes) and audits what it refuses.
 */
import { z } from "zod";
import { DEFAULT_LIMITS, directiveSchema, type Directive, type DirectiveLimits } from "../directive.js";
import { PRUNE_MODES, type PruneMode } from "../types.js";

/** A JSON Schema object, as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/**
 * The JSON Schema of a tool's input: an object with named properties and no others. Frozen at run time;
 * typed mutable so it is assignable to the SDKs' request types.
 */
export interface ToolInputSchema {
  [keyword: string]: unknown;
  type: "object";
  properties: { [name: string]: JsonSchema };
  required: string[];
  additionalProperties: false;
}

/** One directive operation as a tool. */
export interface DirectiveTool {
  /** The directive's `op` this tool carries (`prune`, `recall`, …). */
  readonly op: Directive["op"];
  /** The name the model calls it by: `op` unless renamed. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: ToolInputSchema;
  readonly strict: { readonly openai: ToolInputSchema; readonly anthropic: ToolInputSchema };
}

/** Options of `directiveTools`. */
export interface DirectiveToolsOptions {
  /** Tool names by operation, e.g. `{ prune: "context_prune" }`; default: the operation's name. */
  readonly names?: { readonly [op: string]: string };
  /** The prune modes to offer (generated guards pass their policy's); default: all. */
  readonly modes?: readonly PruneMode[];
  readonly limits?: DirectiveLimits;
}

/** Names both providers accept for a function tool. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The directive operations as tools, one per member of the directive union.
 *
 * When to use: to give a model the tools — pass the result to `openAIChatTools`, `openAIResponsesTools`,
 * `anthropicTools`, `aiSDKTools` and `handleToolCall`, so definitions and dispatch agree on the names.
 * Gotcha: throws `TypeError` on a name providers would refuse, or two operations given one name. A name
 * one of your own tools has is refused where the two sets meet (the builders' and the Transcript's
 * `agentTools`); rename ours here, e.g. `{ names: { search: "context_search" } }`.
 */
export function directiveTools(options: DirectiveToolsOptions = {}): readonly DirectiveTool[] {
  const schema = directiveSchema(options.limits ?? DEFAULT_LIMITS, options.modes ?? PRUNE_MODES);
  const ops: Directive["op"][] = schema.options.map((member) => member.shape.op.value);
  for (const op of Object.keys(options.names ?? {})) {
    if (!(ops as readonly string[]).includes(op)) throw new TypeError(`directiveTools: no operation ${op} to name (operations: ${ops.join(", ")})`);
  }
  const seen = new Set<string>();
  return Object.freeze(
    schema.options.map((member, i): DirectiveTool => {
      const op = ops[i]!;
      const name = options.names?.[op] ?? op;
      if (!TOOL_NAME.test(name)) throw new TypeError(`directiveTools: tool name ${JSON.stringify(name)} must match ${TOOL_NAME}`);
      if (seen.has(name)) throw new TypeError(`directiveTools: two operations are named ${name}`);
      seen.add(name);
      const json = z.toJSONSchema(member, { io: "input" }) as JsonSchema;
      const inputSchema = withoutOp(json);
      return Object.freeze({
        op,
        name,
        description: typeof json["description"] === "string" ? json["description"] : `The ${op} operation.`,
        inputSchema,
        strict: Object.freeze({ openai: deepFreeze(openAIStrict(inputSchema) as ToolInputSchema), anthropic: deepFreeze(anthropicStrict(inputSchema) as ToolInputSchema) }),
      });
    }),
  );
}

/** The member's schema without `op`, the dialect marker and the description (the tool carries it). */
function withoutOp(json: JsonSchema): ToolInputSchema {
  const { op: _op, ...properties } = json["properties"] as { [name: string]: JsonSchema };
  return deepFreeze({
    type: "object",
    properties,
    required: (json["required"] as string[]).filter((k) => k !== "op"),
    additionalProperties: false,
  });
}

/** Keywords OpenAI strict mode does not take on strings; the parser enforces them instead. */
const OPENAI_DROPPED = new Set(["$schema", "minLength", "maxLength"]);
/** Keywords Anthropic's strict grammar does not take (its SDK would move them into the description). */
const ANTHROPIC_DROPPED = new Set(["$schema", "minLength", "maxLength", "pattern"]);

/** OpenAI strict: every property required; one that was optional must accept `null`. */
function openAIStrict(schema: JsonSchema): JsonSchema {
  const out = pick(schema, OPENAI_DROPPED, openAIStrict);
  if (out["type"] === "object" && isRecord(out["properties"])) {
    const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as string[]) : []);
    const properties: { [name: string]: JsonSchema } = {};
    for (const [key, value] of Object.entries(out["properties"] as { [name: string]: JsonSchema })) {
      properties[key] = required.has(key) || acceptsNull(value) ? value : { anyOf: [value, { type: "null" }] };
    }
    out["properties"] = properties;
    out["required"] = Object.keys(properties);
    out["additionalProperties"] = false;
  }
  return out;
}

/**
 * Anthropic strict: unsupported keywords left out; a `type` beside `enum`/`const` is implied by the values;
 * optional properties stay optional and are not offered `null` (the model leaves them out instead).
 */
function anthropicStrict(schema: JsonSchema): JsonSchema {
  const out = pick(schema, ANTHROPIC_DROPPED, anthropicStrict);
  if ("enum" in out || "const" in out) delete out["type"];
  if (Array.isArray(out["type"])) {
    const types = (out["type"] as unknown[]).filter((t) => t !== "null");
    out["type"] = types.length === 1 ? types[0] : types;
  }
  if (Array.isArray(out["anyOf"])) out["anyOf"] = (out["anyOf"] as JsonSchema[]).filter((b) => b["type"] !== "null");
  // Branches that differed only by a dropped keyword are one branch now.
  if (Array.isArray(out["anyOf"])) {
    const branches = [...new Map((out["anyOf"] as JsonSchema[]).map((b) => [JSON.stringify(b), b])).values()];
    if (branches.length === 1) {
      delete out["anyOf"];
      return { ...branches[0], ...out };
    }
    out["anyOf"] = branches;
  }
  return out;
}

/** A copy without `dropped` keywords, with `recurse` applied to every subschema. */
function pick(schema: JsonSchema, dropped: ReadonlySet<string>, recurse: (s: JsonSchema) => JsonSchema): { [keyword: string]: unknown } {
  const out: { [keyword: string]: unknown } = {};
  for (const [key, value] of Object.entries(schema)) {
    if (dropped.has(key)) continue;
    if (key === "properties" && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, recurse(v as JsonSchema)]));
    } else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value)) {
      out[key] = value.map((v) => recurse(v as JsonSchema));
    } else if (key === "items" && isRecord(value)) {
      out[key] = recurse(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function acceptsNull(schema: JsonSchema): boolean {
  const type = schema["type"];
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true;
  return Array.isArray(schema["anyOf"]) && (schema["anyOf"] as JsonSchema[]).some(acceptsNull);
}

function isRecord(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
