/**
 * A small printer for generated TypeScript: emitters build a list of declarations as data and render it
 * once. Output is deterministic and formatted the way the repository's hand-written code is (two-space
 * indent, double quotes, trailing commas in multi-line literals, lines kept under `WIDTH` where a value
 * allows it), so a generated file reads like a hand-written one. A long doc comment is wrapped by the
 * compiler's one word wrapper (`wrapLines`, greedy at spaces); a change to it shows as drift in generated/.
 */
import { wrapLines } from "../diagnostics/format.js";

const WIDTH = 120;

/** A literal value: plain data, or `code` for an expression written verbatim (a reference to a const). */
export type Value =
  | string
  | number
  | boolean
  | null
  | { readonly code: string }
  | readonly Value[]
  | { readonly [key: string]: Value | undefined };

/** An object property whose value follows a one-line comment. */
export interface Member {
  readonly doc?: string;
  readonly name: string;
  readonly type: string;
  readonly optional?: boolean;
}

export type Declaration =
  | { readonly kind: "comment"; readonly lines: readonly string[] }
  | { readonly kind: "import"; readonly names: readonly string[]; readonly from: string; readonly typeOnly?: boolean }
  | { readonly kind: "exportTypeStar"; readonly from: string }
  | { readonly kind: "type"; readonly doc?: string; readonly name: string; readonly params?: string; readonly union: readonly string[] }
  | {
      readonly kind: "interface"; readonly doc?: string; readonly name: string; readonly params?: string; readonly members: readonly Member[];
      /** Printed as a type alias of an object type: assignable to an index signature, which an interface is not. */
      readonly alias?: boolean;
    }
  | { readonly kind: "const"; readonly doc?: string; readonly exported?: boolean; readonly name: string; readonly type?: string; readonly value: Value; readonly suffix?: string }
  | { readonly kind: "function"; readonly doc?: string; readonly exported?: boolean; readonly name: string; readonly params: string; readonly returns: string; readonly body: readonly string[] };

/** `{ code }` for a verbatim expression. */
export const code = (text: string): { readonly code: string } => ({ code: text });

/** Renders declarations separated by blank lines; imports stay together. Ends with one newline. */
export function render(decls: readonly Declaration[]): string {
  const chunks: string[] = [];
  let previous: Declaration["kind"] | null = null;
  for (const d of decls) {
    const text = renderDeclaration(d);
    const sticky = previous === "import" && d.kind === "import";
    if (sticky) chunks[chunks.length - 1] += `\n${text}`;
    else chunks.push(text);
    previous = d.kind;
  }
  return `${chunks.join("\n\n")}\n`;
}

function renderDeclaration(d: Declaration): string {
  switch (d.kind) {
    case "comment":
      return d.lines.map((l) => (l === "" ? "//" : `// ${commentText(l)}`)).join("\n");
    case "import": {
      const head = `import ${d.typeOnly ? "type " : ""}`;
      const one = `${head}{ ${d.names.join(", ")} } from ${quote(d.from)};`;
      if (one.length <= WIDTH) return one;
      return `${head}{\n${d.names.map((n) => `  ${n},`).join("\n")}\n} from ${quote(d.from)};`;
    }
    case "exportTypeStar":
      return `export type * from ${quote(d.from)};`;
    case "type": {
      const head = `export type ${d.name}${d.params ?? ""} =`;
      const one = `${head} ${d.union.join(" | ")};`;
      return doc(d.doc, "") + (one.length <= WIDTH ? one : `${head}\n${d.union.map((u) => `  | ${u}`).join("\n")};`);
    }
    case "interface": {
      const members = d.members.map((m) => `${doc(m.doc, "  ")}  readonly ${propertyKey(m.name)}${m.optional ? "?" : ""}: ${m.type};`);
      const body = `{${members.length === 0 ? "" : `\n${members.join("\n")}\n`}}`;
      return `${doc(d.doc, "")}${d.alias ? `export type ${d.name}${d.params ?? ""} = ${body};` : `export interface ${d.name}${d.params ?? ""} ${body}`}`;
    }
    case "const": {
      const head = `${d.exported === false ? "" : "export "}const ${d.name}${d.type ? `: ${d.type}` : ""} = `;
      const suffix = d.suffix ? ` ${d.suffix}` : "";
      return `${doc(d.doc, "")}${head}${printValue(d.value, "", head.length)}${suffix};`;
    }
    case "function":
      return `${doc(d.doc, "")}${d.exported === false ? "" : "export "}function ${d.name}(${d.params}): ${d.returns} {\n${d.body.map((l) => (l === "" ? "" : `  ${l}`)).join("\n")}\n}`;
  }
}

/** A one-line JSDoc (or several lines when it would not fit), indented. */
function doc(text: string | undefined, indent: string): string {
  if (text === undefined) return "";
  const safe = commentText(text).replaceAll("*/", "*\\/");
  const one = `${indent}/** ${safe} */`;
  if (one.length <= WIDTH) return `${one}\n`;
  return `${indent}/**\n${wrapLines(safe, WIDTH - indent.length - 3).map((l) => `${indent} * ${l}`).join("\n")}\n${indent} */\n`;
}

/** A value as TypeScript source. `column` is where it starts, so a short value stays on the line. */
export function printValue(v: Value, indent: string, column = indent.length): string {
  if (!isComposite(v)) return printFlat(v);
  const flat = printFlatWithin(v, WIDTH - column);
  if (flat !== undefined) return flat;
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    return `[\n${v.map((x) => `${inner}${printValue(x, inner)},`).join("\n")}\n${indent}]`;
  }
  const entries = Object.entries(v as Record<string, Value | undefined>).filter((e): e is [string, Value] => e[1] !== undefined);
  return `{\n${entries.map(([k, x]) => `${inner}${isShorthand(k, x) ? k : `${propertyKey(k)}: ${printValue(x, inner, inner.length + propertyKey(k).length + 2)}`},`).join("\n")}\n${indent}}`;
}

function printFlat(v: Value): string {
  if (v === null) return "null";
  if (typeof v === "string") return quote(v);
  if (typeof v === "number") return formatNumber(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(printFlat).join(", ")}]`;
  if (isCode(v)) return v.code;
  const entries = Object.entries(v as Record<string, Value | undefined>).filter((e): e is [string, Value] => e[1] !== undefined);
  return entries.length === 0 ? "{}" : `{ ${entries.map(([k, x]) => (isShorthand(k, x) ? k : `${propertyKey(k)}: ${printFlat(x)}`)).join(", ")} }`;
}

/**
 * `printFlat(v)` when it is at most `room` characters long, else `undefined` — found without printing the
 * rest of a value that does not fit: a table of fifty kinds is not printed on one line only to be thrown
 * away, once per level of nesting (BENCHMARKS.md, figure 4).
 */
function printFlatWithin(v: Value, room: number): string | undefined {
  if (!isComposite(v)) {
    const flat = printFlat(v);
    return flat.length <= room ? flat : undefined;
  }
  if (Array.isArray(v)) {
    let text = "[";
    for (let i = 0; i < v.length; i++) {
      const sep = i === 0 ? "" : ", ";
      // What is left for this item: the room, less what is printed and what must follow ("]").
      const item = printFlatWithin(v[i]!, room - text.length - sep.length - 1);
      if (item === undefined) return undefined;
      text += sep + item;
    }
    text += "]";
    return text.length <= room ? text : undefined;
  }
  let text = "{ ";
  let first = true;
  for (const [k, x] of Object.entries(v as Record<string, Value | undefined>)) {
    if (x === undefined) continue;
    const sep = first ? "" : ", ";
    first = false;
    if (isShorthand(k, x)) {
      text += sep + k;
    } else {
      const key = `${propertyKey(k)}: `;
      // What must follow this member: " }".
      const value = printFlatWithin(x, room - text.length - sep.length - key.length - 2);
      if (value === undefined) return undefined;
      text += sep + key + value;
    }
    if (text.length + 2 > room) return undefined;
  }
  if (first) return room >= 2 ? "{}" : undefined;
  text += " }";
  return text.length <= room ? text : undefined;
}

/** `{ kinds: kinds }` prints as `{ kinds }`. */
function isShorthand(key: string, v: Value): boolean {
  return isCode(v) && v.code === key;
}

function isCode(v: Value): v is { readonly code: string } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as { code?: unknown }).code === "string" && Object.keys(v).length === 1;
}

function isComposite(v: Value): boolean {
  return typeof v === "object" && v !== null && !isCode(v) && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);
}

/** Integers of five digits or more get separators (`7_200_000`), so durations in ms read at a glance. */
function formatNumber(n: number): string {
  if (!Number.isInteger(n) || Math.abs(n) < 10_000) return String(n);
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, "_");
}

/**
 * Characters that end a line in JavaScript (LF, CR, U+2028, U+2029), every other control character, and
 * U+0085 and U+FEFF: written as `\uXXXX` escapes, never raw.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g;
const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * Text from outside the compiler (a file name, a description) made safe inside a comment: nothing in it can
 * end a `//` line comment, so no part of it can become code. Block comments also need `*\/` escaped (`doc`).
 */
export function commentText(s: string): string {
  return s.replace(UNPRINTABLE, escapeChar);
}

/** A double-quoted string literal; line separators and control characters are escaped, so it reads on one line. */
export function quote(s: string): string {
  return JSON.stringify(s).replace(UNPRINTABLE, escapeChar);
}

/** An identifier as is; anything else quoted. */
export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : quote(name);
}

/** `obj.name`, or `obj["name"]` when `name` is not an identifier. */
export function member(obj: string, name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `${obj}.${name}` : `${obj}[${quote(name)}]`;
}
