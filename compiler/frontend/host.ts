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
import { lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { ts } from "./typescript.js";
import * as path from "node:path";
import { readBoundedSync } from "../emit/files.js";
import { displayPath, isInside, resolvePath, toPosix } from "./paths.js";
import { lineColumn, MAX_NESTING, nestingOverflow } from "./nesting.js";
import { createResolutionCache, MAX_CONFIG_BYTES, type ModuleResolution } from "./resolution.js";

export { ts };
export { isInside };
export { MAX_NESTING, nestingOverflow };

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
  /**
   * Whether `absolutePath` may be read; checked before anything is read or even probed. A path behind a
   * link that leads out of the root is refused whether or not anything is there: nothing past the link is
   * looked at.
   */
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

/** Links followed in one path before it is taken for a loop (Linux's own limit is 40). */
const MAX_LINKS = 40;

/** The language version policy files are parsed as (what the former ts-morph `Project` was given). */
const TARGET = ts.ScriptTarget.ES2022;

export function createSourceHost(options: HostOptions = {}): SourceHost {
  const memory = options.files === undefined ? undefined : new Map<string, string>();
  const inMemory = memory !== undefined;
  const cwd = options.cwd ?? (inMemory ? "/" : process.cwd());
  if (memory && options.files) {
    for (const [p, text] of Object.entries(options.files)) memory.set(path.posix.resolve(cwd, p), text);
  }
  const fileExists = (p: string): boolean => {
    if (memory) return memory.has(p);
    try {
      return statSync(p, { throwIfNoEntry: false })?.isFile() === true;
    } catch {
      // A loop of links (ELOOP), a file where a folder should be (ENOTDIR): nothing there to read.
      return false;
    }
  };
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
  /**
   * Where `p` (inside the root) leads: its real path, found one component at a time from the root, and
   * whether a link was followed on the way; `undefined` as soon as a link leads out of the root. Nothing past
   * such a link is looked at, so a path behind it is refused alike whether it exists or not (resolving the
   * whole path at once would stat the target, and tell a missing one apart). A component that is not there
   * ends the walk, the rest as written: nothing below it can be a link.
   */
  const follow = (p: string): { readonly target: string; readonly linked: boolean } | undefined => {
    const inRoot = (realRoot ??= real(root) ?? root);
    // A stack: the next component last.
    const rest = path.posix.relative(root, p).split("/").filter((c) => c !== "").reverse();
    let at = inRoot;
    let links = 0;
    while (rest.length > 0) {
      const next = path.posix.join(at, rest.pop()!);
      let link: string | undefined;
      try {
        link = lstatSync(next).isSymbolicLink() ? readlinkSync(next) : undefined;
      } catch {
        return { target: [next, ...rest.reverse()].join("/"), linked: links > 0 };
      }
      if (link === undefined) {
        at = next;
        continue;
      }
      // A loop of links leads nowhere: nothing there to read (a stat of it fails), and nothing outside was asked.
      if (++links > MAX_LINKS) return { target: [next, ...rest.reverse()].join("/"), linked: true };
      // `at` is a real folder, so a `..` in the link's text climbs where the file system would.
      const to = resolvePath(at, link);
      const within = isInside(inRoot, to) ? path.posix.relative(inRoot, to) : isInside(root, to) ? path.posix.relative(root, to) : undefined;
      if (within === undefined) return undefined;
      at = inRoot;
      for (const c of within.split("/").reverse()) if (c !== "") rest.push(c);
    }
    return { target: at, linked: links > 0 };
  };
  const confine = (p: string): Confinement => {
    if (!isInside(root, p)) return { ok: false, reason: "outside-root" };
    if (inMemory) return { ok: true };
    const led = follow(p);
    if (led === undefined) return { ok: false, reason: "link-outside-root" };
    if (!led.linked || led.target.endsWith(".policy.ts")) return { ok: true };
    return { ok: false, reason: "link-not-policy", target: path.posix.relative(realRoot ?? root, led.target) };
  };
  const resolutions = createResolutionCache({
    root,
    display: (p) => displayPath(cwd, p),
    fileExists,
    confined(p) {
      const allowed = confine(p);
      return allowed.ok || allowed.reason === "link-not-policy";
    },
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

/** The parser's own diagnostics; reading them avoids building a `Program` just to learn about syntax errors. */
function parseDiagnostics(sf: ts.SourceFile): readonly ts.DiagnosticWithLocation[] {
  return (sf as ts.SourceFile & { parseDiagnostics?: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

export function flattenMessage(message: string | ts.DiagnosticMessageChain): string {
  return ts.flattenDiagnosticMessageText(message, "\n");
}
