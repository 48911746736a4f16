/**
 * `pruneguard/adapters`: what a store-adapter author needs. An adapter keeps storage only: it extends
 * `StoreBase` (options resolved once), reads records inside its transaction, runs the shared commit step
 * (`planCommit`: check, decide, validate, plan the writes), writes the plan, seals the drafts onto its
 * chain (`sealChain`; `sealChainJson` also returns each record's JSON, for adapters that store it) and
 * answers with `commitResult`. `test/stores/conformance.ts` is the suite every adapter must pass.
 */
// First: on a Node below the supported version, importing fails here, with one clear message.
import "./assert-node.js";
export type {
  BackingStore,
  CheckResult,
  CopyCandidate,
  CopySearch,
  CopySearchRequest,
  LookupKey,
  LookupResult,
  PersistInput,
  Persisted,
  PruneCommit,
  PruneCommitItem,
  PruneDecision,
  PruneItem,
  PruneTransaction,
  RegisteredSpan,
  RotateReport,
  SpanRegistration,
  StoreCapabilities,
} from "./stores/store.js";
export { StoreBase } from "./stores/store-options.js";
export type { StoreOptions } from "./stores/store-options.js";
export { planCommit, commitResult } from "./stores/commit.js";
export type { CommitAccess, CommitPlan, CommitWrite } from "./stores/commit.js";
export { computeCheck, unbackedCheck } from "./stores/check.js";
export { recordState, lookupAnswer, spanTaken, readOnly, registeredSpan } from "./stores/records.js";
export type { RecordState, SpanRow, StoredRecord } from "./stores/records.js";
export { sealChain, sealChainJson, EMPTY_CHAIN } from "./audit.js";
export type { AuditDraft, AuditRecord, ChainHead, SealedAudit } from "./audit.js";
export { OutcomeUnknownError, StoreError } from "./errors.js";
export type { Clock, Conditions } from "./types.js";
