/**
 * The front end: policy files in, unvalidated policy IR out. Parses every file through one `SourceHost`,
 * loads imported policy modules once each, and never executes anything.
 */
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { PolicyIR } from "../ir/schema.js";
import type { SourceHost } from "./host.js";
import { ModuleLoader } from "./modules.js";
import { displayPath } from "./paths.js";

export { createSourceHost, type Confinement, type HostOptions, type SourceHost } from "./host.js";
export { displayPath, resolvePath, toPosix } from "./paths.js";

export interface FrontEndResult {
  /** Every policy read (the entries and the bases they import), ordered by file. */
  readonly policies: readonly PolicyIR[];
  readonly diagnostics: readonly Diagnostic[];
  /** Source text of every file read, keyed by its reported (relative) path, for code frames. */
  readonly sources: ReadonlyMap<string, string>;
  /**
   * The tsconfig.json and package.json files that decided how an extensionless import resolves, by
   * reported path: inputs of the compilation as much as the sources (a changed `moduleResolution` changes
   * the verdict), though never shown in a code frame. Empty when every relative import names its file.
   */
  readonly configs: ReadonlyMap<string, string>;
}

export function readPolicies(host: SourceHost, entries: readonly string[]): FrontEndResult {
  const diagnostics: Diagnostic[] = [];
  const loader = new ModuleLoader(host, (d) => diagnostics.push(d));
  for (const entry of entries) loader.load(entry);
  const policies: PolicyIR[] = [];
  const sources = new Map<string, string>();
  for (const m of loader.modules) {
    const parsed = host.parse(m.path);
    if (parsed) sources.set(m.display, parsed.text);
    // A barrel's re-exported default is its base's policy, which is read (and counted) from its own file.
    if (m.defaultExport?.t === "policy" && m.defaultExport.policy.file === m.display) policies.push(m.defaultExport.policy);
  }
  policies.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const configs = new Map<string, string>();
  for (const r of loader.resolutions) for (const [p, text] of r.inputs) configs.set(displayPath(host.cwd, p), text);
  return { policies, diagnostics, sources, configs };
}
