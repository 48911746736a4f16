/**
 * What the compiler knows of `pruneguard/dsl`: each export a policy may use, and how to apply it
 * statically. A test checks this table against the DSL's real exports in both directions, so a builder
 * cannot be added to the DSL without teaching the compiler, nor listed here without the DSL having it.
 */
import { forever } from "../../src/policy/durations.js";
import { LOSSY_RULES, PRUNE_MODES } from "../../src/policy/kinds.js";
import { presetPins } from "../../src/policy/pins.js";
import { ENGINES, isEngine } from "../../src/policy/stores.js";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import { applyDefinePolicy, applyDuration, applyExtendPolicy, applyPin, applyStore } from "./extract.js";
import { didYouMean, memberHint } from "./suggest.js";
import type { SValue } from "./values.js";

/** Module specifiers that mean the DSL. */
export const DSL_SPECIFIERS: readonly string[] = ["pruneguard/dsl"];

/** The value exports of `pruneguard/dsl`: all of them are usable in a policy module. */
export const POLICY_EXPORTS = [
  "definePolicy",
  "extendPolicy",
  "store",
  "seconds",
  "minutes",
  "hours",
  "days",
  "forever",
  "pins",
  "presetPins",
  "pin",
] as const;

/**
 * PG1010's hint for a name `pruneguard/dsl` does not export: the nearest export when one is close, and for
 * an enum-like name an author may expect from other libraries (`Lossy.Forbid`, `PruneMode.Drop`), that the
 * values are plain strings. `nearest` is the hint without it (a namespace's lists the exports too).
 */
export function exportHint(name: string, nearest: (name: string) => string = (n) => didYouMean(n, POLICY_EXPORTS)): string {
  const hint = nearest(name);
  if (didYouMean(name, POLICY_EXPORTS) !== "") return hint;
  if (/^lossy/i.test(name)) return ` (a lossy rule is a string: ${LOSSY_RULES.map((r) => `\`lossy: "${r}"\``).join(" or ")})`;
  if (/^(prune)?modes?$/i.test(name)) return ` (modes are strings: \`modes: [${PRUNE_MODES.map((m) => `"${m}"`).join(", ")}]\`)`;
  if (/^(engines?|stores?)$/i.test(name)) return ` (a store is made by \`store.<engine>(...)\`: ${ENGINES.map((e) => `\`store.${e}\``).join(", ")})`;
  return hint;
}

export function isDslExport(name: string): boolean {
  return (POLICY_EXPORTS as readonly string[]).includes(name);
}

/** The value an imported DSL binding has. */
export function dslBinding(name: string, location: Location): SValue {
  if (name === "forever") return { t: "string", value: forever, location };
  return { t: "dsl", name, location };
}

export function dslMember(namespace: string, member: string, location: Location, report: (d: Diagnostic) => void): SValue {
  if (namespace === "*") {
    if (isDslExport(member)) return dslBinding(member, location);
    report(diagnostic("PG1010", location, { name: member, hint: exportHint(member, (n) => memberHint(n, POLICY_EXPORTS, "exports")) }));
    return { t: "invalid", location };
  }
  if (namespace === "store") {
    if (isEngine(member)) return { t: "dsl", name: `store.${member}`, location };
    report(diagnostic("PG1010", location, { name: `store.${member}`, hint: memberHint(member, ENGINES, "engines") }));
    return { t: "invalid", location };
  }
  if (namespace === "pins" || namespace === "presetPins") {
    const preset = (presetPins as Readonly<Record<string, { name: string; pattern: string }>>)[member];
    if (preset) return { t: "pin", pin: { name: preset.name, pattern: preset.pattern, preset: member, location }, location };
    const names = Object.keys(presetPins);
    report(diagnostic("PG1010", location, { name: `${namespace}.${member}`, hint: memberHint(member, names, "presets") }));
    return { t: "invalid", location };
  }
  report(diagnostic("PG1003", location, { text: `${namespace}.${member}` }));
  return { t: "invalid", location };
}

/** What to write instead of calling a DSL export that is not a builder. */
const NOT_CALLABLE: Readonly<Record<string, string>> = {
  "*": "call one of its builders, such as `definePolicy(...)`, through it",
  store: `call the builder of an engine: ${ENGINES.map((e) => `\`store.${e}(...)\``).join(", ")}`,
  pins: "a preset is a value, written `pins.requestId`; a custom pin is `pin(name, pattern)`",
  presetPins: "a preset is a value, written `presetPins.requestId`; a custom pin is `pin(name, pattern)`",
};

export function callDsl(name: string, args: readonly SValue[], location: Location, file: string, report: (d: Diagnostic) => void): SValue {
  // `store.<engine>` for every engine of the table (`dslMember` admits no other member of `store`).
  const engine = name.startsWith("store.") ? name.slice("store.".length) : null;
  if (engine !== null && isEngine(engine)) return applyStore(engine, args, location, report);
  switch (name) {
    case "definePolicy":
      return applyDefinePolicy(args, location, file, report);
    case "extendPolicy":
      return applyExtendPolicy(args, location, file, report);
    case "seconds":
    case "minutes":
    case "hours":
    case "days":
      return applyDuration(name, args, location, report);
    case "pin":
      return applyPin(args, location, report);
    default:
      report(diagnostic("PG1006", location, { callee: name, suggestion: NOT_CALLABLE[name] ?? "call one of its builders" }));
      return { t: "invalid", location };
  }
}
