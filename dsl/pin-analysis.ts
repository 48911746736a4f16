/**
 * Static risk analysis of pin patterns, so the compiler can refuse a pattern before any runtime runs it
 * against a 50 kB tool output.
 *
 * The analysis is conservative: it may flag a pattern that a particular engine would in fact run
 * quickly (`(ab|ac)+`), but every pattern it passes has no quantified group that contains another
 * unbounded repetition, no repetition of an alternation whose branches can start with the same
 * character, no backreference, and cannot match the empty string. Those are the shapes behind
 * exponential backtracking and the zero-width matches that would carry nothing. Polynomial cases from
 * adjacent overlapping runs (`\d+\d+`) are not flagged; the runtime bounds its input for those.
 *
 * Imports nothing: the compiler and the runtime both call it.
 */

/** Why a pattern was refused: data first, the `detail` sentence is for humans. */
export type PatternRisk =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: "empty-match" | "nested-quantifier" | "backreference" | "invalid";
      readonly detail: string;
    };

/**
 * Decides, without running the pattern on adversarial input, whether a pin pattern (a RegExp source for
 * flags `gu`) is unsafe. Use it in the compiler to raise a diagnostic, and in the runtime to refuse a
 * pattern that reached it anyway.
 *
 * Gotchas: `(a|aa)+` is reported as `nested-quantifier` (an ambiguous repetition); a pattern made only
 * of assertions (`^$`, `\b`) is `empty-match`.
 */
export function isCatastrophicPattern(source: string): PatternRisk {
  try {
    new RegExp(source, "gu");
  } catch (error) {
    return { ok: false, reason: "invalid", detail: (error as Error).message };
  }
  let ast: Node;
  try {
    ast = new Parser(source).parse();
  } catch (error) {
    // The engine accepted it but our scanner did not: refuse rather than guess.
    return { ok: false, reason: "invalid", detail: `unsupported syntax: ${(error as Error).message}` };
  }
  const backref = find(ast, (n) => n.t === "backref");
  if (backref) {
    return {
      ok: false,
      reason: "backreference",
      detail: `backreference at offset ${backref.at}: matching it can need exponential time and pins must be linear`,
    };
  }
  if (minLength(ast) === 0 || new RegExp(source, "u").test("")) {
    return { ok: false, reason: "empty-match", detail: "the pattern can match the empty string, so it can pin nothing" };
  }
  const nested = nestedRisk(ast);
  if (nested) return { ok: false, reason: "nested-quantifier", detail: nested };
  return { ok: true };
}

// ---------------------------------------------------------------------------------------------------
// A parser for the RegExp grammar under the `u` flag, just deep enough for the checks above.

type Range = readonly [number, number];
const MAX_CP = 0x10ffff;
const ANY: readonly Range[] = [[0, MAX_CP]];

type Node =
  | { readonly t: "alt"; readonly at: number; readonly alts: readonly Node[] }
  | { readonly t: "seq"; readonly at: number; readonly items: readonly Node[] }
  | { readonly t: "group"; readonly at: number; readonly look: boolean; readonly body: Node }
  | { readonly t: "quant"; readonly at: number; readonly min: number; readonly max: number; readonly body: Node }
  | { readonly t: "char"; readonly at: number; readonly set: readonly Range[] }
  | { readonly t: "assert"; readonly at: number }
  | { readonly t: "backref"; readonly at: number };

const DIGIT: readonly Range[] = [[0x30, 0x39]];
const WORD: readonly Range[] = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const SPACE: readonly Range[] = [
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
];

function complement(set: readonly Range[]): Range[] {
  const sorted = [...set].sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of sorted) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

function overlaps(a: readonly Range[], b: readonly Range[]): boolean {
  return a.some(([alo, ahi]) => b.some(([blo, bhi]) => alo <= bhi && blo <= ahi));
}

class Parser {
  #i = 0;
  constructor(private readonly s: string) {}

  parse(): Node {
    const node = this.#alt();
    if (this.#i < this.s.length) throw new Error(`unexpected ${JSON.stringify(this.s[this.#i])} at ${this.#i}`);
    return node;
  }

  #alt(): Node {
    const at = this.#i;
    const alts = [this.#seq()];
    while (this.s[this.#i] === "|") {
      this.#i++;
      alts.push(this.#seq());
    }
    return alts.length === 1 ? (alts[0] as Node) : { t: "alt", at, alts };
  }

  #seq(): Node {
    const at = this.#i;
    const items: Node[] = [];
    while (this.#i < this.s.length && this.s[this.#i] !== "|" && this.s[this.#i] !== ")") {
      items.push(this.#quantified(this.#atom()));
    }
    return { t: "seq", at, items };
  }

  #quantified(body: Node): Node {
    const at = this.#i;
    const c = this.s[this.#i];
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/u.exec(this.s.slice(this.#i));
      if (!m) return body;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      this.#i += m[0].length - 1;
    } else return body;
    this.#i++;
    if (this.s[this.#i] === "?") this.#i++; // lazy: same risk as greedy
    return { t: "quant", at, min, max, body };
  }

  #atom(): Node {
    const at = this.#i;
    const c = this.s[this.#i] as string;
    if (c === "(") {
      const rest = this.s.slice(this.#i);
      const look = /^\(\?(?:<[=!]|[=!])/u.exec(rest);
      const plain = /^\(\?(?:<[^>=!]*>|[a-z-]*:)/u.exec(rest);
      const opener = look?.[0] ?? plain?.[0] ?? "(";
      this.#i += opener.length;
      const body = this.#alt();
      if (this.s[this.#i] !== ")") throw new Error(`unclosed group at ${at}`);
      this.#i++;
      return { t: "group", at, look: look !== null, body };
    }
    if (c === "[") return { t: "char", at, set: this.#class() };
    if (c === "^" || c === "$") {
      this.#i++;
      return { t: "assert", at };
    }
    if (c === ".") {
      this.#i++;
      return { t: "char", at, set: ANY };
    }
    if (c === "\\") {
      const n = this.s[this.#i + 1];
      if (n === "b" || n === "B") {
        this.#i += 2;
        return { t: "assert", at };
      }
      if ((n !== undefined && n >= "1" && n <= "9") || (n === "k" && this.s[this.#i + 2] === "<")) {
        this.#i = n === "k" ? this.s.indexOf(">", this.#i) + 1 : this.#i + 1 + (/^\d+/u.exec(this.s.slice(this.#i + 1))?.[0].length ?? 1);
        return { t: "backref", at };
      }
      return { t: "char", at, set: this.#escape() };
    }
    const cp = this.s.codePointAt(this.#i) as number;
    this.#i += String.fromCodePoint(cp).length;
    return { t: "char", at, set: [[cp, cp]] };
  }

  /** An escape outside or inside a class, as a set of code points; advances past it. */
  #escape(inClass = false): readonly Range[] {
    const n = this.s[this.#i + 1] as string;
    this.#i += 2;
    switch (n) {
      case "d": return DIGIT;
      case "D": return complement(DIGIT);
      case "w": return WORD;
      case "W": return complement(WORD);
      case "s": return SPACE;
      case "S": return complement(SPACE);
      case "p":
      case "P": {
        this.#i = this.s.indexOf("}", this.#i) + 1;
        return ANY; // property sets are large; treating them as "anything" is the conservative choice
      }
      case "n": return [[0x0a, 0x0a]];
      case "r": return [[0x0d, 0x0d]];
      case "t": return [[0x09, 0x09]];
      case "f": return [[0x0c, 0x0c]];
      case "v": return [[0x0b, 0x0b]];
      case "0": return [[0, 0]];
      case "b": return inClass ? [[0x08, 0x08]] : ANY;
      case "c": {
        const cp = (this.s.codePointAt(this.#i) as number) % 32;
        this.#i++;
        return [[cp, cp]];
      }
      case "x": {
        const cp = parseInt(this.s.slice(this.#i, this.#i + 2), 16);
        this.#i += 2;
        return [[cp, cp]];
      }
      case "u": {
        if (this.s[this.#i] === "{") {
          const close = this.s.indexOf("}", this.#i);
          const cp = parseInt(this.s.slice(this.#i + 1, close), 16);
          this.#i = close + 1;
          return [[cp, cp]];
        }
        const cp = parseInt(this.s.slice(this.#i, this.#i + 4), 16);
        this.#i += 4;
        return [[cp, cp]];
      }
      default: {
        const cp = n.codePointAt(0) as number;
        return [[cp, cp]];
      }
    }
  }

  #class(): readonly Range[] {
    this.#i++; // [
    const negated = this.s[this.#i] === "^";
    if (negated) this.#i++;
    const set: Range[] = [];
    while (this.#i < this.s.length && this.s[this.#i] !== "]") {
      const lo = this.#classAtom();
      if (this.s[this.#i] === "-" && this.s[this.#i + 1] !== "]" && this.#i + 1 < this.s.length && lo.length === 1 && lo[0]?.[0] === lo[0]?.[1]) {
        this.#i++;
        const hi = this.#classAtom();
        set.push([(lo[0] as Range)[0], (hi[0] as Range)[1]]);
      } else set.push(...lo);
    }
    if (this.s[this.#i] !== "]") throw new Error("unclosed class");
    this.#i++;
    return negated ? complement(set) : set;
  }

  #classAtom(): readonly Range[] {
    if (this.s[this.#i] === "\\") return this.#escape(true);
    const cp = this.s.codePointAt(this.#i) as number;
    this.#i += String.fromCodePoint(cp).length;
    return [[cp, cp]];
  }
}

function children(n: Node): readonly Node[] {
  switch (n.t) {
    case "alt": return n.alts;
    case "seq": return n.items;
    case "group":
    case "quant": return [n.body];
    default: return [];
  }
}

function find(n: Node, pred: (n: Node) => boolean): Node | undefined {
  if (pred(n)) return n;
  for (const c of children(n)) {
    const hit = find(c, pred);
    if (hit) return hit;
  }
  return undefined;
}

function minLength(n: Node): number {
  switch (n.t) {
    case "alt": return Math.min(...n.alts.map(minLength));
    case "seq": return n.items.reduce((sum, item) => sum + minLength(item), 0);
    case "group": return n.look ? 0 : minLength(n.body);
    case "quant": return n.min === 0 ? 0 : n.min * minLength(n.body);
    case "char": return 1;
    default: return 0;
  }
}

/** The characters a match of `n` can start with (a superset; lookarounds and assertions add nothing). */
function firstSet(n: Node): Range[] {
  switch (n.t) {
    case "char": return [...n.set];
    case "alt": return n.alts.flatMap(firstSet);
    case "group": return n.look ? [] : firstSet(n.body);
    case "quant": return firstSet(n.body);
    case "seq": {
      const out: Range[] = [];
      for (const item of n.items) {
        out.push(...firstSet(item));
        if (minLength(item) > 0) break;
      }
      return out;
    }
    default: return [];
  }
}

function unwrap(n: Node): Node {
  let cur = n;
  for (;;) {
    if (cur.t === "group" && !cur.look) cur = cur.body;
    else if (cur.t === "seq" && cur.items.length === 1) cur = cur.items[0] as Node;
    else return cur;
  }
}

/** The first risky repetition, described; `null` when there is none. */
function nestedRisk(n: Node): string | null {
  if (n.t === "quant" && n.max > 1) {
    const inner = find(n.body, (c) => c.t === "quant" && c.max > 1);
    if (inner && inner.t === "quant" && (n.max === Infinity || inner.max === Infinity)) {
      return `the repeated group at offset ${n.body.at} contains another repetition (quantifier at offset ${inner.at}): the ways to split a match multiply`;
    }
    if (n.max === Infinity && minLength(n.body) === 0) {
      return `the repeated group at offset ${n.body.at} can match the empty string, so the repetition can loop on nothing`;
    }
    if (n.max === Infinity) {
      const body = unwrap(n.body);
      if (body.t === "alt") {
        const firsts = body.alts.map(firstSet);
        for (let a = 0; a < firsts.length; a++) {
          for (let b = a + 1; b < firsts.length; b++) {
            if (overlaps(firsts[a] as Range[], firsts[b] as Range[])) {
              return `the repeated alternation at offset ${n.body.at} has branches ${a + 1} and ${b + 1} that can start with the same character, so a match can be split many ways`;
            }
          }
        }
      }
    }
  }
  for (const c of children(n)) {
    const hit = nestedRisk(c);
    if (hit) return hit;
  }
  return null;
}
