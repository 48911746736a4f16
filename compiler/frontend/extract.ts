/**
 * DSL semantics, statically: what `definePolicy`, `extendPolicy`, `store.*`, `pin` and the durations mean
 * when applied to static values. Produces IR nodes (not yet validated; see `ir/validate.ts`).
 *
 * Defaults come from the DSL's own tables (`STORE_DEFAULTS`, `DURATION_UNITS`, `pin`), so the compiled and
 * the evaluated meaning of a policy cannot drift apart.
 */
import { DURATION_UNITS, type DurationUnit } from "../../src/policy/durations.js";
import { pin as dslPin } from "../../dsl/pins.js";
import { ENGINES, STORE_DEFAULTS } from "../../src/policy/stores.js";
import { DEFAULT_COMPACTION, LOSSY_RULES, MIN_COMPACTION_TOKENS, MIN_SEARCH_TOKENS, PROVIDER_COMPACTION_RULES, PRUNE_MODES } from "../../src/policy/kinds.js";
import { diagnostic, excerpt, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import type { KindIR, PinIR, PolicyIR, SessionIR, StoreIR } from "../ir/schema.js";
import { closest, didYouMean } from "./suggest.js";
import { describe, type ObjectEntry, type SValue } from "./values.js";

type Report = (d: Diagnostic) => void;
type Obj = Extract<SValue, { t: "object" }>;

const POLICY_KEYS = ["name", "stores", "kinds", "session", "pins", "tombstone"] as const;
const STORE_KEYS = ["retention", "holds", "distinguishesAbsent", "writable"] as const;
const KIND_KEYS = ["store", "modes", "lossy", "repersist", "pins", "compressTargetTokens"] as const;
const SESSION_KEYS = ["maxLength", "lossyBudget", "searchTokens", "compaction", "providerCompaction"] as const;
const COMPACTION_KEYS = ["minFreedTokens", "atTokens"] as const;
/** The DSL's store builders as a message names them: `store.memory, store.sqlite or store.postgres`. */
const STORE_BUILDERS = orList(ENGINES.map((e) => `store.${e}`));

/** Applies a duration builder: `hours(2)` → 7 200 000 ms, marked as a duration. */
export function applyDuration(unit: DurationUnit, args: readonly SValue[], location: Location, report: Report): SValue {
  const n = args[0];
  if (args.length !== 1 || n === undefined || n.t !== "number" || n.duration || !Number.isFinite(n.value) || n.value < 0) {
    report(diagnostic("PG1011", n?.location ?? location, { message: `\`${unit}\` takes one number >= 0, like ${unit}(2)` }));
    return { t: "invalid", location };
  }
  return { t: "number", value: n.value * DURATION_UNITS[unit], duration: true, location };
}

export function applyStore(engine: StoreIR["engine"], args: readonly SValue[], location: Location, report: Report): SValue {
  const o = readObject(args[0], `store.${engine}(...)`, location, STORE_KEYS, ["retention"], report);
  if (!o || args.length !== 1) return { t: "invalid", location };
  const fields: StoreIR["fields"] = {};
  const retention = o.get("retention");
  const holds = o.get("holds");
  const absent = o.get("distinguishesAbsent");
  const writable = o.get("writable");
  if (retention) fields.retention = retention.value.location;
  if (holds) fields.holds = holds.value.location;
  if (absent) fields.distinguishesAbsent = absent.value.location;
  if (writable) fields.writable = writable.value.location;
  const retentionMs = retention ? readDuration(retention, "retention", report) : undefined;
  const store = {
    engine,
    retentionMs: retentionMs ?? null,
    holds: readBoolean(holds, report) ?? STORE_DEFAULTS.holds,
    distinguishesAbsent: readBoolean(absent, report) ?? STORE_DEFAULTS.distinguishesAbsent,
    writable: readBoolean(writable, report) ?? STORE_DEFAULTS.writable,
    fields,
  };
  if (retentionMs === undefined) return { t: "invalid", location };
  return { t: "store", store, location };
}

/** `pin(name, pattern)`: the DSL's own builder does the work (flags, `i` lowering); its errors become PG2009. */
export function applyPin(args: readonly SValue[], location: Location, report: Report): SValue {
  const [name, pattern] = args;
  if (args.length !== 2 || name?.t !== "string" || (pattern?.t !== "string" && pattern?.t !== "regex")) {
    report(diagnostic("PG1011", location, { message: "`pin` takes a name and a pattern: pin(\"ticket\", /[A-Z]+-\\d+/)" }));
    return { t: "invalid", location };
  }
  try {
    const source = pattern.t === "string" ? pattern.value : new RegExp(pattern.source, pattern.flags);
    const p = dslPin(name.value, source);
    return { t: "pin", pin: { name: p.name, pattern: p.pattern, preset: null, location }, location };
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^pin\([^)]*\):\s*/, "") : String(error);
    report(diagnostic("PG2009", pattern.location, { pin: excerpt(name.value), message: excerpt(message, 200) }));
    return { t: "invalid", location };
  }
}

export function applyDefinePolicy(args: readonly SValue[], location: Location, file: string, report: Report): SValue {
  const o = readObject(args[0], "definePolicy(...)", location, POLICY_KEYS, ["name", "stores", "kinds"], report);
  if (!o || args.length !== 1) return { t: "invalid", location };
  let ok = true;
  const fields: PolicyIR["fields"] = {};
  for (const [k, e] of o) fields[k as keyof PolicyIR["fields"]] = e.value.location;
  const name = readString(o.get("name"), "the policy name", report);
  const stores = readStores(o.get("stores"), report);
  const kinds: KindIR[] = [];
  const kindsObj = readMap(o.get("kinds"), "kind", report);
  if (kindsObj === undefined) ok = false;
  for (const e of kindsObj ?? []) {
    const k = readKind(e, undefined, report);
    if (k) kinds.push(k);
    else ok = false;
  }
  const session = readSession(o.get("session"), { maxLengthMs: null, lossyBudget: null, searchTokens: null, compaction: null, providerCompaction: null, location, fields: {} }, report);
  const pins = o.has("pins") ? readPins(o.get("pins"), report) : [];
  const tombstone = readTombstone(o.get("tombstone"), report);
  if (name === undefined || stores === undefined || session === undefined || pins === undefined || tombstone === undefined || !ok) {
    return { t: "invalid", location };
  }
  const policy: PolicyIR = { name, file, extends: null, stores, kinds, session, pins, tombstone, location, fields };
  return { t: "policy", policy, location };
}

export function applyExtendPolicy(args: readonly SValue[], location: Location, file: string, report: Report): SValue {
  const [baseValue, overlayValue] = args;
  if (baseValue?.t !== "policy") {
    if (baseValue?.t !== "invalid") {
      report(
        diagnostic("PG1011", baseValue?.location ?? location, {
          message: `the first argument of \`extendPolicy\` must be a policy (the default import of its policy module), not ${baseValue ? describe(baseValue) : "nothing"}`,
        }),
      );
    }
    return { t: "invalid", location };
  }
  const base = baseValue.policy;
  const o = readObject(overlayValue, "extendPolicy(base, ...)", location, POLICY_KEYS, ["name"], report);
  if (!o || args.length !== 2) return { t: "invalid", location };
  let ok = true;
  const fields: PolicyIR["fields"] = {};
  for (const [k, e] of o) fields[k as keyof PolicyIR["fields"]] = e.value.location;
  const name = readString(o.get("name"), "the policy name", report);

  const stores = new Map(base.stores.map((s) => [s.name, s]));
  const own = o.has("stores") ? readStores(o.get("stores"), report) : [];
  if (own === undefined) ok = false;
  for (const s of own ?? []) stores.set(s.name, s);

  const kinds = new Map(base.kinds.map((k) => [k.name, k]));
  const kindsObj = o.has("kinds") ? readMap(o.get("kinds"), "kind", report) : [];
  if (kindsObj === undefined) ok = false;
  const baseKinds = base.kinds.map((k) => k.name);
  for (const e of kindsObj ?? []) {
    const inherited = kinds.get(e.key);
    // A kind the base lacks is a new kind, which must be declared whole; one that is half-declared and
    // close to a base kind's name is a misspelt override, and saying so beats "missing `lossy`".
    const suggestion = inherited ? undefined : closest(e.key, baseKinds);
    if (suggestion !== undefined && e.value.t === "object" && !["store", "modes", "lossy"].every((key) => e.value.t === "object" && e.value.entries.some((x) => x.key === key))) {
      report(diagnostic("PG1015", e.keyLocation, { name: e.key, base: base.name, suggestion }));
      ok = false;
      continue;
    }
    const k = readKind(e, inherited, report);
    if (k) kinds.set(k.name, k);
    else ok = false;
  }
  const session = readSession(o.get("session"), base.session, report);
  const pins = o.has("pins") ? readPins(o.get("pins"), report) : base.pins;
  const tombstone = o.has("tombstone") ? readTombstone(o.get("tombstone"), report) : base.tombstone;
  if (name === undefined || session === undefined || pins === undefined || tombstone === undefined || !ok) {
    return { t: "invalid", location };
  }
  const policy: PolicyIR = {
    name,
    file,
    extends: { name: base.name, file: base.file },
    stores: [...stores.values()],
    kinds: [...kinds.values()],
    session,
    pins,
    tombstone,
    location,
    fields,
  };
  return { t: "policy", policy, location };
}

// ---- readers ----

function readObject(
  v: SValue | undefined,
  where: string,
  fallback: Location,
  allowed: readonly string[],
  required: readonly string[],
  report: Report,
): Map<string, ObjectEntry> | undefined {
  if (v?.t === "invalid") return undefined;
  if (v?.t !== "object") {
    report(diagnostic("PG1011", v?.location ?? fallback, { message: `${where} takes an object literal${v ? `, not ${describe(v)}` : ""}` }));
    return undefined;
  }
  let ok = true;
  for (const e of v.entries) {
    if (!allowed.includes(e.key)) {
      report(diagnostic("PG1012", e.keyLocation, { name: e.key, where, hint: didYouMean(e.key, allowed) }));
      ok = false;
    }
  }
  for (const d of v.duplicates) report(diagnostic("PG2002", d.keyLocation, { what: "property", name: d.key }, firstDeclared(d)));
  for (const r of required) {
    if (!v.entries.some((e) => e.key === r)) {
      report(diagnostic("PG1013", v.location, { where, name: r }));
      ok = false;
    }
  }
  return ok ? new Map(v.entries.map((e) => [e.key, e])) : undefined;
}

/** An object used as a map of declarations (stores, kinds): duplicates are PG2002 with the right noun. */
function readMap(e: ObjectEntry | undefined, what: "kind" | "store", report: Report): readonly ObjectEntry[] | undefined {
  if (!e || e.value.t === "invalid") return undefined;
  if (e.value.t !== "object") {
    report(diagnostic("PG1011", e.value.location, { message: `\`${e.key}\` must be an object of ${what} declarations, not ${describe(e.value)}` }));
    return undefined;
  }
  for (const d of e.value.duplicates) report(diagnostic("PG2002", d.keyLocation, { what, name: d.key }, firstDeclared(d)));
  return e.value.entries;
}

/** PG2002's related location: where the key was first written (the later one wins, as in JavaScript). */
const firstDeclared = (d: { readonly key: string; readonly first: Location }) => [{ message: `\`${d.key}\` is first declared here; the later one wins`, location: d.first }];

function readStores(e: ObjectEntry | undefined, report: Report): StoreIR[] | undefined {
  const entries = readMap(e, "store", report);
  if (!entries) return undefined;
  const out: StoreIR[] = [];
  let ok = true;
  for (const s of entries) {
    if (s.value.t === "store") out.push({ name: s.key, ...s.value.store, location: s.keyLocation });
    else {
      ok = false;
      if (s.value.t !== "invalid") {
        report(diagnostic("PG1011", s.value.location, { message: `store \`${s.key}\` must be declared with ${STORE_BUILDERS}, not ${describe(s.value)}` }));
      }
    }
  }
  return ok ? out : undefined;
}

function readKind(e: ObjectEntry, base: KindIR | undefined, report: Report): KindIR | undefined {
  const where = base ? `the override of kind \`${e.key}\`` : `kind \`${e.key}\``;
  const o = readObject(e.value, where, e.keyLocation, KIND_KEYS, base ? [] : ["store", "modes", "lossy"], report);
  if (!o) return undefined;
  const fields: KindIR["fields"] = { ...base?.fields };
  for (const [k, f] of o) fields[k as keyof KindIR["fields"]] = f.value.location;
  const storeEntry = o.get("store");
  let store: string | null | undefined = base?.store;
  if (storeEntry) store = storeEntry.value.t === "null" ? null : readString(storeEntry, "`store`", report, "a store name or null");
  const modes = o.has("modes") ? readChoices(o.get("modes"), `kinds.${e.key}.modes`, PRUNE_MODES, report) : base?.modes;
  const lossy = o.has("lossy") ? readChoice(o.get("lossy")?.value, `kinds.${e.key}.lossy`, LOSSY_RULES, report) : base?.lossy;
  const repersist = o.has("repersist") ? readBoolean(o.get("repersist"), report) : (base?.repersist ?? false);
  const pins = o.has("pins") ? readPins(o.get("pins"), report) : (base?.pins ?? []);
  const target = o.get("compressTargetTokens");
  const compressTargetTokens = target ? readNumber(target, report) : (base?.compressTargetTokens ?? null);
  if (store === undefined || modes === undefined || lossy === undefined || repersist === undefined || pins === undefined || compressTargetTokens === undefined) {
    return undefined;
  }
  return {
    name: e.key,
    store,
    modes,
    lossy,
    repersist,
    pins,
    compressTargetTokens,
    location: e.keyLocation,
    fields,
  };
}

function readSession(e: ObjectEntry | undefined, base: SessionIR, report: Report): SessionIR | undefined {
  if (!e) return base;
  const o = readObject(e.value, "`session`", e.keyLocation, SESSION_KEYS, [], report);
  if (!o) return undefined;
  const fields: SessionIR["fields"] = { ...base.fields };
  for (const [k, f] of o) fields[k as keyof SessionIR["fields"]] = f.value.location;
  const max = o.get("maxLength");
  const budget = o.get("lossyBudget");
  const maxLengthMs = max ? readDuration(max, "maxLength", report) : base.maxLengthMs;
  const lossyBudget = budget ? readNumber(budget, report) : base.lossyBudget;
  const search = o.get("searchTokens");
  let searchTokens = search ? readNumber(search, report) : base.searchTokens;
  if (search && searchTokens !== undefined && searchTokens !== null && !(Number.isInteger(searchTokens) && searchTokens >= MIN_SEARCH_TOKENS)) {
    report(diagnostic("PG1011", search.value.location, { message: `\`searchTokens\` must be an integer of at least ${MIN_SEARCH_TOKENS}, so the coverage line of a search answer always fits; got ${searchTokens}` }));
    searchTokens = undefined;
  }
  const compaction = readCompaction(o.get("compaction"), base.compaction, report);
  const providerCompaction = o.has("providerCompaction")
    ? readChoice(o.get("providerCompaction")?.value, "session.providerCompaction", PROVIDER_COMPACTION_RULES, report)
    : base.providerCompaction;
  if (maxLengthMs === undefined || lossyBudget === undefined || searchTokens === undefined || compaction === undefined || providerCompaction === undefined) return undefined;
  return { maxLengthMs, lossyBudget, searchTokens, compaction, providerCompaction, location: e.keyLocation, fields };
}

/**
 * `session.compaction`: `"immediate"`, or an object whose absent fields take their defaults (never the
 * base's: an overlay's `compaction` replaces its base's whole, like every other field it gives). A compaction
 * must free at least enough to pay for re-caching one block of the prompt (PG2013), and a limit the window
 * reaches before that much can be pending would leave `minFreedTokens` deciding nothing (PG2014).
 */
function readCompaction(e: ObjectEntry | undefined, base: SessionIR["compaction"], report: Report): SessionIR["compaction"] | undefined {
  if (!e) return base;
  const v = e.value;
  if (v.t === "invalid") return undefined;
  if (v.t === "string" && v.value === "immediate") return "immediate";
  if (v.t !== "object") {
    const what = v.t === "string" ? `${JSON.stringify(v.value)}${didYouMean(v.value, ["immediate"])}` : describe(v);
    report(diagnostic("PG1011", v.location, { message: `\`compaction\` must be "immediate" or an object { minFreedTokens?, atTokens? }, not ${what}` }));
    return undefined;
  }
  const o = readObject(v, "`session.compaction`", e.keyLocation, COMPACTION_KEYS, [], report);
  if (!o) return undefined;
  const min = o.get("minFreedTokens");
  const at = o.get("atTokens");
  let minFreedTokens = min ? readNumber(min, report) : DEFAULT_COMPACTION.minFreedTokens;
  if (min && minFreedTokens !== undefined && !(Number.isInteger(minFreedTokens) && minFreedTokens >= MIN_COMPACTION_TOKENS)) {
    report(diagnostic("PG2013", min.value.location, { value: minFreedTokens, min: MIN_COMPACTION_TOKENS }));
    minFreedTokens = undefined;
  }
  let atTokens = at ? readNumber(at, report) : null;
  if (at && atTokens !== undefined && atTokens !== null && minFreedTokens !== undefined && !(Number.isInteger(atTokens) && atTokens > minFreedTokens)) {
    report(diagnostic("PG2014", at.value.location, { value: atTokens, minFreed: minFreedTokens, defaulted: min ? "" : ", the default" }));
    atTokens = undefined;
  }
  if (minFreedTokens === undefined || atTokens === undefined) return undefined;
  return { minFreedTokens, atTokens };
}

function readPins(e: ObjectEntry | undefined, report: Report): PinIR[] | undefined {
  if (!e || e.value.t === "invalid") return undefined;
  if (e.value.t !== "array") {
    report(diagnostic("PG1011", e.value.location, { message: `\`pins\` must be an array of pins, not ${describe(e.value)}` }));
    return undefined;
  }
  const out: PinIR[] = [];
  let ok = true;
  for (const item of e.value.items) {
    if (item.t === "pin") out.push({ ...item.pin, location: item.location });
    else {
      ok = false;
      if (item.t !== "invalid") {
        report(diagnostic("PG1011", item.location, { message: `a pin must be a preset (\`pins.requestId\`) or \`pin(name, pattern)\`, not ${describe(item)}` }));
      }
    }
  }
  return ok ? out : undefined;
}

function readTombstone(e: ObjectEntry | undefined, report: Report): PolicyIR["tombstone"] | undefined {
  if (!e) return null;
  const text = readString(e, "`tombstone`", report);
  return text === undefined ? undefined : { text, location: e.value.location };
}

function readDuration(e: ObjectEntry, what: string, report: Report): number | null | undefined {
  const v = e.value;
  if (v.t === "string" && v.value === "forever") return null;
  if (v.t === "number" && v.duration) return v.value;
  if (v.t !== "invalid") {
    report(diagnostic("PG1011", v.location, { message: `\`${what}\` must be a duration such as hours(2), or forever; not ${describe(v)}` }));
  }
  return undefined;
}

function readString(e: ObjectEntry | undefined, what: string, report: Report, expected = "a string"): string | undefined {
  if (!e || e.value.t === "invalid") return undefined;
  if (e.value.t === "string") return e.value.value;
  report(diagnostic("PG1011", e.value.location, { message: `${what} must be ${expected}, not ${describe(e.value)}` }));
  return undefined;
}

/**
 * One of a closed set of words (a lossy rule), said as the runtime says it when the window is built
 * (`kinds.audit.lossy: must be "forbid" or "with-flag", got "allow"`), at the value, with a suggestion.
 */
function readChoice<T extends string>(v: SValue | undefined, path: string, choices: readonly T[], report: Report): T | undefined {
  if (v === undefined || v.t === "invalid") return undefined;
  if (v.t === "string" && (choices as readonly string[]).includes(v.value)) return v.value as T;
  const got = v.t === "string" ? `${JSON.stringify(excerpt(v.value))}${didYouMean(v.value, choices)}` : describe(v);
  report(diagnostic("PG1011", v.location, { message: `${path}: must be ${oneOf(choices)}, got ${got}` }));
  return undefined;
}

/** An array of such words (a kind's modes); each wrong item is reported where it is written. */
function readChoices<T extends string>(e: ObjectEntry | undefined, path: string, choices: readonly T[], report: Report): T[] | undefined {
  if (!e || e.value.t === "invalid") return undefined;
  const v = e.value;
  if (v.t !== "array") {
    report(diagnostic("PG1011", v.location, { message: `${path}: must be an array of ${oneOf(choices)}, got ${describe(v)}` }));
    return undefined;
  }
  const items = v.items.map((i) => readChoice(i, path, choices, report));
  return items.every((i) => i !== undefined) ? items : undefined;
}

/** `"a", "b" or "c"`. */
function oneOf(choices: readonly string[]): string {
  return orList(choices.map((c) => JSON.stringify(c)));
}

/** `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(", ")} or ${items.at(-1)!}`;
}

function readBoolean(e: ObjectEntry | undefined, report: Report): boolean | undefined {
  if (!e || e.value.t === "invalid") return undefined;
  if (e.value.t === "boolean") return e.value.value;
  report(diagnostic("PG1011", e.value.location, { message: `\`${e.key}\` must be true or false, not ${describe(e.value)}` }));
  return undefined;
}

function readNumber(e: ObjectEntry, report: Report): number | undefined {
  if (e.value.t === "number" && !e.value.duration) return e.value.value;
  if (e.value.t !== "invalid") report(diagnostic("PG1011", e.value.location, { message: `\`${e.key}\` must be a number, not ${describe(e.value)}` }));
  return undefined;
}

export type { Obj };
