/**
 * The policy IR: the contract between the front end, the checks and the emitters.
 *
 * Plain data validated with zod; no ts-morph object ever appears here. Every node carries `location`
 * (where it was declared: for an overlay, inherited nodes point into the base file) and, where a check
 * needs to point at one field, `fields` (the location of each field that was written in source).
 * An overlay's IR is *resolved*: it holds the effective policy, and `extends` names its base.
 */
import { z } from "zod";
import { ENGINES } from "../../src/policy/stores.js";
import { LOSSY_RULES, MIN_COMPACTION_TOKENS, MIN_SEARCH_TOKENS } from "../../src/policy/kinds.js";
import { PRUNE_MODES } from "../../src/types.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { LOCATION_POSITIONS, type Location as LocationData } from "./location.js";
import { provideIrSchema } from "./validate.js";

/** `Location` (./location.ts) as a zod schema, for the IR's nodes: the same members and rules as `isLocation`. */
export const Location = z.strictObject({
  file: z.string(),
  ...(Object.fromEntries(LOCATION_POSITIONS.map((k) => [k, z.int().min(1)])) as Record<(typeof LOCATION_POSITIONS)[number], z.ZodInt>),
}) satisfies z.ZodType<LocationData>;
export type Location = LocationData;

/** A diagnostic (`compiler/diagnostics/diagnostic.ts`) as a zod schema: the same members and rules as `isDiagnostic`. */
export const DiagnosticSchema = z.strictObject({
  code: z.string().regex(/^PG[123]\d{3}$/),
  category: z.enum(["error", "warning"]),
  message: z.string(),
  location: Location.nullable(),
  related: z.array(z.strictObject({ message: z.string(), location: Location })),
}) satisfies z.ZodType<Diagnostic>;

/** The longest kind name the runtime takes (`KIND_NAME` in src/window/window-options-schema.ts). */
const MAX_IDENTIFIER_LENGTH = 64;

/**
 * Kind and store names become TypeScript identifiers in generated code. A kind's name is also written into
 * span headers, and the runtime refuses a longer one when a window is built: refused here, the mistake is a
 * diagnostic at the kind, not a throw from `createWindow`. Store names keep to the same rule, one rule for
 * both kinds of name.
 */
export const Identifier = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]*$/, "must be an identifier: a letter, then letters, digits or '_'")
  .max(MAX_IDENTIFIER_LENGTH, `must be at most ${MAX_IDENTIFIER_LENGTH} characters`);

/** Policy names become file names (`generated/<name>.ir.json`), so they are short enough for any file system. */
export const PolicyName = z
  .string()
  .regex(/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/, "must be lower-case words separated by '-', like \"team-search\"")
  .max(MAX_IDENTIFIER_LENGTH, `must be at most ${MAX_IDENTIFIER_LENGTH} characters: it names the generated files`);

const fieldLocations = <const K extends string>(keys: readonly K[]) =>
  z.strictObject(Object.fromEntries(keys.map((k) => [k, Location.optional()])) as { [P in K]: z.ZodOptional<typeof Location> });

export const PruneModeIR = z.enum(PRUNE_MODES as readonly ["drop", "summarize", "compress"]);
export const LossyRuleIR = z.enum(LOSSY_RULES as readonly ["forbid", "with-flag"]);
/** The engines of `STORE_ENGINES` (src/policy/stores.ts), in its order. */
export const EngineIR = z.enum(ENGINES);

export const PinIR = z.strictObject({
  name: z.string().min(1),
  /** JavaScript RegExp source, matched with `gu`. */
  pattern: z.string().min(1),
  /** The preset's name when the pin is `pins.<name>`, else `null`. */
  preset: z.string().nullable(),
  location: Location,
});
export type PinIR = z.infer<typeof PinIR>;

export const StoreIR = z.strictObject({
  name: Identifier,
  engine: EngineIR,
  /** Milliseconds; `null` is forever. */
  retentionMs: z.int().min(0).nullable(),
  holds: z.boolean(),
  distinguishesAbsent: z.boolean(),
  writable: z.boolean(),
  location: Location,
  fields: fieldLocations(["engine", "retention", "holds", "distinguishesAbsent", "writable"]),
});
export type StoreIR = z.infer<typeof StoreIR>;

export const KindIR = z.strictObject({
  name: Identifier,
  store: Identifier.nullable(),
  modes: z.array(PruneModeIR),
  lossy: LossyRuleIR,
  repersist: z.boolean(),
  /** The kind's own pins (the policy-wide ones are in `PolicyIR.pins`). */
  pins: z.array(PinIR),
  compressTargetTokens: z.int().min(1).nullable(),
  location: Location,
  fields: fieldLocations(["store", "modes", "lossy", "repersist", "pins", "compressTargetTokens"]),
});
export type KindIR = z.infer<typeof KindIR>;

/** The runtime's `CompactionPolicy`, resolved: a field the policy leaves out holds its default. */
export const CompactionIR = z
  .strictObject({
    minFreedTokens: z.int().min(MIN_COMPACTION_TOKENS),
    /** `null`: the window's `maxTokens`, if it has one. */
    atTokens: z.int().nullable(),
  })
  .refine((c) => c.atTokens === null || c.atTokens > c.minFreedTokens, { message: "atTokens must be above minFreedTokens", path: ["atTokens"] });
export type CompactionIR = z.infer<typeof CompactionIR>;

export const SessionIR = z.strictObject({
  /** Milliseconds; `null` when the policy sets no limit. */
  maxLengthMs: z.int().min(1).nullable(),
  /** Lossy commitments per session; `null` is unlimited. */
  lossyBudget: z.int().min(0).nullable(),
  /** Tokens one search answer may cost; `null`: the runtime's default. */
  searchTokens: z.int().min(MIN_SEARCH_TOKENS).nullable(),
  /** When pending prunes are applied; `"immediate"`: as each is decided; `null`: the runtime's default. */
  compaction: z.union([z.literal("immediate"), CompactionIR]).nullable(),
  /** Whether sessions may use a provider's own compaction; `null`: not set (forbidden). */
  providerCompaction: z.enum(["forbid", "allow"]).nullable(),
  location: Location,
  fields: fieldLocations(["maxLength", "lossyBudget", "searchTokens", "compaction", "providerCompaction"]),
});
export type SessionIR = z.infer<typeof SessionIR>;

export const TombstoneIR = z.strictObject({ text: z.string(), location: Location });
export type TombstoneIR = z.infer<typeof TombstoneIR>;

export const PolicyIR = z.strictObject({
  name: PolicyName,
  /** The policy module this policy is the default export of. */
  file: z.string(),
  /** The base of an overlay, `null` for an organisation policy. */
  extends: z.strictObject({ name: z.string(), file: z.string() }).nullable(),
  stores: z.array(StoreIR),
  kinds: z.array(KindIR),
  session: SessionIR,
  pins: z.array(PinIR),
  /** `null`: the runtime's default wording. */
  tombstone: TombstoneIR.nullable(),
  location: Location,
  fields: fieldLocations(["name", "stores", "kinds", "session", "pins", "tombstone"]),
});
export type PolicyIR = z.infer<typeof PolicyIR>;

export { IR_VERSION } from "./version.js";

// Validation reads valid candidates without zod (`parse.ts`) and asks this schema why the others are not.
provideIrSchema(PolicyIR);
