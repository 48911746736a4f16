import { z } from "zod";
import type { DirectiveIssue } from "./outcome.js";
import { compileQuery, MAX_QUERY_CHARS } from "./search/query.js";
import { PRUNE_MODES, type PruneMode } from "./types.js";

/** Span ids the window mints: `span_` and up to nine digits. Look-alikes (`spаn_7` with a Cyrillic а) fail. */
export const SPAN_ID = /^span_[1-9][0-9]{0,8}$/;
/** A fold's key (`span_3-span_90`): the first and last span ids of a run of index lines folded into one line. */
export const FOLD_KEY = /^span_[1-9][0-9]{0,8}-span_[1-9][0-9]{0,8}$/;
/** Handles stores mint: an optional short prefix, `#` and a positive integer. */
export const HANDLE = /^[a-z]{0,4}#[1-9][0-9]{0,15}$/;

/** Bounds on untrusted input. */
export interface DirectiveLimits {
  /** Longest digest accepted, in characters. */
  readonly maxDigestChars: number;
  /** Longest raw directive accepted before parsing, in characters. */
  readonly maxDirectiveChars: number;
  /** Longest search query (substring or regex), in characters. */
  readonly maxQueryChars: number;
}

export const DEFAULT_LIMITS: DirectiveLimits = Object.freeze({ maxDigestChars: 8_000, maxDirectiveChars: 64_000, maxQueryChars: MAX_QUERY_CHARS });

/**
 * The schema of model directives. Strict: an unknown key (including `__proto__` or `constructor`) is an
 * error, and `accept_lossy` accepts the JSON booleans only, so `"true"`, `1` or `"yes"` never count as
 * consent to an irreversible loss. An optional field may be `null`, meaning absent: OpenAI's strict mode
 * sends every property and fills the ones the model left out with `null`.
 *
 * One member per operation, each discriminated by `op` and described for a model: the ready tools
 * (`directiveTools`) are generated from these members, one tool per operation.
 */
export function directiveSchema(limits: DirectiveLimits = DEFAULT_LIMITS, modes: readonly PruneMode[] = PRUNE_MODES) {
  const spanId = z.string().regex(SPAN_ID, { error: "span_id must look like span_7" });
  const prune = z
    .strictObject({
      op: z.literal("prune"),
      span_id: spanId.meta({ description: "The span to prune, as its header names it (span_7)." }),
      mode: z
        .enum(modes as [PruneMode, ...PruneMode[]], { error: `mode must be one of ${modes.join(", ")}` })
        .meta({ description: "drop: replace it by an index line; summarize: by your digest; compress: by the runtime's shortened form." }),
      digest: z
        .string()
        .min(1)
        .max(limits.maxDigestChars, { error: `digest longer than ${limits.maxDigestChars} characters` })
        .nullish()
        .meta({ description: "With mode summarize only: the text that replaces the span." }),
      accept_lossy: z
        .boolean({ error: "accept_lossy must be the JSON value true or false" })
        .nullish()
        .meta({ description: "true only to accept losing the span for good when no durable copy can be verified." }),
    })
    .superRefine((d, ctx) => {
      if (d.mode === "summarize" && d.digest == null) {
        ctx.addIssue({ code: "custom", path: ["digest"], message: "summarize needs a digest" });
      }
      if (d.mode !== "summarize" && d.digest != null) {
        ctx.addIssue({ code: "custom", path: ["digest"], message: `a digest is only taken with mode summarize, not ${d.mode}` });
      }
    })
    .meta({
      description:
        "Free a span of your context. The runtime checks that a durable copy exists first; if not, the prune is " +
        "rejected unless accept_lossy is true, and the span stays. Answers at once with the line that will stand in its " +
        "place; the context is rewritten at the next compaction point. Send prune calls alongside your next tool call, " +
        "never in a step of their own; when the answer says there is no need to prune yet, wait until your context " +
        "passes the size it names.",
    });
  const recall = z
    .strictObject({
      op: z.literal("recall"),
      span_id: z
        .union([spanId, z.string().regex(HANDLE), z.string().regex(FOLD_KEY)], { error: "span_id must be a span id (span_7), a handle (#3) or a folded run (span_3-span_90)" })
        .meta({ description: "A span id (span_7), the handle an index line gave (#3), or a folded run's key (span_3-span_90) to list its lines." }),
    })
    .meta({
      description:
        "Get a pruned span back. Answers with its exact text, or says it was pruned and cannot be recovered, or " +
        "that this session never had it.",
    });
  // Asks for the reversibility map: what a prune of each live span would be now. Takes nothing else.
  const map = z
    .strictObject({ op: z.literal("map") })
    .meta({
      description:
        "Before pruning: list, for each live span, what a prune would be now (reversible, reversible for a time, " +
        "lossy only with accept_lossy, never) and the window's token use. Advisory; the prune still checks.",
    });
  // Asks for a compaction point now: pending prunes are applied and acted-on directive calls folded away.
  const compact = z
    .strictObject({ op: z.literal("compact") })
    .meta({
      description:
        "Apply your pending prunes now instead of at the next compaction point. Each prune is decided at once but " +
        "rewrites your context only at a compaction point, because every rewrite re-sends the cached prompt after it: " +
        "compact only when you need the room now (the pending line says what it would rewrite).",
    });
  const search = z
    .strictObject({
      op: z.literal("search"),
      query: z
        .string()
        .min(1, { error: "query is empty" })
        .max(limits.maxQueryChars, { error: `query longer than ${limits.maxQueryChars} characters` })
        .meta({ description: `The text to find: an exact substring, or with regex true an RE2 regular expression. At most ${limits.maxQueryChars} characters.` }),
      regex: z
        .boolean({ error: "regex must be the JSON value true or false" })
        .nullish()
        .meta({ description: "true to read query as an RE2 regular expression (no lookahead, no backreferences)." }),
    })
    .superRefine((d, ctx) => {
      if (d.regex !== true) return;
      const compiled = compileQuery(d.query, true, limits.maxQueryChars);
      if (!compiled.ok) ctx.addIssue({ code: "custom", path: ["query"], message: compiled.message });
    })
    .meta({
      description:
        "Find text again when you do not know which span held it: searches live spans, pruned spans' stored copies " +
        "and digests. Answers with matching spans (snippet, handle to recall) and names pruned spans that could not " +
        "be searched because they are unrecoverable: those may have held it.",
    });
  const summarizeRange = z
    .strictObject({
      op: z.literal("summarize_range"),
      from: spanId.meta({ description: "The first span of the run (span_3)." }),
      to: spanId.meta({ description: "The last span of the run (span_9), after from." }),
      digest: z
        .string()
        .min(1, { error: "a range summary needs a digest" })
        .max(limits.maxDigestChars, { error: `digest longer than ${limits.maxDigestChars} characters` })
        .meta({ description: "The text that replaces the whole run." }),
    })
    .meta({
      description:
        "Replace a run of your context (spans, index lines, earlier summaries) with one digest. Every span's copy is " +
        "checked and kept first, or nothing changes; recall the summary to expand it one level, a member for its text.",
    });
  const members = [prune, recall, map, search, summarizeRange, compact] as const;
  const ops = members.map((m) => JSON.stringify(m.shape.op.value));
  return z.discriminatedUnion("op", members, { error: `op must be ${ops.slice(0, -1).join(", ")} or ${ops.at(-1)}` });
}

export type Directive = z.infer<ReturnType<typeof directiveSchema>>;
export type PruneDirective = Extract<Directive, { op: "prune" }>;
export type RecallDirective = Extract<Directive, { op: "recall" }>;
export type MapDirective = Extract<Directive, { op: "map" }>;
export type SearchDirective = Extract<Directive, { op: "search" }>;
export type SummarizeRangeDirective = Extract<Directive, { op: "summarize_range" }>;
export type CompactDirective = Extract<Directive, { op: "compact" }>;

export type ParsedDirective =
  | { readonly ok: true; readonly directive: Directive }
  | { readonly ok: false; readonly op: Directive["op"] | null; readonly issues: DirectiveIssue[] };

type DirectiveSchema = ReturnType<typeof directiveSchema>;

/**
 * What the fast path (`fastDirective`) reads off a schema, so that the rules it applies are the schema's
 * own: the members' keys (the only keys each takes; the order of a prune's result, checked), the modes and the
 * digest's bounds. What it cannot read off — each field's type, and the refinement tying a digest to mode
 * `summarize` — it states, and the property test holds those to the schema.
 */
interface FastRules {
  /** The prune member's keys; `null` when they are not the ones, in the order, the fast path writes its result in. */
  readonly prune: readonly string[] | null;
  readonly recall: readonly string[];
  readonly modes: readonly unknown[];
  readonly digestMin: number;
  readonly digestMax: number;
}

/** The order `fastDirective` writes a prune in (an object literal is several times faster than keys copied in a loop). */
const PRUNE_KEYS = ["op", "span_id", "mode", "digest", "accept_lossy"];

function fastRules(schema: DirectiveSchema): FastRules {
  const member = <O extends Directive["op"]>(op: O) => schema.options.find((m) => m.shape.op.value === op)!;
  const prune = member("prune") as DirectiveSchema["options"][0];
  // `digest` is `string().min().max().nullish()`: optional, then nullable, then the string with its bounds.
  const digest = prune.shape.digest.unwrap().unwrap();
  const pruneKeys = Object.keys(prune.shape);
  return {
    // A schema whose prune has other keys, or another order, sends every prune to zod: slower, never different.
    prune: pruneKeys.join() === PRUNE_KEYS.join() ? pruneKeys : null,
    recall: Object.keys(member("recall").shape),
    modes: prune.shape.mode.options,
    digestMin: digest.minLength ?? 0,
    digestMax: digest.maxLength ?? Number.POSITIVE_INFINITY,
  };
}

/** Schemas are built once per limits object: building one costs far more than parsing with it. */
const schemas = new WeakMap<DirectiveLimits, { readonly schema: DirectiveSchema; readonly fast: FastRules }>();

function schemaFor(limits: DirectiveLimits): { readonly schema: DirectiveSchema; readonly fast: FastRules } {
  let entry = schemas.get(limits);
  if (!entry) {
    const schema = directiveSchema(limits);
    entry = { schema, fast: fastRules(schema) };
    schemas.set(limits, entry);
  }
  return entry;
}

/** Every directive operation, in the union's order: the literals of the schema's members. */
const OPS: ReadonlySet<string> = new Set(schemaFor(DEFAULT_LIMITS).schema.options.map((m) => m.shape.op.value));

/**
 * Parses untrusted model output: a JSON string or an already-parsed value. Never throws.
 *
 * JSON text takes a fast path first (`fastDirective`): it accepts only well-formed directives, a subset of
 * what the schema accepts, and returns what the schema would; everything else — every error message
 * included — comes from the schema.
 */
export function parseDirective(input: unknown, limits: DirectiveLimits = DEFAULT_LIMITS): ParsedDirective {
  try {
    let value: unknown = input;
    if (typeof input === "string") {
      if (input.length > limits.maxDirectiveChars) {
        return { ok: false, op: null, issues: [{ path: "", message: `directive longer than ${limits.maxDirectiveChars} characters` }] };
      }
      try {
        value = JSON.parse(input);
      } catch {
        return { ok: false, op: null, issues: [{ path: "", message: "directive is not valid JSON" }] };
      }
      // Only what JSON.parse built: plain objects of data properties, no getters or proxies to read twice.
      const fast = fastDirective(value, limits);
      if (fast !== undefined) return { ok: true, directive: fast };
    }
    const r = schemaFor(limits).schema.safeParse(value);
    if (r.success) return { ok: true, directive: r.data };
    const op = opOf(value);
    return {
      ok: false,
      op,
      // Bounded: an object with a million unknown keys made one message of megabytes (zod lists them all).
      issues: r.error.issues.slice(0, 5).map((i) => ({ path: cut(i.path.map(String).join(".")), message: cut(i.message) })),
    };
  } catch {
    // A hostile value (a getter or proxy that throws) is just an invalid directive.
    return { ok: false, op: null, issues: [{ path: "", message: "directive could not be read" }] };
  }
}

/**
 * A well-formed prune or recall, checked without zod (whose parse costs as much as the rest of a prune's
 * bookkeeping) by the rules the schema states, read off it (`FastRules`): its keys, modes and digest bounds.
 * Returns `undefined` for anything it is not sure of — an unknown key, a wrong type, a rule broken — and the
 * caller asks the schema. Property-tested: whatever it accepts, the schema accepts with the same result.
 * Only for values `JSON.parse` made (own data properties; a proxy or getter would be read twice).
 */
export function fastDirective(value: unknown, limits: DirectiveLimits): Directive | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const o = value as Record<string, unknown>;
  const rules = schemaFor(limits).fast;
  const op = o["op"];
  const spanId = o["span_id"];
  const keys = op === "prune" ? rules.prune : op === "recall" ? rules.recall : null;
  // Strict, as the schema: the member's own keys only (a recall takes nothing else, not even a null).
  // `for…in` sees what `JSON.parse` made: own properties, `__proto__` included.
  if (keys === null || typeof spanId !== "string") return undefined;
  for (const key in o) if (!keys.includes(key)) return undefined;
  if (op === "recall") return SPAN_ID.test(spanId) || HANDLE.test(spanId) ? { op, span_id: spanId } : undefined;
  const mode = o["mode"];
  const digest = o["digest"];
  const acceptLossy = o["accept_lossy"];
  if (op !== "prune" || !SPAN_ID.test(spanId) || !rules.modes.includes(mode)) return undefined;
  // An optional field may be null (absent, as strict-mode tool calls send it); the schema keeps the null.
  if (acceptLossy !== undefined && acceptLossy !== null && typeof acceptLossy !== "boolean") return undefined;
  // The refinement: a digest with mode summarize, within its bounds, and with no other mode.
  if (mode === "summarize" ? typeof digest !== "string" || digest.length < rules.digestMin || digest.length > rules.digestMax : digest != null) return undefined;
  // The schema's result: the keys present, in its order (`PRUNE_KEYS`, checked against the schema's).
  const d: PruneDirective = { op, span_id: spanId, mode: mode as PruneMode };
  if (digest !== undefined) d.digest = digest as string | null;
  if (acceptLossy !== undefined) d.accept_lossy = acceptLossy as boolean | null;
  return d;
}

/** The longest issue path or message an invalid directive's outcome carries, in characters. */
export const MAX_ISSUE_CHARS = 300;

function cut(text: string): string {
  return text.length <= MAX_ISSUE_CHARS ? text : `${text.slice(0, MAX_ISSUE_CHARS - 1).toWellFormed()}…`;
}

function opOf(value: unknown): Directive["op"] | null {
  if (value === null || typeof value !== "object") return null;
  const op = Object.getOwnPropertyDescriptor(value, "op")?.value;
  return typeof op === "string" && OPS.has(op) ? (op as Directive["op"]) : null;
}
