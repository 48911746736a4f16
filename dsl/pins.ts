/**
 * Pinned identifiers for policy authors: the named presets, and `pin()` for custom patterns.
 *
 * Pins exist because a digest keeps the gist and loses the one request id needed five turns later.
 * Whatever a policy pins is carried into any `summarize` or `compress` replacement that dropped it.
 * The presets and the pattern syntax (RE2, run in linear time) live in `src/policy/pins.ts`, below the
 * DSL, the compiler and the runtime alike.
 */
import { RE2JS } from "re2js";
import { compilePinPattern } from "../src/policy/pins.js";
import type { PinPattern } from "../src/policy/kinds.js";

export { pins, presetPins, type PresetPinName } from "../src/policy/pins.js";

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/u;

/**
 * Declares a custom pin. `pattern` is an RE2 source (with lookbehinds) or a JavaScript RegExp, which is
 * translated to RE2 syntax (`\u{41}` becomes `\x{41}`, the `i` flag becomes `(?i)`).
 *
 * Details: the only RegExp flags accepted are `g`, `u` and `i`. With capture groups, the first group
 * that takes part in a match is what gets pinned, and a match where none does pins nothing: write
 * `(ord_\d+)(?:\s|$)` where a lookahead was meant, and `\b(?:SHA256|([A-Z]{3}\d{3}))\b` to exclude.
 * A pattern matches within one line; `^` and `$` match at the line's ends.
 *
 * Gotchas: throws a `TypeError` on a bad name, a rejected flag, or a pattern that is empty or does not
 * parse. It does not judge
 * whether the engine can run the pattern (lookahead, backreferences, empty matches): the compiler
 * reports that as a diagnostic saying what to write instead, and `ContextWindow` refuses such a pin.
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
        `pin(${JSON.stringify(name)}): flag${rejected.length > 1 ? "s" : ""} ${rejected.map((f) => `'${f}'`).join(", ")} not supported; pins are matched as written (and 'i' becomes '(?i)')`,
      );
    }
    source = RE2JS.translateRegExp(new RegExp(pattern.source, pattern.flags.includes("i") ? "i" : ""));
  }
  if (source.length === 0) throw new TypeError(`pin(${JSON.stringify(name)}): pattern is empty`);
  const compiled = compilePinPattern(source);
  if (!compiled.ok && compiled.problem.reason === "invalid") {
    throw new TypeError(`pin(${JSON.stringify(name)}): pattern does not parse as RE2 syntax: ${compiled.problem.detail}`);
  }
  return Object.freeze({ name, pattern: source });
}
