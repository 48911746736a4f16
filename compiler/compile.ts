/**
 * `compilePolicies`: policy files → validated IR → diagnostics. The compiler's API (`index.ts`) exports it
 * with everything else; the incremental build imports it from here, with the emitters, so a compile loads
 * neither the comparison of versions (`diff/`) nor zod (`ir/schema.ts`: validation needs it only to say
 * what is wrong with an invalid policy, `ir/validate.ts`).
 */
import { runChecks } from "./checks/index.js";
import { append, dedupeDiagnostics, isError, sortDiagnostics, type Diagnostic } from "./diagnostics/diagnostic.js";
import { createSourceHost, readPolicies, resolvePath, type SourceHost } from "./frontend/index.js";
import type { PolicyIR } from "./ir/schema.js";
import { validatePolicy } from "./ir/validate.js";

/** Files on disk (paths relative to `cwd`), or an in-memory file system (for tests and tools). */
export type CompileInput =
  | readonly string[]
  | {
      /** File contents by path. */
      readonly files: Readonly<Record<string, string>>;
      /** The policy files to compile; defaults to every `*.policy.ts` in `files`. */
      readonly entries?: readonly string[];
    };

export interface CompileOptions {
  /** Directory that input paths and reported locations are relative to. Default: `process.cwd()`, or `/` in memory. */
  readonly cwd?: string;
  /** The only directory files are read from (relative to `cwd`); default `cwd`. Reads outside it are PG1018. */
  readonly root?: string;
  /** Reuse a host across compilations (`--watch`); the input's file system is then ignored. */
  readonly host?: SourceHost;
  /**
   * Validated policies by file, shared by the compilations of one build (one host, whose files do not change
   * between them), so a base that several entries extend is validated once. The front end reads a file the
   * same way whichever entry reached it, so its policy — and what validation makes of it — is the same.
   */
  readonly validated?: Map<string, ReturnType<typeof validatePolicy>>;
}

export interface CompileResult {
  /** Every valid policy read, entries and the bases they import, ordered by file. */
  readonly policies: readonly PolicyIR[];
  /** Errors and warnings, ordered by location. */
  readonly diagnostics: readonly Diagnostic[];
  /** Source text of every file read, by reported path (for code frames). */
  readonly sources: ReadonlyMap<string, string>;
  /**
   * The tsconfig.json and package.json files that decided how an extensionless import resolves, by reported
   * path (`FrontEndResult.configs`): inputs as much as the sources, for an incremental build and `--watch`.
   */
  readonly configs: ReadonlyMap<string, string>;
  readonly hasErrors: boolean;
}

/**
 * Compiles policy files without executing them.
 *
 * Details: all files are analysed in one pass over one project, then validated, then checked; nothing is
 * re-parsed. A policy with extraction or schema errors is left out of `policies`; its diagnostics say why.
 */
export function compilePolicies(input: CompileInput, options: CompileOptions = {}): CompileResult {
  const inMemory = !Array.isArray(input);
  const memory = input as Exclude<CompileInput, readonly string[]>;
  const host =
    options.host ??
    createSourceHost({
      ...(inMemory ? { files: memory.files } : {}),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.root === undefined ? {} : { root: options.root }),
    });
  const entries = inMemory
    ? (memory.entries ?? Object.keys(memory.files).filter((f) => f.endsWith(".policy.ts")).sort())
    : (input as readonly string[]);
  const front = readPolicies(host, entries.map((e) => resolvePath(host.cwd, e)));
  const diagnostics: Diagnostic[] = [...front.diagnostics];
  const policies: PolicyIR[] = [];
  for (const candidate of front.policies) {
    let v = options.validated?.get(candidate.file);
    if (v === undefined) {
      v = validatePolicy(candidate);
      options.validated?.set(candidate.file, v);
    }
    append(diagnostics, v.diagnostics);
    if (v.policy) policies.push(v.policy);
  }
  append(diagnostics, runChecks(policies));
  const sorted = dedupeDiagnostics(sortDiagnostics(diagnostics));
  return { policies, diagnostics: sorted, sources: front.sources, configs: front.configs, hasErrors: sorted.some(isError) };
}
