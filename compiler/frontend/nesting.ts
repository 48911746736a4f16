/**
 * How deep a text nests, found by a scan before any parser sees it: TypeScript's parser (of policy files
 * and of tsconfig.json alike) recurses once per level, and a few thousand levels exhaust its stack.
 */

/** The deepest nesting of brackets, template holes or expressions the front end reads. Policies use about six. */
export const MAX_NESTING = 100;

/**
 * The offset where brackets (`(`, `[`, `{`) and template holes nest deeper than `MAX_NESTING`, or -1.
 * Strings, templates and comments are skipped; a bracket inside a regular expression literal may be
 * counted, which can only make the answer err towards "deep" on text no policy contains.
 */
export function nestingOverflow(text: string): number {
  const stack: Array<"bracket" | "hole"> = [];
  let inTemplate = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inTemplate) {
      if (c === "\\") i++;
      else if (c === "`") inTemplate = false;
      else if (c === "$" && text[i + 1] === "{") {
        i++;
        stack.push("hole");
        inTemplate = false;
        if (stack.length > MAX_NESTING) return i;
      }
      continue;
    }
    if (c === "\\") i++;
    else if (c === '"' || c === "'") {
      for (i++; i < text.length && text[i] !== c && text[i] !== "\n"; i++) if (text[i] === "\\") i++;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === "`") inTemplate = true;
    else if (c === "(" || c === "[" || c === "{") {
      stack.push("bracket");
      if (stack.length > MAX_NESTING) return i;
    } else if (c === ")" || c === "]" || c === "}") {
      if (stack.pop() === "hole") inTemplate = true;
    }
  }
  return -1;
}

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset; i++) {
    if (text[i] === "\n") {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}
