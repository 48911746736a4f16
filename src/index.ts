/**
 * pruneguard runtime: a context window whose prunes are checked against the backing store at execution
 * time, so a model can never silently turn "less salient" into "never existed".
 */
export { ContextWindow } from "./window/window.js";
export type { AppendInput, ContextWindowOptions, PruneRequest, WindowEntry } from "./window/window.js";
export { toAISDK, toAnthropic, toOpenAI } from "./providers.js";
export type { AISDKMessage, AnthropicMessage, OpenAIMessage } from "./providers.js";
export { guardWindow } from "./typed.js";
export type { AnyPruneRequest, GuardedWindow, PruneguardTypeError } from "./typed.js";
export { MemoryStore } from "./stores/memory.js";
export { SqliteStore } from "./stores/sqlite.js";
export type { SqliteStoreOptions } from "./stores/sqlite.js";
export { PostgresStore, migrate, createPool, PG_URL_ENV, DEFAULT_SCHEMA, SCHEMA_VERSION } from "./stores/postgres.js";
export type { PostgresStoreOptions, PostgresStoreStats, PgQueryable, PoolOptions, MigrateTarget } from "./stores/postgres.js";
export type {
  BackingStore,
  CheckResult,
  LookupKey,
  LookupResult,
  PersistInput,
  Persisted,
  PruneCommit,
  PruneCommitItem,
  PruneDecision,
  PruneItem,
  PruneTransaction,
  RotateReport,
  StoreCapabilities,
  StoreOptions,
} from "./stores/store.js";
export { computeCheck, decideAll, formatHandle, resolveCapabilities, resolveHandlePrefix, resolveRetention, unbackedCheck } from "./stores/check.js";
export type { RecordState } from "./stores/check.js";
export { IrreversiblePruneError, StoreError } from "./errors.js";
export { decideGroup, decideSpan, lossyRefusal, auditReason } from "./decision/index.js";
export type { AuditReason, DecisionReason, GroupDecision, SpanDecision, SpanDecisionInput } from "./decision/index.js";
export { parseDirective, directiveSchema, DEFAULT_LIMITS, SPAN_ID, HANDLE } from "./directive.js";
export type { Directive, DirectiveLimits, ParsedDirective, PruneDirective, RecallDirective } from "./directive.js";
export type {
  DirectiveIssue,
  DirectiveOutcome,
  InvalidOutcome,
  LossyOutcome,
  PruneOutcome,
  RecallOutcome,
  RejectedOutcome,
  RejectReason,
  ReversibleOutcome,
} from "./outcome.js";
export { sealAudit, verifyAuditChain, directiveForAudit, GENESIS_HASH } from "./audit.js";
export type { AuditChainBreak, AuditDraft, AuditOp, AuditRecord, AuditStatus } from "./audit.js";
export { DEFAULT_TOMBSTONE, indexLine, tombstoneLine, replacementHeader, rejectionLine } from "./render.js";
export { contentHash, canonicalJson } from "./hash.js";
export { countTokens } from "./tokens.js";
export { ManualClock, systemClock, PRUNE_MODES, conditionsHold, failedConditions, NO_CONDITIONS } from "./types.js";
export type {
  Clock,
  Conditions,
  KindPolicy,
  LossyRule,
  PinPattern,
  PruneMode,
  RuntimePolicy,
  SessionLimits,
  Span,
  SpanMessage,
  SpanRef,
} from "./types.js";
