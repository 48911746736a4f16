/**
 * The one module that touches ts-morph. It hands the rest of the front end raw `ts.SourceFile`s, so
 * replacing ts-morph with another compiler API is a change to this file alone.
 *
 * Speed: the front end only parses: no `Project`, no tsconfig, no lib files, no dependency resolution and
 * no type checker. Each file is read once and parsed once with the TypeScript parser ts-morph bundles
 * (`ts.createSourceFile`, the same call and target a ts-morph `Project` makes), never wrapped in ts-morph
 * nodes: a `Project` would read and parse a file that exists on disk before parsing the given text again.
 */
import { readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import { ts } from "ts-morph";

export { ts };

export interface ParsedFile {
  /** Absolute path in the host's file system. */
  readonly path: string;
  readonly text: string;
  readonly sourceFile: ts.SourceFile;
  /** Syntax errors from the parser (no type checking is ever done). */
  readonly syntaxErrors: readonly ts.DiagnosticWithLocation[];
}

export interface SourceHost {
  /** The directory that relative paths (inputs and locations) are relative to. */
  readonly cwd: string;
  fileExists(absolutePath: string): boolean;
  /** Parses a file once; later calls return the same parse. `undefined` when the file does not exist. */
  parse(absolutePath: string): ParsedFile | undefined;
  /** Forgets cached parses (for `--watch`). */
  refresh(absolutePaths: readonly string[]): void;
}

export interface HostOptions {
  /** In-memory files, keyed by path (relative paths are relative to `cwd`, which defaults to `/`). */
  readonly files?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** The language version policy files are parsed as (what the former ts-morph `Project` was given). */
const TARGET = ts.ScriptTarget.ES2022;

export function createSourceHost(options: HostOptions = {}): SourceHost {
  const memory = options.files === undefined ? undefined : new Map<string, string>();
  const cwd = options.cwd ?? (memory ? "/" : process.cwd());
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
  return {
    cwd,
    fileExists,
    parse(p) {
      const cached = cache.get(p);
      if (cached) return cached;
      const text = read(p);
      if (text === undefined) return undefined;
      const sourceFile = ts.createSourceFile(p, text, TARGET, true);
      const parsed: ParsedFile = { path: p, text, sourceFile, syntaxErrors: parseDiagnostics(sourceFile) };
      cache.set(p, parsed);
      return parsed;
    },
    refresh(paths) {
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
