/**
 * Policy modules: reads a file's statements and imports, binds its consts, and evaluates its default
 * export. Imported and re-exported policy modules are loaded through the same loader (once each), which is
 * also where cycles between policy modules are found.
 *
 * A policy module may contain only imports (of `pruneguard/dsl` and of other `*.policy.ts` modules), const
 * declarations, type declarations, re-exports of those modules (`export { … } from`, `export * from`) and
 * `export default`. Nothing in it is ever executed: a re-export is resolved by reading the module it names.
 */
import * as path from "node:path";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import { callDsl, dslBinding, dslMember, DSL_SPECIFIERS, exportHint, isDslExport, POLICY_EXPORTS } from "./dsl-table.js";
import { evaluate, locate, snippet, type EvalContext } from "./evaluate.js";
import { functionOf, helperValue, type FunctionValue } from "./functions.js";
import { flattenMessage, MAX_HELD_POLICY_BYTES, MAX_NESTING, MAX_POLICY_BYTES, ts, type ParsedFile, type SourceHost } from "./host.js";
import { displayPath } from "./paths.js";
import type { ModuleResolution } from "./resolution.js";
import type { SValue } from "./values.js";

export interface ModuleRecord {
  readonly path: string;
  readonly display: string;
  /** `undefined` when the module has no default export (already reported, unless it is a barrel). */
  readonly defaultExport: SValue | undefined;
  readonly named: ReadonlyMap<string, SValue>;
  /** A module that re-exports and has no default export of its own: one that imports its default is told so there. */
  readonly barrel?: true;
}

/** What a module specifier names: the DSL, or a policy module (`undefined` when it could not be loaded, already reported). */
type Target = { readonly kind: "dsl" } | { readonly kind: "policy"; readonly module: ModuleRecord | undefined };

/** One export of a module, in source order: its value is read once every const is bound. */
interface ExportSlot {
  readonly name: string;
  readonly location: Location;
  readonly value: () => SValue | undefined;
}

type Binding =
  | { readonly kind: "dsl"; readonly name: string }
  | { readonly kind: "policy"; readonly module: ModuleRecord | undefined; readonly name: string }
  | { readonly kind: "invalid" };

interface ConstSlot {
  readonly node: ts.Expression;
  /** The declared name, where a helper (`const f = () => …`) is said to be declared. */
  readonly name: ts.Identifier;
  value?: SValue;
  evaluating?: boolean;
}

export class ModuleLoader {
  readonly #host: SourceHost;
  readonly #report: (d: Diagnostic) => void;
  readonly #records = new Map<string, ModuleRecord>();
  readonly #loading: string[] = [];
  readonly #resolutions = new Set<ModuleResolution>();

  constructor(host: SourceHost, report: (d: Diagnostic) => void) {
    this.#host = host;
    this.#report = report;
  }

  /** All modules loaded so far, in load order. */
  get modules(): readonly ModuleRecord[] {
    return [...this.#records.values()];
  }

  /** The module resolutions some import was resolved under: their tsconfig and package.json files are inputs too. */
  get resolutions(): readonly ModuleResolution[] {
    return [...this.#resolutions];
  }

  /** Loads a module (once). `from` is the import that asked for it, for cycle reports. */
  load(absolutePath: string, from?: Location): ModuleRecord | undefined {
    const done = this.#records.get(absolutePath);
    if (done) return done;
    const at = this.#loading.indexOf(absolutePath);
    if (at >= 0) {
      const cycle = [...this.#loading.slice(at), absolutePath].map((p) => displayPath(this.#host.cwd, p)).join(" → ");
      this.#report(diagnostic("PG2004", from ?? null, { cycle }));
      return undefined;
    }
    const display = displayPath(this.#host.cwd, absolutePath);
    if (!absolutePath.endsWith(".policy.ts")) {
      this.#report(diagnostic("PG1020", from ?? { file: display, line: 1, column: 1, endLine: 1, endColumn: 1 }, { file: display }));
      return undefined;
    }
    const allowed = this.#host.confine(absolutePath);
    if (!allowed.ok) {
      const at = from ?? { file: display, line: 1, column: 1, endLine: 1, endColumn: 1 };
      if (allowed.reason === "link-not-policy") this.#report(diagnostic("PG1019", at, { file: display, target: allowed.target }));
      else this.#report(diagnostic("PG1018", at, { file: display, how: OUTSIDE[allowed.reason], root: this.#host.root }));
      return undefined;
    }
    if (this.#loading.length >= MAX_NESTING) {
      // Each import is a level of recursion here: a chain of thousands of modules would exhaust the stack.
      this.#report(diagnostic("PG1017", from ?? null, { what: "this chain of imports", max: MAX_NESTING }));
      return undefined;
    }
    const file = this.#host.parse(absolutePath);
    if (!file) return undefined;
    this.#loading.push(absolutePath);
    try {
      const record = this.#evaluateModule(file);
      this.#records.set(absolutePath, record);
      return record;
    } finally {
      this.#loading.pop();
    }
  }

  #evaluateModule(file: ParsedFile): ModuleRecord {
    const display = displayPath(this.#host.cwd, file.path);
    const report = this.#report;
    const here = (node: ts.Node) => locate(node, file, display);
    const named = new Map<string, SValue>();
    if (file.tooLarge) {
      const { bytes, held } = file.tooLarge;
      const [what, total, max] =
        held === undefined
          ? ["this policy file is too large", bytes, MAX_POLICY_BYTES]
          : ["with this file, the policy files this compilation reads are too large together", held, MAX_HELD_POLICY_BYTES];
      const count = (n: number) => n.toLocaleString("en-US");
      report(diagnostic("PG1024", { file: display, line: 1, column: 1, endLine: 1, endColumn: 1 }, { what, bytes: count(total), max: `${count(max)} bytes, ${max / 1024 / 1024} MiB` }));
      return { path: file.path, display, defaultExport: undefined, named };
    }
    if (file.tooDeep) {
      const { line, column } = file.tooDeep;
      report(diagnostic("PG1017", { file: display, line, column, endLine: line, endColumn: column + 1 }, { what: "this file", max: MAX_NESTING }));
      return { path: file.path, display, defaultExport: undefined, named };
    }
    if (file.syntaxErrors.length > 0) {
      for (const e of file.syntaxErrors) report(diagnostic("PG1001", spanLocation(file, display, e.start, e.length), { message: flattenMessage(e.messageText) }));
      return { path: file.path, display, defaultExport: undefined, named };
    }

    const bindings = new Map<string, Binding>();
    const consts = new Map<string, ConstSlot>();
    // Every export in source order (a duplicate is the later one), and the `export *` targets, which only
    // supply the names nothing else exports.
    const exports: ExportSlot[] = [];
    const stars: Array<{ readonly names: ReadonlyMap<string, SValue>; readonly location: Location }> = [];
    let reexports = false;
    // The policy's own functions, by name (`function f`), and what to report of each declaration (a
    // `function` statement, or a const holding a function) if nothing in this file calls it: a called one
    // is reported at each call, which is where the policy has to change.
    const functions = new Map<string, FunctionValue>();
    const helpers: Array<{ readonly value: () => FunctionValue; readonly unused: Diagnostic }> = [];
    const called = new Set<FunctionValue>();
    // Bound before the statements are read, used only after: every const and import is known by then.
    const ctx: EvalContext = {
      file,
      display,
      report,
      resolveIdentifier: (name, location) => {
        const slot = consts.get(name);
        if (slot) {
          if (slot.value) return slot.value;
          if (slot.evaluating) {
            report(diagnostic("PG1003", location, { text: `${name}\` refers to itself; \`${name}` }));
            return { t: "invalid", location };
          }
          const fn = functionOf(slot.node);
          if (fn) {
            slot.value = helperValue(name, here(slot.name), fn, file);
            const value = slot.value;
            helpers.push({ value: () => value, unused: diagnostic("PG1003", here(slot.node), { text: snippet(slot.node, file) }) });
            return value;
          }
          slot.evaluating = true;
          slot.value = evaluate(slot.node, ctx);
          slot.evaluating = false;
          return slot.value;
        }
        const b = bindings.get(name);
        if (!b) return functions.get(name);
        if (b.kind === "invalid") return { t: "invalid", location };
        if (b.kind === "dsl") return b.name === "*" ? { t: "dsl", name: "*", location } : dslBinding(b.name, location);
        if (!b.module) return { t: "invalid", location };
        const v = b.name === "default" ? b.module.defaultExport : b.module.named.get(b.name);
        if (v === undefined) {
          const missing = notExported(b.module, b.name, location);
          if (missing) report(missing);
          return { t: "invalid", location };
        }
        return v;
      },
      callDsl: (name, args, location) => callDsl(name, args, location, display, report),
      dslMember: (ns, member, location) => dslMember(ns, member, location, report),
      called: (fn) => void called.add(fn),
    };

    const exportLocal = (name: string, local: string, location: Location) =>
      exports.push({ name, location, value: () => ctx.resolveIdentifier(local, location) });

    for (const st of file.sourceFile.statements) {
      if (ts.isImportDeclaration(st)) {
        this.#bindImport(st, file, display, bindings);
      } else if (ts.isVariableStatement(st)) {
        const exported = st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
        const declare = st.modifiers?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword) ?? false;
        if (declare || (st.declarationList.flags & ts.NodeFlags.Const) === 0) {
          report(diagnostic("PG1002", here(st), { what: declare ? "An ambient `declare` statement" : "A `let` or `var` declaration (use `const`)" }));
          continue;
        }
        for (const d of st.declarationList.declarations) {
          if (!ts.isIdentifier(d.name) || d.initializer === undefined) {
            report(diagnostic("PG1002", here(d), { what: "A destructuring or uninitialised declaration" }));
            continue;
          }
          consts.set(d.name.text, { node: d.initializer, name: d.name });
          if (exported) exportLocal(d.name.text, d.name.text, here(d.name));
        }
      } else if (ts.isExportAssignment(st)) {
        if (st.isExportEquals) report(diagnostic("PG1002", here(st), { what: "`export =`" }));
        else {
          const node = st.expression;
          exports.push({ name: "default", location: here(st), value: () => evaluate(node, ctx) });
        }
      } else if (ts.isExportDeclaration(st) && st.moduleSpecifier === undefined && st.exportClause && ts.isNamedExports(st.exportClause)) {
        if (st.isTypeOnly) continue;
        for (const el of st.exportClause.elements) {
          if (!el.isTypeOnly) exportLocal(el.name.text, (el.propertyName ?? el.name).text, here(el));
        }
      } else if (ts.isExportDeclaration(st) && st.moduleSpecifier !== undefined) {
        // Types are erased: a type-only re-export is never followed, like a type-only import.
        if (st.isTypeOnly) continue;
        reexports = true;
        this.#reexport(st, file, display, exports, stars);
      } else if (ts.isFunctionDeclaration(st) && st.name !== undefined && !st.modifiers?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword || m.kind === ts.SyntaxKind.DeclareKeyword)) {
        // A helper: never run, reported at its calls, or here when this file calls it nowhere. Of an
        // overloaded one, the implementation (the declaration with a body) is what a call would run.
        const name = st.name.text;
        const prior = functions.get(name);
        if (!prior || st.body) functions.set(name, helperValue(name, here(st.name), st, file));
        helpers.push({ value: () => functions.get(name)!, unused: diagnostic("PG1002", here(st), { what: describeStatement(st, file) }) });
        if (!prior && st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) exports.push({ name, location: here(st.name), value: () => functions.get(name) });
      } else if (ts.isTypeAliasDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isEmptyStatement(st)) {
        // Types are erased and cannot run.
      } else {
        report(diagnostic("PG1002", here(st), { what: describeStatement(st, file) }));
      }
    }

    // Every const is read, used or not: "anything else is a diagnostic" holds for the whole file.
    for (const name of consts.keys()) ctx.resolveIdentifier(name, here(file.sourceFile));
    let defaultExport: SValue | undefined;
    let hasDefault = false;
    const declared = new Set<string>();
    for (const e of exports) {
      if (declared.has(e.name)) {
        report(diagnostic("PG2002", e.location, { what: "export", name: e.name }));
        continue;
      }
      declared.add(e.name);
      const v = e.value();
      if (e.name !== "default") {
        if (v) named.set(e.name, v);
        continue;
      }
      hasDefault = true;
      defaultExport = v ?? { t: "invalid", location: e.location };
      if (defaultExport.t !== "policy" && defaultExport.t !== "invalid") {
        report(
          diagnostic("PG1007", defaultExport.location, {
            message: `the default export must be \`definePolicy(...)\` or \`extendPolicy(...)\`, not ${defaultExport.t === "object" ? "a plain object" : defaultExport.t}`,
          }),
        );
        defaultExport = { t: "invalid", location: defaultExport.location };
      }
    }
    // As in ES modules: `export *` never supplies `default` or a name the module exports itself, and a
    // name two of them supply differently is ambiguous (tsc refuses it, TS2308), not the first one's.
    const starred = new Map<string, SValue>();
    for (const star of stars) {
      for (const [name, v] of star.names) {
        if (name === "default" || declared.has(name)) continue;
        const prior = starred.get(name);
        if (prior === undefined) starred.set(name, v);
        else if (prior !== v && prior.t !== "invalid") {
          report(diagnostic("PG2002", star.location, { what: "export", name }));
          starred.set(name, { t: "invalid", location: star.location });
        }
      }
    }
    for (const [name, v] of starred) named.set(name, v);
    // Every file's functions are read now: one no call reached is reported where it is declared.
    for (const h of helpers) if (!called.has(h.value())) report(h.unused);

    // A barrel (a module that re-exports) need not have a policy of its own; any other module must.
    if (!hasDefault && !reexports) {
      report(diagnostic("PG1007", { file: display, line: 1, column: 1, endLine: 1, endColumn: 1 }, { message: "a policy module must `export default definePolicy(...)` or `extendPolicy(...)`; this file has no default export" }));
    }
    return { path: file.path, display, defaultExport, named, ...(!hasDefault && reexports ? { barrel: true as const } : {}) };
  }

  /** `export { a, default as b } from "…"`, `export * from "…"`, `export * as ns from "…"`: read from the module named. */
  #reexport(st: ts.ExportDeclaration, file: ParsedFile, display: string, exports: ExportSlot[], stars: Array<{ names: ReadonlyMap<string, SValue>; location: Location }>): void {
    const report = this.#report;
    const location = locate(st, file, display);
    const specifierNode = st.moduleSpecifier;
    const clause = st.exportClause;
    const elements = clause && ts.isNamedExports(clause) ? clause.elements.filter((el) => !el.isTypeOnly) : [];
    const invalidAll = () => {
      for (const el of elements) exports.push({ name: el.name.text, location: locate(el, file, display), value: () => ({ t: "invalid", location }) });
      if (clause && ts.isNamespaceExport(clause)) exports.push({ name: clause.name.text, location, value: () => ({ t: "invalid", location }) });
    };
    if (!specifierNode || !ts.isStringLiteral(specifierNode)) return invalidAll();
    const target = this.#resolve(specifierNode, file, display);
    if (!target) return invalidAll();
    if (clause === undefined) {
      const names = new Map<string, SValue>();
      if (target.kind === "dsl") for (const name of POLICY_EXPORTS) names.set(name, dslBinding(name, location));
      else if (target.module) for (const [name, v] of target.module.named) names.set(name, v);
      stars.push({ names, location });
      return;
    }
    if (ts.isNamespaceExport(clause)) {
      const at = locate(clause, file, display);
      if (target.kind === "dsl") exports.push({ name: clause.name.text, location: at, value: () => ({ t: "dsl", name: "*", location: at }) });
      else {
        report(diagnostic("PG1009", at, { message: "re-export a base policy by its default export (`export { default } from \"./org.policy.js\"`), not as a namespace" }));
        exports.push({ name: clause.name.text, location: at, value: () => ({ t: "invalid", location: at }) });
      }
      return;
    }
    for (const el of elements) {
      const at = locate(el, file, display);
      const imported = (el.propertyName ?? el.name).text;
      let value: SValue;
      if (target.kind === "dsl") {
        if (isDslExport(imported)) value = dslBinding(imported, at);
        else {
          report(diagnostic("PG1010", at, { name: imported, hint: exportHint(imported) }));
          value = { t: "invalid", location: at };
        }
      } else if (!target.module) value = { t: "invalid", location: at };
      else {
        const found = imported === "default" ? target.module.defaultExport : target.module.named.get(imported);
        if (found === undefined) {
          const missing = notExported(target.module, imported, at);
          if (missing) report(missing);
          value = { t: "invalid", location: at };
        } else value = found;
      }
      exports.push({ name: el.name.text, location: at, value: () => value });
    }
  }

  #bindImport(st: ts.ImportDeclaration, file: ParsedFile, display: string, bindings: Map<string, Binding>): void {
    const report = this.#report;
    const location = locate(st, file, display);
    const specifierNode = st.moduleSpecifier;
    if (!ts.isStringLiteral(specifierNode)) return;
    const specifier = specifierNode.text;
    const clause = st.importClause;
    if (clause?.isTypeOnly) return;
    if (!clause) {
      report(diagnostic("PG1009", location, { message: `a side-effect import (\`import "${specifier}"\`) would run code; policy modules may not have one` }));
      return;
    }
    const locals: Array<{ local: string; imported: string; location: Location }> = [];
    if (clause.name) locals.push({ local: clause.name.text, imported: "default", location: locate(clause.name, file, display) });
    const nb = clause.namedBindings;
    if (nb && ts.isNamespaceImport(nb)) locals.push({ local: nb.name.text, imported: "*", location: locate(nb, file, display) });
    if (nb && ts.isNamedImports(nb)) {
      for (const el of nb.elements) {
        if (el.isTypeOnly) continue;
        locals.push({ local: el.name.text, imported: (el.propertyName ?? el.name).text, location: locate(el, file, display) });
      }
    }

    const target = this.#resolve(specifierNode, file, display);
    if (!target) {
      for (const l of locals) bindings.set(l.local, { kind: "invalid" });
      return;
    }
    if (target.kind === "dsl") {
      for (const l of locals) {
        if (l.imported === "*" || isDslExport(l.imported)) bindings.set(l.local, { kind: "dsl", name: l.imported });
        else {
          report(diagnostic("PG1010", l.location, { name: l.imported, hint: exportHint(l.imported) }));
          bindings.set(l.local, { kind: "invalid" });
        }
      }
      return;
    }
    for (const l of locals) {
      if (l.imported === "*") {
        report(diagnostic("PG1009", l.location, { message: "import a base policy by its default export (`import org from \"./org.policy.js\"`), not as a namespace" }));
        bindings.set(l.local, { kind: "invalid" });
      } else bindings.set(l.local, { kind: "policy", module: target.module, name: l.imported });
    }
  }

  /**
   * The module an import or re-export names, loaded, or `undefined` once the reason is reported. A relative
   * specifier resolves as tsc resolves it for this file (`resolution.ts`): under NodeNext in an ES module a
   * relative import names its file as emitted (`./org.policy.js` finds `org.policy.ts`) and `./org.policy`
   * finds nothing; under `bundler` (or in a CommonJS module) the extension may be left out, and a folder
   * stands for its `index.ts`. Accepting what the editor cannot resolve would leave the error to the editor alone.
   */
  #resolve(specifierNode: ts.StringLiteral, file: ParsedFile, display: string): Target | undefined {
    const report = this.#report;
    const specifier = specifierNode.text;
    if (DSL_SPECIFIERS.includes(specifier)) return { kind: "dsl" };
    const specLocation = locate(specifierNode, file, display);
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
      report(
        diagnostic("PG1009", specLocation, {
          message: `\`${specifier}\` is not a policy module or \`pruneguard/dsl\`; a policy may import only those, because it is read without being run`,
        }),
      );
      return undefined;
    }
    const dir = path.posix.dirname(file.path);
    const candidate = sourcePath(dir, specifier);
    const shownPath = (p: string) => displayPath(this.#host.cwd, p);
    // Outside the root, or behind a link that leads out of it, nothing is read, not even probed for
    // existence: each path is confined before it is looked up, so such an import gets the same PG1018
    // whether or not its file is there.
    const outside = (p: string): boolean => {
      const allowed = this.#host.confine(p);
      if (allowed.ok || allowed.reason === "link-not-policy") return false;
      report(diagnostic("PG1018", specLocation, { file: shownPath(p), how: OUTSIDE[allowed.reason], root: this.#host.root }));
      return true;
    };
    if (outside(candidate)) return undefined;
    // Every path looked up below is in the candidate's folder or under it (`./dir/index.ts`), confined in turn.
    let refused = false;
    const exists = (p: string) => {
      if (refused) return false;
      if (outside(p)) {
        refused = true;
        return false;
      }
      return this.#host.fileExists(p);
    };
    let target: string;
    if (extensionless(specifier)) {
      // Only here does the resolution matter: `./org.policy.js` and `./org.policy.ts` name one file under all of them.
      const resolution = this.#host.resolution(dir);
      this.#resolutions.add(resolution);
      // `./org` where `org.policy.ts` is there: the fix names the policy.
      const asPolicy = `${candidate.slice(0, -".ts".length)}.policy.ts`;
      const policy = !specifier.endsWith(".policy") && exists(asPolicy);
      if (refused) return undefined;
      if (resolution.extensionsRequired) {
        const named = exists(candidate);
        const fix = policy && !named ? `${specifier}.policy.js` : `${specifier}.js`;
        const resolves = named || policy ? `, which resolves to \`${shownPath(policy && !named ? asPolicy : candidate)}\`` : `, though no \`${shownPath(candidate)}\` exists either`;
        report(diagnostic("PG1021", specLocation, { specifier, fix, found: resolves, resolution: resolution.described }));
        return undefined;
      }
      const base = path.posix.resolve(dir, specifier);
      const found = [`${base}.ts`, `${base}.tsx`, `${base}.d.ts`, `${base}/index.ts`, `${base}/index.tsx`, `${base}/index.d.ts`].find(exists);
      if (refused) return undefined;
      if (found === undefined) {
        const hint = policy ? `; \`${shownPath(asPolicy)}\` is there: \`${specifier}.policy\`` : "";
        report(diagnostic("PG1008", specLocation, { specifier, candidates: `\`${shownPath(`${base}.ts`)}\` and \`${shownPath(`${base}/index.ts`)}\`, each also as .tsx and .d.ts${hint}` }));
        return undefined;
      }
      if (!found.endsWith(".policy.ts")) {
        report(
          diagnostic("PG1009", specLocation, {
            message: `\`${specifier}\` resolves to \`${shownPath(found)}\`, which is not a policy module (policy modules are named \`*.policy.ts\`); a policy may import only other policies and \`pruneguard/dsl\``,
          }),
        );
        return undefined;
      }
      target = found;
    } else {
      if (!exists(candidate)) {
        report(diagnostic("PG1008", specLocation, { specifier, candidates: `\`${shownPath(candidate)}\`` }));
        return undefined;
      }
      if (!candidate.endsWith(".policy.ts") || !/\.[jt]s$/.test(specifier)) {
        report(
          diagnostic("PG1009", specLocation, {
            message: `\`${specifier}\` is not a policy module (policy modules are named \`*.policy.ts\`); a policy may import only other policies and \`pruneguard/dsl\``,
          }),
        );
        return undefined;
      }
      target = candidate;
    }
    return { kind: "policy", module: this.load(target, specLocation) };
  }
}

/** PG1009 for a name `module` does not export; `undefined` for a missing default the module was already told about. */
function notExported(module: ModuleRecord, name: string, location: Location): Diagnostic | undefined {
  if (name !== "default") return diagnostic("PG1009", location, { message: `policy module \`${module.display}\` does not export \`${name}\`` });
  if (!module.barrel) return undefined;
  return diagnostic("PG1009", location, { message: `policy module \`${module.display}\` has no default export: it only re-exports, and declares no policy of its own` });
}

const OUTSIDE = {
  "outside-root": "is outside the project root",
  "link-outside-root": "is, or is inside, a symbolic link that leads outside the project root",
} as const;

/** `./org.policy` and `./org`, not `./org.policy.js` or `./notes.json` (`.policy` is part of a policy's name). */
function extensionless(specifier: string): boolean {
  return specifier.endsWith(".policy") || !/\.[A-Za-z0-9]+$/.test(path.posix.basename(specifier));
}

/**
 * The source file a relative import names: `./org.policy.js` is `org.policy.ts` (tsc maps the emitted
 * name back to its source), `./org.policy.ts` itself (tsc takes it under `allowImportingTsExtensions` or
 * `rewriteRelativeImportExtensions`), and an extensionless `./org.policy` the `.ts` file it would be if
 * it were resolved at all (PG1021 says it is not).
 */
function sourcePath(dir: string, specifier: string): string {
  const base = path.posix.resolve(dir, specifier);
  if (base.endsWith(".js")) return `${base.slice(0, -3)}.ts`;
  if (base.endsWith(".ts") || !extensionless(specifier)) return base;
  return `${base}.ts`;
}

function spanLocation(file: ParsedFile, display: string, start: number, length: number): Location {
  const a = file.sourceFile.getLineAndCharacterOfPosition(start);
  const b = file.sourceFile.getLineAndCharacterOfPosition(start + Math.max(length, 1));
  return { file: display, line: a.line + 1, column: a.character + 1, endLine: b.line + 1, endColumn: b.character + 1 };
}

function describeStatement(st: ts.Statement, file: ParsedFile): string {
  if (ts.isExpressionStatement(st)) return `An expression statement (\`${snippet(st.expression, file)}\`)`;
  if (ts.isFunctionDeclaration(st)) return "A function declaration";
  if (ts.isClassDeclaration(st)) return "A class declaration";
  if (ts.isEnumDeclaration(st)) return "An enum (it compiles to code)";
  if (ts.isModuleDeclaration(st)) return "A namespace (it compiles to code)";
  return `A ${ts.SyntaxKind[st.kind]} statement`;
}
