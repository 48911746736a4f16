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
  /** `duplicates` are literal keys written twice in one object literal (the last one wins, as in JS). */
  | {
      readonly t: "object";
      readonly entries: readonly ObjectEntry[];
      readonly duplicates: readonly ObjectEntry[];
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
