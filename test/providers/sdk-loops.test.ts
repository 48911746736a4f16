/**
 * Real clients, no network: the OpenAI SDK (Chat Completions and Responses) and the Anthropic SDK send
 * their requests to a local fake provider that checks every body against the provider's rules. Each loop
 * is the README's: render the window, send it with the ready tools (strict), append the response, let
 * the transcript run the calls. The scripted model prunes (reversible, with strict mode's nulls; a
 * group), is refused, sends an invalid prune, recalls, and answers from what it recalled.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  anthropicTools, ContextWindow, directiveTools, ManualClock, MemoryStore, openAIChatTools, openAIResponsesTools,
  toAnthropic, toOpenAI, toOpenAIResponses, Transcript, type ModelToolCall,
} from "../../src/index.js";
import { LOOP_KINDS } from "../../examples/ai-sdk-loop.js";
import { startFakeProvider, type FakeProvider, type ModelTurn } from "./fake-server.js";
import { immediate } from "../window/immediate.js";

const LOG = [
  "2026-11-13T09:02:11Z deploy 8812 started",
  ...Array.from({ length: 20 }, (_, i) => `2026-11-13T09:02:${String(12 + i).padStart(2, "0")}Z health check ${i} ok`),
  "2026-11-13T09:02:44Z upstream answered 502, X-Request-Id: req_7f3a9c2e41",
].join("\n");

/** The model, the same for every provider: a function of the conversation it is sent. */
function model(conversation: string, turn: number): ModelTurn {
  const call = (name: string, args: unknown) => ({ name, arguments: typeof args === "string" ? args : JSON.stringify(args) });
  switch (turn) {
    case 0:
      return { calls: [call("readDeployLog", { deploy: 8812 })] };
    case 1: {
      const log = /\[(span_\d+)\]\\n│ 2026-11-13T09:02:11Z deploy 8812/.exec(conversation)?.[1] ?? "span_0";
      const note = /\[(span_\d+)\]\\n│ plan: read the log/.exec(conversation)?.[1] ?? "span_0";
      return {
        calls: [
          // Strict mode: every property sent, the unused ones as null.
          call("prune", { span_id: log, mode: "summarize", digest: "deploy 8812 failed: upstream 502", accept_lossy: null }),
          call("prune", { span_id: note, mode: "drop", digest: null, accept_lossy: null }),
          call("prune", '{"span_id":"span_1","mode":"drop","digest":null,"accept_lossy":"true"}'),
        ],
      };
    }
    case 2:
      return { calls: [call("recall", { span_id: /summary, recall (#\d+)/.exec(conversation)?.[1] ?? "#0" })] };
    default:
      return { calls: [], text: `Upstream 502; request id ${/X-Request-Id: (req_[a-z0-9]+)/.exec(conversation)?.[1] ?? "unknown"}.` };
  }
}

const readLogSchema = { type: "object" as const, properties: { deploy: { type: "number" } }, required: ["deploy"], additionalProperties: false as const };
const runOwnTool = (call: ModelToolCall) => (call.name === "readDeployLog" ? LOG : { text: `unknown tool ${call.name}`, isError: true });

async function setup() {
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  const win = new ContextWindow(immediate({
    session: "sdk-loop", clock, stores: { log: new MemoryStore({ name: "log", clock }) },
    kinds: LOOP_KINDS,
  }));
  const t = new Transcript(win, { system: "system", user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
  await t.system("You are the deploy assistant.");
  await win.append({ kind: "note", text: "plan: read the log, then answer", message: { role: "assistant" } });
  await t.user("Why did deploy 8812 fail? I need the request id.");
  return { win, t };
}

async function expectRun(server: FakeProvider, win: ContextWindow<string>, answer: string | undefined) {
  expect(server.problems).toEqual([]);
  expect(server.requests).toHaveLength(4);
  expect(answer).toBe("Upstream 502; request id req_7f3a9c2e41.");
  const audit = await win.auditLog();
  expect(audit.map((r) => `${r.op}:${r.status}`)).toEqual([
    "prune:reversible", "prune:reversible", "prune:rejected", "prune:invalid", "recall:found",
  ]);
  // The third request carried the digest and its handle, not the log.
  const third = JSON.stringify(server.requests[2]);
  expect(third).toMatch(/span_\d+ summary, recall #\d+/);
  expect(third).not.toContain("health check 7 ok");
  expect(JSON.stringify(server.requests[3])).toContain("health check 7 ok");
}

describe("real SDK clients against a provider that checks every request", () => {
  let server: FakeProvider;
  beforeEach(async () => {
    server = await startFakeProvider(model);
  });
  afterEach(async () => {
    await server.close();
  });

  it("OpenAI Chat Completions, strict tools", async () => {
    const { win, t } = await setup();
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const own = [{ type: "function" as const, function: { name: "readDeployLog", description: "Read a deploy's log", parameters: readLogSchema, strict: true } }];
    const tools = openAIChatTools(directiveTools(), { strict: true, agentTools: own });
    let answer: string | undefined;
    for (let i = 0; i < 6; i++) {
      const res = await client.chat.completions.create({ model: "gpt-test", messages: toOpenAI(win), tools });
      const calls = await t.appendOpenAIChat(res);
      if (calls.length === 0) {
        answer = res.choices[0]?.message.content ?? undefined;
        break;
      }
      await t.handleToolCalls(calls, runOwnTool);
    }
    await expectRun(server, win, answer);
  });

  it("OpenAI Responses, strict tools", async () => {
    const { win, t } = await setup();
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const own = [{ type: "function" as const, name: "readDeployLog", description: "Read a deploy's log", parameters: readLogSchema, strict: true }];
    const tools = openAIResponsesTools(directiveTools(), { strict: true, agentTools: own });
    let answer: string | undefined;
    for (let i = 0; i < 6; i++) {
      const res = await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(win), tools });
      const calls = await t.appendOpenAIResponse(res);
      if (calls.length === 0) {
        answer = res.output_text;
        break;
      }
      await t.handleToolCalls(calls, runOwnTool);
    }
    await expectRun(server, win, answer);
  });

  it("Anthropic Messages, strict tools, system apart, errors flagged", async () => {
    const { win, t } = await setup();
    const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 });
    const own = [{ name: "readDeployLog", description: "Read a deploy's log", input_schema: readLogSchema, strict: true }];
    const tools = anthropicTools(directiveTools(), { strict: true, agentTools: own });
    let answer: string | undefined;
    for (let i = 0; i < 6; i++) {
      const res = await client.messages.create({ model: "claude-test", max_tokens: 1024, ...toAnthropic(win), tools });
      const calls = await t.appendAnthropic(res);
      if (calls.length === 0) {
        answer = res.content.map((b) => (b.type === "text" ? b.text : "")).join("");
        break;
      }
      await t.handleToolCalls(calls, runOwnTool);
    }
    await expectRun(server, win, answer);
    // The invalid prune went back flagged as an error.
    const third = server.requests[2] as { system: string; messages: Array<{ content: Array<{ type: string; is_error?: boolean; content?: string }> }> };
    expect(third.system).toContain("You are the deploy assistant.");
    const errors = third.messages.flatMap((m) => m.content.filter((b) => b.type === "tool_result" && b.is_error === true));
    expect(errors.map((b) => b.content)).toEqual([expect.stringMatching(/^\[span_\d+\]\n│ directive ignored: accept_lossy/)]);
  });

  it("the fake provider refuses what the real one would: a root oneOf schema, an orphan tool result, two tools of one name", async () => {
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const bad = { type: "function" as const, function: { name: "prune", parameters: { oneOf: [{ type: "object" }] } } };
    await expect(client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "q" }], tools: [bad] })).rejects.toThrow(/Root schema must have type/);
    await expect(client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "q" }, { role: "tool", tool_call_id: "c1", content: "r" }] })).rejects.toThrow(/answers no pending call/);
    // Finding 25.8: spreading an agent's own `search` beside the directive tools sends two tools of one name.
    const anthropic = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 });
    const own = { name: "search", description: "web search", input_schema: readLogSchema };
    await expect(anthropic.messages.create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "q" }], tools: [own, ...anthropicTools(directiveTools())] }))
      .rejects.toThrow(/Tool names must be unique \(search\)/);
    expect(() => anthropicTools(directiveTools(), { agentTools: [own] })).toThrow(/your tool "search" and the directive tool "search"/);
  });
});
