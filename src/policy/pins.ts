/**
 * Pin vocabulary shared by the DSL, the compiler and the runtime: the preset patterns, the syntax a pin
 * pattern is written in, and the one function that turns a pattern into a matcher or says why it cannot.
 *
 * Pins run over every pruned span, and a span is untrusted tool output: a pattern that can backtrack
 * would let one line of output block the process. So every pin runs on re2js, an RE2 engine (automata,
 * no backtracking), in time linear in the text whatever the pattern. RE2 has no lookahead and no
 * backreferences; re2js adds lookbehind, which stays linear. What a lookahead used to do is written
 * with a capture group instead:
 *
 * - a pattern with capture groups pins the text of the first group that took part in the match, so
 *   trailing context is matched but not pinned: `(\d{3,5})(?:ms|$)`;
 * - a match in which no group took part pins nothing, so exclusions are a leading uncaptured
 *   alternative: `\b(?:SHA256|([A-Z]{3}\d{3}))\b` pins `ABC123` and never `SHA256`;
 * - the scan resumes at the end of the pinned text, at most one character before the end of the match,
 *   so a one-character trailing boundary such as `(?:[^\w-]|$)` does not hide the next identifier;
 * - a pattern matches within one line, and `^` and `$` match at the line's ends.
 *
 * The presets use no lookbehind either (measured: it forces the engine's slowest path over the whole
 * text, three times slower); they match their leading boundary outside the captured identifier.
 */
import { RE2JS } from "re2js";
import type { PinPattern } from "./kinds.js";

const HEX = "[0-9a-f]";
/** Characters of a path segment, and what may not precede a path (else the match starts mid-word). */
const PATH_CHAR = "[\\w.~@+-]";
const PATH_START = "(?:^|[^\\w.~@+/\\\\-])";
/** A file extension: a letter, then up to nine letters or digits. */
const EXTENSION = "\\.[A-Za-z][A-Za-z0-9]{0,9}";
/** A path with at least one `/` and an extension: `/app/src/index.js`, `./lib/x.py`, `src/x.ts`. */
const SLASHED_PATH = `${PATH_CHAR}{0,200}/[\\w.~@+/-]{0,400}[\\w@+-]${EXTENSION}`;
/**
 * Extensions a bare file name (no folder) must end with to be pinned. A list, unlike paths: without a
 * `/`, `console.log`, `process.env` and `json.decoder` look like file names, so only extensions of
 * source, config and data files count.
 */
const BARE_EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonc|py|pyi|ipynb|java|jar|kt|kts|scala|gradle|c|h|cc|cpp|cxx|hpp|hh" +
  "|rs|go|rb|php|cs|swift|dart|lua|sh|bash|ps1|sql|toml|yaml|yml|ini|cfg|conf|xml|html|htm|css|scss|vue" +
  "|svelte|md|rst|txt|csv|tsv|lock|proto|tf|sqlite|sqlite3";
/** A file name without a folder: `Cargo.toml`, `Ledger.java`, `package-lock.json`. */
const BARE_NAME = `[\\w~@+-][\\w.~@+-]{0,200}\\.(?:${BARE_EXTENSIONS})`;

/** A file, with or without a folder, and a line (and column) as tools print them after it. */
const POSITION = `(?:${SLASHED_PATH}|${BARE_NAME})(?::\\d{1,7}(?::\\d{1,7})?|\\(\\d{1,7},\\d{1,7}\\))`;
const POSITION_END = "(?:[^\\w/]|$)";

/**
 * The preset patterns, as a typed object: write `pins: [pins.requestId, pins.errorCode]` in a policy.
 *
 * Gotchas: presets overlap on purpose (a 32-hex trace id is also a plausible commit SHA, a position
 * contains a path); the runtime carries each distinct matched string once, and does not repeat one
 * contained in another it carries. Matches are case-sensitive.
 */
export const pins = Object.freeze({
  /**
   * `req_8f3a2c`, `req-01HZX3`, and the value of `X-Request-Id: …`, `request_id=…`, `"requestId": "…"`,
   * `x-amzn-RequestId: …`. Values must contain a digit, so `request id: unknown` stays prose.
   */
  requestId: Object.freeze({
    name: "requestId",
    pattern:
      "\\b(?:req[_-][A-Za-z]+\\b|(req[_-][A-Za-z0-9]{4,64})\\b)" +
      "|\\b(?:[Xx]-)?(?:[Aa]mzn-|[Aa]mz-)?[Rr]equest[-_]?[Ii][Dd][\"']?[ \\t]{0,3}[:=][ \\t]{0,3}[\"']?" +
      "(?:[A-Za-z._:-]+(?:[^A-Za-z0-9._:-]|$)|([A-Za-z0-9][A-Za-z0-9._:-]{4,126}[A-Za-z0-9]))",
  }),
  /** RFC 4122 UUIDs in canonical 8-4-4-4-12 form, either case. */
  uuid: Object.freeze({
    name: "uuid",
    pattern: "\\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\b",
  }),
  /**
   * Lowercase 7–40 hex with at least one digit and one letter (`9fceb02`, full 40-char SHAs).
   * Not matched when glued to `-` or a word character, so the groups of a UUID or traceparent are not
   * mistaken for SHAs. All-letter and all-digit runs are skipped: `deadbeef` and `1234567` are words
   * and numbers far more often than SHAs, so a short SHA made only of digits is not pinned.
   */
  gitSha: Object.freeze({
    name: "gitSha",
    pattern: `(?:^|[^\\w-])(?:[a-f]{7,40}|[0-9]{7,40}|(${HEX}{7,40}))(?:[^\\w-]|$)`,
  }),
  /**
   * What names an error: `E1042`, `TS2322`, `PG2003`, `ORA-00942`; upper-snake codes (`ERR_MODULE_NOT_FOUND`,
   * `E_UPSTREAM_503`, `SQLITE_CONSTRAINT`); POSIX errno names (`ECONNREFUSED`, `ENOENT`, …, an explicit
   * list so `ERROR` and `EOF` stay prose); `SQLSTATE 23505`'s code; exception classes
   * (`JSONDecodeError`, `NullPointerException`, but not bare `Error`). Prefixed digits exclude common
   * non-errors: `SHA256`, `ISO8601`, `X509`, `H264`, `AES256`, `UTF16`.
   */
  errorCode: Object.freeze({
    name: "errorCode",
    pattern:
      "\\b(?:(?:SHA|ISO|AES|UTF|RFC|MD|H)\\d+\\b|X509\\b|([A-Z]{1,4}\\d{3,5})\\b)" +
      "|\\b(ORA-\\d{5})\\b" +
      "|\\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\\b" +
      "|\\b(E(?:CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|NOTFOUND|ADDRINUSE|ADDRNOTAVAIL|ACCES|PERM" +
      "|NOENT|EXIST|ISDIR|NOTDIR|NOTEMPTY|MFILE|NFILE|NOSPC|PIPE|HOSTUNREACH|NETUNREACH|BADF" +
      "|BUSY|INVAL|ROFS|NOMEM|AGAIN|CANCELED|PROTO|SRCH|NOTCONN|NOTSUP|2BIG))\\b" +
      "|SQLSTATE[ :=\\[]{1,2}([0-9A-Z]{5})\\b" +
      "|\\b([A-Z][A-Za-z0-9]*(?:Error|Exception))\\b",
  }),
  /**
   * Paths with at least one `/` and a file extension: `/app/src/index.js`, `./lib/x.py`,
   * `src/x.ts:12:3` (line and column kept), `psql:migrations/a.sql:14`. URLs are not paths
   * (`https://host/a.json`, `file:///a.js` do not match), nor are Windows paths.
   */
  filePath: Object.freeze({
    name: "filePath",
    pattern: `${PATH_START}(?://\\S*|(${SLASHED_PATH}(?::\\d{1,6}){0,2})(?:[^\\w/]|$))`,
  }),
  /**
   * File names with an extension and no folder, as tools print them when they shorten a path:
   * `Cargo.toml`, `cfg.ini`, `Ledger.java`, `package-lock.json`. Only source, config and data
   * extensions count (see the list in the source), so `console.log`, `process.env` and `Node.js` stay
   * prose.
   */
  fileName: Object.freeze({
    name: "fileName",
    pattern:
      `${PATH_START}(?:(?:Node|Next|Nuxt|Vue|Deno|Express|Ember|Three|Chart)\\.js\\b|(${BARE_NAME})(?:[^\\w/(]|$))`,
  }),
  /**
   * A source position, file and line (and column) as one identifier, in the forms compilers and
   * runtimes print: `src/x.ts(4,3)` (tsc), `main.c:3:5` (gcc, clang, Go, rustc, Node),
   * `Ledger.java:2` (Java stack traces), `test_x.py:12` (pytest), `File "/app/x.py", line 355`
   * (Python). `file:///app/x.mjs:3:9` (Node's ES modules) pins the path part.
   */
  sourcePosition: Object.freeze({
    name: "sourcePosition",
    pattern:
      `${PATH_START}(?:file://(${POSITION})${POSITION_END}|//\\S*|(${POSITION})${POSITION_END})` +
      `|\\b(File "[^"\\n]{1,400}", line \\d{1,7})`,
  }),
  /**
   * `HTTP 503`, `HTTP/1.1 502`, `status 404`, `Status: 500`, `"status": 429`, `status_code=400`,
   * `statuscode: 503`. The keyword is part of the match: a bare `503` would be carried meaningless.
   */
  httpStatus: Object.freeze({
    name: "httpStatus",
    pattern:
      "\\b(?:HTTP(?:/[123](?:\\.[01])?)?[ \\t]|[Ss]tatus(?:[ _]?[Cc]ode)?[\"']?[ \\t]?[:=]?[ \\t]?)[1-5]\\d{2}\\b",
  }),
  /**
   * W3C `traceparent` values (`00-<32 hex>-<16 hex>-<2 hex>`), bare 32-hex trace ids, and AWS X-Ray
   * ids (`1-5759e988-bd862e3fe1be46a994272793`).
   */
  traceId: Object.freeze({
    name: "traceId",
    pattern:
      `\\b(${HEX}{2}-${HEX}{32}-${HEX}{16}-${HEX}{2})\\b` +
      `|\\b(1-${HEX}{8}-${HEX}{24})\\b` +
      `|(?:^|[^\\w-])(${HEX}{32})(?:[^\\w-]|$)`,
  }),
  /**
   * Issue keys `ABC-1234` (Jira, Linear) and `CVE-2024-3094`. Excludes `UTF-8`, `ISO-8859`, `SHA-256`
   * and similar standards names; keys whose number starts with 0 are not matched.
   */
  ticket: Object.freeze({
    name: "ticket",
    pattern:
      "\\b(?:(CVE-\\d{4}-\\d{4,7})\\b" +
      "|(?:UTF|ISO|SHA|AES|RSA|TLS|SSL|HTTP|COVID|CVE|RFC|MD|X|IEC|IEEE|ECMA|PEP)-\\d+\\b" +
      "|([A-Z][A-Z0-9]{1,9}-[1-9]\\d{0,6})\\b)",
  }),
} as const satisfies Record<string, PinPattern>);

/** The name of one preset pin. */
export type PresetPinName = keyof typeof pins;

/**
 * The presets as a frozen record keyed by name, for code that looks presets up by string (the compiler,
 * a CLI listing). Policy authors should prefer `pins.requestId`, which the editor completes.
 */
export const presetPins: Readonly<Record<PresetPinName, PinPattern>> = pins;

/** Why a pin pattern cannot run: data first; `detail` and `instead` are for humans. */
export interface PinPatternProblem {
  readonly reason: "unsupported" | "invalid" | "empty-match";
  /** The construct the engine refused, as written (`(?=`, `\1`), when one was named. */
  readonly construct: string | null;
  /** What the engine said, or what is wrong. */
  readonly detail: string;
  /** What to write instead. */
  readonly instead: string;
}

/** A compiled pin, or the problem that prevents compiling it. */
export type CompiledPin =
  | { readonly ok: true; readonly matcher: RE2JS; readonly groups: number }
  | { readonly ok: false; readonly problem: PinPatternProblem };

const INSTEAD: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\(\?=$/u, "RE2 has no lookahead: match the following text too and put the identifier in a capture group, e.g. `(ord_\\d+)(?:\\s|$)` pins only the `ord_…` part"],
  [/^\(\?!$/u, "RE2 has no negative lookahead: write the excluded forms as a first, uncaptured alternative and the identifier as a captured one, e.g. `\\b(?:SHA256|([A-Z]{3}\\d{3}))\\b` never pins `SHA256`"],
  [/^\\[1-9k]/u, "backreferences cannot run in linear time: write the repeated text out, or pin the first occurrence alone"],
  [/^\\u/u, "write a code point as `\\x{41}` rather than `\\u0041` or `\\u{41}`"],
  [/^\\c$/u, "write a control character as `\\x{1}` rather than `\\cA`"],
  [/^\\b$/u, "inside a class, write a backspace as `\\x{8}`"],
  [/^\{/u, "RE2 allows at most 1000 repetitions in a counted repeat: use `+` or a smaller bound"],
];

/** Compiled pins kept for reuse, at most: policies name a handful; the bound keeps hostile option sets from pinning memory. */
const PIN_CACHE_SIZE = 256;
const compiledCache = new Map<string, CompiledPin>();

/**
 * Compiles a pin pattern for re2js (with its linear-time lookbehinds), or says why it cannot run and
 * what to write instead. Cached by source (the most recently used `PIN_CACHE_SIZE`). The compiler turns a
 * problem into a diagnostic; the runtime refuses the policy. `cache: false` compiles without keeping the
 * result (search queries, which the model writes, keep their own smaller cache).
 */
export function compilePinPattern(source: string, options: { readonly cache?: boolean } = {}): CompiledPin {
  if (options.cache === false) return compileUncached(source);
  const cached = compiledCache.get(source);
  if (cached !== undefined) {
    compiledCache.delete(source);
    compiledCache.set(source, cached);
    return cached;
  }
  const result = compileUncached(source);
  compiledCache.set(source, result);
  if (compiledCache.size > PIN_CACHE_SIZE) compiledCache.delete(compiledCache.keys().next().value!);
  return result;
}

function compileUncached(source: string): CompiledPin {
  if (source.length === 0) {
    return { ok: false, problem: { reason: "empty-match", construct: null, detail: "the pattern is empty", instead: "write the identifier's shape" } };
  }
  let matcher: RE2JS;
  try {
    matcher = RE2JS.compile(source, RE2JS.LOOKBEHINDS);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const construct = /`([^`]*)`\s*$/u.exec(message)?.[1] ?? null;
    const hint = construct === null ? undefined : INSTEAD.find(([shape]) => shape.test(construct))?.[1];
    const detail = message.replace(/^error parsing regexp: /u, "");
    return hint === undefined
      ? { ok: false, problem: { reason: "invalid", construct, detail, instead: "fix the pattern so it parses as RE2 syntax" } }
      : { ok: false, problem: { reason: "unsupported", construct, detail, instead: hint } };
  }
  if (canMatchEmpty(matcher)) {
    return {
      ok: false,
      problem: {
        reason: "empty-match",
        construct: null,
        detail: "the pattern can match the empty string, so it can pin nothing",
        instead: "require at least one character of the identifier, e.g. `\\d+` rather than `\\d*`",
      },
    };
  }
  return { ok: true, matcher, groups: matcher.groupCount() };
}

/** re2js's instruction codes (`Inst` in its `Prog`) that consume no character. */
const EMPTY_WIDTH_OPS = new Set([1, 2, 3, 4, 7, 12, 13]); // ALT, ALT_MATCH, CAPTURE, EMPTY_WIDTH, NOP, LB_WRITE, LB_CHECK
const MATCH_OP = 6;
const ALT_OPS = new Set([1, 2]);

interface ProgInst {
  readonly op: number;
  readonly out: number;
  readonly arg: number;
}

/**
 * Whether the compiled program can reach its match without consuming a character, in some context: the
 * engine's own program, walked from its start through every instruction that consumes nothing — empty-width
 * assertions (`^`, `\b`) and lookbehinds (`(?<=q)`) are taken as passable, since some text satisfies them.
 * Exact for the program re2js runs, where probing texts can only sample it.
 */
function canMatchEmpty(matcher: RE2JS): boolean {
  const prog = (matcher as unknown as { re2Input?: { prog?: { start?: unknown; inst?: unknown } } }).re2Input?.prog;
  const inst = prog?.inst;
  // A re2js whose program is not shaped as read here: refuse rather than guess.
  if (!Array.isArray(inst) || typeof prog?.start !== "number") return true;
  const seen = new Uint8Array(inst.length);
  const stack = [prog.start];
  while (stack.length > 0) {
    const pc = stack.pop()!;
    if (pc < 0 || pc >= inst.length || seen[pc] === 1) continue;
    seen[pc] = 1;
    const i = inst[pc] as ProgInst;
    if (i.op === MATCH_OP) return true;
    if (!EMPTY_WIDTH_OPS.has(i.op)) continue;
    stack.push(i.out);
    if (ALT_OPS.has(i.op)) stack.push(i.arg);
  }
  return false;
}

/** One sentence for a problem: what is wrong and what to write instead. */
export function describePinProblem(problem: PinPatternProblem): string {
  return `${problem.detail}; ${problem.instead}`;
}
