/**
 * A policy's own functions ("helpers"): `function toolKind() { … }` or `const toolKind = () => …`. A policy
 * is read, never run, so no call to one can be followed; what the compiler can do is say so at the call, the
 * line that needs changing, and say what to write there instead. To make that concrete, a helper whose body
 * is one returned expression is kept as source text, which a call's arguments can be written into.
 */
import type { Location } from "../ir/location.js";
import { ts, type ParsedFile } from "./host.js";
import type { SValue } from "./values.js";

/** Longest inlined text a suggestion shows; beyond it the suggestion says what to do without the text. */
const LONGEST_INLINE = 100;

export type FunctionValue = Extract<SValue, { t: "function" }>;

/** The function an expression is, looking through parentheses and type assertions; `undefined` when it is none. */
export function functionOf(node: ts.Expression): ts.ArrowFunction | ts.FunctionExpression | undefined {
  let e: ts.Expression = node;
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
  return ts.isArrowFunction(e) || ts.isFunctionExpression(e) ? e : undefined;
}

/** The value a helper named `name` has: declared at `declared` (its name), with `fn`'s parameters and body. */
export function helperValue(name: string, declared: Location, fn: ts.FunctionLikeDeclaration, file: ParsedFile): FunctionValue {
  // What a call would return, as an author writes it in the call's place: without parentheses, and
  // without an `as const`, which a value written in a policy does not need (the declaration form adds it).
  let returned = returnedExpression(fn);
  while (returned !== undefined && ts.isParenthesizedExpression(returned)) returned = returned.expression;
  if (returned !== undefined && ts.isAsExpression(returned) && ts.isConstTypeReference(returned.type)) returned = returned.expression;
  while (returned !== undefined && ts.isParenthesizedExpression(returned)) returned = returned.expression;
  const params = fn.parameters.map((p) => (ts.isIdentifier(p.name) && p.dotDotDotToken === undefined ? { name: p.name.text, fallback: p.initializer } : undefined));
  const inline = (args: readonly string[]): string | undefined => {
    if (returned === undefined || params.some((p) => p === undefined)) return undefined;
    const values = new Map<string, string>();
    params.forEach((p, i) => values.set(p!.name, args[i] ?? (p!.fallback ? p!.fallback.getText(file.sourceFile) : "undefined")));
    const substituted = substitute(returned, values, file);
    // `hours(team.length)` with `"payments"` is `hours("payments".length)`: computed from the argument, not
    // a value a policy may hold, so no text is suggested for it.
    if (substituted === undefined) return undefined;
    const text = substituted.replace(/\s+/g, " ").trim();
    return text.length > LONGEST_INLINE ? undefined : text;
  };
  return { t: "function", name, declared, params: fn.parameters.length, inline, constable: isLiteral(returned), location: declared };
}

/** The one expression a function returns: an arrow's expression body, or a body of a single `return`. */
function returnedExpression(fn: ts.FunctionLikeDeclaration): ts.Expression | undefined {
  const body = fn.body;
  if (body === undefined) return undefined;
  if (!ts.isBlock(body)) return body;
  const [only] = body.statements;
  return body.statements.length === 1 && only !== undefined && ts.isReturnStatement(only) ? only.expression : undefined;
}

/** Whether `as const` may follow the expression: an object, array or literal. */
function isLiteral(e: ts.Expression | undefined): boolean {
  return e !== undefined && (ts.isObjectLiteralExpression(e) || ts.isArrayLiteralExpression(e) || ts.isStringLiteralLike(e) || ts.isNumericLiteral(e));
}

/**
 * The source text of `e` with every reference to a parameter replaced by that parameter's value; `undefined`
 * when a parameter is computed with (`team.length`, `n * 2`, `` `${team}-log` ``), which a policy, read and
 * never run, cannot hold.
 */
function substitute(e: ts.Expression, values: ReadonlyMap<string, string>, file: ParsedFile): string | undefined {
  const sf = file.sourceFile;
  const start = e.getStart(sf);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  let computed = false;
  // Each node is visited with its parent (the parser sets no parent pointers: `host.ts`); `e` is an arrow's
  // body or a `return`'s expression, whose parent is never one that makes an identifier a name.
  const visit = (node: ts.Node, parent: ts.Node | undefined): void => {
    if (ts.isShorthandPropertyAssignment(node) && values.has(node.name.text)) {
      edits.push({ start: node.name.getStart(sf), end: node.name.getEnd(), text: `${node.name.text}: ${values.get(node.name.text)!}` });
      return;
    }
    if (ts.isIdentifier(node) && values.has(node.text) && (parent === undefined || isReference(node, parent))) {
      if (parent !== undefined && computedWith(node, parent)) computed = true;
      edits.push({ start: node.getStart(sf), end: node.getEnd(), text: values.get(node.text)! });
      return;
    }
    // Through parentheses and type assertions, a reference's parent is what it is an operand of: `(team).length`.
    const wrapper = ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isNonNullExpression(node) || ts.isTypeAssertionExpression(node);
    ts.forEachChild(node, (child) => visit(child, wrapper && parent !== undefined ? parent : node));
  };
  visit(e, undefined);
  if (computed) return undefined;
  let text = e.getText(sf);
  for (const edit of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, edit.start - start) + edit.text + text.slice(edit.end - start);
  return text;
}

/** Whether a parameter's reference `id` (under `p`) is an operand: read from, called, or combined with something. */
function computedWith(id: ts.Identifier, p: ts.Node): boolean {
  if (ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) return true;
  if (ts.isCallExpression(p) || ts.isNewExpression(p)) return p.expression === id;
  return (
    ts.isBinaryExpression(p) || ts.isTemplateSpan(p) || ts.isPrefixUnaryExpression(p) || ts.isPostfixUnaryExpression(p) ||
    ts.isConditionalExpression(p) || ts.isTaggedTemplateExpression(p) || ts.isTypeOfExpression(p) || ts.isVoidExpression(p) ||
    ts.isDeleteExpression(p) || ts.isAwaitExpression(p)
  );
}

/** An identifier (under `p`) that reads a binding, not a property's name (`{ store: s }`, `a.store`). */
function isReference(id: ts.Identifier, p: ts.Node): boolean {
  if ((ts.isPropertyAssignment(p) || ts.isPropertyAccessExpression(p) || ts.isMethodDeclaration(p) || ts.isPropertyDeclaration(p)) && p.name === id) return false;
  return !ts.isTypeReferenceNode(p) && !ts.isQualifiedName(p);
}

/**
 * What to write instead of a call: the helper's result in its place, as source text when it can be worked
 * out, and as a const the compiler reads when the helper takes no arguments (its result is the same at every call).
 */
export function instead(callee: SValue | undefined, call: ts.CallExpression, file: ParsedFile): string {
  if (callee === undefined) return "write the value it would return here, as a literal or a const this file declares (or imports from a policy module)";
  if (callee.t !== "function") {
    const text = call.expression.getText(file.sourceFile).replace(/\s+/g, " ");
    return `\`${text}\` is a value, not a function: write \`${text}\` without the call`;
  }
  const name = callee.name;
  const args = call.arguments.some(ts.isSpreadElement) ? undefined : call.arguments.map((a) => a.getText(file.sourceFile));
  const text = args === undefined ? undefined : callee.inline(args);
  if (callee.params === 0 && text !== undefined) {
    return `make \`${name}\` the value it returns, \`const ${name} = ${text}${callee.constable ? " as const" : ""};\`, and write \`${name}\` instead of \`${name}()\``;
  }
  if (text !== undefined) return `write what this call returns here, \`${text}\`; a part several calls share can be a const spread into each (\`{ ...shared, … }\`)`;
  return `write what \`${name}\` returns here, as a literal or a const the compiler can read (\`const ${name}Value = { … } as const;\`)`;
}
