/**
 * Incremental builds, for `compile`, `check` and `--watch`: an entry policy whose inputs (its file, every
 * base it extends, and the tsconfig.json and package.json files that decided how an extensionless import of
 * theirs resolves, by content hash), compiler and options are those the manifest recorded, and whose
 * output files on disk are the ones recorded, is neither re-read, re-validated, re-checked nor re-emitted:
 * its diagnostics come from the manifest. Every other entry is compiled on its own (its bases with it), so
 * what it reports and emits is exactly what a full compile of it would. The stale entries of one build share
 * their work: each policy among them is validated once and emitted once, however many entries read it (a
 * base and its overlays, a build with no manifest), so the base is not compiled again for each overlay.
 *
 * Correctness before speed: a changed base makes every entry that read it stale (its hash is among their
 * inputs); any error anywhere, or a policy name two entries share, falls back to one full compile of every
 * entry, whose diagnostics are then exactly the non-incremental ones; `force` ignores the manifest.
 *
 * The compiler (the front end with the TypeScript parser, the checks with the tokenizer, the emitters) is imported only
 * when some entry is stale, so a build with nothing to do loads none of them.
 */
import * as path from "node:path";
import { dedupeDiagnostics, isError, sortDiagnostics, type Diagnostic } from "../diagnostics/diagnostic.js";
import { readBoundedBytes, readBoundedSync, type EmitOptions, type EmittedFile } from "../emit/files.js";
import { sha256 } from "../emit/json.js";
import type { SourceHost } from "../frontend/host.js";
import type { CompileInput, CompileOptions, CompileResult } from "../compile.js";
import type { PolicyIR } from "../ir/schema.js";
import { displayPath, isInside, resolvePath, toPosix } from "../frontend/paths.js";
import { compilerFingerprint } from "./fingerprint.js";
import { MANIFEST_FILE, readManifest, type Manifest, type ManifestUnit } from "./manifest.js";
import { manifestKey } from "./seal.js";

export interface BuildOptions {
  /** What input paths and reported locations are relative to. */
  readonly cwd: string;
  /** The only directory policy files are read from (relative to `cwd`); default `cwd`. */
  readonly root?: string;
  /** The output folder (absolute): where the outputs and the manifest are. */
  readonly outDir: string;
  readonly emit: EmitOptions;
  /** Ignore the manifest and compile every entry. */
  readonly force?: boolean;
  /** A host reused across builds (`--watch`), so an unchanged base is not parsed again. */
  readonly host?: SourceHost;
}

export interface BuildResult {
  /** Every diagnostic, as a full compile reports them. */
  readonly diagnostics: readonly Diagnostic[];
  /** Source text by reported path, for code frames. */
  readonly sources: ReadonlyMap<string, string>;
  /** The tsconfig.json and package.json files the entries' module resolution read, by reported path: `--watch` watches them too. */
  readonly configs: readonly string[];
  readonly hasErrors: boolean;
  /** How many policies the entries compile (entries and their bases). */
  readonly policies: number;
  /** Every output file the policies compile to, by path in the output folder, sorted. */
  readonly outputs: readonly string[];
  /** The output files compiled in this build (those of stale entries); the others are on disk, unchanged. */
  readonly emitted: readonly EmittedFile[];
  /** Entries reused from the manifest, and entries in all. */
  readonly reused: number;
  readonly entries: number;
  /** The manifest describing this build, for `compile` to write; `undefined` when it has errors or no key. */
  readonly manifest: Manifest | undefined;
  /** The key to seal it with. */
  readonly key?: Buffer | undefined;
}

export async function buildPolicies(entries: readonly string[], options: BuildOptions): Promise<BuildResult> {
  const { cwd, outDir } = options;
  const emit: EmitOptions = { runtimeImport: options.emit.runtimeImport };
  // The root decides which reads are allowed (PG1018): another root is another build.
  const root = displayPath(cwd, path.resolve(cwd, options.root ?? "."));
  const settings = { runtimeImport: emit.runtimeImport, root };
  const compiler = compilerFingerprint();
  const rootDir = path.resolve(cwd, options.root ?? ".");
  // No key (an unwritable cache folder, or one inside the project): no manifest is read or written.
  const key = manifestKey(rootDir);
  const previous = options.force || key === undefined ? undefined : await readManifest(outDir, key);
  const usable =
    previous && previous.compiler === compiler && previous.options.runtimeImport === settings.runtimeImport && previous.options.root === settings.root ? previous : undefined;
  const shown = entries.map((e) => displayPath(cwd, e));
  // Only units that claim nothing the compiler would not do: inputs it may read, outputs in the output folder,
  // diagnostics located in their own inputs. The seal makes these the compiler's own; this keeps them so.
  const candidates = new Map<string, ManifestUnit>();
  for (const d of shown) {
    const u = usable?.units[d];
    if (u && plausible(u, { cwd, rootDir, outDir })) candidates.set(d, u);
  }

  // Read every input and output those units name once (synchronously: compiler/emit/files.ts). Never through a
  // link, tsconfigs included: one linked to a shared tsconfig (which the front end follows within the root)
  // leaves its units stale, compiled each time, rather than a link trusted to point where it did.
  const read = new Map<string, string>();
  const outputHashes = new Map<string, string | undefined>();
  const inputs = unique([...candidates.values()].flatMap((u) => Object.keys(u.inputs)));
  const outs = unique([...candidates.values()].flatMap((u) => Object.keys(u.outputs)));
  for (const p of inputs) {
    const text = readBoundedSync(path.resolve(cwd, p), MAX_FILE_BYTES);
    if (text !== undefined) read.set(p, text);
  }
  // Outputs are only hashed: as bytes, never decoded. The SHA-256 of a file's bytes is the manifest's hash of
  // the text the compiler wrote exactly when the file holds that text (any other bytes hash otherwise).
  for (const p of outs) {
    const bytes = readBoundedBytes(path.join(outDir, p), MAX_FILE_BYTES);
    outputHashes.set(p, bytes === undefined ? undefined : sha256(bytes));
  }
  const inputHashes = new Map<string, string>();
  const inputHash = (p: string): string | undefined => {
    const text = read.get(p);
    if (text === undefined) return undefined;
    let h = inputHashes.get(p);
    if (h === undefined) inputHashes.set(p, (h = sha256(text)));
    return h;
  };
  const isFresh = (u: ManifestUnit): boolean =>
    Object.entries(u.inputs).every(([p, h]) => inputHash(p) === h) && Object.entries(u.outputs).every(([p, h]) => outputHashes.get(p) === h);

  // Code frames show only policy files whose bytes are those a reused unit recorded, or that a compile read.
  const sources = new Map<string, string>();
  const configs = new Set<string>();
  const units = new Map<string, ManifestUnit>();
  const stale: number[] = [];
  shown.forEach((d, i) => {
    const u = candidates.get(d);
    if (u && isFresh(u)) {
      units.set(d, u);
      for (const p of Object.keys(u.inputs)) {
        if (isPolicyInput(p)) sources.set(p, read.get(p)!);
        else configs.add(p);
      }
    } else stale.push(i);
  });
  const reused = units.size;

  const emitted = new Map<string, EmittedFile>();
  let host = options.host;
  // A host of this build's own (not `--watch`'s, which keeps parses across builds) lets go of each entry's
  // syntax tree once the entry is compiled: kept, a hundred trees outlive every young-generation collection
  // and are copied by each (BENCHMARKS.md, figure 4). The files an entry imports (its bases) stay parsed for
  // the entries that share them; an entry a later one imports is parsed again then.
  const release = options.host === undefined;
  // Validations shared by every compile of this build, so the fallback to a full build reuses them too.
  const validated: NonNullable<CompileOptions["validated"]> = new Map();
  if (stale.length > 0) {
    const compiler = await loadCompiler();
    host ??= compiler.createSourceHost({ cwd, ...(options.root === undefined ? {} : { root: options.root }) });
    // Each entry is read on its own, which is how its unit learns exactly which files it reads and what a
    // compile of it alone reports; what the entries share is validated and emitted once, by policy file.
    const byPolicy = new Map<string, ReadonlyArray<{ file: EmittedFile; hash: string }>>();
    const emitOnce = (p: PolicyIR) => {
      let files = byPolicy.get(p.file);
      if (files === undefined) {
        files = compiler.emitAll([p], emit).map((f) => {
          const hash = sha256(f.contents);
          // What this build already read at the file's path: writing and drift checks need not read it again.
          if (!outputHashes.has(f.path)) return { file: f, hash };
          const before = outputHashes.get(f.path);
          const disk: EmittedFile["disk"] = before === undefined ? "unreadable" : before === hash ? "same" : "differs";
          return { file: { ...f, disk }, hash };
        });
        byPolicy.set(p.file, files);
      }
      return files;
    };
    for (const i of stale) {
      const r = await compiler.compile([entries[i]!], { cwd, host, validated });
      if (r.hasErrors) return fullBuild(entries, options, host, validated);
      if (release) host.release([resolvePath(cwd, entries[i]!)]);
      const files = r.policies.flatMap(emitOnce).sort((a, b) => (a.file.path < b.file.path ? -1 : 1));
      for (const f of files) emitted.set(f.file.path, f.file);
      for (const [p, text] of r.sources) sources.set(p, text);
      for (const p of r.configs.keys()) configs.add(p);
      units.set(shown[i]!, {
        // A tsconfig that let an extensionless import resolve is an input like a base: switched to NodeNext,
        // the same policy bytes are PG1021, so the unit must go stale with it.
        inputs: Object.fromEntries([...r.sources, ...r.configs].map(([p, text]) => [p, sha256(text)])),
        outputs: Object.fromEntries(files.map((f) => [f.file.path, f.hash])),
        policies: r.policies.map((p) => ({ name: p.name, file: p.file })),
        diagnostics: [...r.diagnostics],
      });
    }
  }

  // Two entries' policies with one name (PG2005, an error) is the one check that spans entries.
  const fileOf = new Map<string, string>();
  const files = new Set<string>();
  for (const u of units.values()) {
    for (const p of u.policies) {
      files.add(p.file);
      const other = fileOf.get(p.name);
      if (other !== undefined && other !== p.file) return fullBuild(entries, options, host, validated);
      fileOf.set(p.name, p.file);
    }
  }

  const ordered = shown.map((d) => units.get(d)!);
  const diagnostics = dedupeDiagnostics(sortDiagnostics(ordered.flatMap((u) => u.diagnostics)));
  return {
    diagnostics,
    sources,
    configs: [...configs].sort(),
    hasErrors: diagnostics.some(isError),
    policies: files.size,
    outputs: unique(ordered.flatMap((u) => Object.keys(u.outputs))).sort(),
    emitted: [...emitted.values()].sort((a, b) => (a.path < b.path ? -1 : 1)),
    reused,
    entries: entries.length,
    manifest: key === undefined ? undefined : { manifest: 2, compiler, options: settings, units: Object.fromEntries(shown.map((d) => [d, units.get(d)!])) },
    key,
  };
}

/** Every entry in one compile, as without a manifest: what a build with an error reports. */
async function fullBuild(
  entries: readonly string[],
  options: BuildOptions,
  host: SourceHost | undefined,
  validated: NonNullable<CompileOptions["validated"]>,
): Promise<BuildResult> {
  const compiler = await loadCompiler();
  const r = await compiler.compile(entries, { cwd: options.cwd, ...(options.root === undefined ? {} : { root: options.root }), ...(host ? { host, validated } : {}) });
  const files = r.hasErrors ? [] : compiler.emitAll(r.policies, options.emit);
  return {
    diagnostics: r.diagnostics,
    sources: r.sources,
    configs: [...r.configs.keys()].sort(),
    hasErrors: r.hasErrors,
    policies: r.policies.length,
    outputs: files.map((f) => f.path),
    emitted: files,
    reused: 0,
    entries: entries.length,
    manifest: undefined,
  };
}

/**
 * The compiler: the front end, the checks and the emitters, and `compile`, which is `compilePolicies` with
 * the IR's zod schema loaded when a policy needs it (an invalid one: validation reads valid policies without
 * zod and throws `IrSchemaNeeded` for the others, which are then compiled again with it).
 */
async function loadCompiler() {
  const [{ compilePolicies }, { createSourceHost }, { emitAll }, { IrSchemaNeeded, loadIrSchema }] = await Promise.all([
    import("../compile.js"),
    import("../frontend/index.js"),
    import("../emit/index.js"),
    import("../ir/validate.js"),
  ]);
  const compile = async (input: CompileInput, options: CompileOptions): Promise<CompileResult> => {
    try {
      return compilePolicies(input, options);
    } catch (error) {
      if (!(error instanceof IrSchemaNeeded)) throw error;
      await loadIrSchema();
      return compilePolicies(input, options);
    }
  };
  return { compile, createSourceHost, emitAll };
}

/** A policy file or output larger than this is not one the compiler wrote or would read for reuse. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** A recorded input the compiler reads as policy source (the rest are module resolution's configuration files). */
const isPolicyInput = (p: string): boolean => p.endsWith(".policy.ts");

/** The names of the files module resolution reads (`frontend/resolution.ts`): a tsconfig, what it extends, a package.json. */
const isConfigInput = (p: string): boolean => /(?:^|\/)(?:tsconfig[^/]*\.json|package\.json)$/.test(p);

/**
 * Whether a unit's claims are ones the compiler itself could make: every input a policy module or a
 * tsconfig or package.json inside the root, every output a plain file name in the output folder, every
 * policy and diagnostic in one of its policy inputs (configuration files are hashed, never shown).
 */
function plausible(u: ManifestUnit, where: { cwd: string; rootDir: string; outDir: string }): boolean {
  const root = toPosix(where.rootDir);
  const inputs = Object.keys(u.inputs);
  if (!inputs.every((p) => (isPolicyInput(p) || isConfigInput(p)) && isInside(root, resolvePath(where.cwd, p)))) return false;
  if (!Object.keys(u.outputs).every((p) => /^[^/\\.][^/\\]*$/.test(p) && p !== MANIFEST_FILE)) return false;
  const read = new Set(inputs.filter(isPolicyInput));
  const located = (l: { file: string } | null) => l === null || read.has(l.file);
  return u.policies.every((p) => read.has(p.file)) && u.diagnostics.every((d) => located(d.location) && d.related.every((r) => located(r.location)));
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}
