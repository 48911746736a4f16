/**
 * `pruneguard/dsl`: what policy authors import.
 *
 * Every export is a pure builder or plain data. A policy module is read by the compiler without being run,
 * so only literals, these calls and references to consts and other policy modules are accepted there.
 */
export { definePolicy, extendPolicy } from "./policy.js";
export type { KindOverride, KindSpec, OverlaySpec, Policy, PolicySpec, SessionSpec, SessionValue } from "./policy.js";
export { store, ENGINES, STORE_DEFAULTS } from "./store.js";
export type { Engine, StoreOptions, StoreSpec } from "./store.js";
export { seconds, minutes, hours, days, forever, DURATION_UNITS, formatDuration } from "./durations.js";
export type { Duration, Forever, Retention } from "./durations.js";
export { pins, pin, presetPins } from "./pins.js";
export type { LossyRule, PinPattern, PruneMode } from "../src/policy/kinds.js";
