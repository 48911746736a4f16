/**
 * A multi-step agent on the Vercel AI SDK 7 (`generateText` with its mock language model standing in for
 * a provider), wired to pruneguard with the ready tools and the transcript:
 *
 *   tools: aiSDKTools(win, directiveTools(), { agentTools: ownTools }), prepareStep: transcript.aiSDKPrepareStep()
 *
 * The scripted model reads what it is sent (span headers, index lines) and, over five steps, calls its own
 * tools, then prunes a tool result with a digest (its call goes with it: a group), asks to drop an
 * unbacked note (rejected), drops it accepting the loss (lossy), sends a malformed prune (invalid, and
 * audited), and recalls three things (found, pruned-unrecoverable, unknown) before it answers.
 *
 * Run: `node dist/examples/ai-sdk-loop.js`. Output is deterministic.
 */
import { pathToFileURL } from "node:url";
import { generateText, isStepCount, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { aiSDKTools, ContextWindow, directiveTools, ManualClock, MemoryStore, pruneguardRepairToolCall, toAISDK, Transcript } from "../src/index.js";

const LOG = [
  "2026-11-13T09:02:11Z deploy 8812 started",
  ...Array.from({ length: 30 }, (_, i) => `2026-11-13T09:02:${String(12 + i).padStart(2, "0")}Z health check ${i} ok`),
  "2026-11-13T09:02:44Z upstream answered HTTP/1.1 502 Bad Gateway, X-Request-Id: req_7f3a9c2e41",
].join("\n");

type Call = { toolCallId: string; toolName: string; input: string };
type Script = (prompt: string) => { calls: Call[]; text?: string };

/** The model's five steps, each a function of the prompt it is sent. */
const script: Script[] = [
  () => ({ calls: [{ toolCallId: "call_1", toolName: "readDeployLog", input: '{"deploy":8812}' }] }),
  (prompt) => {
    const log = /\[(span_\d+)\]\\n│ 2026-11-13T09:02:11Z deploy 8812/.exec(prompt)?.[1] ?? "span_0";
    const note = /\[(span_\d+)\]\\n│ plan: read the log/.exec(prompt)?.[1] ?? "span_0";
    return {
      calls: [
        { toolCallId: "call_2", toolName: "prune", input: JSON.stringify({ span_id: log, mode: "summarize", digest: "deploy 8812 failed: upstream 502", accept_lossy: null }) },
        { toolCallId: "call_3", toolName: "prune", input: JSON.stringify({ span_id: note, mode: "drop" }) },
        { toolCallId: "call_4", toolName: "prune", input: JSON.stringify({ span_id: note, mode: "drop", accept_lossy: true }) },
        { toolCallId: "call_5", toolName: "prune", input: '{"span_id":"span_1","mode":"drop","accept_lossy":"true"}' },
        { toolCallId: "call_6", toolName: "prune", input: "{span_id: span_1" },
        // The prunes are decided at once and applied at a compaction point; this model wants the room now.
        { toolCallId: "call_6c", toolName: "compact", input: "{}" },
      ],
    };
  },
  (prompt) => {
    const handle = /(span_\d+) summary, recall (#\d+)/.exec(prompt)?.[2] ?? "#0";
    const tombstone = /(span_\d+) pruned, unrecoverable/.exec(prompt)?.[1] ?? "span_0";
    return {
      calls: [
        { toolCallId: "call_7", toolName: "recall", input: JSON.stringify({ span_id: handle }) },
        { toolCallId: "call_8", toolName: "recall", input: JSON.stringify({ span_id: tombstone }) },
        { toolCallId: "call_9", toolName: "recall", input: JSON.stringify({ span_id: "span_99" }) },
      ],
    };
  },
  (prompt) => {
    const id = /X-Request-Id: (req_[a-z0-9]+)/.exec(prompt)?.[1] ?? "unknown";
    return { calls: [], text: `Deploy 8812 failed on an upstream 502; request id ${id}.` };
  },
];

/** The window's kinds in a provider loop: system and turns, a note, tool calls and their results. */
export const LOOP_KINDS = {
  system: { store: null, modes: ["drop"], lossy: "forbid" },
  turn: { store: "log", modes: ["drop", "summarize"], lossy: "forbid" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
  toolCall: { store: "log", modes: ["drop"], lossy: "with-flag" },
  toolResult: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
} as const;

const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
};

/** Runs the loop; returns what it printed. `prompts` receives every prompt the model was sent. */
export async function aiSDKLoop(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`), prompts: unknown[] = []) {
  const lines: string[] = [];
  const say = (l: string) => (lines.push(l), write(l));
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  const log = new MemoryStore({ name: "log", clock });
  const win = new ContextWindow({
    session: "ai-sdk-loop", clock, stores: { log },
    kinds: LOOP_KINDS,
  });
  // The kind mapping, given once.
  const transcript = new Transcript(win, { system: "system", user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
  await transcript.system("You are the deploy assistant. Prune what you no longer need.");
  await win.append({ kind: "note", text: "plan: read the log, then answer", message: { role: "assistant" } });
  await transcript.user("Why did deploy 8812 fail? I need the request id.");

  let step = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const turn = script[Math.min(step++, script.length - 1)]!(JSON.stringify(options.prompt));
      return {
        content: [
          ...(turn.text ? [{ type: "text" as const, text: turn.text }] : []),
          ...turn.calls.map((c) => ({ type: "tool-call" as const, ...c })),
        ],
        finishReason: { unified: turn.calls.length > 0 ? "tool-calls" : "stop", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });

  const result = await generateText({
    model,
    ...toAISDK(win), // { instructions, messages }: system spans never inside messages
    // The agent's own tools and the directive tools, together: a directive tool named like one of ours would throw.
    tools: aiSDKTools(win, directiveTools(), {
      agentTools: { readDeployLog: tool({ description: "Read a deploy's log", inputSchema: z.object({ deploy: z.number() }), execute: async () => LOG }) },
    }),
    repairToolCall: pruneguardRepairToolCall(),
    prepareStep: transcript.aiSDKPrepareStep(),
    stopWhen: isStepCount(6),
  });
  await transcript.appendAISDKSteps(result.steps);

  for (const s of result.steps) {
    for (const part of s.content) {
      if (part.type === "tool-result" && part.toolName !== "readDeployLog") {
        const out = part.output as { status: string; text: string };
        // A line that starts with its status (`compacted: …`) is not prefixed with it again.
        const first = out.text.split("\n")[0] ?? "";
        say(`step ${s.stepNumber} ${part.toolName} → ${first.startsWith(`${out.status}:`) ? first : `${out.status}: ${first}`}`);
      }
    }
  }
  say(`answer: ${result.text}`);
  const audit = await win.auditLog();
  // One record a line would be long; the audit is listed in rows of five.
  const records = audit.map((r) => `${r.op}:${r.status}`);
  for (let i = 0; i < records.length; i += 5) say(`${i === 0 ? "audit:" : "      "} ${records.slice(i, i + 5).join(", ")}`);
  return { lines, win, result };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  aiSDKLoop().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
