/**
 * The pruneguard compiler's programmatic API: policy files → validated IR → diagnostics (and, through
 * `emit/`, output files). The phases are front end (`frontend/`, the only place the TypeScript parser lives), IR
 * (`ir/`), checks (`checks/`), emit (`emit/`) and the CLI (`cli/`).
 */
export { compilePolicies, type CompileInput, type CompileOptions, type CompileResult } from "./compile.js";
export { catalogue, type CatalogueEntry, type DiagnosticCode } from "./diagnostics/catalogue.js";
export { isDiagnostic, isError, type RelatedInformation } from "./diagnostics/diagnostic.js";
export type { Diagnostic } from "./diagnostics/diagnostic.js";
export { codeFrame, diagnosticsToJson, formatDiagnostic, formatDiagnostics, summarize, type FormatOptions } from "./diagnostics/format.js";
export { createSourceHost, type SourceHost } from "./frontend/index.js";
export * from "./ir/schema.js";
export { lowerToRuntime, type LoweredPolicy, type StoreDecl } from "./ir/lower.js";
export {
  DEFAULT_EMIT_OPTIONS,
  directiveModes,
  emitAll,
  emitGuard,
  emitIrJson,
  emitTypes,
  guardFile,
  irHash,
  orphanedFiles,
  removeOrphans,
  staleFiles,
  typesFile,
  writeEmitted,
  type EmitOptions,
  type EmittedFile,
  type StaleFile,
} from "./emit/index.js";
export { requestShapeOf, type LossyFlag, type RequestShape } from "./analysis/requests.js";
export { describeFate, fateOf, type Fate } from "./analysis/fate.js";
export { describeTimeline, timelineOf, type Phase, type Segment, type Timeline } from "./analysis/timeline.js";
export { diffPolicy, diffPolicySets, type Direction, type FateChange, type JudgedChange, type PolicyDiff, type PolicySetDiff } from "./diff/index.js";
