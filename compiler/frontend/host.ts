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
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, statSync } from "node:fs";
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
  /**
   * Why the file was not read, and `text` is empty: it is larger than `MAX_POLICY_BYTES` (`bytes`, its size),
   * or with it the files the host holds would pass `MAX_HELD_POLICY_BYTES` (`held`: what they would hold).
   */
  readonly tooLarge?: { readonly bytes: number; readonly held?: number };
}

/**
 * A policy file larger than this is not read (PG1024). Policies are a few kilobytes (this repository's
 * largest is under 3 KB; a generated one with 50 kinds, ~5 KB), so the limit is a thousand times any real
 * one; it is there because reading a policy costs ~100 bytes of memory per byte of source: a planted 25 MB
 * file took 29 s and 2.8 GB, a 100 MB one ran out of heap after 94 s. Within it a file costs at most a
 * few hundred MB and a few seconds.
 */
export const MAX_POLICY_BYTES = 4 * 1024 * 1024;

/**
 * The policy files one host holds read at once (every file read and not yet released): one that would take
 * them past this is not read either (PG1024), so that files each within `MAX_POLICY_BYTES` cannot add up to
 * the same exhaustion. A thousand policies of 5 KB are 5 MB; an incremental build releases each entry once
 * it is compiled, so only a full build of everything at once comes near it.
 */
export const MAX_HELD_POLICY_BYTES = 16 * 1024 * 1024;

/** An in-memory file read only when the compiler asks for it (a git object): its size is known first. */
export interface LazyFile {
  /** In bytes: a file larger than the compiler reads is never read. */
  readonly size: number;
  /** Its text; `undefined` when it cannot be read after all. */
  read(): string | undefined;
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
  /**
   * Parses a file once; later calls return the same parse. `undefined` when the file does not exist. A file
   * too large to read (`MAX_POLICY_BYTES`, `MAX_HELD_POLICY_BYTES`) is not read: its parse is empty and says so.
   */
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
  /**
   * In-memory files read only when the compiler parses one, keyed as `files` (and beside them): a git
   * revision's policy files (`pruneguard diff --base`), so that only those a compilation reads are, and one
   * too large never is.
   */
  readonly lazyFiles?: Readonly<Record<string, LazyFile>>;
  readonly cwd?: string;
  /** The project root; default `cwd`. Relative to `cwd`. */
  readonly root?: string;
}

/** Links followed in one path before it is taken for a loop (Linux's own limit is 40). */
const MAX_LINKS = 40;

/** The language version policy files are parsed as (what the former ts-morph `Project` was given). */
const TARGET = ts.ScriptTarget.ES2022;

/** What a bounded read found: the text, or the size of a file too large to read; `undefined`: nothing to read. */
type Read = { readonly text: string; readonly bytes: number } | { readonly tooLarge: number } | undefined;

export function createSourceHost(options: HostOptions = {}): SourceHost {
  const inMemory = options.files !== undefined || options.lazyFiles !== undefined;
  const memory = inMemory ? new Map<string, string | LazyFile>() : undefined;
  const cwd = options.cwd ?? (inMemory ? "/" : process.cwd());
  if (memory) {
    for (const [p, text] of Object.entries(options.files ?? {})) memory.set(path.posix.resolve(cwd, p), text);
    for (const [p, file] of Object.entries(options.lazyFiles ?? {})) memory.set(path.posix.resolve(cwd, p), file);
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
  /** `p`'s text when it is at most `limit` bytes; a larger one is not read, only its size learnt. */
  const read = (p: string, limit: number): Read => {
    if (!memory) return readCapped(p, limit);
    const file = memory.get(p);
    if (file === undefined) return undefined;
    const bytes = typeof file === "string" ? Buffer.byteLength(file) : file.size;
    if (bytes > limit) return { tooLarge: bytes };
    if (typeof file === "string") return { text: file, bytes };
    const text = file.read();
    if (text === undefined) return undefined;
    const actual = Buffer.byteLength(text);
    return actual > limit ? { tooLarge: actual } : { text, bytes: actual };
  };
  // Each parse with the bytes of its text, which count towards `MAX_HELD_POLICY_BYTES` until it is forgotten.
  const cache = new Map<string, { readonly file: ParsedFile; readonly bytes: number }>();
  let held = 0;
  const forget = (p: string) => {
    held -= cache.get(p)?.bytes ?? 0;
    cache.delete(p);
  };
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
        const r = read(p, MAX_CONFIG_BYTES);
        return r !== undefined && "text" in r ? r.text : undefined;
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
      if (cached) return cached.file;
      // Bounded before anything is read: a file too large, or too large to hold beside those already read,
      // is an empty stand-in that says so (the front end reports PG1024 at it).
      const got = read(p, Math.min(MAX_POLICY_BYTES, MAX_HELD_POLICY_BYTES - held));
      if (got === undefined) return undefined;
      if ("tooLarge" in got) {
        const bytes = got.tooLarge;
        const tooLarge = bytes > MAX_POLICY_BYTES ? { bytes } : { bytes, held: held + bytes };
        const file: ParsedFile = { path: p, text: "", sourceFile: ts.createSourceFile(p, "", TARGET), syntaxErrors: [], tooLarge };
        cache.set(p, { file, bytes: 0 });
        return file;
      }
      const text = got.text;
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
      cache.set(p, { file: parsed, bytes: got.bytes });
      held += got.bytes;
      return parsed;
    },
    resolution: (dir) => resolutions.of(dir),
    refresh(paths) {
      for (const p of paths) forget(p);
      resolutions.clear();
    },
    release(paths) {
      for (const p of paths) forget(p);
    },
  };
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * A policy file's text, when it is a regular file of at most `limit` bytes; its size when it is larger (it is
 * then not read, and one that grows past `limit` while it is read is not read on); `undefined` when there
 * is no such file, or it is a folder, a device or a pipe (opened without blocking, never read). Links are
 * followed: `confine` has decided where they may lead before anything is read.
 */
function readCapped(file: string, limit: number): Read {
  let fd: number | undefined;
  try {
    fd = openSync(file, OPEN_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    if (st.size > limit) return { tooLarge: st.size };
    const chunks: Buffer[] = [];
    let total = 0;
    // The size `fstat` gave and one byte more, then on in 64 KiB pieces should the file grow meanwhile.
    for (let want = st.size + 1; ; want = 64 * 1024) {
      const chunk = Buffer.allocUnsafe(want);
      let got = 0;
      for (let n = -1; n !== 0 && got < want; got += n) n = readSync(fd, chunk, got, want - got, null);
      chunks.push(chunk.subarray(0, got));
      total += got;
      if (total > limit) return { tooLarge: total };
      if (got < want) break;
    }
    return { text: Buffer.concat(chunks, total).toString("utf8"), bytes: total };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // A descriptor that fails to close changes nothing that was read.
      }
    }
  }
}

/** The parser's own diagnostics; reading them avoids building a `Program` just to learn about syntax errors. */
function parseDiagnostics(sf: ts.SourceFile): readonly ts.DiagnosticWithLocation[] {
  return (sf as ts.SourceFile & { parseDiagnostics?: readonly ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

export function flattenMessage(message: string | ts.DiagnosticMessageChain): string {
  return ts.flattenDiagnosticMessageText(message, "\n");
}
