/**
 * The IR schema (`schema.ts`) as plain code, for the one answer every compile needs: a candidate the front
 * end built is a valid `PolicyIR`, and this is the value `PolicyIR.parse` returns for it — new objects with
 * their members in the schema's order, new arrays, the same strings and numbers.
 *
 * Validation runs once per policy on every compile, and with zod it cost a cold compile its largest share
 * after the parser: loading zod (about a hundred modules, every locale among them) and the parse itself
 * (BENCHMARKS.md, figure 4). `validatePolicy` asks this first and zod only when the answer is `undefined`:
 * when the candidate is invalid — zod then says why, in the words and at the paths PG1011 reports — or when
 * it holds anything this does not decide exactly as zod would (an optional member present as `undefined`).
 * So a valid policy never loads zod, and every diagnostic is zod's. test/compiler/ir-parse.test.ts holds
 * this to `PolicyIR.safeParse` on compiled policies and on candidates one edit away from them.
 */
import { LOSSY_RULES, MIN_COMPACTION_TOKENS, MIN_SEARCH_TOKENS, PRUNE_MODES } from "../../src/policy/kinds.js";
import { ENGINES } from "../../src/policy/stores.js";
import type { Location } from "./location.js";
import type { CompactionIR, KindIR, PinIR, PolicyIR, SessionIR, StoreIR } from "./schema.js";
import { isRecord } from "./shape.js";

/** Thrown inside the parse at the first member zod might read otherwise; never escapes `parsePolicyIR`. */
const UNSURE: unique symbol = Symbol("unsure");

type Obj = Record<string, unknown>;

/** `v` as a plain object whose own keys are all among `keys` (a strict object), else unsure. */
function strict(v: unknown, keys: readonly string[]): Obj {
  if (!isRecord(v)) throw UNSURE;
  for (const k of Object.keys(v)) if (!keys.includes(k)) throw UNSURE;
  return v;
}

/** A required member's value: present and not `undefined` (zod reads a missing and an `undefined` member alike). */
function member(o: Obj, key: string): unknown {
  const v = o[key];
  if (v === undefined) throw UNSURE;
  return v;
}

const str = (v: unknown): string => {
  if (typeof v !== "string") throw UNSURE;
  return v;
};

const nonEmpty = (v: unknown): string => {
  const s = str(v);
  if (s.length < 1) throw UNSURE;
  return s;
};

const bool = (v: unknown): boolean => {
  if (typeof v !== "boolean") throw UNSURE;
  return v;
};

/** `z.int().min(min)`: a safe integer of at least `min`. */
const int = (v: unknown, min?: number): number => {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || (min !== undefined && v < min)) throw UNSURE;
  return v;
};

const nullable = <T>(v: unknown, parse: (v: unknown) => T): T | null => (v === null ? null : parse(v));

const oneOf = <T extends string>(v: unknown, values: readonly T[]): T => {
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) throw UNSURE;
  return v as T;
};

const array = <T>(v: unknown, parse: (v: unknown) => T): T[] => {
  if (!Array.isArray(v)) throw UNSURE;
  const out = new Array<T>(v.length);
  for (let i = 0; i < v.length; i++) {
    if (!(i in v)) throw UNSURE;
    out[i] = parse(v[i]);
  }
  return out;
};

/** `Identifier` in schema.ts. */
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;
const identifier = (v: unknown): string => {
  const s = str(v);
  if (!IDENTIFIER.test(s) || s.length > 64) throw UNSURE;
  return s;
};

/** `PolicyName` in schema.ts. */
const POLICY_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

const LOCATION_KEYS = ["file", "line", "column", "endLine", "endColumn"];
function location(v: unknown): Location {
  const o = strict(v, LOCATION_KEYS);
  return {
    file: str(member(o, "file")),
    line: int(member(o, "line"), 1),
    column: int(member(o, "column"), 1),
    endLine: int(member(o, "endLine"), 1),
    endColumn: int(member(o, "endColumn"), 1),
  };
}

/** `fieldLocations(keys)`: each member optional; present only when the candidate has it. */
function fields<K extends string>(v: unknown, keys: readonly K[]): { [P in K]?: Location } {
  const o = strict(v, keys);
  const out: { [P in K]?: Location } = {};
  for (const k of keys) {
    if (!Object.hasOwn(o, k)) continue;
    if (o[k] === undefined) throw UNSURE;
    out[k] = location(o[k]);
  }
  return out;
}

const PIN_KEYS = ["name", "pattern", "preset", "location"];
function pin(v: unknown): PinIR {
  const o = strict(v, PIN_KEYS);
  return {
    name: nonEmpty(member(o, "name")),
    pattern: nonEmpty(member(o, "pattern")),
    preset: nullable(member(o, "preset"), str),
    location: location(member(o, "location")),
  };
}

const STORE_KEYS = ["name", "engine", "retentionMs", "holds", "distinguishesAbsent", "writable", "location", "fields"];
const STORE_FIELDS = ["engine", "retention", "holds", "distinguishesAbsent", "writable"] as const;
function store(v: unknown): StoreIR {
  const o = strict(v, STORE_KEYS);
  return {
    name: identifier(member(o, "name")),
    engine: oneOf(member(o, "engine"), ENGINES),
    retentionMs: nullable(member(o, "retentionMs"), (x) => int(x, 0)),
    holds: bool(member(o, "holds")),
    distinguishesAbsent: bool(member(o, "distinguishesAbsent")),
    writable: bool(member(o, "writable")),
    location: location(member(o, "location")),
    fields: fields(member(o, "fields"), STORE_FIELDS),
  };
}

const KIND_KEYS = ["name", "store", "modes", "lossy", "repersist", "pins", "compressTargetTokens", "location", "fields"];
const KIND_FIELDS = ["store", "modes", "lossy", "repersist", "pins", "compressTargetTokens"] as const;
function kind(v: unknown): KindIR {
  const o = strict(v, KIND_KEYS);
  return {
    name: identifier(member(o, "name")),
    store: nullable(member(o, "store"), identifier),
    modes: array(member(o, "modes"), (m) => oneOf(m, PRUNE_MODES)),
    lossy: oneOf(member(o, "lossy"), LOSSY_RULES),
    repersist: bool(member(o, "repersist")),
    pins: array(member(o, "pins"), pin),
    compressTargetTokens: nullable(member(o, "compressTargetTokens"), (x) => int(x, 1)),
    location: location(member(o, "location")),
    fields: fields(member(o, "fields"), KIND_FIELDS),
  };
}

function compaction(v: unknown): CompactionIR {
  const o = strict(v, ["minFreedTokens", "atTokens"]);
  const c = { minFreedTokens: int(member(o, "minFreedTokens"), MIN_COMPACTION_TOKENS), atTokens: nullable(member(o, "atTokens"), (x) => int(x)) };
  // The schema's refinement.
  if (c.atTokens !== null && !(c.atTokens > c.minFreedTokens)) throw UNSURE;
  return c;
}

const SESSION_KEYS = ["maxLengthMs", "lossyBudget", "searchTokens", "compaction", "providerCompaction", "location", "fields"];
const SESSION_FIELDS = ["maxLength", "lossyBudget", "searchTokens", "compaction", "providerCompaction"] as const;
function session(v: unknown): SessionIR {
  const o = strict(v, SESSION_KEYS);
  return {
    maxLengthMs: nullable(member(o, "maxLengthMs"), (x) => int(x, 1)),
    lossyBudget: nullable(member(o, "lossyBudget"), (x) => int(x, 0)),
    searchTokens: nullable(member(o, "searchTokens"), (x) => int(x, MIN_SEARCH_TOKENS)),
    compaction: nullable(member(o, "compaction"), (x) => (x === "immediate" ? "immediate" : compaction(x))),
    providerCompaction: nullable(member(o, "providerCompaction"), (x) => oneOf(x, ["forbid", "allow"] as const)),
    location: location(member(o, "location")),
    fields: fields(member(o, "fields"), SESSION_FIELDS),
  };
}

const POLICY_KEYS = ["name", "file", "extends", "stores", "kinds", "session", "pins", "tombstone", "location", "fields"];
const POLICY_FIELDS = ["name", "stores", "kinds", "session", "pins", "tombstone"] as const;
function policy(v: unknown): PolicyIR {
  const o = strict(v, POLICY_KEYS);
  const name = str(member(o, "name"));
  if (!POLICY_NAME.test(name) || name.length > 64) throw UNSURE;
  return {
    name,
    file: str(member(o, "file")),
    extends: nullable(member(o, "extends"), (x) => {
      const e = strict(x, ["name", "file"]);
      return { name: str(member(e, "name")), file: str(member(e, "file")) };
    }),
    stores: array(member(o, "stores"), store),
    kinds: array(member(o, "kinds"), kind),
    session: session(member(o, "session")),
    pins: array(member(o, "pins"), pin),
    tombstone: nullable(member(o, "tombstone"), (x) => {
      const t = strict(x, ["text", "location"]);
      return { text: str(member(t, "text")), location: location(member(t, "location")) };
    }),
    location: location(member(o, "location")),
    fields: fields(member(o, "fields"), POLICY_FIELDS),
  };
}

/**
 * What `PolicyIR.parse(candidate)` returns when the candidate is valid; `undefined` when it is not, or when
 * this cannot tell exactly as zod would (then `PolicyIR.safeParse` decides, and says why).
 */
export function parsePolicyIR(candidate: unknown): PolicyIR | undefined {
  try {
    return policy(candidate);
  } catch (error) {
    if (error === UNSURE) return undefined;
    throw error;
  }
}
