/**
 * pruneguard runtime, for agent code: a context window whose prunes are checked against the backing store
 * at execution time, so a model can never silently turn "less salient" into "never existed".
 *
 * Other audiences have their own entry points: `pruneguard/postgres` (the PostgreSQL store and its
 * migrations, the only module that loads `pg`), `pruneguard/adapters` (what a store-adapter author needs)
 * and `pruneguard/dsl` (policy authors).
 */
// First: on a Node below the supported version, importing fails here, with one clear message.
import "./assert-node.js";
export { ContextWindow } from "./window/window.js";
export { RefError, refSpanId } from "./window/refs.js";
export type { AppendInput, ContextWindowOptions, PruneRequest } from "./window/window-options.js";
export type { TelemetryAttributes, TelemetryAttributeValue, TelemetryInstrumentOptions, TelemetryMeter, TelemetryOptions, TelemetrySpan, TelemetryTracer } from "./telemetry/index.js";
export type { WindowEntry } from "./window/view.js";
export type { SearchRequest } from "./window/search.js";
export { guardWindow } from "./typed.js";
export type { AnyPruneRequest, GuardedWindow, PruneguardTypeError, PruneRequestOf, RequestFor, StrictestRequest } from "./typed.js";
export { defineGuard } from "./guard/define.js";
export type { DeclaredStores, DirectiveSchema, GuardDefinition, GuardWindowOptions, PolicyGuard } from "./guard/define.js";
export { openAIPromptCacheKey, toAISDK, toAnthropic, toOpenAI, toOpenAIResponses } from "./providers/index.js";
export type { AISDKMessage, AISDKPrompt, AnthropicCacheControl, AnthropicCachedPrompt, AnthropicMessage, AnthropicPrompt, AnthropicRenderOptions, OpenAIMessage, OpenAIResponsesItem, RenderSource } from "./providers/index.js";
export { Transcript } from "./providers/index.js";
export { ANTHROPIC_COMPACTION_BETA, anthropicCompaction, openAICompaction, openAICompactRequest, toAnthropicBeta } from "./providers/index.js";
export type {
  AnthropicBetaMessage, AnthropicBetaPrompt, AnthropicCompactEdit, AnthropicCompactionBlock, AnthropicCompactionOptions, AnthropicCompactionRequest, CompactionWindow,
  OpenAICompactionOptions,
} from "./providers/index.js";
export { ProviderCompactionError } from "./window/provider-compaction.js";
export type { KeptReason, ProviderClearing, ProviderCompaction, ProviderCompactionPlan } from "./window/provider-compaction.js";
export type { AISDKStep, KindMapping, ModelToolCall, ModelToolResult, ProviderName, ProviderResponse, ToolOutput, ToolRunner, TranscriptOptions, TranscriptWindow } from "./providers/index.js";
export { directiveTools } from "./tools/schemas.js";
export type { DirectiveTool, DirectiveToolsOptions, JsonSchema, ToolInputSchema } from "./tools/schemas.js";
export { toolResultText } from "./tools/call.js";
export type { ToolCall, ToolCallResult } from "./tools/call.js";
export { aiSDKTools, anthropicTools, openAIChatTools, openAIResponsesTools, pruneguardRepairToolCall } from "./providers/index.js";
export type {
  AgentToolEntry,
  AgentTools,
  AISDKTool,
  AISDKToolOutput,
  AISDKToolResult,
  AnthropicTool,
  AISDKToolsOptions,
  OpenAIChatTool,
  OpenAIResponsesTool,
  PassThroughSchema,
  ProviderToolOptions,
  ProviderToolsWith,
  ToolCallHandler,
} from "./providers/index.js";
export { MemoryStore } from "./stores/memory.js";
export { SqliteStore } from "./stores/sqlite/sqlite-store.js";
export type { SqliteStoreOptions } from "./stores/sqlite/sqlite-store.js";
export type { StoreOptions } from "./stores/store-options.js";
export { openStores, checkStoreDeclarations, storeMismatches } from "./stores/open.js";
export type { OpenStoresOptions, StoreMismatch } from "./stores/open.js";
export type { Engine, StoreDeclaration } from "./policy/stores.js";
export type { BackingStore, StoreCapabilities } from "./stores/store.js";
export { IrreversiblePruneError, MissingPeerError, StoreError } from "./errors.js";
export { parseDirective, directiveSchema, DEFAULT_LIMITS, SPAN_ID, HANDLE } from "./directive.js";
export type {
  Directive, DirectiveLimits, MapDirective, ParsedDirective, PruneDirective, RecallDirective, SearchDirective, SummarizeRangeDirective,
} from "./directive.js";
export type {
  DirectiveIssue,
  DirectiveOutcome,
  InvalidOutcome,
  LossyOutcome,
  PruneOutcome,
  ProviderCompactionOutcome,
  RangeOutcome,
  RangeRejectedOutcome,
  RangeSummaryOutcome,
  RecallOutcome,
  RejectedOutcome,
  RejectReason,
  ReversibleOutcome,
  SearchCoverage,
  SearchHole,
  SearchMatch,
  SearchOutcome,
  CompactOutcome,
  GroupMemberFate,
  CompactionReport,
  Forecast,
  PendingState,
  SpanForecast,
  WhenApplied,
  WindowMap,
} from "./outcome.js";
export { verifyAuditChain } from "./audit.js";
export type { AuditChainBreak, AuditOp, AuditRecord, AuditStatus } from "./audit.js";
export type { AuditReason } from "./decision/reasons.js";
export { DEFAULT_TOMBSTONE } from "./render/lines.js";
export { countTokens } from "./tokens.js";
// Generated guards of large policies check their embedded kinds table against its hash with it.
export { contentHash } from "./hash.js";
export { ManualClock, systemClock, PRUNE_MODES } from "./types.js";
export { DEFAULT_COMPACTION, DEFAULT_SEARCH_TOKENS } from "./policy/kinds.js";
export type { CompactionPolicy } from "./policy/kinds.js";
export type {
  Clock,
  Conditions,
  KindPolicy,
  KindTable,
  LossyRule,
  PinPattern,
  PruneMode,
  RuntimePolicy,
  SessionLimits,
  Span,
  SpanMessage,
  SpanRef,
} from "./types.js";
