/**
 * Vocabulary shared by the policy language, the compiler and the runtime: durations, store engines and
 * declarations, and the runtime form of a policy. Everything here is plain data and pure functions; it
 * imports nothing from the DSL or the compiler, which import it.
 */
export { seconds, minutes, hours, days, forever, retentionMs, formatDuration, DURATION_UNITS } from "./durations.js";
export type { Duration, DurationUnit, Forever, Retention } from "./durations.js";
export { ENGINES, STORE_DEFAULTS } from "./stores.js";
export type { Engine, StoreDeclaration, StorePromises } from "./stores.js";
export { PRUNE_MODES } from "./kinds.js";
export type { KindPolicy, LossyRule, PinPattern, PruneMode, RuntimePolicy, SessionLimits } from "./kinds.js";
