/**
 * Pin patterns run over every pruned span, so one that can backtrack exponentially, or that matches the
 * empty string, is an error rather than a slow surprise.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { PinIR } from "../ir/schema.js";
import type { Check } from "./context.js";

export const checkPins: Check = (policy) => {
  const out: Diagnostic[] = [];
  const all: PinIR[] = [...policy.pins, ...policy.kinds.flatMap((k) => k.pins)];
  for (const p of all) out.push(...checkPin(p));
  return out;
};

export function checkPin(p: PinIR): Diagnostic[] {
  let re: RegExp;
  try {
    re = new RegExp(p.pattern, "u");
  } catch (error) {
    return [diagnostic("PG2009", p.location, { pin: p.name, message: `the pattern does not compile with flags 'gu': ${(error as Error).message}` })];
  }
  const reason = catastrophicReason(p.pattern);
  if (reason) return [diagnostic("PG2010", p.location, { pin: p.name, pattern: p.pattern, reason })];
  if (re.exec("") !== null) return [diagnostic("PG2011", p.location, { pin: p.name, pattern: p.pattern })];
  return [];
}

interface Frame {
  /** The group contains a repeating quantifier (max > 1). */
  repeats: boolean;
  unbounded: boolean;
}

/**
 * Star height above one, counting only repeating quantifiers (`*`, `+`, `{n,m}` with m > 1) and requiring
 * one of the two to be unbounded: `(a+)+`, `(\w+\s?)*`, `(?:x{2,}){3,5}`. `(?:-\d{1,6})?` is fine. Returns
 * why, or `undefined`.
 */
export function catastrophicReason(source: string): string | undefined {
  const stack: Frame[] = [{ repeats: false, unbounded: false }];
  let i = 0;
  let lastGroup: Frame | undefined;
  while (i < source.length) {
    const c = source[i] as string;
    let atomEnd = i + 1;
    lastGroup = undefined;
    if (c === "\\") {
      const n = source[i + 1];
      atomEnd = (n === "u" || n === "p" || n === "P" || n === "k") && /[{<]/.test(source[i + 2] ?? "") ? source.indexOf(n === "k" ? ">" : "}", i) + 1 || source.length : i + 2;
    } else if (c === "[") {
      let j = i + 1;
      while (j < source.length && source[j] !== "]") j += source[j] === "\\" ? 2 : 1;
      atomEnd = j + 1;
    } else if (c === "(") {
      stack.push({ repeats: false, unbounded: false });
      i += source.startsWith("(?<=", i) || source.startsWith("(?<!", i) ? 4 : source.startsWith("(?", i) ? (source[i + 2] === "<" ? source.indexOf(">", i) + 1 - i : 3) : 1;
      continue;
    } else if (c === ")") {
      const closed = stack.pop() ?? { repeats: false, unbounded: false };
      if (stack.length === 0) stack.push({ repeats: false, unbounded: false });
      lastGroup = closed;
    }
    const q = quantifierAt(source, atomEnd);
    const top = stack[stack.length - 1] as Frame;
    if (lastGroup) {
      if (q && q.repeats && lastGroup.repeats && (q.unbounded || lastGroup.unbounded)) {
        return `a repeated group \`${source.slice(groupStart(source, i), q.end)}\` contains another repeat`;
      }
      top.repeats ||= lastGroup.repeats || (q?.repeats ?? false);
      top.unbounded ||= lastGroup.unbounded || (q?.unbounded ?? false);
    } else if (q) {
      top.repeats ||= q.repeats;
      top.unbounded ||= q.unbounded;
    }
    i = q ? q.end : atomEnd;
  }
  return undefined;
}

function quantifierAt(s: string, i: number): { repeats: boolean; unbounded: boolean; end: number } | undefined {
  const c = s[i];
  let end = i + 1;
  let repeats: boolean;
  let unbounded: boolean;
  if (c === "*" || c === "+") {
    repeats = true;
    unbounded = true;
  } else if (c === "?") {
    repeats = false;
    unbounded = false;
  } else if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(i));
    if (!m) return undefined;
    end = i + m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
    repeats = max > 1;
    unbounded = max === Infinity;
  } else return undefined;
  if (s[end] === "?") end++;
  return { repeats, unbounded, end };
}

/** The index of the `(` matching the `)` at `close`. */
function groupStart(s: string, close: number): number {
  let depth = 0;
  for (let j = close; j >= 0; j--) {
    if (s[j] === ")" && s[j - 1] !== "\\") depth++;
    else if (s[j] === "(" && s[j - 1] !== "\\") {
      depth--;
      if (depth === 0) return j;
    }
  }
  return 0;
}
