/**
 * The options every adapter accepts, resolved once: validation, defaults and the settings the
 * `BackingStore` interface exposes. Adapters extend `StoreBase` and keep only their storage.
 */
import { z } from "zod";
import { STORE_DEFAULTS, type StorePromises } from "../policy/stores.js";
import { systemClock, type Clock } from "../types.js";
import type { StoreCapabilities } from "./store.js";

/**
 * Options every adapter accepts: the promises a policy's store declaration makes (set
 * `distinguishesAbsent: false` to model a legacy store whose lookups return empty for both), and where
 * the store keeps its records.
 */
export interface StoreOptions extends StorePromises {
  readonly name: string;
  /** Retention of unheld records; `null` or absent keeps them forever. */
  readonly retentionMs?: number | null;
  readonly clock?: Clock;
  /**
   * Up to four lowercase letters before the `#` of every handle this store mints. Needed only when one
   * window uses several stores: their handles must not collide. Default `""`.
   */
  readonly handlePrefix?: string;
}

/** A clock is an object with a `now()` method; a bare function is the usual mistake. */
export const clockSchema = z.custom<object>((v) => typeof v === "object" && v !== null && typeof (v as { now?: unknown }).now === "function", {
  error: (i) => (typeof i.input === "function" ? "must be an object with a now() method, not a function: pass { now: yourFunction }" : "must be an object with a now() method"),
});

/**
 * The options every adapter shares, checked with zod at construction (adapters add their own fields, so
 * unknown keys pass here). A promise given as anything but a boolean (`holds: "no"`) is an error, not a
 * truthy "yes".
 */
const storeOptionsSchema = z.object({
  name: z.string({ error: "must be a non-empty string" }).min(1, { error: "must be a non-empty string" }),
  retentionMs: z
    .number({ error: "must be a non-negative number of milliseconds or null" })
    .finite({ error: "must be a non-negative number of milliseconds or null" })
    .nonnegative({ error: "must be a non-negative number of milliseconds or null" })
    .nullable()
    .optional(),
  clock: clockSchema.optional(),
  handlePrefix: z.string().regex(/^[a-z]{0,4}$/, { error: "must be 0-4 lowercase letters" }).optional(),
  holds: z.boolean({ error: "must be true or false" }).optional(),
  distinguishesAbsent: z.boolean({ error: "must be true or false" }).optional(),
  writable: z.boolean({ error: "must be true or false" }).optional(),
});

/** The settings of a store, validated, with defaults filled in. */
export abstract class StoreBase {
  readonly name: string;
  readonly capabilities: StoreCapabilities;
  /** Retention of unheld records in ms; `null` keeps them forever. */
  readonly retentionMs: number | null;
  /** Prefix of the handles this store mints (`""` → `#12`, `"t"` → `t#12`). */
  readonly handlePrefix: string;
  protected readonly clock: Clock;

  constructor(options: StoreOptions) {
    const shape = storeOptionsSchema.safeParse(options);
    if (!shape.success) {
      const name = typeof (options as { name?: unknown } | null)?.name === "string" ? options.name : "(unnamed)";
      const issue = shape.error.issues[0]!;
      const field = issue.path.map(String).join(".");
      throw new RangeError(`store ${name}: ${field ? `${field} ` : ""}${issue.message}`);
    }
    this.name = options.name;
    this.retentionMs = resolveRetention(options.name, options.retentionMs);
    this.capabilities = Object.freeze({
      distinguishesAbsent: options.distinguishesAbsent ?? STORE_DEFAULTS.distinguishesAbsent,
      holds: options.holds ?? STORE_DEFAULTS.holds,
      writable: options.writable ?? STORE_DEFAULTS.writable,
    });
    this.handlePrefix = resolveHandlePrefix(options.name, options.handlePrefix);
    this.clock = options.clock ?? systemClock;
  }

  /** The `n`th handle this store mints for a session. */
  protected handle(n: number): string {
    return `${this.handlePrefix}#${n}`;
  }
}

/** Retention must be a non-negative finite number of ms, or null for "forever". */
function resolveRetention(name: string, retentionMs: number | null | undefined): number | null {
  if (retentionMs === undefined || retentionMs === null) return null;
  if (!Number.isFinite(retentionMs) || retentionMs < 0) {
    throw new RangeError(`store ${name}: retentionMs must be a non-negative number of milliseconds or null, got ${retentionMs}`);
  }
  return retentionMs;
}

function resolveHandlePrefix(name: string, prefix: string | undefined): string {
  const p = prefix ?? "";
  if (!/^[a-z]{0,4}$/.test(p)) throw new RangeError(`store ${name}: handlePrefix must be 0-4 lowercase letters, got ${JSON.stringify(p)}`);
  return p;
}
