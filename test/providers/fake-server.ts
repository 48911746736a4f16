/**
 * A local stand-in for the OpenAI and Anthropic APIs (node:http on 127.0.0.1, a port the OS picks): real
 * SDK clients send it real requests, it checks every request body against the provider's rules — the
 * conversation (`rules.ts`), the tool definitions (names in the provider's pattern, unique for Anthropic;
 * a root object schema, closed; strict ones unchanged by the SDK's own strict-schema helper) — and answers
 * 400 with the problems, as the provider would.
 * Otherwise it answers with the scripted model's next turn.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import type { JSONSchema } from "openai/lib/jsonschema";
import { toStrictJsonSchema } from "openai/lib/transform";
import { isDeepStrictEqual } from "node:util";
import { anthropicProblems, openAIChatProblems, openAIResponsesProblems, toolDefinitionProblems } from "./rules.js";

/** What the scripted model does next: calls to make (name and arguments as JSON text), or text to say. */
export interface ModelTurn {
  readonly calls: ReadonlyArray<{ readonly name: string; readonly arguments: string }>;
  readonly text?: string;
}

/** The model: a function of the request's conversation as JSON text, and of how many turns came before. */
export type ScriptedModel = (conversation: string, turn: number) => ModelTurn;

export interface FakeProvider {
  readonly url: string;
  /** Every request body received, in order. */
  readonly requests: unknown[];
  /** Every problem found, with the request's index; a request with problems was answered 400. */
  readonly problems: string[];
  close(): Promise<void>;
}

type Json = { [key: string]: unknown };

function schemaProblems(where: string, schema: unknown, strict: "openai" | "anthropic" | null): string[] {
  const s = schema as Json | undefined;
  const out: string[] = [];
  if (typeof s !== "object" || s === null) return [`${where}: no schema`];
  if (s["type"] !== "object") out.push(`${where}: Root schema must have type: 'object'`);
  if (s["additionalProperties"] !== false) out.push(`${where}: additionalProperties must be false`);
  if ("oneOf" in s || "anyOf" in s || "allOf" in s) out.push(`${where}: root must not be a union`);
  try {
    if (strict === "openai" && !isDeepStrictEqual(toStrictJsonSchema(s as JSONSchema), s)) out.push(`${where}: not a strict schema (OpenAI's helper changes it)`);
    if (strict === "anthropic" && !isDeepStrictEqual(sortKeys(transformJSONSchema(s)), sortKeys(s))) out.push(`${where}: not a strict schema (Anthropic's helper changes it)`);
  } catch (err) {
    out.push(`${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return out;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v !== "object" || v === null) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Json)[k])]));
}

function openAIChat(body: Json, turn: ModelTurn, n: number): { problems: string[]; response: Json } {
  const problems = [...openAIChatProblems((body["messages"] ?? []) as never[])];
  problems.push(...toolDefinitionProblems(((body["tools"] ?? []) as Json[]).map((t) => (t["function"] as Json | undefined)?.["name"]), "openai"));
  for (const [i, t] of ((body["tools"] ?? []) as Json[]).entries()) {
    const f = t["function"] as Json;
    problems.push(...schemaProblems(`tools[${i}] ${String(f["name"])}`, f["parameters"], f["strict"] === true ? "openai" : null));
  }
  const calls = turn.calls.map((c, i) => ({ id: `call_${n}_${i}`, type: "function", function: { name: c.name, arguments: c.arguments } }));
  return {
    problems,
    response: {
      id: `chatcmpl-${n}`, object: "chat.completion", created: 1_763_024_400, model: String(body["model"]),
      choices: [{
        index: 0, logprobs: null, finish_reason: calls.length > 0 ? "tool_calls" : "stop",
        message: { role: "assistant", content: turn.text ?? null, refusal: null, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
      }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    },
  };
}

function openAIResponses(body: Json, turn: ModelTurn, n: number): { problems: string[]; response: Json } {
  const problems = [...openAIResponsesProblems((body["input"] ?? []) as never[])];
  problems.push(...toolDefinitionProblems(((body["tools"] ?? []) as Json[]).map((t) => t["name"]), "openai"));
  for (const [i, t] of ((body["tools"] ?? []) as Json[]).entries()) {
    problems.push(...schemaProblems(`tools[${i}] ${String(t["name"])}`, t["parameters"], t["strict"] === true ? "openai" : null));
  }
  const output: Json[] = [
    ...(turn.text ? [{ type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] }] : []),
    ...turn.calls.map((c, i) => ({ type: "function_call", id: `fc_${n}_${i}`, call_id: `call_${n}_${i}`, name: c.name, arguments: c.arguments, status: "completed" })),
  ];
  return {
    problems,
    response: {
      id: `resp_${n}`, object: "response", created_at: 1_763_024_400, status: "completed", model: String(body["model"]), output,
      parallel_tool_calls: true, tool_choice: "auto", tools: body["tools"] ?? [], temperature: null, top_p: null, error: null,
      incomplete_details: null, instructions: null, metadata: {},
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    },
  };
}

function anthropic(body: Json, turn: ModelTurn, n: number): { problems: string[]; response: Json } {
  const problems = [...anthropicProblems({ system: body["system"], messages: (body["messages"] ?? []) as never[] })];
  problems.push(...toolDefinitionProblems(((body["tools"] ?? []) as Json[]).map((t) => t["name"]), "anthropic"));
  for (const [i, t] of ((body["tools"] ?? []) as Json[]).entries()) {
    problems.push(...schemaProblems(`tools[${i}] ${String(t["name"])}`, t["input_schema"], t["strict"] === true ? "anthropic" : null));
  }
  const content: Json[] = [
    ...(turn.text ? [{ type: "text", text: turn.text }] : []),
    ...turn.calls.map((c, i) => ({ type: "tool_use", id: `toolu_${n}_${i}`, name: c.name, input: JSON.parse(c.arguments) as unknown })),
  ];
  return {
    problems,
    response: {
      id: `msg_${n}`, type: "message", role: "assistant", model: String(body["model"]), content,
      stop_reason: turn.calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the fake provider; `model` scripts its answers. */
export async function startFakeProvider(model: ScriptedModel): Promise<FakeProvider> {
  const requests: unknown[] = [];
  const problems: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const body = JSON.parse(text) as Json;
      const n = requests.length;
      requests.push(body);
      const conversation = JSON.stringify(body["messages"] ?? body["input"] ?? []);
      const turn = model(conversation, n);
      const route = req.url ?? "";
      const handled = route.endsWith("/chat/completions") ? openAIChat(body, turn, n)
        : route.endsWith("/responses") ? openAIResponses(body, turn, n)
          : route.endsWith("/messages") ? anthropic(body, turn, n)
            : { problems: [`no route ${route}`], response: {} };
      res.setHeader("content-type", "application/json");
      if (handled.problems.length > 0) {
        problems.push(...handled.problems.map((p) => `request ${n}: ${p}`));
        res.statusCode = 400;
        res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: handled.problems.join("; ") } }));
        return;
      }
      res.end(JSON.stringify(handled.response));
    })().catch((err: unknown) => {
      problems.push(`server: ${String(err)}`);
      res.statusCode = 500;
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    problems,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
