/**
 * OpenAI's compaction through pruneguard (Responses API): automatic compaction (`context_management` on
 * `responses.create`) and the explicit `responses.compact` call, each allowed only after the window's plan
 * says every span the API may compact is one the policy lets go (docs/provider-compaction.md). The compaction
 * item that comes back is recorded by `Transcript.appendOpenAIResponse` / `appendOpenAICompaction` and sent
 * back verbatim by `toOpenAIResponses`.
 */
import { ProviderCompactionError } from "../../window/provider-compaction.js";
import type { RenderSource } from "../conversation.js";
import { describeKept, refuseUnlessAllowed, type CompactionWindow } from "../compaction-checks.js";
import { toOpenAIResponses, type OpenAIResponsesItem } from "./openai-messages.js";

/** Options of `openAICompaction`. */
export interface OpenAICompactionOptions {
  /** Tokens from which the API compacts (`compact_threshold`); default: the API's. */
  readonly compactThreshold?: number;
}

/**
 * `context_management` for `responses.create` (automatic compaction). The API cannot pause after compacting,
 * so the model answers from the compacted context at once: refused with `ProviderCompactionError` while the
 * policy keeps any span the compaction would cover, or the window holds system text (sent as input messages,
 * which the compaction covers too) — use `openAICompactRequest` between turns instead: nothing is answered from
 * it before pruneguard records it and says those spans again — and when the policy forbids provider compaction.
 */
export async function openAICompaction(
  window: CompactionWindow, options: OpenAICompactionOptions = {},
): Promise<{ context_management: Array<{ type: "compaction"; compact_threshold?: number }> }> {
  const plan = await window.providerCompactionPlan();
  refuseUnlessAllowed(plan);
  if (plan.kept.length > 0) {
    throw new ProviderCompactionError(
      `openAICompaction: automatic compaction is refused: the policy keeps ${describeKept(plan)}, and the API would answer from a compaction that covered them; compact between turns with openAICompactRequest instead`,
      plan,
    );
  }
  if (plan.system.length > 0) {
    // toOpenAIResponses sends system text as input messages, and the compaction covers every item before it.
    const ids = plan.system.slice(0, 3).join(", ") + (plan.system.length > 3 ? ` and ${plan.system.length - 3} more` : "");
    throw new ProviderCompactionError(
      `openAICompaction: automatic compaction is refused: the window's system text (${ids}) goes in the request's input, which the API's compaction covers, and the API would answer without it; pass the system prompt as the request's instructions instead of a window span, or compact between turns with openAICompactRequest`,
      plan,
    );
  }
  const t = options.compactThreshold;
  if (t !== undefined && !(Number.isInteger(t) && t > 0)) throw new TypeError(`openAICompaction: compactThreshold must be a positive whole number of tokens, got ${String(t)}`);
  return { context_management: [{ type: "compaction", ...(t !== undefined ? { compact_threshold: t } : {}) }] };
}

/**
 * The `input` of `client.responses.compact({ model, ...await openAICompactRequest(win) })`, after checking the
 * window (refused when the policy forbids provider compaction). Pass what it returns to
 * `Transcript.appendOpenAICompaction`: spans the policy keeps are said again after the compaction item.
 */
export async function openAICompactRequest(window: CompactionWindow & RenderSource): Promise<{ input: OpenAIResponsesItem[] }> {
  refuseUnlessAllowed(await window.providerCompactionPlan());
  return { input: toOpenAIResponses(window) };
}
