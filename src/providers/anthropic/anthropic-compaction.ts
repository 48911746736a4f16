/**
 * Anthropic's server-side compaction (`compact_20260112`) through pruneguard: the request's
 * `context_management` and `betas`, built only after the window's plan says every span the API may compact is
 * one the policy lets go (docs/provider-compaction.md). What the API returns is recorded by
 * `Transcript.appendAnthropic` and sent back by `toAnthropicBeta`.
 *
 * `clear_tool_uses_20250919` is refused: it replaces tool results with a placeholder that carries no handle,
 * so the model cannot tell a cleared result from one that never existed. The window's own compaction points
 * clear the same results client-side, each with an index line that recalls it, at the same cache cost.
 */
import { ProviderCompactionError } from "../../window/provider-compaction.js";
import { describeKept, refuseUnlessAllowed, type CompactionWindow } from "../compaction-checks.js";

/** The beta the compaction edit needs (`client.beta.messages.create({ betas, ... })`). */
export const ANTHROPIC_COMPACTION_BETA = "compact-2026-01-12";

/** The compaction edit as the API takes it (`BetaCompact20260112Edit`). */
export interface AnthropicCompactEdit {
  type: "compact_20260112";
  trigger?: { type: "input_tokens"; value: number };
  pause_after_compaction?: boolean;
  instructions?: string;
}

/** Options of `anthropicCompaction`. */
export interface AnthropicCompactionOptions<E extends { readonly type: string } = never> {
  /** Input tokens from which the API compacts; default: the API's (150,000). */
  readonly triggerTokens?: number;
  /** Extra instructions for the API's summary. */
  readonly instructions?: string;
  /**
   * Stop after compacting and return the block (`stop_reason: "compaction"`), so pruneguard records it and the
   * model reads the line that recalls what was compacted before it answers. Default `true`. `false` is refused
   * while the policy keeps any span the compaction would cover (it must be said again after the block first).
   */
  readonly pauseAfterCompaction?: boolean;
  /** Other edits the request carries (`clear_thinking_20251015`); a `clear_tool_uses_*` edit is refused, and so is a `compact_*` one (the builder adds it). */
  readonly edits?: readonly E[];
}

/** What `anthropicCompaction` gives: spread it into `client.beta.messages.create({ model, max_tokens, ...toAnthropicBeta(win), ... })`. */
export interface AnthropicCompactionRequest<E = never> {
  betas: string[];
  context_management: { edits: Array<AnthropicCompactEdit | E> };
}

/**
 * The request parts that turn on Anthropic's compaction, after checking the window: throws
 * `ProviderCompactionError` — before anything is sent — when the policy forbids provider compaction, when a
 * `clear_tool_uses` edit is asked for, or when `pauseAfterCompaction: false` would let the model answer from a
 * compaction that covered spans the policy keeps.
 */
export async function anthropicCompaction<E extends { readonly type: string } = never>(
  window: CompactionWindow, options: AnthropicCompactionOptions<E> = {},
): Promise<AnthropicCompactionRequest<E>> {
  const plan = await window.providerCompactionPlan();
  refuseUnlessAllowed(plan);
  const edits: readonly unknown[] = options.edits ?? [];
  if (!Array.isArray(edits)) throw new ProviderCompactionError("anthropicCompaction: options.edits is not an array of edits", plan);
  for (const [i, given] of edits.entries()) {
    const type = typeof given === "object" && given !== null ? (given as { readonly type?: unknown }).type : undefined;
    if (typeof type !== "string") throw new ProviderCompactionError(`anthropicCompaction: options.edits[${i}] is not an edit (no type), which the API refuses`, plan);
    const edit = given as E;
    // The builder makes the one compact edit, from the plan: one passed in would bypass the pause check.
    if (edit.type.startsWith("compact_")) {
      throw new ProviderCompactionError(
        `anthropicCompaction: a ${edit.type} edit in options.edits is refused: the builder adds the compaction edit itself, after checking the window (use triggerTokens, instructions and pauseAfterCompaction)`,
        plan,
      );
    }
    if (edit.type.startsWith("clear_tool_uses")) {
      throw new ProviderCompactionError(
        `anthropicCompaction: ${edit.type} is refused: it replaces tool results with a placeholder that has no handle, so the model cannot tell a cleared result from one that never existed. The window's compaction points clear the same results with an index line each (limits.compaction); see docs/provider-compaction.md`,
        plan,
      );
    }
  }
  const pause = options.pauseAfterCompaction ?? true;
  if (!pause && plan.kept.length > 0) {
    throw new ProviderCompactionError(
      `anthropicCompaction: pauseAfterCompaction: false is refused: the policy keeps ${describeKept(plan)}, which the compaction would cover; with a pause they are said again after the block before the model answers`,
      plan,
    );
  }
  if (options.triggerTokens !== undefined && !(Number.isInteger(options.triggerTokens) && options.triggerTokens > 0)) {
    throw new TypeError(`anthropicCompaction: triggerTokens must be a positive whole number of tokens, got ${String(options.triggerTokens)}`);
  }
  const edit: AnthropicCompactEdit = {
    type: "compact_20260112",
    ...(options.triggerTokens !== undefined ? { trigger: { type: "input_tokens" as const, value: options.triggerTokens } } : {}),
    pause_after_compaction: pause,
    ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
  };
  return { betas: [ANTHROPIC_COMPACTION_BETA], context_management: { edits: [...(options.edits ?? []), edit] } };
}
