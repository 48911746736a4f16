/**
 * The Vercel AI SDK: `generateText({ model, ...toAISDK(win), tools: aiSDKTools(win, tools, { agentTools }) })`,
 * and the steps of its loop read back for a `Transcript` (`appendAISDKSteps`, `aiSDKPrepareStep`).
 */
import type { DirectiveTool } from "../../tools/schemas.js";
import { arrayAt, jsonText, objectAt, stringAt, type Provider, type ResponsePart } from "../provider.js";
import { toAISDK } from "./ai-sdk-messages.js";
import { aiSDKTools, type AISDKToolsOptions, type ToolCallHandler } from "./ai-sdk-tools.js";

/** A step of an AI SDK run (`result.steps[i]`), as far as the transcript reads it. */
export interface AISDKStep {
  readonly callId?: string;
  readonly stepNumber: number;
  readonly content: ReadonlyArray<{
    readonly type: string;
    readonly text?: string;
    readonly toolCallId?: string;
    readonly toolName?: string;
    readonly input?: unknown;
    readonly output?: unknown;
    readonly error?: unknown;
    readonly providerExecuted?: boolean;
  }>;
}

/**
 * A step's text, tool calls and their results (the directive tools' results as the window's text; tool
 * errors as errors), in order. Read whole, before any of it is appended: a field of the wrong type is an
 * `UnreadableResponse` naming it.
 */
function readStep(step: AISDKStep): ResponsePart[] {
  const parts: ResponsePart[] = [];
  for (const [i, entry] of arrayAt(objectAt(step, "the step").content, "content").entries()) {
    const path = `content[${i}]`;
    const part = objectAt(entry, path);
    if (part.type === "text") {
      parts.push({ type: "text", text: stringAt(part.text, `${path}.text`) });
      continue;
    }
    if ((part.type !== "tool-call" && part.type !== "tool-result" && part.type !== "tool-error") || part.providerExecuted) continue;
    const id = stringAt(part.toolCallId, `${path}.toolCallId`);
    const name = stringAt(part.toolName, `${path}.toolName`);
    if (part.type === "tool-call") parts.push({ type: "tool-call", call: { id, name, arguments: part.input ?? {} } });
    else if (part.type === "tool-result") parts.push({ type: "tool-result", id, name, ...aiSDKOutputText(part.output) });
    else parts.push({ type: "tool-error", id, name, error: part.error });
  }
  return parts;
}

/** A tool result's text as the model read it: a directive tool's line, text outputs, else JSON. */
function aiSDKOutputText(output: unknown): { text: string; isError: boolean } {
  if (typeof output === "string") return { text: output, isError: false };
  if (typeof output === "object" && output !== null) {
    const o = output as { text?: unknown; isError?: unknown; status?: unknown };
    // What the directive tools' `execute` returns.
    if (typeof o.text === "string" && typeof o.isError === "boolean" && typeof o.status === "string") return { text: o.text, isError: o.isError };
  }
  return { text: jsonText(output), isError: false };
}

/** The Vercel AI SDK; its tools are bound to the window their calls go to. */
export const aiSDK = {
  name: "ai-sdk",
  render: toAISDK,
  tools: <T extends { readonly [name: string]: unknown }>(tools: readonly DirectiveTool[], options: AISDKToolsOptions<T> & { readonly window: ToolCallHandler }) =>
    aiSDKTools(options.window, tools, options),
  read: readStep,
  // `prepareStep` is given every step so far, each time: a step is appended once, by its run and number.
  responseKey: (step: AISDKStep) => `${String(step.callId)}:${String(step.stepNumber)}`,
} as const satisfies Provider;
