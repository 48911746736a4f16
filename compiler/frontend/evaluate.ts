/**
 * The static evaluator: turns an expression into an `SValue` by reading it, never by running it.
 *
 * Accepted: literals (strings, numbers, booleans, null, regular expressions, templates without holes or
 * with static holes), arrays and objects of accepted expressions (spreads of static arrays and objects),
 * identifiers bound to consts or imports, property access into static values and DSL namespaces, and
 * calls whose callee is a DSL builder. `as const`, `satisfies` and parentheses are looked through.
 * Everything else is a PG1xxx diagnostic and an `invalid` value, as is a value past the size limits below.
 */
import { DURATION_UNITS } from "../../src/policy/durations.js";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import { POLICY_EXPORTS } from "./dsl-table.js";
import { instead, type FunctionValue } from "./functions.js";
import { MAX_NESTING, ts, type ParsedFile } from "./host.js";
import { closest } from "./suggest.js";
import { sizeOf, type ObjectEntry, type SValue } from "./values.js";

export interface EvalContext {
  readonly file: ParsedFile;
  /** The file as reported in locations. */
  readonly display: string;
  report(d: Diagnostic): void;
  /** Resolves an identifier to a const's or an import's value; `undefined` when nothing binds it. */
  resolveIdentifier(name: string, location: Location): SValue | undefined;
  /** Applies a DSL builder to already-evaluated arguments. */
  callDsl(name: string, args: readonly SValue[], location: Location): SValue;
  /** Reads a member of a DSL namespace (`store.sqlite`, `pins.requestId`). */
  dslMember(namespace: string, member: string, location: Location): SValue;
  /** Told of each call of a function the policy declares (reported here, at the call). */
  called(fn: FunctionValue): void;
}

export function locate(node: ts.Node, file: ParsedFile, display: string): Location {
  const sf = file.sourceFile;
  const start = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  const end = sf.getLineAndCharacterOfPosition(node.getEnd());
  return { file: display, line: start.line + 1, column: start.character + 1, endLine: end.line + 1, endColumn: end.character + 1 };
}

/** Source text of a node, shortened for messages. */
export function snippet(node: ts.Node, file: ParsedFile): string {
  const text = node.getText(file.sourceFile).replace(/\s+/g, " ");
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * How large a value evaluation builds. Each const can double what the one before it holds
 * (`const a2 = a1 + a1`, `const b2 = [...b1, ...b1]`), so a file of a few hundred bytes could ask for
 * gigabytes, and a value that large would go on into every check and the IR. Past a limit the expression is
 * PG1023 and an invalid value, before anything larger is built. No policy comes near any of them.
 */
export const MAX_STRING_LENGTH = 64 * 1024;
/** Items of one array, or properties of one object. */
export const MAX_ITEMS = 10_000;
/** The whole of an array, object or DSL value, by `sizeOf`: what ten thousand items each holding a long string add up to. */
export const MAX_VALUE_SIZE = 1024 * 1024;

const count = (n: number) => n.toLocaleString("en-US");

/**
 * How deep evaluation is in each context, kept on the context under a symbol (a `WeakMap` lookup and update
 * around every node cost a cold compile more than the check itself); past `MAX_NESTING` it stops with PG1017
 * instead of recursing on.
 */
const DEPTH: unique symbol = Symbol("depth");
type Counted = EvalContext & { [DEPTH]?: number };

export function evaluate(node: ts.Expression, ctx: EvalContext): SValue {
  const counted = ctx as Counted;
  const depth = (counted[DEPTH] ?? 0) + 1;
  if (depth > MAX_NESTING) {
    const location = locate(node, ctx.file, ctx.display);
    ctx.report(diagnostic("PG1017", location, { what: "this expression (counting the consts it refers to)", max: MAX_NESTING }));
    return { t: "invalid", location };
  }
  counted[DEPTH] = depth;
  try {
    return evaluateNode(node, ctx);
  } finally {
    counted[DEPTH] = depth - 1;
  }
}

function evaluateNode(node: ts.Expression, ctx: EvalContext): SValue {
  const location = locate(node, ctx.file, ctx.display);
  const invalid = (d: Diagnostic): SValue => {
    ctx.report(d);
    return { t: "invalid", location };
  };
  const notStatic = () => invalid(notImported(node, location, ctx) ?? diagnostic("PG1003", location, { text: snippet(node, ctx.file) }));
  const tooLong = (what: string) => invalid(diagnostic("PG1023", location, { what, max: `${count(MAX_STRING_LENGTH)} characters` }));

  switch (node.kind) {
    case ts.SyntaxKind.ParenthesizedExpression:
    case ts.SyntaxKind.AsExpression:
    case ts.SyntaxKind.SatisfiesExpression:
    case ts.SyntaxKind.TypeAssertionExpression:
    case ts.SyntaxKind.NonNullExpression:
      return evaluate((node as ts.ParenthesizedExpression).expression, ctx);
    case ts.SyntaxKind.StringLiteral:
    case ts.SyntaxKind.NoSubstitutionTemplateLiteral: {
      const value = (node as ts.StringLiteral).text;
      if (value.length > MAX_STRING_LENGTH) return tooLong("this string");
      return { t: "string", value, location };
    }
    case ts.SyntaxKind.NumericLiteral:
      return { t: "number", value: Number((node as ts.NumericLiteral).text), duration: false, location };
    case ts.SyntaxKind.TrueKeyword:
      return { t: "boolean", value: true, location };
    case ts.SyntaxKind.FalseKeyword:
      return { t: "boolean", value: false, location };
    case ts.SyntaxKind.NullKeyword:
      return { t: "null", location };
    case ts.SyntaxKind.RegularExpressionLiteral: {
      const text = (node as ts.RegularExpressionLiteral).text;
      if (text.length > MAX_STRING_LENGTH) return tooLong("this regular expression");
      const slash = text.lastIndexOf("/");
      return { t: "regex", source: text.slice(1, slash), flags: text.slice(slash + 1), location };
    }
    case ts.SyntaxKind.PrefixUnaryExpression: {
      const u = node as ts.PrefixUnaryExpression;
      if (u.operator !== ts.SyntaxKind.MinusToken) return notStatic();
      const inner = evaluate(u.operand, ctx);
      if (inner.t === "invalid") return inner;
      if (inner.t !== "number" || inner.duration) return notStatic();
      return { t: "number", value: -inner.value, duration: false, location };
    }
    case ts.SyntaxKind.TemplateExpression: {
      const tpl = node as ts.TemplateExpression;
      let value = tpl.head.text;
      for (const span of tpl.templateSpans) {
        const part = evaluate(span.expression, ctx);
        if (part.t === "invalid") return part;
        if (part.t !== "string" && !(part.t === "number" && !part.duration)) return notStatic();
        const more = String(part.value) + span.literal.text;
        if (value.length + more.length > MAX_STRING_LENGTH) return tooLong("this template");
        value += more;
      }
      return { t: "string", value, location };
    }
    case ts.SyntaxKind.ArrayLiteralExpression: {
      const items: SValue[] = [];
      const tooMany = () => invalid(diagnostic("PG1023", location, { what: "this array", max: `${count(MAX_ITEMS)} items` }));
      for (const el of (node as ts.ArrayLiteralExpression).elements) {
        if (ts.isSpreadElement(el)) {
          const spread = evaluateQuietly(el.expression, ctx);
          if (spread?.t === "array") {
            if (items.length + spread.items.length > MAX_ITEMS) return tooMany();
            // One by one: `push(...items)` passes each item as an argument, on the stack.
            for (const item of spread.items) items.push(item);
          } else if (spread?.t === "invalid") {
            // Kept as an item, which consumers stay quiet about, so the array is not read as shorter than written.
            items.push(spread);
          } else ctx.report(diagnostic("PG1005", locate(el, ctx.file, ctx.display), { text: snippet(el.expression, ctx.file) }));
        } else if (el.kind === ts.SyntaxKind.OmittedExpression) {
          return notStatic();
        } else {
          if (items.length >= MAX_ITEMS) return tooMany();
          items.push(evaluate(el, ctx));
        }
      }
      return bounded({ t: "array", items, location }, "this array", ctx);
    }
    case ts.SyntaxKind.BinaryExpression: {
      // Arithmetic on numbers and durations (`hours(1) + minutes(30)`, `24 * 7`) and string `+` are static.
      const b = node as ts.BinaryExpression;
      const op = b.operatorToken.kind;
      const ops = [ts.SyntaxKind.PlusToken, ts.SyntaxKind.MinusToken, ts.SyntaxKind.AsteriskToken, ts.SyntaxKind.SlashToken];
      if (!ops.includes(op)) return notStatic();
      const l = evaluate(b.left, ctx);
      const r = evaluate(b.right, ctx);
      if (l.t === "invalid") return l;
      if (r.t === "invalid") return r;
      if (op === ts.SyntaxKind.PlusToken && l.t === "string" && r.t === "string") {
        if (l.value.length + r.value.length > MAX_STRING_LENGTH) return tooLong("this string");
        return { t: "string", value: l.value + r.value, location };
      }
      if (l.t !== "number" || r.t !== "number") return notStatic();
      const value =
        op === ts.SyntaxKind.PlusToken ? l.value + r.value : op === ts.SyntaxKind.MinusToken ? l.value - r.value : op === ts.SyntaxKind.AsteriskToken ? l.value * r.value : l.value / r.value;
      if (!Number.isFinite(value)) return notStatic();
      if (l.duration || r.duration) {
        // TypeScript types `hours(1) + minutes(30)` as `number`, which the DSL's types refuse where a duration
        // goes: the editor and the compiler agree by refusing it here too, with the form that works in both.
        const additive = op === ts.SyntaxKind.PlusToken || op === ts.SyntaxKind.MinusToken;
        const duration = additive ? l.duration && r.duration : (l.duration && !r.duration) || (!l.duration && r.duration && op === ts.SyntaxKind.AsteriskToken);
        if (!duration || value < 0) return notStatic();
        return invalid(diagnostic("PG1016", location, { text: snippet(node, ctx.file), total: oneBuilder(value) }));
      }
      return { t: "number", value, duration: false, location };
    }
    case ts.SyntaxKind.ObjectLiteralExpression:
      return evaluateObject(node as ts.ObjectLiteralExpression, location, ctx);
    case ts.SyntaxKind.Identifier: {
      const name = (node as ts.Identifier).text;
      if (name === "undefined") return { t: "undefined", location };
      return ctx.resolveIdentifier(name, location) ?? notStatic();
    }
    case ts.SyntaxKind.PropertyAccessExpression:
    case ts.SyntaxKind.ElementAccessExpression: {
      const access = node as ts.PropertyAccessExpression | ts.ElementAccessExpression;
      let member: string;
      if (ts.isPropertyAccessExpression(access)) {
        if (ts.isPrivateIdentifier(access.name)) return notStatic();
        member = access.name.text;
      } else {
        const arg = access.argumentExpression;
        if (!ts.isStringLiteralLike(arg) && !ts.isNumericLiteral(arg)) return notStatic();
        member = arg.text;
      }
      if (access.questionDotToken) return notStatic();
      // Report the whole access (`process.env.X`), not its unresolvable root, when the root is unknown.
      const target = evaluateQuietly(access.expression, ctx);
      if (target === undefined) return notStatic();
      if (target.t === "invalid") return target;
      if (target.t === "dsl") return ctx.dslMember(target.name, member, location);
      if (target.t === "object") {
        const found = target.entries.find((e) => e.key === member);
        if (found) return found.value;
        // `Lossy.Forbidd`: a misspelt member of a const object, said as one, not as a non-static expression.
        return invalid(notAMember(access, member, target, ctx));
      }
      if (target.t === "array" && /^\d+$/.test(member)) {
        const found = target.items[Number(member)];
        if (found) return found;
      }
      return notStatic();
    }
    case ts.SyntaxKind.CallExpression: {
      const call = node as ts.CallExpression;
      const callee = evaluateQuietly(call.expression, ctx);
      if (callee === undefined || callee.t !== "dsl") {
        if (callee?.t === "invalid") return callee;
        const fn = callee?.t === "function" ? callee : undefined;
        if (fn) ctx.called(fn);
        const related = fn ? [{ message: `\`${fn.name}\` is declared here`, location: fn.declared }] : [];
        const suggestion = instead(callee, call, ctx.file);
        return invalid(notImported(call, location, ctx) ?? diagnostic("PG1006", location, { callee: snippet(call.expression, ctx.file), suggestion }, related));
      }
      const args: SValue[] = [];
      for (const a of call.arguments) {
        if (ts.isSpreadElement(a)) {
          ctx.report(diagnostic("PG1005", locate(a, ctx.file, ctx.display), { text: snippet(a.expression, ctx.file) }));
          return { t: "invalid", location };
        }
        args.push(evaluate(a, ctx));
      }
      if (args.some((a) => a.t === "invalid")) return { t: "invalid", location };
      // Each argument is bounded, but `extendPolicy` adds its overlay to its base, and a chain of them adds up.
      return bounded(ctx.callDsl(callee.name, args, location), "the value of this call", ctx);
    }
    default:
      return notStatic();
  }
}

/**
 * `v`, or PG1023 and an invalid value when it is larger than `MAX_VALUE_SIZE` written out: each of its parts
 * may be within its own limit while ten thousand of them are not.
 */
function bounded(v: SValue, what: string, ctx: EvalContext): SValue {
  if (sizeOf(v) <= MAX_VALUE_SIZE) return v;
  ctx.report(diagnostic("PG1023", v.location, { what: `${what}, with everything in it,`, max: `${count(MAX_VALUE_SIZE)} characters and items (a const counted each time it is used)` }));
  return { t: "invalid", location: v.location };
}

/**
 * PG1014 when the expression's root is an unbound identifier named like a DSL export (`hours(4)`,
 * `pins.uuid`, `forever` without importing them): the call is a DSL call, only the import is missing.
 */
function notImported(node: ts.Expression, location: Location, ctx: EvalContext): Diagnostic | undefined {
  let root: ts.Expression = node;
  while (ts.isPropertyAccessExpression(root) || ts.isElementAccessExpression(root) || ts.isCallExpression(root)) root = root.expression;
  if (!ts.isIdentifier(root) || !(POLICY_EXPORTS as readonly string[]).includes(root.text)) return undefined;
  // Imported after all (`forever()` calls a value the file does import): the problem is another one.
  if (ctx.resolveIdentifier(root.text, location) !== undefined) return undefined;
  return diagnostic("PG1014", location, { name: root.text, importLine: `import { ${root.text} } from "pruneguard/dsl"` });
}

/** Members a message lists before it stops: an enum-like object has a handful. */
const LISTED_MEMBERS = 12;

/** PG1022 at the member's name: `Forbidd` is not a member of `Lossy`, with the nearest member and the list of them. */
function notAMember(access: ts.PropertyAccessExpression | ts.ElementAccessExpression, member: string, target: Extract<SValue, { t: "object" }>, ctx: EvalContext): Diagnostic {
  const nameNode = ts.isPropertyAccessExpression(access) ? access.name : access.argumentExpression;
  const keys = target.entries.map((e) => e.key);
  const shown = keys.slice(0, LISTED_MEMBERS).map((k) => `\`${k}\``);
  if (keys.length > LISTED_MEMBERS) shown.push(`and ${keys.length - LISTED_MEMBERS} more`);
  const near = closest(member, keys);
  const object = snippet(access.expression, ctx.file);
  return diagnostic(
    "PG1022",
    locate(nameNode, ctx.file, ctx.display),
    { member, object, suggestion: near === undefined ? "" : `; did you mean \`${near}\`?`, members: shown.join(", ") || "none" },
    [{ message: `the members of \`${object}\` are written here`, location: target.location }],
  );
}

/** A duration in milliseconds as one builder call in the largest unit that divides it: `minutes(90)`. */
function oneBuilder(ms: number): string {
  const units = (Object.entries(DURATION_UNITS) as Array<[string, number]>).sort((a, b) => b[1] - a[1]);
  const exact = units.find(([, size]) => ms % size === 0);
  const [unit, size] = exact ?? ["seconds", DURATION_UNITS.seconds];
  return `${unit}(${ms / size})`;
}

/**
 * Evaluates the object part of an access or the callee of a call. Returns `undefined` instead of
 * reporting when the root is an unknown identifier, so the caller can report the whole expression.
 */
function evaluateQuietly(node: ts.Expression, ctx: EvalContext): SValue | undefined {
  let root: ts.Expression = node;
  while (ts.isPropertyAccessExpression(root) || ts.isElementAccessExpression(root) || ts.isCallExpression(root)) root = root.expression;
  if (ts.isIdentifier(root) && root.text !== "undefined") {
    if (ctx.resolveIdentifier(root.text, locate(root, ctx.file, ctx.display)) === undefined) return undefined;
  } else if (!ts.isParenthesizedExpression(root) && !ts.isObjectLiteralExpression(root) && !ts.isArrayLiteralExpression(root)) {
    return undefined;
  }
  return evaluate(node, ctx);
}

function evaluateObject(node: ts.ObjectLiteralExpression, location: Location, ctx: EvalContext): SValue {
  const byKey = new Map<string, ObjectEntry>();
  const duplicates: Array<ObjectEntry & { readonly first: Location }> = [];
  const literalKeys = new Map<string, Location>();
  let ok = true;
  for (const prop of node.properties) {
    if (ts.isSpreadAssignment(prop)) {
      const spread = evaluateQuietly(prop.expression, ctx);
      if (spread?.t === "object") {
        for (const e of spread.entries) byKey.set(e.key, e);
        if (byKey.size > MAX_ITEMS) return tooManyProperties(location, ctx);
      } else if (spread?.t !== "invalid") {
        ctx.report(diagnostic("PG1005", locate(prop, ctx.file, ctx.display), { text: snippet(prop.expression, ctx.file) }));
        ok = false;
      } else ok = false;
      continue;
    }
    const keyLocation = locate(prop.name ?? prop, ctx.file, ctx.display);
    let key: string;
    const name = prop.name;
    if (name === undefined) {
      ok = false;
      continue;
    }
    if (ts.isComputedPropertyName(name)) {
      ctx.report(diagnostic("PG1004", keyLocation, { text: snippet(name.expression, ctx.file) }));
      ok = false;
      continue;
    } else if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) {
      key = name.text;
    } else {
      ctx.report(diagnostic("PG1003", keyLocation, { text: snippet(prop, ctx.file) }));
      ok = false;
      continue;
    }
    let value: SValue;
    if (ts.isPropertyAssignment(prop)) value = evaluate(prop.initializer, ctx);
    else if (ts.isShorthandPropertyAssignment(prop)) value = evaluate(prop.name, ctx);
    else {
      // Methods and accessors are code.
      ctx.report(diagnostic("PG1003", locate(prop, ctx.file, ctx.display), { text: snippet(prop, ctx.file) }));
      ok = false;
      continue;
    }
    const e: ObjectEntry = { key, keyLocation, value };
    const first = literalKeys.get(key);
    if (first !== undefined) duplicates.push({ ...e, first });
    else literalKeys.set(key, keyLocation);
    byKey.set(key, e);
    if (byKey.size > MAX_ITEMS) return tooManyProperties(location, ctx);
  }
  if (!ok) return { t: "invalid", location };
  return bounded({ t: "object", entries: [...byKey.values()], duplicates, location }, "this object", ctx);
}

function tooManyProperties(location: Location, ctx: EvalContext): SValue {
  ctx.report(diagnostic("PG1023", location, { what: "this object", max: `${count(MAX_ITEMS)} properties` }));
  return { t: "invalid", location };
}

