/**
 * Static values: what the front end knows about an expression without running it. Every value keeps the
 * location of the expression it came from, so later phases can point at it.
 */
import type { Location } from "../ir/location.js";
import type { PinIR, PolicyIR, StoreIR } from "../ir/schema.js";

export interface ObjectEntry {
  readonly key: string;
  readonly keyLocation: Location;
  readonly value: SValue;
}

export type SValue =
  | { readonly t: "string"; readonly value: string; readonly location: Location }
  /** `duration` marks numbers made by `hours(2)` and friends. */
  | { readonly t: "number"; readonly value: number; readonly duration: boolean; readonly location: Location }
  | { readonly t: "boolean"; readonly value: boolean; readonly location: Location }
  | { readonly t: "null"; readonly location: Location }
  | { readonly t: "undefined"; readonly location: Location }
  | { readonly t: "regex"; readonly source: string; readonly flags: string; readonly location: Location }
  | { readonly t: "array"; readonly items: readonly SValue[]; readonly location: Location }
  /**
   * `duplicates` are literal keys written twice in one object literal (the last one wins, as in JS), each with
   * where the key was first written.
   */
  | {
      readonly t: "object";
      readonly entries: readonly ObjectEntry[];
      readonly duplicates: ReadonlyArray<ObjectEntry & { readonly first: Location }>;
      readonly location: Location;
    }
  /** A DSL export that has not been called yet: `definePolicy`, `store.sqlite`, `pins`. */
  | { readonly t: "dsl"; readonly name: string; readonly location: Location }
  | { readonly t: "store"; readonly store: Omit<StoreIR, "name" | "location">; readonly location: Location }
  | { readonly t: "pin"; readonly pin: PinIR; readonly location: Location }
  | { readonly t: "policy"; readonly policy: PolicyIR; readonly location: Location }
  /**
   * A function the policy declares (`function f() {}`, `const f = () => …`), which is never called: each
   * call is reported where it is written. `inline` writes a call's argument texts into the helper's one
   * returned expression (`undefined` when it has more than one statement, or too long a result);
   * `constable` says whether `as const` may follow that text.
   */
  | {
      readonly t: "function";
      readonly name: string;
      readonly declared: Location;
      readonly params: number;
      readonly inline: (args: readonly string[]) => string | undefined;
      readonly constable: boolean;
      readonly location: Location;
    }
  /** Something already reported; consumers stay quiet about it so one mistake yields one diagnostic. */
  | { readonly t: "invalid"; readonly location: Location };

export function describe(v: SValue): string {
  switch (v.t) {
    case "number":
      return v.duration ? "a duration" : "a number";
    case "dsl":
      return `the DSL export \`${v.name}\``;
    case "store":
      return "a store declaration";
    case "pin":
      return "a pin";
    case "policy":
      return "a policy";
    case "function":
      return `the function \`${v.name}\``;
    case "invalid":
      return "an invalid value";
    case "undefined":
      return "undefined";
    case "null":
      return "null";
    case "regex":
      return "a regular expression";
    case "array":
      return "an array";
    case "object":
      return "an object";
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
  }
}

export function entry(v: Extract<SValue, { t: "object" }>, key: string): ObjectEntry | undefined {
  return v.entries.find((e) => e.key === key);
}

/**
 * How large a value is, written out: the characters of its strings and keys, plus one for each item, entry
 * and other value. A value used twice counts twice, as it is written twice into the IR. Remembered per
 * object, so measuring a new array costs one look at each of its items.
 */
export function sizeOf(v: SValue): number {
  switch (v.t) {
    case "string":
      return v.value.length;
    case "regex":
      return v.source.length + v.flags.length;
    case "array":
    case "object":
    case "pin":
    case "store":
    case "policy": {
      let n = SIZES.get(v);
      if (n === undefined) {
        n = 1;
        if (v.t === "array") for (const item of v.items) n += sizeOf(item);
        else if (v.t === "object") for (const e of v.entries) n += e.key.length + sizeOf(e.value);
        else n = irSize(v.t === "pin" ? v.pin : v.t === "store" ? v.store : v.policy);
        SIZES.set(v, n);
      }
      return n;
    }
    default:
      return 1;
  }
}

const SIZES = new WeakMap<object, number>();

/** `sizeOf` for IR data (a pin, a store, a policy), leaving out locations, which a policy does not choose. */
function irSize(x: unknown): number {
  if (typeof x === "string") return x.length;
  if (typeof x !== "object" || x === null) return 1;
  let n = SIZES.get(x);
  if (n !== undefined) return n;
  n = 1;
  if (Array.isArray(x)) for (const item of x as unknown[]) n += irSize(item);
  else for (const [k, value] of Object.entries(x)) if (k !== "location" && k !== "fields") n += k.length + irSize(value);
  SIZES.set(x, n);
  return n;
}
