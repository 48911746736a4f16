/**
 * The one module that parses, with `resolution.ts` (which reads tsconfig files with TypeScript's own
 * reader); both take the parser from `typescript.ts`. It hands the rest of the front end raw
 * `ts.SourceFile`s, so replacing the parser with another compiler API is a change to these three files alone.
 *
 * Speed: the front end only parses: no `Project`, no lib files, no dependency resolution and no type
 * checker; of a tsconfig it reads the module resolution, once per file (`resolution.ts`). Each file is read
 * once and parsed once with the TypeScript parser ts-morph bundles (`ts.createSourceFile`, with the target
 * a ts-morph `Project` was given), never wrapped in ts-morph nodes: a `Project` would read and parse a file
 * that exists on disk before parsing the given text again. ts-morph itself is never loaded (`typescript.ts`).
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { ts } from "./typescript.js";
import * as path from "node:path";
import { readBoundedSync } from "../emit/files.js";
import { displayPath, isInside, toPosix } from "./paths.js";
import { createResolutionCache, MAX_CONFIG_BYTES, type ModuleResolution } from "./resolution.js";

export { ts };
export { isInside };

export interface ParsedFile {
  /** Absolute path in the host's file system. */
  readonly path: string;
  readonly text: string;
  readonly sourceFile: ts.SourceFile;
  /** Syntax errors from the parser (no type checking is ever done). */
  readonly syntaxErrors: readonly ts.DiagnosticWithLocation[];
  /**
   * Where the text nests deeper than `MAX_NESTING` (1-based); the file is then not parsed at all, since the
   * parser recurses once per level and a few thousand levels exhaust its stack.
   */
  readonly tooDeep?: { readonly line: number; readonly column: number };
}

/** The deepest nesting of brackets, template holes or expressions the front end reads. Policies use about six. */
export const MAX_NESTING = 100;

/** Whether the front end may read a file: only inside the project root, and never through a link out of it. */
export type Confinement =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: "outside-root" | "link-outside-root" }
  /** A link inside the root to a file that is not a policy module; `target` is relative to the root. */
  | { readonly ok: false; readonly reason: "link-not-policy"; readonly target: string };

export interface SourceHost {
  /** The directory that relative paths (inputs and locations) are relative to. */
  readonly cwd: string;
  /** The only directory the front end reads from (absolute); the cwd unless configured. */
  readonly root: string;
  /** Whether `absolutePath` may be read; checked before anything is read or even probed. */
  confine(absolutePath: string): Confinement;
  fileExists(absolutePath: string): boolean;
  /** Parses a file once; later calls return the same parse. `undefined` when the file does not exist. */
  parse(absolutePath: string): ParsedFile | undefined;
  /** The module resolution the editor reads the policy files in `dir` (absolute, inside the root) with; once per folder. */
  resolution(dir: string): ModuleResolution;
  /** Forgets cached parses (for `--watch`), and every module resolution: a tsconfig may have changed or appeared. */
  refresh(absolutePaths: readonly string[]): void;
  /**
   * Forgets cached parses of files that have not changed, which a later `parse` reads and parses again: a
   * one-shot build lets go of each entry's syntax tree once it is compiled (BENCHMARKS.md, figure 4).
   */
  release(absolutePaths: readonly string[]): void;
}

export interface HostOptions {
  /** In-memory files, keyed by path (relative paths are relative to `cwd`, which defaults to `/`). */
  readonly files?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The project root; default `cwd`. Relative to `cwd`. */
  readonly root?: string;
}

/** The language version policy files are parsed as (what the former ts-morph `Project` was given). */
const TARGET = ts.ScriptTarget.ES2022;

export function createSourceHost(options: HostOptions = {}): SourceHost {
  const memory = options.files === undefined ? undefined : new Map<string, string>();
  const inMemory = memory !== undefined;
  const cwd = options.cwd ?? (inMemory ? "/" : process.cwd());
  if (memory && options.files) {
    for (const [p, text] of Object.entries(options.files)) memory.set(path.posix.resolve(cwd, p), text);
  }
  const fileExists = (p: string): boolean => (memory ? memory.has(p) : statSync(p, { throwIfNoEntry: false })?.isFile() === true);
  const read = (p: string): string | undefined => {
    if (memory) return memory.get(p);
    try {
      return readFileSync(p, "utf8");
    } catch {
      return undefined;
    }
  };
  const cache = new Map<string, ParsedFile>();
  const root = path.posix.resolve(cwd, options.root ?? ".");
  let realRoot: string | undefined;
  const real = (p: string): string | undefined => {
    try {
      return toPosix(realpathSync(p));
    } catch {
      return undefined;
    }
  };
  const confine = (p: string): Confinement => {
    if (!isInside(root, p)) return { ok: false, reason: "outside-root" };
    if (inMemory) return { ok: true };
    const target = real(p);
    if (target === undefined || target === p) return { ok: true };
    realRoot ??= real(root) ?? root;
    if (!isInside(realRoot, target)) return { ok: false, reason: "link-outside-root" };
    if (!target.endsWith(".policy.ts")) return { ok: false, reason: "link-not-policy", target: path.posix.relative(realRoot, target) };
    return { ok: true };
  };
  const resolutions = createResolutionCache({
    root,
    display: (p) => displayPath(cwd, p),
    fileExists,
    // Bounded, like an output file. A link inside the root may be followed (a tsconfig.json linked to a shared
    // one is common, and is not a policy): its target, already confined, is read rather than the link.
    readConfig(p) {
      const allowed = confine(p);
      if (!allowed.ok && allowed.reason !== "link-not-policy") return undefined;
      if (memory) {
        const text = memory.get(p);
        return text !== undefined && Buffer.byteLength(text) <= MAX_CONFIG_BYTES ? text : undefined;
      }
      return readBoundedSync(real(p) ?? p, MAX_CONFIG_BYTES);
    },
  });
  return {
    cwd,
    root,
    confine,
    fileExists,
    parse(p) {
      const cached = cache.get(p);
      if (cached) return cached;
      const text = read(p);
      if (text === undefined) return undefined;
      const deep = nestingOverflow(text);
      let parsed: ParsedFile;
      try {
        if (deep >= 0) throw new RangeError("nesting");
        // No parent pointers (`setParentNodes: false`): setting them is a walk over every node, ~20 % of the
        // parse, and the front end reads each node from above (a visitor that needs a parent passes it down).
        const sourceFile = ts.createSourceFile(p, text, TARGET, false);
        parsed = { path: p, text, sourceFile, syntaxErrors: parseDiagnostics(sourceFile) };
      } catch (error) {
        // A recursion the scan does not see (`a ? b : c ? …` thousands deep) overflows the parser: same answer.
        if (!(error instanceof RangeError)) throw error;
        // An empty stand-in.
        const sourceFile = ts.createSourceFile(p, "", TARGET);
        parsed = { path: p, text, sourceFile, syntaxErrors: [], tooDeep: lineColumn(text, Math.max(deep, 0)) };
      }
      cache.set(p, parsed);
      return parsed;
    },
    resolution: (dir) => resolutions.of(dir),
    refresh(paths) {
      for (const p of paths) cache.delete(p);
      resolutions.clear();
    },
    release(paths) {
      for (const p of paths) cache.delete(p);
    },
  };
}

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

function lineColumn(text: string, offset: number): { line: number; column: number } {
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

/** The parser's own diagnostics; reading them avoids building a `Program` just to learn about syntax errors. */
function parseDiagnostics(sf: ts.SourceFile): readonly ts.DiagnosticWithLocation[] {
  return (sf as ts.SourceFile & { parseDiagnostics?: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

export function flattenMessage(message: string | ts.DiagnosticMessageChain): string {
  return ts.flattenDiagnosticMessageText(message, "\n");
}
