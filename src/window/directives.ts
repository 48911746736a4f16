/**
 * The untrusted path in: a directive as model output (JSON text or a parsed value) or as a provider's tool
 * call, read once, its refs read as span ids, parsed, and sent to its operation's step. The table `STEPS`
 * has one entry per directive operation: an operation added to the schema does not compile until it names
 * its step and says whether it changes the window (refused once the session has ended).
 */
import { directiveForAudit } from "../audit.js";
import { parseDirective, SPAN_ID, type Directive } from "../directive.js";
import { errorMessage } from "../errors.js";
import type { DirectiveOutcome, InvalidOutcome } from "../outcome.js";
import { invalidLine } from "../render/lines.js";
import { decide } from "../telemetry/index.js";
import { defaultTools, directiveOf, toolCallResult, toolFor, type ToolCall, type ToolCallResult } from "../tools/call.js";
import type { DirectiveTool } from "../tools/schemas.js";
import type { WindowCore } from "./core.js";
import { compactAsked } from "./lifecycle.js";
import { mapWindow } from "./mapping.js";
import { prune } from "./prune.js";
import { recallSpan, searchWindow } from "./reads.js";
import { readRef, type RefReading } from "./refs.js";
import { invalid, refuseForeign } from "./refusals.js";
import { summarizeRange } from "./summarize.js";

/** The fields of a directive that name a span, and so may hold a ref. */
const REF_FIELDS = ["span_id", "from", "to"] as const;

/** One directive operation: its step, and whether it changes the window. */
interface Step<Op extends Directive["op"]> {
  readonly changesWindow: boolean;
  /** `callId`: the provider's tool call the directive came in, when it did (a map's answer may refer to an earlier one's). */
  run(core: WindowCore, d: Extract<Directive, { op: Op }>, raw: string, callId: string | null): Promise<DirectiveOutcome>;
}

const STEPS: { readonly [Op in Directive["op"]]: Step<Op> } = {
  prune: { changesWindow: true, run: (core, d, raw) => prune(core, d.span_id, d.mode, d.digest ?? null, d.accept_lossy === true, raw) },
  summarize_range: { changesWindow: true, run: (core, d, raw) => summarizeRange(core, d.from, d.to, d.digest, raw) },
  compact: { changesWindow: true, run: (core, _d, raw) => compactAsked(core, raw) },
  recall: { changesWindow: false, run: (core, d, raw) => recallSpan(core, d.span_id, raw) },
  map: { changesWindow: false, run: (core, _d, raw, callId) => mapWindow(core, raw, callId) },
  search: { changesWindow: false, run: (core, d, raw) => searchWindow(core, d.query, d.regex === true, raw) },
};

/** Sends a parsed directive to its step. */
function runStep<Op extends Directive["op"]>(core: WindowCore, d: Extract<Directive, { op: Op }>, raw: string, callId: string | null): Promise<DirectiveOutcome> {
  const step = STEPS[d.op as Op];
  if (step.changesWindow && core.ended) return invalid(core, d.op, [{ path: "", message: "the session has ended" }], raw);
  return step.run(core, d, raw, callId);
}

/**
 * Model output in, an outcome out. Never throws; a bad directive leaves the window unchanged and is
 * audited with its reason. `callId`: the provider's tool call it came in (`answerToolCall`), `null` from code.
 */
export async function applyDirective(core: WindowCore, input: unknown, callId: string | null = null): Promise<DirectiveOutcome> {
  // An object's size is bounded before it is copied, as a string's length is before it is parsed: what an AI
  // SDK hands over parsed from the model's arguments can hold a million keys (seconds, and a message of megabytes).
  const tooLarge = oversized(input);
  if (tooLarge !== null) return invalid(core, null, [{ path: "", message: tooLarge }], TOO_LARGE);
  // Read untrusted input exactly once: a getter must not show the audit log one value and the parser another.
  const given = snapshot(input);
  const raw = directiveForAudit(given);
  try {
    const { value, foreign } = localize(core, given);
    const parsed = parseDirective(value, core.settings.directiveLimits);
    if (!parsed.ok) return await invalid(core, parsed.op, parsed.issues, raw);
    const d = parsed.directive;
    if (foreign !== null) return await refuseForeign(core, d.op, foreign.reading, foreign.given, raw, d.op === "prune" ? d.mode : "summarize");
    return await runStep(core, d, raw, callId);
  } catch (err) {
    // Only a defect in the runtime itself gets here; the model still gets data, not an exception.
    return invalid(core, null, [{ path: "", message: `internal error: ${errorMessage(err)}` }], raw).catch(() => ({
      op: null, status: "invalid", issues: [], message: "internal error", line: invalidLine("internal error"), auditSeq: null,
    }) satisfies InvalidOutcome);
  }
}

/** A tool call read: the directive tool it names and its call id, or `null` when it is not one of `tools`. */
export interface ToolCallReading {
  readonly tool: DirectiveTool;
  readonly id: unknown;
  readonly args: unknown;
}

/** Reads a provider's tool call once; learns `tools`' names (their traffic is not searched, and folds). */
export function readToolCall(core: WindowCore, call: ToolCall, tools: readonly DirectiveTool[] = defaultTools()): ToolCallReading | null {
  let name: unknown;
  let args: unknown;
  try {
    ({ name, arguments: args } = call);
  } catch {
    return null; // not a readable call at all
  }
  core.learnTools(tools);
  const tool = toolFor(name, tools);
  if (tool === undefined) return null;
  let id: unknown;
  try {
    id = (call as { readonly id?: unknown }).id;
  } catch {
    id = undefined; // a hostile call object: nothing to fold by
  }
  return { tool, id, args };
}

/**
 * Answers a tool call read by `readToolCall`: the arguments become a directive (or an invalid outcome,
 * audited), run through `apply` (the window's serialized `applyDirective`) or `refuse`. A call the window
 * acted on and answered in full is runtime traffic: folded at the next compaction point.
 */
export async function answerToolCall(
  core: WindowCore,
  call: ToolCallReading,
  apply: (directive: unknown, callId: string | null) => Promise<DirectiveOutcome>,
  serial: <T>(op: () => Promise<T>) => Promise<T>,
): Promise<ToolCallResult> {
  const { tool, id, args } = call;
  // Sized before `directiveOf` copies it (with its `op`), and refused without serialising it for the audit. Listing
  // an object's keys costs the engine a pass over all of them however early the count stops (V8 prepares the
  // whole key list for `for…in` and `Object.keys`): what stays in our control is that it is the only pass.
  const tooLarge = oversized(args);
  const d = tooLarge === null ? directiveOf(tool, args, core.settings.directiveLimits.maxDirectiveChars) : { invalid: tooLarge };
  const outcome = "directive" in d
    ? await apply(d.directive, typeof id === "string" ? id : null)
    : await serial(() => decide(core.telemetry, tool.op, () => invalid(core, tool.op, [{ path: "", message: d.invalid }], tooLarge === null ? directiveForAudit(args) : TOO_LARGE)));
  // Prune, map and compact calls fold (`FOLDED_OPS`); search and recall answers stay: they carry text the model asked for.
  if (typeof id === "string" && outcome.status !== "invalid") core.state.actedOn(tool.op, id);
  return toolCallResult(tool, outcome);
}

/**
 * The span id a read (recall, `span`) names: a bare id, or a ref of this session, whichever window of it
 * made the ref (a window before a restart, another process): the session's ids name the same spans in
 * all of them. `null` for a ref of another session or anything else. Only reads take this; a prune
 * takes a ref of this window alone.
 */
export function readingId(core: WindowCore, value: unknown): string | null {
  const reading = readRef(core.self, value);
  if (reading.kind === "own" || reading.kind === "bare") return reading.spanId;
  return reading.kind === "foreign" && reading.owner.session === core.session ? reading.spanId : null;
}

/** A ref of another window, found in a directive: refused once the rest of the directive parses. */
export interface ForeignRef {
  readonly reading: Extract<RefReading, { kind: "foreign" }>;
  readonly given: string;
}

/**
 * A directive given as data (code builds them from refs): its refs read as the span ids the parser
 * knows. A ref of this window becomes its id; a ref of another window becomes its id too, so the rest of
 * the directive is still checked, and is returned to be refused once it parses.
 */
export function localize(core: WindowCore, value: unknown): { readonly value: unknown; readonly foreign: ForeignRef | null } {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { value, foreign: null };
  let out: Record<string, unknown> | null = null;
  let foreign: ForeignRef | null = null;
  for (const field of REF_FIELDS) {
    const given = Object.hasOwn(value, field) ? (value as Record<string, unknown>)[field] : undefined;
    if (typeof given !== "string" || SPAN_ID.test(given)) continue;
    const reading = readRef(core.self, given);
    if (reading.kind !== "own" && reading.kind !== "foreign") continue;
    out ??= { ...(value as Record<string, unknown>) };
    out[field] = reading.spanId;
    if (reading.kind === "foreign") foreign ??= { reading, given };
  }
  return { value: out ?? value, foreign };
}

/** What the audit log keeps of a directive too large to read. */
const TOO_LARGE = directiveForAudit("[directive too large]");

/** The most values (keys and items, at every depth) a directive given as an object may hold; depth is bounded too. */
export const MAX_DIRECTIVE_VALUES = 10_000;
const MAX_DIRECTIVE_DEPTH = 64;

/**
 * Why an object given as a directive is too large to read, or `null`. Counts what `snapshot`'s copy would
 * hold — own enumerable string keys, array items, Map and Set entries, typed array elements — each container
 * once (a cycle is copied as a cycle), and stops at the first bound passed: a container is sized before its
 * contents are listed (listing a million-item array's keys costs as much as copying it). An object's keys are
 * counted by a `for…in` that returns at the bound, so at most the bound's worth of keys is read; the engine still
 * prepares the whole key list before the first (2 million keys: about 1–2 s, as long as building the object
 * took its caller), which no bound placed in JavaScript avoids. Reads data properties only: a getter is not
 * called here (`snapshot` reads each property once).
 */
function oversized(input: unknown): string | null {
  if (input === null || typeof input !== "object") return null;
  const tooMany = `directive holds more than ${MAX_DIRECTIVE_VALUES} values: not read`;
  let values = 0;
  const seen = new WeakSet<object>();
  const stack: Array<{ readonly value: object; readonly depth: number }> = [{ value: input, depth: 0 }];
  const push = (v: unknown, depth: number) => {
    if (v !== null && typeof v === "object" && !seen.has(v)) stack.push({ value: v, depth });
  };
  try {
    while (stack.length > 0) {
      const { value, depth } = stack.pop()!;
      if (seen.has(value)) continue;
      seen.add(value);
      if (depth > MAX_DIRECTIVE_DEPTH) return `directive nested deeper than ${MAX_DIRECTIVE_DEPTH} levels: not read`;
      if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
        if ((values += value.byteLength) > MAX_DIRECTIVE_VALUES) return tooMany;
      } else if (value instanceof Map || value instanceof Set) {
        if ((values += value.size) > MAX_DIRECTIVE_VALUES) return tooMany;
        if (value instanceof Map) {
          Map.prototype.forEach.call(value, (v: unknown, k: unknown) => {
            push(k, depth + 1);
            push(v, depth + 1);
          });
        } else Set.prototype.forEach.call(value, (v: unknown) => push(v, depth + 1));
      } else if (Array.isArray(value)) {
        if ((values += value.length) > MAX_DIRECTIVE_VALUES) return tooMany;
        for (let i = 0; i < value.length; i++) push(Object.getOwnPropertyDescriptor(value, i)?.value, depth + 1);
      } else {
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          if (++values > MAX_DIRECTIVE_VALUES) return tooMany;
          push(Object.getOwnPropertyDescriptor(value, key)?.value, depth + 1);
        }
      }
    }
  } catch (err) {
    // Too many properties for the engine to list is too large; a proxy that throws is `snapshot`'s to refuse.
    return err instanceof RangeError ? tooMany : null;
  }
  return null;
}

/** A plain-data copy of untrusted input, taken once; an unreadable value becomes a marker string. */
function snapshot(input: unknown): unknown {
  if (typeof input === "string" || input === null || typeof input !== "object") return input;
  try {
    // structuredClone reads each property once and keeps non-JSON values (a Boolean object stays one,
    // so it still fails the schema); proxies and functions cannot be cloned and end up invalid.
    return structuredClone(input);
  } catch {
    return "[unreadable directive]";
  }
}
