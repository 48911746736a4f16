/**
 * Pinned identifiers: the named presets a policy can list, and `pin()` for custom patterns.
 *
 * Pins exist because a digest keeps the gist and loses the one request id needed five turns later.
 * Whatever a policy pins is carried into any `summarize` or `compress` replacement that dropped it.
 *
 * Every pattern here is a JavaScript RegExp source matched with the flags `gu`. The presets are written
 * to run in linear time: no quantified group contains another quantifier, no backreferences, and a
 * leading negative lookbehind of the same character class wherever a pattern starts with a run, so a
 * long run of candidate characters is scanned once rather than once per position.
 *
 * This module is pure data plus one builder, and imports nothing at run time: the compiler reads it
 * statically and the runtime reads the lowered `PinPattern` values.
 */
import type { PinPattern } from "../src/types.js";

const HEX = "[0-9a-f]";

/**
 * The preset patterns, as a typed object: write `pins: [pins.requestId, pins.errorCode]` in a policy.
 *
 * Gotchas: presets overlap on purpose (a 32-hex trace id is also a plausible commit SHA); the runtime
 * carries each distinct matched string once, whichever preset found it. Matches are case-sensitive.
 */
export const pins = Object.freeze({
  /**
   * `req_8f3a2c`, `req-01HZX3`, and the value of `X-Request-Id: …`, `request_id=…`, `"requestId": "…"`,
   * `x-amzn-RequestId: …`. Values must contain a digit, so `request id: unknown` stays prose.
   */
  requestId: Object.freeze({
    name: "requestId",
    pattern:
      "\\breq[_-](?=[A-Za-z]{0,64}\\d)[A-Za-z0-9]{4,64}\\b" +
      "|(?<=\\b(?:[Xx]-)?(?:[Aa]mzn-|[Aa]mz-)?[Rr]equest[-_]?[Ii][Dd][\"']?[ \\t]{0,3}[:=][ \\t]{0,3}[\"']?)" +
      "(?=[A-Za-z._:-]{0,127}\\d)[A-Za-z0-9][A-Za-z0-9._:-]{4,126}[A-Za-z0-9]",
  }),
  /** RFC 4122 UUIDs in canonical 8-4-4-4-12 form, either case. */
  uuid: Object.freeze({
    name: "uuid",
    pattern:
      "\\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\b",
  }),
  /**
   * Lowercase 7–40 hex with at least one digit and one letter (`9fceb02`, full 40-char SHAs).
   * Not matched when glued to `-` or a word character, so the groups of a UUID or traceparent are not
   * mistaken for SHAs, and `deadbeef` / `1234567` are not SHAs.
   */
  gitSha: Object.freeze({
    name: "gitSha",
    pattern: `(?<![\\w-])(?=${HEX}{0,39}[a-f])(?=${HEX}{0,39}[0-9])${HEX}{7,40}(?![\\w-])`,
  }),
  /**
   * `E1042`, `TS2322`, `PG2003`, `ORA-00942`, `ERR_MODULE_NOT_FOUND`, POSIX errno names (`ECONNREFUSED`,
   * `ENOENT`, …, an explicit list so `ERROR` and `EOF` stay prose), and `SQLSTATE 23505`'s code.
   * Prefixed digits exclude common non-errors: `SHA256`, `ISO8601`, `X509`, `H264`, `AES256`, `UTF16`.
   */
  errorCode: Object.freeze({
    name: "errorCode",
    pattern:
      "\\b(?!(?:SHA|ISO|AES|UTF|RFC|MD|H)\\d|X509\\b)[A-Z]{1,4}\\d{3,5}\\b" +
      "|\\bORA-\\d{5}\\b" +
      "|\\bERR_[A-Z0-9_]{2,60}\\b" +
      "|\\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|NOTFOUND|ADDRINUSE|ADDRNOTAVAIL|ACCES|PERM" +
      "|NOENT|EXIST|ISDIR|NOTDIR|NOTEMPTY|MFILE|NFILE|NOSPC|PIPE|HOSTUNREACH|NETUNREACH|AI_AGAIN|BADF" +
      "|BUSY|INVAL|ROFS|NOMEM|AGAIN|CANCELED|PROTO|SRCH|NOTCONN|NOTSUP|2BIG)\\b" +
      "|(?<=SQLSTATE[ :=\\[]{1,2})[0-9A-Z]{5}\\b",
  }),
  /**
   * Paths with at least one `/` and a file extension: `/app/src/index.js`, `./lib/x.py`,
   * `src/x.ts:12:3` (line and column kept), `psql:migrations/a.sql:14`. URLs are not paths
   * (`https://host/a.json`, `file:///a.js` do not match), nor are Windows paths.
   */
  filePath: Object.freeze({
    name: "filePath",
    pattern:
      "(?<![\\w.~@+\\/-])(?!\\/\\/)[\\w.~@+-]{0,200}\\/[\\w.~@+\\/-]{0,400}[\\w@+-]\\.[A-Za-z][A-Za-z0-9]{0,9}" +
      "(?::\\d{1,6})?(?::\\d{1,6})?(?![\\w\\/])",
  }),
  /**
   * `HTTP 503`, `HTTP/1.1 502`, `status 404`, `Status: 500`, `"status": 429`, `status_code=400`,
   * `statuscode: 503`. The keyword is part of the match: a bare `503` would be carried meaningless.
   */
  httpStatus: Object.freeze({
    name: "httpStatus",
    pattern:
      "\\b(?:HTTP(?:\\/[123](?:\\.[01])?)?[ \\t]|[Ss]tatus(?:[ _]?[Cc]ode)?[\"']?[ \\t]?[:=]?[ \\t]?)[1-5]\\d{2}\\b",
  }),
  /**
   * W3C `traceparent` values (`00-<32 hex>-<16 hex>-<2 hex>`), bare 32-hex trace ids, and AWS X-Ray
   * ids (`1-5759e988-bd862e3fe1be46a994272793`).
   */
  traceId: Object.freeze({
    name: "traceId",
    pattern:
      `\\b${HEX}{2}-${HEX}{32}-${HEX}{16}-${HEX}{2}\\b` +
      `|\\b1-${HEX}{8}-${HEX}{24}\\b` +
      `|(?<![\\w-])${HEX}{32}(?![\\w-])`,
  }),
  /**
   * Issue keys `ABC-1234` (Jira, Linear) and `CVE-2024-3094`. Excludes `UTF-8`, `ISO-8859`, `SHA-256`
   * and similar standards names; keys whose number starts with 0 are not matched.
   */
  ticket: Object.freeze({
    name: "ticket",
    pattern:
      "\\bCVE-\\d{4}-\\d{4,7}\\b" +
      "|\\b(?!(?:UTF|ISO|SHA|AES|RSA|TLS|SSL|HTTP|COVID|CVE|RFC|MD|X|IEC|IEEE|ECMA|PEP)-)[A-Z][A-Z0-9]{1,9}-[1-9]\\d{0,6}\\b",
  }),
} as const satisfies Record<string, PinPattern>);

/** The name of one preset pin. */
export type PresetPinName = keyof typeof pins;

/**
 * The presets as a frozen record keyed by name, for code that looks presets up by string (the compiler,
 * a CLI listing). Policy authors should prefer `pins.requestId`, which the editor completes.
 */
export const presetPins: Readonly<Record<PresetPinName, PinPattern>> = pins;

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/u;

/**
 * Declares a custom pin. `pattern` is a RegExp source or a RegExp; it is always matched with `gu`.
 *
 * Details: the only flags accepted are `g`, `u` and `i`. `i` is lowered into the source (each cased
 * letter becomes a class of its lower- and upper-case forms) because `PinPattern` carries no flags; the
 * lowering uses simple one-to-one case mappings, so exotic folds (`ſ`→`s`, Kelvin sign→`k`) are not
 * added, and letters written as escapes (`\u{41}`, `\x41`) are kept literal. A RegExp written without `u` is re-read with `u`, which rejects sloppy escapes such as `\-`
 * outside a class.
 *
 * Gotchas: `pin()` throws on a bad name, a rejected flag or a source that does not compile; it does not
 * judge backtracking risk — the compiler reports that as a diagnostic (`isCatastrophicPattern`).
 */
export function pin(name: string, pattern: string | RegExp): PinPattern {
  if (!NAME.test(name)) {
    throw new TypeError(
      `pin(): name must start with a letter and use only letters, digits, '_' or '-' (at most 64), got ${JSON.stringify(name)}`,
    );
  }
  let source: string;
  if (typeof pattern === "string") {
    source = pattern;
  } else {
    const rejected = [...pattern.flags].filter((f) => f !== "g" && f !== "u" && f !== "i");
    if (rejected.length > 0) {
      throw new TypeError(
        `pin(${JSON.stringify(name)}): flag${rejected.length > 1 ? "s" : ""} ${rejected.map((f) => `'${f}'`).join(", ")} not supported; pins are matched with 'gu' (and 'i' is lowered into the source)`,
      );
    }
    source = pattern.source;
    if (pattern.flags.includes("i")) source = lowerIgnoreCase(source, name);
  }
  if (source.length === 0) throw new TypeError(`pin(${JSON.stringify(name)}): pattern is empty`);
  try {
    new RegExp(source, "gu");
  } catch (error) {
    throw new TypeError(
      `pin(${JSON.stringify(name)}): pattern does not compile with flags 'gu': ${(error as Error).message}`,
    );
  }
  return Object.freeze({ name, pattern: source });
}

// ---------------------------------------------------------------------------------------------------
// Lowering the `i` flag. A small scanner, not a full parser: it only has to know which characters are
// literals (to fold them) and which are syntax (escapes, group openers, quantifier braces, classes).

function caseVariants(ch: string): string[] {
  const out = new Set<string>([ch]);
  for (const v of [ch.toLowerCase(), ch.toUpperCase()]) {
    if ([...v].length === 1) out.add(v);
  }
  return [...out];
}

function escapeClassChar(cp: number): string {
  return `\\u{${cp.toString(16)}}`;
}

/** Reads one escape starting at `s[i] === "\\"`; returns its end index (exclusive). */
function escapeEnd(s: string, i: number): number {
  const c = s[i + 1];
  if (c === undefined) return i + 1;
  if ((c === "p" || c === "P" || c === "u") && s[i + 2] === "{") {
    const close = s.indexOf("}", i + 3);
    return close < 0 ? s.length : close + 1;
  }
  if (c === "u") return Math.min(s.length, i + 6);
  if (c === "x") return Math.min(s.length, i + 4);
  if (c === "c") return Math.min(s.length, i + 3);
  if (c === "k" && s[i + 2] === "<") {
    const close = s.indexOf(">", i + 3);
    return close < 0 ? s.length : close + 1;
  }
  // A surrogate pair escaped as a literal (`\😀`) is not valid with `u`; one UTF-16 unit is enough here.
  return i + 2;
}

const MAX_FOLDED_RANGE = 0x3000;

function lowerIgnoreCase(source: string, name: string): string {
  let out = "";
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (c === "\\") {
      const end = escapeEnd(source, i);
      out += source.slice(i, end);
      i = end;
    } else if (c === "[") {
      const { text, end } = lowerClass(source, i, name);
      out += text;
      i = end;
    } else if (c === "(" && source[i + 1] === "?") {
      // Group openers; a named group's name must not be folded.
      const named = /^\(\?<(?![=!])[^>]*>/u.exec(source.slice(i));
      const opener = named ? named[0] : (/^\(\?(?:<[=!]|[:=!])/u.exec(source.slice(i))?.[0] ?? "(?");
      out += opener;
      i += opener.length;
    } else if (c === "{") {
      const close = source.indexOf("}", i);
      const end = close < 0 ? i + 1 : close + 1;
      out += source.slice(i, end);
      i = end;
    } else {
      const cp = source.codePointAt(i) as number;
      const ch = String.fromCodePoint(cp);
      const variants = caseVariants(ch);
      out += variants.length > 1 ? `[${variants.join("")}]` : ch;
      i += ch.length;
    }
  }
  return out;
}

function lowerClass(source: string, start: number, name: string): { text: string; end: number } {
  let i = start + 1;
  if (source[i] === "^") i++;
  const bodyStart = i;
  const added = new Set<number>();
  let prev: number | null = null; // the last single literal code point, a candidate range start
  while (i < source.length && source[i] !== "]") {
    const c = source[i] as string;
    if (c === "\\") {
      prev = null;
      i = escapeEnd(source, i);
      continue;
    }
    if (c === "-" && prev !== null && source[i + 1] !== undefined && source[i + 1] !== "]" && source[i + 1] !== "\\") {
      const hiCp = source.codePointAt(i + 1) as number;
      if (hiCp - prev > MAX_FOLDED_RANGE) {
        throw new TypeError(
          `pin(${JSON.stringify(name)}): cannot lower the 'i' flag for the class range starting at ${JSON.stringify(String.fromCodePoint(prev))}; write the cases out explicitly`,
        );
      }
      for (let cp = prev; cp <= hiCp; cp++) {
        for (const v of caseVariants(String.fromCodePoint(cp))) added.add(v.codePointAt(0) as number);
      }
      i += String.fromCodePoint(hiCp).length + 1;
      prev = null;
      continue;
    }
    const cp = source.codePointAt(i) as number;
    for (const v of caseVariants(String.fromCodePoint(cp))) added.add(v.codePointAt(0) as number);
    prev = cp;
    i += String.fromCodePoint(cp).length;
  }
  const end = Math.min(source.length, i + 1);
  const body = source.slice(bodyStart, i);
  const extra = compactRanges([...added]);
  return { text: source.slice(start, bodyStart) + body + extra + source.slice(i, end), end };
}

/** Code points as class items, consecutive runs merged into ranges (`\u{41}-\u{5a}`). */
function compactRanges(cps: number[]): string {
  const sorted = [...new Set(cps)].sort((a, b) => a - b);
  let out = "";
  for (let k = 0; k < sorted.length; ) {
    const lo = sorted[k] as number;
    let hi = lo;
    while (sorted[k + 1] === hi + 1) {
      hi++;
      k++;
    }
    k++;
    out += hi === lo ? escapeClassChar(lo) : hi === lo + 1 ? escapeClassChar(lo) + escapeClassChar(hi) : `${escapeClassChar(lo)}-${escapeClassChar(hi)}`;
  }
  return out;
}
