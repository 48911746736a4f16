/**
 * The shape of a window's options, checked with zod when the window is built, so a policy or option that
 * is not exactly what the runtime understands fails closed with the field named — `lossy: "Forbid"` is an
 * error, not a kind that allows lossy; a clock function instead of `{ now() }` is an error at
 * construction, not `now is not a function` in the middle of a prune.
 */
import { z } from "zod";
import { cutUnits, isFramed, LINE_BREAK, oneLine } from "../render/framing.js";
import { MIN_COMPACTION_TOKENS, MIN_SEARCH_TOKENS } from "../policy/kinds.js";
import { clockSchema } from "../stores/store-options.js";
import { PRUNE_MODES, type PruneMode } from "../types.js";
import { MAX_QUERY_TEXT } from "../telemetry/index.js";

/** Kind names appear in rendered headers (`[span_3 toolResult]`): identifiers, so no name can forge a line. */
export const KIND_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

const positiveMs = z.number().finite().positive({ error: "must be a positive number of milliseconds" });

const pinPattern = z.strictObject({
  name: z.string({ error: "must be a string" }).min(1, { error: "must not be empty" }),
  pattern: z.string({ error: "must be a string (an RE2 pattern)" }),
});

const kindPolicy = z.strictObject({
  store: z.string({ error: "must be a store name or null" }).min(1).nullable(),
  modes: z
    .array(z.enum(PRUNE_MODES as [PruneMode, ...PruneMode[]], { error: `must be one of ${PRUNE_MODES.join(", ")}` }), { error: "must be an array of prune modes" })
    .min(1, { error: "allows no prune mode" }),
  lossy: z.enum(["forbid", "with-flag"], { error: (i) => `must be "forbid" or "with-flag", got ${show(i.input)}` }),
  repersist: z.boolean({ error: "must be true or false" }).optional(),
  pins: z.array(pinPattern, { error: "must be an array of { name, pattern }" }).optional(),
  compressTargetTokens: z.number().int().positive({ error: "must be a positive integer" }).optional(),
});

/** Something with the methods the window calls on a store: an instance of an adapter, not its options. */
const backingStore = z.custom<object>(
  (v) =>
    typeof v === "object" && v !== null &&
    ["persist", "commitPrune", "lookup", "appendAudit", "auditLog", "countLossy", "releaseHolds", "rotate", "searchCopies"].every((m) => typeof (v as Record<string, unknown>)[m] === "function") &&
    typeof (v as { name?: unknown }).name === "string" && typeof (v as { capabilities?: unknown }).capabilities === "object",
  { error: "must be a BackingStore (a MemoryStore, SqliteStore, PostgresStore or another adapter), not its options" },
);


export const windowOptionsSchema = z.object({
  // A session id is a key in every store: one that SQLite or PostgreSQL would store altered (a lone surrogate
  // becomes U+FFFD in UTF-8, so two ids would name one session) is refused here.
  session: z.string({ error: "must be a non-empty string" }).min(1, { error: "must be a non-empty string" })
    .refine((s) => s.isWellFormed(), { error: "must be well-formed text: a lone surrogate would be stored as U+FFFD, naming another session" }),
  kinds: z.record(z.string().regex(KIND_NAME, { error: "kind names must be identifiers (letters, digits, _ and -; at most 64)" }), kindPolicy, {
    error: (i) =>
      i.code === "invalid_type" ? "must be an object of kind policies"
      : i.code === "invalid_key" ? "is not a kind name: kind names must be identifiers (letters, digits, _ and -; at most 64)"
      : undefined,
  }),
  stores: z.record(z.string(), backingStore, { error: (i) => (i.code === "invalid_type" ? "must be an object of stores by name" : undefined) }),
  clock: clockSchema.optional(),
  limits: z
    .strictObject({
      maxLengthMs: positiveMs.nullable().optional(),
      lossyBudget: z.number().int().nonnegative({ error: "must be a whole number ≥ 0" }).nullable().optional(),
      maxTokens: z.number().int().positive({ error: "must be a positive whole number of tokens" }).nullable().optional(),
      searchTokens: z.number().int().min(MIN_SEARCH_TOKENS, { error: `must be a whole number of tokens ≥ ${MIN_SEARCH_TOKENS} (room for the coverage line)` }).nullable().optional(),
      compaction: z
        .union([
          z.literal("immediate"),
          z.strictObject({
            minFreedTokens: z.number().int().min(MIN_COMPACTION_TOKENS, { error: `must be a whole number of tokens ≥ ${MIN_COMPACTION_TOKENS}` }),
            atTokens: z.number().int().positive({ error: "must be a positive whole number of tokens" }).nullable(),
          }),
        ], { error: `must be "immediate" or { minFreedTokens, atTokens }` })
        .nullable()
        .optional(),
      providerCompaction: z.enum(["forbid", "allow"], { error: `must be "forbid" or "allow"` }).nullable().optional(),
    })
    .optional(),
  pins: z.array(pinPattern).optional(),
  // The tombstone is a runtime line: one line, never starting like framed text, so nothing can mistake it.
  tombstone: z
    .string({ error: "must be a string with {span}" })
    .refine((t) => !LINE_BREAK.test(t) && !isFramed(t) && !/[\x00-\x1f\x7f-\x9f]/.test(t), {
      error: "must be one line of plain text (no line breaks or control characters, not starting with the frame's gutter or with whitespace)",
    })
    .optional(),
  auditStore: z.string().optional(),
  directiveLimits: z
    .strictObject({
      maxDigestChars: z.number().int().positive().optional(),
      maxDirectiveChars: z.number().int().positive().optional(),
      maxQueryChars: z.number().int().positive().optional(),
    })
    .optional(),
  telemetry: z
    .union([
      z.literal(false),
      z.strictObject({
        tracer: withMethods(["startSpan"], "an OpenTelemetry Tracer (trace.getTracer(...))").nullable().optional(),
        meter: withMethods(["createCounter", "createHistogram"], "an OpenTelemetry Meter (metrics.getMeter(...))").nullable().optional(),
        queryText: z.number().int().min(0).max(MAX_QUERY_TEXT, { error: `must be a whole number of characters from 0 to ${MAX_QUERY_TEXT}` }).optional(),
      }),
    ], { error: "must be false or { tracer?, meter?, queryText? }" })
    .optional(),
  policyName: z.string({ error: "must be a policy's name" }).min(1, { error: "must be a policy's name" }).max(64, { error: "must be a policy's name (at most 64 characters)" }).optional(),
  policyChange: z.enum(["allow", "refuse"], { error: 'must be "allow" or "refuse"' }).optional(),
  directiveTools: z
    .array(z.looseObject({ name: z.string(), op: z.string() }), { error: "must be an array of directive tools (directiveTools())" })
    .optional(),
});

/** An object with these methods (an OpenTelemetry tracer or meter: the runtime never imports their types). */
function withMethods(methods: readonly string[], what: string) {
  return z.custom<object>(
    (v) => typeof v === "object" && v !== null && methods.every((m) => typeof (v as Record<string, unknown>)[m] === "function"),
    { error: `must be ${what}, or null` },
  );
}

export function show(v: unknown): string {
  try {
    return typeof v === "function" ? "a function" : cutUnits(JSON.stringify(v) ?? String(v), 40);
  } catch {
    return typeof v;
  }
}

/** The first problems of a failed parse, each as `field.path: message`. */
export function describeIssues(error: z.ZodError, max = 3): string {
  return error.issues
    .slice(0, max)
    .map((i) => {
      const path = oneLine(i.path.map(String).join("."), 80);
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join("; ");
}
