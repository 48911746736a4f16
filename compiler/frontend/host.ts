/**
 * The one module that touches ts-morph. It owns the `Project` (real or in-memory file system) and hands the
 * rest of the front end raw `ts.SourceFile`s, so replacing ts-morph with another compiler API is a change
 * to this file alone.
 *
 * Speed: one `Project` for every file, no tsconfig, no lib files, no dependency resolution and no type
 * checker: the front end only parses. Walking is done on raw compiler nodes, never on wrapped ones.
 */
import { Project, ts } from "ts-morph";
import * as path from "node:path";

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
  /** Forgets cached parses (for `--watch`), keeping the project. */
  refresh(absolutePaths: readonly string[]): void;
}

export interface HostOptions {
  /** In-memory files, keyed by path (relative paths are relative to `cwd`, which defaults to `/`). */
  readonly files?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export function createSourceHost(options: HostOptions = {}): SourceHost {
  const inMemory = options.files !== undefined;
  const cwd = options.cwd ?? (inMemory ? "/" : process.cwd());
  const project = new Project({
    useInMemoryFileSystem: inMemory,
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    skipLoadingLibFiles: true,
    compilerOptions: { allowJs: false, noLib: true, target: ts.ScriptTarget.ES2022 },
  });
  const fs = project.getFileSystem();
  if (options.files) {
    for (const [p, text] of Object.entries(options.files)) fs.writeFileSync(path.posix.resolve(cwd, p), text);
  }
  const cache = new Map<string, ParsedFile>();
  return {
    cwd,
    fileExists: (p) => fs.fileExistsSync(p),
    parse(p) {
      const cached = cache.get(p);
      if (cached) return cached;
      if (!fs.fileExistsSync(p)) return undefined;
      const text = fs.readFileSync(p);
      const existing = project.getSourceFile(p);
      if (existing) project.removeSourceFile(existing);
      const sourceFile = project.createSourceFile(p, text, { overwrite: true }).compilerNode;
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
