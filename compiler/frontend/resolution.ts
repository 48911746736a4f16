/**
 * Which module resolution a policy file is read under: the one the editor uses for it, taken from the
 * nearest `tsconfig.json` (and, under NodeNext, the nearest `package.json`), so the compiler resolves a
 * relative import exactly when `tsc` does.
 *
 * What it decides is one thing: whether a relative import must name its file (`./org.policy.js`), as under
 * NodeNext in an ES module, or may leave the extension out (`./org.policy`, `./dir` for `./dir/index.ts`),
 * as under `bundler`, or NodeNext in a CommonJS module. TypeScript 6 and 7 derive it thus:
 *
 * - `moduleResolution` when it is set; else `node16`/`nodenext` when `module` is `node16`, `node18`,
 *   `node20` or `nodenext`; else `bundler` (their default; `node10` and `classic` are removed in 7, whose
 *   tsc reports them and resolves like `bundler`).
 * - Extensions are required only under node16/nodenext resolution with a node `module` (tsc accepts the
 *   mismatched pairs with a configuration error, and resolves without the ES module rule), in a file that is
 *   an ES module: its nearest `package.json` says `"type": "module"`.
 *
 * Nothing outside the project root is read: not a tsconfig or package.json above it, not an `extends` that
 * climbs out of it or goes through a link out of it (nor is its existence asked). Where the compiler cannot
 * read what tsc would (none inside the root, one too large, one nested more deeply than the compiler reads,
 * an `extends` it may not follow, a chain of `extends` longer than it reads), it assumes NodeNext in an ES
 * module, the reading that refuses the most: an import it accepts then resolves under every setting. Every
 * lookup is cached per directory and every read is bounded: each file by `MAX_CONFIG_BYTES`, and the files
 * one tsconfig extends, each read once however many paths lead to it, by `MAX_CONFIG_FILES` and
 * `MAX_CONFIG_TOTAL_BYTES`.
 */
import * as path from "node:path";
import { ts } from "./typescript.js";
import { lineColumn, MAX_NESTING, nestingOverflow } from "./nesting.js";
import { isInside } from "./paths.js";

export interface ModuleResolution {
  /** Whether a relative import must name its file (`./org.policy.js`): NodeNext, or Node16, in an ES module. */
  readonly extensionsRequired: boolean;
  /** What decided it, for messages: `NodeNext module resolution (from \`tsconfig.json\`)`. */
  readonly described: string;
  /** The configuration files the decision read (absolute path → text), so a change to one can be noticed. */
  readonly inputs: ReadonlyMap<string, string>;
}

/** What resolution needs of the host: bounded, confined reads. */
export interface ResolutionFiles {
  readonly root: string;
  /** The path as reported in messages. */
  display(absolutePath: string): string;
  fileExists(absolutePath: string): boolean;
  /**
   * Whether a path inside the root may be looked at: not behind a link that leads out of the root. Asked
   * before `fileExists`, so that whether a file out there exists is never learnt.
   */
  confined(absolutePath: string): boolean;
  /** The file's text when it may be read (inside the root, not through a link out of it) and is at most `MAX_CONFIG_BYTES`. */
  readConfig(absolutePath: string): string | undefined;
}

/** A tsconfig.json or package.json larger than this is not one: they are a few hundred bytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The files one tsconfig.json may take its options from: itself and every file its `extends` reach,
 * directly or through another. Real chains are two to four files (a project's, a shared base, a preset);
 * each level of `extends` is a level of recursion in tsc's reader, and 32 are far fewer than would
 * threaten its stack.
 */
export const MAX_CONFIG_FILES = 32;

/** The bytes of those files together (each is at most `MAX_CONFIG_BYTES`): a few full-size files, not 32. */
export const MAX_CONFIG_TOTAL_BYTES = 4 * 1024 * 1024;

const NODE_MODULES = new Set<ts.ModuleKind>([ts.ModuleKind.Node16, ts.ModuleKind.Node18, ts.ModuleKind.Node20, ts.ModuleKind.NodeNext]);
const NODE_RESOLUTION = new Set<ts.ModuleResolutionKind>([ts.ModuleResolutionKind.Node16, ts.ModuleResolutionKind.NodeNext]);
const RESOLUTION_NAMES: Partial<Record<ts.ModuleResolutionKind, string>> = {
  [ts.ModuleResolutionKind.Node16]: "Node16",
  [ts.ModuleResolutionKind.NodeNext]: "NodeNext",
  [ts.ModuleResolutionKind.Bundler]: "bundler",
  [ts.ModuleResolutionKind.Node10]: "node10",
  [ts.ModuleResolutionKind.Classic]: "classic",
};

interface ConfigReading {
  readonly resolution: ts.ModuleResolutionKind | undefined;
  readonly nodeModule: boolean;
  /** Why the compiler could not read it as tsc does; the strict reading is assumed then. */
  readonly unreadable?: string;
  readonly inputs: ReadonlyMap<string, string>;
}

export interface ResolutionCache {
  /** The resolution of the policy files in `dir` (absolute, inside the root). */
  of(dir: string): ModuleResolution;
  /** Forgets everything read (`--watch`: a config may have changed, or appeared). */
  clear(): void;
}

export function createResolutionCache(files: ResolutionFiles): ResolutionCache {
  const nearest = new Map<string, Map<string, string | null>>();
  const configs = new Map<string, ConfigReading>();
  const packageTypes = new Map<string, { readonly esm: boolean | undefined; readonly text: string | undefined }>();
  const byDir = new Map<string, ModuleResolution>();

  /** The nearest `name` in `dir` or a folder above it, up to the root; `null` when there is none inside it. */
  const find = (dir: string, name: string): string | null => {
    let memo = nearest.get(name);
    if (!memo) nearest.set(name, (memo = new Map()));
    const walked: string[] = [];
    let found: string | null = null;
    for (let d = dir; isInside(files.root, d); d = path.posix.dirname(d)) {
      const known = memo.get(d);
      if (known !== undefined) {
        found = known;
        break;
      }
      walked.push(d);
      const candidate = path.posix.join(d, name);
      if (files.fileExists(candidate)) {
        found = candidate;
        break;
      }
      if (d === files.root || path.posix.dirname(d) === d) break;
    }
    for (const d of walked) memo.set(d, found);
    return found;
  };

  const readTsconfig = (file: string): ConfigReading => {
    const cached = configs.get(file);
    if (cached) return cached;
    const inputs = new Map<string, string>();
    // A path tsc would read that the compiler may not: outside the root or behind a link out of it (never
    // probed, so the answer is the same whether it exists or not), or there and unreadable.
    const refused: string[] = [];
    // Where a file read nests too deeply for tsc's JSON parser, which recurses once per bracket.
    let tooDeep: { readonly file: string; readonly line: number; readonly column: number } | undefined;
    // The first file past `MAX_CONFIG_FILES` or `MAX_CONFIG_TOTAL_BYTES`: it and every file after it are not read.
    let overLimit: string | undefined;
    let total = 0;
    const inside = (p: string): string | undefined => {
      const abs = path.posix.resolve(p);
      if (isInside(files.root, abs) && files.confined(abs)) return abs;
      refused.push(abs);
      return undefined;
    };
    const read = (p: string): string | undefined => {
      const abs = inside(p);
      if (abs === undefined) return undefined;
      if (inputs.has(abs)) return inputs.get(abs);
      if (overLimit !== undefined || inputs.size >= MAX_CONFIG_FILES) {
        overLimit ??= abs;
        refused.push(abs);
        return undefined;
      }
      let text = files.readConfig(abs);
      if (text !== undefined && (total += Buffer.byteLength(text)) > MAX_CONFIG_TOTAL_BYTES) {
        overLimit = abs;
        refused.push(abs);
        return undefined;
      }
      const deep = text === undefined ? -1 : nestingOverflow(text);
      if (text !== undefined && deep >= 0) {
        tooDeep ??= { file: abs, ...lineColumn(text, deep) };
        text = undefined;
      }
      if (text !== undefined) inputs.set(abs, text);
      else if (files.fileExists(abs)) refused.push(abs);
      return text;
    };
    const deeply = () => (tooDeep === undefined ? "" : ` (\`${files.display(tooDeep.file)}\` nests more than ${MAX_NESTING} levels deep at line ${tooDeep.line}, column ${tooDeep.column})`);
    const why = () =>
      overLimit !== undefined
        ? `extends more than the compiler reads (at most ${MAX_CONFIG_FILES} files, ${MAX_CONFIG_TOTAL_BYTES / 1024 / 1024} MiB together; it stopped at \`${files.display(overLimit)}\`)`
        : `extends \`${files.display(refused[0]!)}\`, which the compiler does not read (outside the project root, too large, nested too deeply, or a link out of it)${deeply()}`;
    let reading: ConfigReading;
    const text = read(file);
    if (text === undefined) {
      const why = tooDeep === undefined ? "could not be read (larger than 1 MiB, or a link out of the project root)" : `could not be read: it nests more than ${MAX_NESTING} levels deep at line ${tooDeep.line}, column ${tooDeep.column}`;
      reading = { resolution: undefined, nodeModule: false, unreadable: why, inputs };
    } else {
      // tsc's own reader: comments and trailing commas as tsc takes them, and `extends` (a path or a package,
      // one or several) followed through the same confined reads. No directory is listed: only options matter.
      const host: ts.ParseConfigHost = {
        useCaseSensitiveFileNames: true,
        readDirectory: () => [],
        fileExists: (p) => {
          const abs = inside(p);
          return abs !== undefined && files.fileExists(abs);
        },
        readFile: read,
      };
      try {
        const json = ts.parseConfigFileTextToJson(file, text);
        // With a cache of the files extended, each is read and parsed once: without it tsc reads a file again
        // for every path to it, so a chain of files that each extend the next twice took 2^n reads.
        const extended = new Map<string, ts.ExtendedConfigCacheEntry>();
        const options = ts.parseJsonConfigFileContent(json.config ?? {}, host, path.posix.dirname(file), undefined, file, undefined, undefined, extended).options;
        reading = {
          resolution: options.moduleResolution,
          nodeModule: options.module !== undefined && NODE_MODULES.has(options.module),
          ...(refused.length > 0 ? { unreadable: why() } : {}),
          inputs,
        };
      } catch (error) {
        // A recursion the scan does not see overflows tsc's reader: the strict reading, as for any file not read.
        if (!(error instanceof RangeError)) throw error;
        reading = { resolution: undefined, nodeModule: false, unreadable: "could not be read (TypeScript's reader ran out of stack on it)", inputs };
      }
    }
    configs.set(file, reading);
    return reading;
  };

  /** Whether the nearest package.json makes a `.ts` file an ES module; `undefined` when none can be read. */
  const packageType = (dir: string): { esm: boolean | undefined; file: string | null; text: string | undefined } => {
    const file = find(dir, "package.json");
    if (file === null) return { esm: undefined, file, text: undefined };
    let known = packageTypes.get(file);
    if (!known) {
      const text = files.readConfig(file);
      let esm: boolean | undefined;
      if (text !== undefined) {
        try {
          const json: unknown = JSON.parse(text);
          esm = typeof json === "object" && json !== null && (json as { type?: unknown }).type === "module";
        } catch {
          esm = undefined;
        }
      }
      packageTypes.set(file, (known = { esm, text }));
    }
    return { ...known, file };
  };

  const decide = (dir: string): ModuleResolution => {
    const strict = (why: string, inputs: ReadonlyMap<string, string> = new Map()): ModuleResolution => ({
      extensionsRequired: true,
      described: `NodeNext module resolution (${why})`,
      inputs,
    });
    const tsconfig = find(dir, "tsconfig.json");
    if (tsconfig === null) return strict("no tsconfig.json inside the project root covers this file, so the compiler assumes what a Node project of ES modules uses");
    const shown = files.display(tsconfig);
    const config = readTsconfig(tsconfig);
    if (config.unreadable !== undefined) return strict(`\`${shown}\` ${config.unreadable}, so the compiler assumes the strictest`, config.inputs);
    const resolution =
      config.resolution ?? (config.nodeModule ? ts.ModuleResolutionKind.NodeNext : ts.ModuleResolutionKind.Bundler);
    const name = RESOLUTION_NAMES[resolution] ?? "bundler";
    const from = config.resolution === undefined && !config.nodeModule ? `the default, as \`${shown}\` sets neither \`module\` nor \`moduleResolution\` to a Node one` : `from \`${shown}\``;
    if (!NODE_RESOLUTION.has(resolution) || !config.nodeModule) {
      return { extensionsRequired: false, described: `${name} module resolution (${from})`, inputs: config.inputs };
    }
    const pkg = packageType(dir);
    const inputs = new Map(config.inputs);
    if (pkg.file !== null && pkg.text !== undefined) inputs.set(pkg.file, pkg.text);
    if (pkg.esm === false) return { extensionsRequired: false, described: `${name} module resolution in a CommonJS module (${from}; \`${files.display(pkg.file!)}\` has no \`"type": "module"\`)`, inputs };
    const esm = pkg.esm ? `; \`${files.display(pkg.file!)}\` says \`"type": "module"\`` : "; no package.json the compiler reads says which module format, so it assumes an ES module";
    return { extensionsRequired: true, described: `${name} module resolution (${from}${esm})`, inputs };
  };

  return {
    of(dir) {
      let r = byDir.get(dir);
      if (!r) byDir.set(dir, (r = decide(dir)));
      return r;
    },
    clear() {
      nearest.clear();
      configs.clear();
      packageTypes.clear();
      byDir.clear();
    },
  };
}
