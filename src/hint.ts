/**
 * Index-line hints: a few words on a drop's index line saying what the span held — the tool's name and
 * its key argument, a file path, the first identifier — so a model that needs one thing back can pick the
 * span to recall instead of recalling blindly, one handle after another.
 *
 * Hints come from untrusted text (tool output, model arguments), so:
 * - cost is bounded: only the first `HINT_SCAN_CHARS` characters are read, with linear-time patterns;
 * - a hint is one line of plain words from a small alphabet (letters, digits, `_ . / = : -`): it cannot
 *   start a line, open a bracket, name a handle (`#`) or a span id, so it cannot be read as a runtime line;
 * - its token cost is capped by the window's `indexHintTokens` (at most `MAX_HINT_TOKENS`).
 */
import { cutUnits } from "./render/framing.js";
import { countTokens } from "./tokens.js";
import type { Span } from "./types.js";

/** Characters of a span's text read to find a hint. */
export const HINT_SCAN_CHARS = 2_000;
/** The hint budget a window may set, in o200k tokens. */
export const MAX_HINT_TOKENS = 16;
/** The default hint budget. */
export const DEFAULT_HINT_TOKENS = 12;

/** A file path: at least one directory and a name with an extension. */
export const PATH = /(?:[A-Za-z0-9_.~-]{1,64}\/){1,12}[A-Za-z0-9_.-]{1,64}\.[A-Za-z][A-Za-z0-9]{0,9}/;
const PATH_AT = new RegExp(PATH.source, "y");
const DIR_CHAR = /[A-Za-z0-9_.~-]/;

/**
 * `PATH.exec(text)?.[0]`, tried only where a path can start. A match opens with 1–64 directory characters
 * and a `/`, and `/` is not a directory character, so it starts within the 64 directory characters before
 * some `/`: those positions, in order, are the only ones worth trying. The plain search tries every
 * position and backtracks through every run of word characters: 18 µs on a 760-character JSON log, more
 * than the rest of a prune. Property-tested against `PATH.exec`.
 */
export function firstPath(text: string): string | undefined {
  let from = 0;
  for (let slash = text.indexOf("/"); slash >= 0; slash = text.indexOf("/", slash + 1)) {
    let start = slash;
    while (start > from && start > slash - 64 && DIR_CHAR.test(text[start - 1]!)) start--;
    for (let at = start; at < slash; at++) {
      PATH_AT.lastIndex = at;
      const m = PATH_AT.exec(text);
      if (m !== null) return m[0];
    }
    from = slash + 1;
  }
  return undefined;
}
/** An identifier worth recalling by: a word that starts with a letter and has a digit (`req_7f3a9c2e41`, `E1042`, `OPS-4411`). */
const IDENTIFIER = /\b[A-Za-z][A-Za-z_-]{0,63}[0-9][A-Za-z0-9_-]{0,63}/;
const SPAN_ID = /span_[0-9]+/g;
const NOT_HINT = /[^A-Za-z0-9_./=:-]+/g;

/** Tokens of `: hint`, the suffix a hint adds to an index line. */
export function hintSuffixTokens(hint: string): number {
  return countTokens(`: ${hint}`);
}

/** A chosen hint and the tokens its `: hint` suffix adds to the index line (kept on the entry, counted once). */
export interface Hint {
  readonly text: string;
  readonly suffixTokens: number;
}

/**
 * The hint for a span, adding at most `maxTokens` tokens after its index line's `:` (the budget's unit, so
 * the count that chooses the hint is the count of the line's suffix); `null` when nothing worth naming was
 * found or hints are off.
 */
export function chooseHint(span: Pick<Span, "text" | "message">, maxTokens: number): Hint | null {
  if (!(maxTokens > 0)) return null;
  const head = cutUnits(span.text, HINT_SCAN_CHARS);
  const m = span.message;
  // A string by `append`'s check; a session registered before it may hold another value, which names nothing.
  const tool = m !== undefined && "toolName" in m && typeof m.toolName === "string" ? clean(m.toolName) : "";
  // The first candidate that survives cleaning: a long key argument does not hide a path or an identifier.
  const candidates = [
    () => (m?.role === "tool-call" ? keyArgument(head, span.text.length) : null),
    () => firstPath(head),
    () => IDENTIFIER.exec(head)?.[0],
  ];
  let found = "";
  for (const next of candidates) {
    const c = next();
    found = c == null ? "" : clean(c);
    if (found !== "") break;
  }
  // Both when they fit; else the specific thing alone (an identifier beats a tool name); else the tool.
  for (const text of [`${tool} ${found}`.trim(), found, tool]) {
    if (text.length === 0) continue;
    const suffixTokens = hintSuffixTokens(text);
    if (suffixTokens - 1 <= maxTokens) return { text, suffixTokens };
  }
  return null;
}

/** {@link chooseHint}'s text. */
export function indexHint(span: Pick<Span, "text" | "message">, maxTokens: number): string | null {
  return chooseHint(span, maxTokens)?.text ?? null;
}

/** A tool call's key argument, `name=value`: the first string, number or boolean argument. */
function keyArgument(head: string, fullLength: number): string | null {
  if (fullLength > HINT_SCAN_CHARS) return null; // not parsed past the scan bound
  let args: unknown;
  try {
    args = JSON.parse(head);
  } catch {
    return null;
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  for (const [k, v] of Object.entries(args)) {
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") continue;
    // Quoted faithfully or not at all: cleaning `cmd=git diff HEAD~1` to `cmd=git diff HEAD 1` would name a
    // command that was never run, so an argument the hint alphabet cannot carry as it is gives no hint.
    const text = `${k}=${String(v)}`;
    return clean(text) === text.replace(/\s+/g, " ").trim() ? text : null;
  }
  return null;
}

/** One line of hint alphabet, at most 80 characters, no span ids (a word is never cut: it could look like another). */
function clean(text: string): string {
  const out = text.replace(SPAN_ID, " ").replace(NOT_HINT, " ").replace(/ {2,}/g, " ").trim();
  return out.length <= 80 ? out : "";
}
