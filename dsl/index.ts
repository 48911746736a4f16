/**
 * `pruneguard/dsl`: what policy authors import.
 *
 * Every export is a pure builder or plain data that a policy may use. A policy module is read by the
 * compiler without being run, so only literals, these calls and references to consts and other policy
 * modules are accepted there. The tables tools need (engines, store defaults, duration units) live in the
 * runtime's `src/policy/`.
 */
export { definePolicy, extendPolicy } from "./policy.js";
export type { CompactionSpec, KindOverride, KindSpec, KnownKindProperties, OverlaySpec, Policy, PolicySpec, SessionSpec, SessionValue, TombstoneWording } from "./policy.js";
export { store } from "./store.js";
export type { Engine, StoreOptions, StoreSpec } from "./store.js";
export { seconds, minutes, hours, days, forever } from "./durations.js";
export type { Duration, Forever, Retention } from "./durations.js";
export { pins, pin, presetPins } from "./pins.js";
export type { LossyRule, PinPattern, PruneMode } from "../src/policy/kinds.js";
