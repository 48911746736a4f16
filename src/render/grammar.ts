/**
 * The model-facing grammar of runtime lines: every line the runtime itself writes into what the model
 * reads, as data. `parseRuntimeLine` is the reader's side of the framing rule (`render/framing.ts`): a
 * line that starts with the gutter is untrusted text and never a runtime line; any other non-blank line
 * of a rendered window must parse here. Tests parse whole renderings with `readRendered` to prove that no
 * span text or digest, whatever it contains, produces a runtime line.
 */
import { isFramed, splitLines } from "./framing.js";

const SPAN = "span_[1-9][0-9]{0,8}";
const HANDLE = "[a-z]{0,4}#[1-9][0-9]{0,15}";
const REMAINING = "(<1m|[1-9][0-9]*h[0-5][0-9]m|[1-9][0-9]?m)";
/** A clock time a copy is kept until (`formatUntil`): `17:05Z`, or `Dec 4 17:05Z` a day or more ahead. */
const CLOCK = "((?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [1-9][0-9]? )?[0-2][0-9]:[0-5][0-9]Z)";
const KIND = "[A-Za-z_][A-Za-z0-9_-]{0,63}";
/** An index-line hint (`hint.ts`): one line of plain words from a small alphabet, never a span id or handle. */
const HINT = "(?:: ([A-Za-z0-9_./=:-][A-Za-z0-9_./=: -]{0,79}))?";

/** One runtime line, parsed. */
export type RuntimeLine =
  | { readonly line: "header"; readonly spanId: string; readonly kind: string | null }
  | {
      readonly line: "index"; readonly spanId: string; readonly what: "pruned" | "summary" | "compressed"; readonly handle: string;
      readonly until: string | null; readonly hint: string | null;
    }
  | { readonly line: "unrecoverable"; readonly spanId: string; readonly what: "pruned" | "summary" | "compressed" }
  | { readonly line: "copy-uncertain"; readonly spanId: string; readonly what: "pruned" | "summary" | "compressed"; readonly copy: "may be lost" | "lost" }
  | { readonly line: "rejected"; readonly spanId: string; readonly live: boolean; readonly why: string; readonly lossyHint: boolean }
  /**
   * A prune decided earlier and not applied (its copy, or `cause`'s — a member of its tool call group — lapsed
   * or was found lost): the span is live.
   */
  | { readonly line: "not-applied"; readonly spanId: string; readonly cause: string | null; readonly copy: "lapsed" | "lost" }
  | { readonly line: "grew"; readonly spanId: string; readonly tokens: number }
  | { readonly line: "invalid"; readonly message: string }
  | { readonly line: "map-head"; readonly used: number; readonly limit: number | null; readonly live: number }
  | { readonly line: "map-span"; readonly spanId: string; readonly modes: readonly string[]; readonly prune: string }
  /** A map that refers to an earlier map's answer (`span_9`), listing the `changed` spans after it. */
  | { readonly line: "map-same"; readonly answer: string; readonly changed: number }
  | { readonly line: "map-gone"; readonly spanId: string }
  /** A summary's header: until when its members' copies are kept (the earliest), or that copies may be lost. */
  | {
      readonly line: "range-summary"; readonly spanId: string; readonly first: string; readonly last: string; readonly count: number;
      readonly until: string | null; readonly mayBeLost: boolean;
    }
  | { readonly line: "range-rejected"; readonly from: string; readonly to: string; readonly why: string }
  /** A range summary decided earlier and not applied: `member`'s copy lapsed or was found lost; the run is as it was. */
  | { readonly line: "range-not-applied"; readonly from: string; readonly to: string; readonly summaryId: string; readonly member: string; readonly copy: "lapsed" | "lost" }
  | { readonly line: "search-head"; readonly query: string; readonly matches: number }
  | { readonly line: "search-match"; readonly spanId: string; readonly kind: string; readonly where: string }
  | { readonly line: "search-more"; readonly text: string }
  | { readonly line: "search-coverage"; readonly text: string }
  | { readonly line: "recalled"; readonly spanId: string; readonly handle: string | null }
  | { readonly line: "expanded"; readonly spanId: string }
  | {
      readonly line: "fold"; readonly first: string; readonly last: string; readonly pruned: number; readonly until: string | null;
      readonly mayBeLost: number; readonly unrecoverable: number;
    }
  | { readonly line: "recall-answer"; readonly text: string }
  | { readonly line: "opening" }
  | { readonly line: "lost"; readonly spanId: string }
  /** A deferred decision's answer, the map's pending line, and a compaction point's report. */
  | { readonly line: "pending" | "map-pending" | "compacted" | "advice"; readonly text: string }
  /** A provider's compaction the window could not record, or a provider's clearing done outside its checks. */
  | { readonly line: "provider-not-recorded" | "provider-cleared"; readonly text: string };

/** The window settings a reader needs: the tombstone wording is the policy's. */
export interface GrammarContext {
  /** The tombstone template with `{span}` (default `{span} pruned, unrecoverable, contents unknown`). */
  readonly tombstone: string;
}

const re = (s: string) => new RegExp(`^${s}$`);
const HEADER = re(`\\[(${SPAN})(?: (${KIND}))?\\]`);
const INDEX = re(`(${SPAN}) (pruned|summary|compressed), recall (${HANDLE})(?: until ${CLOCK})?${HINT}`);
const UNRECOVERABLE = re(`(${SPAN}) (summary|compressed), original unrecoverable`);
const UNCERTAIN = re(`(${SPAN}) (pruned|summary|compressed), copy (may be lost|lost)(?:, contents unknown)?${HINT}`);
const REJECTED = re(`(${SPAN})( kept)?: prune rejected \\(([^()\\n]{1,200})\\)(; accept_lossy to force)?`);
const NOT_APPLIED = re(`(${SPAN}) kept: prune not applied \\((?:(${SPAN})'s )?copy (lapsed|lost)\\)`);
const GREW = re(`(${SPAN}) pruned, but its replacement costs ([1-9][0-9]{0,8}) more tokens`);
const INVALID = re(`directive ignored: ([^\\n]{1,200})`);
const MAP_HEAD = re(`map: ([0-9]{1,12}) tokens(?: of ([0-9]{1,12}))?, ([0-9]{1,9}) live spans?`);
const TOKENS_SHORT = "~(?:[0-9]{1,3}|[0-9]\\.[0-9]k|[1-9][0-9]{1,9}k)";
const MAP_PENDING = re(`pending: ([1-9][0-9]{0,8}) decisions? free ${TOKENS_SHORT} of ${TOKENS_SHORT.slice(1)} tokens; compacting now rewrites ${TOKENS_SHORT} cached tokens`);
const APPLIES = re(`applies (?:at the next compaction|before your next request): ${TOKENS_SHORT} of ${TOKENS_SHORT.slice(1)} tokens pending; compacting now rewrites ${TOKENS_SHORT} cached tokens`);
const ADVICE = re(`no need to prune yet: ${TOKENS_SHORT} tokens, pruning pays from ${TOKENS_SHORT}`);
const COMPACTED = re(`compacted: (?:nothing was pending(?:; lines shown before brought up to date, ${TOKENS_SHORT} rewritten)?|[0-9]{1,9} decisions? applied(?:, [0-9]{1,9} not applied)?(?:, [0-9]{1,9} calls? folded)?, ${TOKENS_SHORT} tokens freed, ${TOKENS_SHORT} rewritten)`);
const MAP_SPAN = re(`(${SPAN}) ((?:drop|summarize|compress)(?:,(?:drop|summarize|compress)){0,2}): (reversible(?: for ${REMAINING})?|lossy only with accept_lossy|never \\((?:lossy forbidden|lossy budget spent|tool call group|store unavailable)\\))`);
const MAP_SAME = re(`as the map in (${SPAN}) says, (?:for every span|but for ([1-9][0-9]{0,8}) spans?:)`);
const MAP_GONE = re(`(${SPAN}): no longer live`);

// Lines of tool results (search answers, recall answers) and of range summaries.
const RANGE_SUMMARY = re(`(${SPAN}) summary of (${SPAN})–(${SPAN}) \\(([1-9][0-9]{0,8})\\), (?:(copies may be lost), recall \\1|recall \\1(?: until ${CLOCK})?)`);
const RANGE_NOT_APPLIED = re(`(${SPAN})–(${SPAN}) kept: summary (${SPAN}) not applied \\((${SPAN})'s copy (lapsed|lost)\\)`);
const RANGE_REJECTED = re(`(${SPAN})–(${SPAN}) kept: summary rejected \\(([^\\n]{1,200})\\)`);
/** The query is quoted on one line (`oneLine`): JSON for a substring, slashes for a regex. */
const SEARCH_HEAD = re(`search ("[^\\n]{0,160}"|/[^\\n]{0,64}/): (?:no match|([1-9][0-9]{0,8}) spans? match)`);
const SEARCH_MATCH = re(`- (${SPAN}) (${KIND}) \\((live|pruned, recall ${HANDLE}|in its replacement)\\):`);
const SEARCH_MORE = re(`(?:\\+[1-9][0-9]{0,8} more spans? match; narrow the query to see them|[1-9][0-9]{0,8} not shown: the search budget is spent on coverage; narrow the query)`);
const SEARCH_COVERAGE = re(`(?:no match in|searched) [0-9]{1,9} live and [0-9]{1,9} recoverable pruned spans?(?:; [^\\n]{1,2000})?`);
const RECALLED = re(`(${SPAN}) recalled(?: \\((${HANDLE})\\))?:`);
const EXPANDED = re(`(${SPAN}(?:-${SPAN})?) expanded:`);
/** A run of index lines and tombstones folded into one line (`fold.ts` foldLine). */
const FOLD = re(
  `(${SPAN})-(${SPAN}): (?:([1-9][0-9]{0,8}) pruned \\(((?:[1-9][0-9]{0,8} ${KIND}, ){0,3}[1-9][0-9]{0,8} ${KIND})\\)(?: until ${CLOCK})?)?(?:, )?` +
    `(?:([1-9][0-9]{0,8}) (?:copy|copies) may be lost)?(?:, )?(?:([1-9][0-9]{0,8}) unrecoverable)?; recall \\1-\\2 to list them`,
);
/** Recall's one-line answers that are not window lines: unreachable store, lost copy, never seen, no such folded run. */
const RECALL_ANSWER = re(
  `(?:${SPAN} pruned, copy unreachable now; retry|${SPAN} pruned, copy lost, contents unknown|[^\\n]{1,40}: (?:store unreachable now; retry|never in this session)` +
    `|${SPAN}-${SPAN}: no folded run by that name now; recall each span by its own id \\(${SPAN}, …\\))`,
);

/** A provider's compaction not recorded, and a provider's clearing outside the checks (`provider-compaction.ts`). */
const PROVIDER_NOT_RECORDED = re(`provider compaction not recorded: [^\\n]{1,400}`);
const PROVIDER_CLEARED = re(`the provider cleared [0-9]{1,9} tool (?:use|uses) outside pruneguard's checks[^\\n]{0,400}`);

/** A span a resumed window could not bring back (`lines.ts` lostLine). */
const LOST = re(`(${SPAN}) lost in a restart, contents unknown`);

const templates = new Map<string, RegExp>();

function tombstonePattern(template: string): RegExp {
  let r = templates.get(template);
  if (!r) {
    const escaped = template.split("{span}").map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    r = re(escaped.join(`(${SPAN})`));
    templates.set(template, r);
  }
  return r;
}

/**
 * Parses one line as a runtime line, or `null` when it is not one. A framed line (starting with the
 * gutter or with whitespace) is never a runtime line, whatever follows.
 */
export function parseRuntimeLine(line: string, ctx: GrammarContext): RuntimeLine | null {
  if (isFramed(line)) return null;
  let m: RegExpExecArray | null;
  if ((m = HEADER.exec(line))) return { line: "header", spanId: m[1]!, kind: m[2] ?? null };
  if ((m = INDEX.exec(line))) {
    return { line: "index", spanId: m[1]!, what: m[2] as "pruned", handle: m[3]!, until: m[4] ?? null, hint: m[5] ?? null };
  }
  if ((m = UNRECOVERABLE.exec(line))) return { line: "unrecoverable", spanId: m[1]!, what: m[2] as "summary" };
  if ((m = tombstonePattern(ctx.tombstone).exec(line))) return { line: "unrecoverable", spanId: m[1]!, what: "pruned" };
  if ((m = UNCERTAIN.exec(line))) return { line: "copy-uncertain", spanId: m[1]!, what: m[2] as "pruned", copy: m[3] as "lost" };
  if ((m = REJECTED.exec(line))) return { line: "rejected", spanId: m[1]!, live: m[2] !== undefined, why: m[3]!, lossyHint: m[4] !== undefined };
  if ((m = NOT_APPLIED.exec(line))) return { line: "not-applied", spanId: m[1]!, cause: m[2] ?? null, copy: m[3] as "lapsed" };
  if ((m = GREW.exec(line))) return { line: "grew", spanId: m[1]!, tokens: Number(m[2]) };
  if ((m = INVALID.exec(line))) return { line: "invalid", message: m[1]! };
  if ((m = MAP_HEAD.exec(line))) return { line: "map-head", used: Number(m[1]), limit: m[2] === undefined ? null : Number(m[2]), live: Number(m[3]) };
  if ((m = MAP_SPAN.exec(line))) return { line: "map-span", spanId: m[1]!, modes: m[2]!.split(","), prune: m[3]! };
  if (MAP_PENDING.test(line)) return { line: "map-pending", text: line };
  if ((m = MAP_SAME.exec(line))) return { line: "map-same", answer: m[1]!, changed: m[2] === undefined ? 0 : Number(m[2]) };
  if ((m = MAP_GONE.exec(line))) return { line: "map-gone", spanId: m[1]! };
  if (APPLIES.test(line)) return { line: "pending", text: line };
  if (COMPACTED.test(line)) return { line: "compacted", text: line };
  if (ADVICE.test(line)) return { line: "advice", text: line };
  if ((m = LOST.exec(line))) return { line: "lost", spanId: m[1]! };
  if ((m = RANGE_SUMMARY.exec(line))) {
    return { line: "range-summary", spanId: m[1]!, first: m[2]!, last: m[3]!, count: Number(m[4]), until: m[6] ?? null, mayBeLost: m[5] !== undefined };
  }
  if ((m = RANGE_NOT_APPLIED.exec(line))) {
    return { line: "range-not-applied", from: m[1]!, to: m[2]!, summaryId: m[3]!, member: m[4]!, copy: m[5] as "lapsed" };
  }
  if ((m = RANGE_REJECTED.exec(line))) return { line: "range-rejected", from: m[1]!, to: m[2]!, why: m[3]! };
  if ((m = SEARCH_HEAD.exec(line))) return { line: "search-head", query: m[1]!, matches: m[2] === undefined ? 0 : Number(m[2]) };
  if ((m = SEARCH_MATCH.exec(line))) return { line: "search-match", spanId: m[1]!, kind: m[2]!, where: m[3]! };
  if (SEARCH_MORE.test(line)) return { line: "search-more", text: line };
  if (SEARCH_COVERAGE.test(line)) return { line: "search-coverage", text: line };
  if ((m = RECALLED.exec(line))) return { line: "recalled", spanId: m[1]!, handle: m[2] ?? null };
  if ((m = EXPANDED.exec(line))) return { line: "expanded", spanId: m[1]! };
  if ((m = FOLD.exec(line))) {
    const count = (at: number) => (m![at] === undefined ? 0 : Number(m![at]));
    return { line: "fold", first: m[1]!, last: m[2]!, pruned: count(3), until: m[5] ?? null, mayBeLost: count(6), unrecoverable: count(7) };
  }
  if (RECALL_ANSWER.test(line)) return { line: "recall-answer", text: line };
  if (PROVIDER_NOT_RECORDED.test(line)) return { line: "provider-not-recorded", text: line };
  if (PROVIDER_CLEARED.test(line)) return { line: "provider-cleared", text: line };
  // The Anthropic rendering's opening user turn when the conversation would start with the assistant.
  if (line === "(conversation so far)") return { line: "opening" };
  return null;
}

/** A rendered window read back line by line. */
export interface ReadBack {
  /** Every runtime line, in order. */
  readonly runtime: RuntimeLine[];
  /** How many lines were framed (untrusted text). */
  readonly framed: number;
  /** Lines that are neither blank, framed nor a runtime line: always empty for a window's rendering. */
  readonly stray: string[];
}

/** Reads a rendering the way the framing rule says a model should: framed, blank, or a runtime line. */
export function readRendered(text: string, ctx: GrammarContext): ReadBack {
  const runtime: RuntimeLine[] = [];
  const stray: string[] = [];
  let framed = 0;
  for (const line of splitLines(text)) {
    if (line.length === 0) continue;
    if (isFramed(line)) {
      framed++;
      continue;
    }
    const parsed = parseRuntimeLine(line, ctx);
    if (parsed === null) stray.push(line);
    else runtime.push(parsed);
  }
  return { runtime, framed, stray };
}
