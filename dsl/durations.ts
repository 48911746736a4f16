/** Durations for retention and session limits; they live with the runtime's policy vocabulary. */
export { seconds, minutes, hours, days, forever, retentionMs, formatDuration, DURATION_UNITS } from "../src/policy/durations.js";
export type { Duration, DurationUnit, Forever, Retention } from "../src/policy/durations.js";
