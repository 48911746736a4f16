/**
 * The OpenTelemetry semantic-convention attributes the runtime emits, in one place, each with where it is
 * defined. Every other attribute is `pruneguard.*`: docs/observability.md has the whole mapping, and why
 * each attribute that stays `pruneguard.*` has no convention that means exactly what it does.
 *
 * The names are written out, not imported from `@opentelemetry/semantic-conventions`: the runtime loads
 * nothing of OpenTelemetry but `@opentelemetry/api`, and that package (1.45.0) marks the GenAI names
 * deprecated (moved to their own repository) and has no `gen_ai.conversation.compacted`.
 */

/**
 * The session id. GenAI conventions (`open-telemetry/semantic-conventions-genai`, `model/gen-ai/registry.yaml`;
 * before the move, semantic-conventions v1.41.1 `model/gen-ai/registry.yaml`): string, stability development.
 */
export const ATTR_GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";

/**
 * `true` on a compaction point that applied pruning decisions or folded directive calls: what the model
 * reads from then on is a compacted view of the session. GenAI conventions (`semantic-conventions-genai`
 * `model/gen-ai/registry.yaml`, added by open-telemetry/semantic-conventions-genai#162): boolean, stability
 * development; set only to `true`, and only when compaction is known to have been applied (unset: unknown).
 */
export const ATTR_GEN_AI_CONVERSATION_COMPACTED = "gen_ai.conversation.compacted";

/**
 * A thrown error's class name. Core conventions (semantic-conventions v1.44.0 `model/error/registry.yaml`,
 * `docs/general/recording-errors.md`): string, stability stable; on the span and on the metrics of the
 * operation that failed, with the same value, and never on one that succeeded.
 */
export const ATTR_ERROR_TYPE = "error.type";
