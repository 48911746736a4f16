/**
 * Policy modules: reads a file's statements and imports, binds its consts, and evaluates its default
 * export. Imported policy modules are loaded through the same loader (once each), which is also where
 * cycles between policy modules are found.
 *
 * A policy module may contain only imports (of `pruneguard/dsl` and of other `*.policy.ts` modules), const
 * declarations, type declarations and `export default`. Nothing in it is ever executed.
 */
import * as path from "node:path";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "../ir/location.js";
import { callDsl, dslBinding, dslMember, DSL_SPECIFIERS, isDslExport, POLICY_EXPORTS } from "./dsl-table.js";
import { evaluate, locate, snippet, type EvalContext } from "./evaluate.js";
import { flattenMessage, isInside, MAX_NESTING, ts, type ParsedFile, type SourceHost } from "./host.js";
import { displayPath } from "./paths.js";
import { didYouMean } from "./suggest.js";
import type { SValue } from "./values.js";

export interface ModuleRecord {
  readonly path: string;
  readonly display: string;
  /** `undefined` when the module has no default export (already reported). */
  readonly defaultExport: SValue | undefined;
  readonly named: ReadonlyMap<string, SValue>;
}

type Binding =
  | { readonly kind: "dsl"; readonly name: string }
  | { readonly kind: "policy"; readonly module: ModuleRecord | undefined; readonly name: string }
  | { readonly kind: "invalid" };

interface ConstSlot {
  readonly node: ts.Expression;
  value?: SValue;
  evaluating?: boolean;
}

export class ModuleLoader {
  readonly #host: SourceHost;
  readonly #report: (d: Diagnostic) => void;
  readonly #records = new Map<string, ModuleRecord>();
  readonly #loading: string[] = [];

  constructor(host: SourceHost, report: (d: Diagnostic) => void) {
    this.#host = host;
    this.#report = report;
  }

  /** All modules loaded so far, in load order. */
  get modules(): readonly ModuleRecord[] {
    return [...this.#records.values()];
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
    const exportedConsts: Array<[string, string]> = []; // [exported name, local name]
    let defaultNode: ts.Expression | undefined;
    let defaultLocation: Location | undefined;

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
          consts.set(d.name.text, { node: d.initializer });
          if (exported) exportedConsts.push([d.name.text, d.name.text]);
        }
      } else if (ts.isExportAssignment(st)) {
        if (st.isExportEquals) report(diagnostic("PG1002", here(st), { what: "`export =`" }));
        else {
          defaultNode = st.expression;
          defaultLocation = here(st);
        }
      } else if (ts.isExportDeclaration(st) && st.moduleSpecifier === undefined && st.exportClause && ts.isNamedExports(st.exportClause)) {
        if (st.isTypeOnly) continue;
        for (const el of st.exportClause.elements) exportedConsts.push([el.name.text, (el.propertyName ?? el.name).text]);
      } else if (ts.isTypeAliasDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isEmptyStatement(st)) {
        // Types are erased and cannot run.
      } else {
        report(diagnostic("PG1002", here(st), { what: describeStatement(st, file) }));
      }
    }

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
          slot.evaluating = true;
          slot.value = evaluate(slot.node, ctx);
          slot.evaluating = false;
          return slot.value;
        }
        const b = bindings.get(name);
        if (!b) return undefined;
        if (b.kind === "invalid") return { t: "invalid", location };
        if (b.kind === "dsl") return b.name === "*" ? { t: "dsl", name: "*", location } : dslBinding(b.name, location);
        if (!b.module) return { t: "invalid", location };
        const v = b.name === "default" ? b.module.defaultExport : b.module.named.get(b.name);
        if (v === undefined) {
          if (b.name !== "default") report(diagnostic("PG1009", location, { message: `policy module \`${b.module.display}\` does not export \`${b.name}\`` }));
          return { t: "invalid", location };
        }
        return v;
      },
      callDsl: (name, args, location) => callDsl(name, args, location, display, report),
      dslMember: (ns, member, location) => dslMember(ns, member, location, report),
    };

    // Every const is read, used or not: "anything else is a diagnostic" holds for the whole file.
    for (const name of consts.keys()) ctx.resolveIdentifier(name, here(file.sourceFile));
    for (const [exportedName, local] of exportedConsts) {
      const v = ctx.resolveIdentifier(local, here(file.sourceFile));
      if (v) named.set(exportedName, v);
    }

    let defaultExport: SValue | undefined;
    if (defaultNode) {
      defaultExport = evaluate(defaultNode, ctx);
      if (defaultExport.t !== "policy" && defaultExport.t !== "invalid") {
        report(
          diagnostic("PG1007", defaultExport.location, {
            message: `the default export must be \`definePolicy(...)\` or \`extendPolicy(...)\`, not ${defaultExport.t === "object" ? "a plain object" : defaultExport.t}`,
          }),
        );
        defaultExport = { t: "invalid", location: defaultExport.location };
      }
    } else {
      report(diagnostic("PG1007", { file: display, line: 1, column: 1, endLine: 1, endColumn: 1 }, { message: "a policy module must `export default definePolicy(...)` or `extendPolicy(...)`; this file has no default export" }));
    }
    void defaultLocation;
    return { path: file.path, display, defaultExport, named };
  }

  #bindImport(st: ts.ImportDeclaration, file: ParsedFile, display: string, bindings: Map<string, Binding>): void {
    const report = this.#report;
    const location = locate(st, file, display);
    const specifierNode = st.moduleSpecifier;
    if (!ts.isStringLiteral(specifierNode)) return;
    const specifier = specifierNode.text;
    const clause = st.importClause;
    if (clause?.isTypeOnly) return;
    const specLocation = locate(specifierNode, file, display);
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

    if (DSL_SPECIFIERS.includes(specifier)) {
      for (const l of locals) {
        if (l.imported === "*" || isDslExport(l.imported)) bindings.set(l.local, { kind: "dsl", name: l.imported });
        else {
          report(diagnostic("PG1010", l.location, { name: l.imported, hint: didYouMean(l.imported, POLICY_EXPORTS) }));
          bindings.set(l.local, { kind: "invalid" });
        }
      }
      return;
    }
    const invalidAll = () => {
      for (const l of locals) bindings.set(l.local, { kind: "invalid" });
    };
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
      report(
        diagnostic("PG1009", specLocation, {
          message: `\`${specifier}\` is not a policy module or \`pruneguard/dsl\`; a policy may import only those, because it is read without being run`,
        }),
      );
      return invalidAll();
    }
    const candidate = sourcePath(path.posix.dirname(file.path), specifier);
    // Outside the root nothing is read, not even probed for existence.
    if (!isInside(this.#host.root, candidate)) {
      report(diagnostic("PG1018", specLocation, { file: displayPath(this.#host.cwd, candidate), how: OUTSIDE["outside-root"], root: this.#host.root }));
      return invalidAll();
    }
    const shown = `\`${displayPath(this.#host.cwd, candidate)}\``;
    const exists = this.#host.fileExists(candidate);
    // As tsc resolves it under NodeNext (module and moduleResolution), which the editor uses: a relative
    // import of an ES module names its file, so `./org.policy` finds nothing and `./org.policy.js` finds
    // `org.policy.ts`. Accepting what the editor cannot resolve would leave the error to the editor alone.
    if (extensionless(specifier)) {
      // `./org` where `org.policy.ts` is there: the fix names the policy.
      const asPolicy = `${candidate.slice(0, -".ts".length)}.policy.ts`;
      const policy = !exists && !specifier.endsWith(".policy") && this.#host.fileExists(asPolicy);
      const fix = policy ? `${specifier}.policy.js` : `${specifier}.js`;
      const found = exists || policy ? `, which resolves to \`${displayPath(this.#host.cwd, policy ? asPolicy : candidate)}\`` : `, though no ${shown} exists either`;
      report(diagnostic("PG1021", specLocation, { specifier, fix, found }));
      return invalidAll();
    }
    if (!exists) {
      report(diagnostic("PG1008", specLocation, { specifier, candidates: shown }));
      return invalidAll();
    }
    const target = candidate;
    if (!target.endsWith(".policy.ts") || !/\.[jt]s$/.test(specifier)) {
      report(
        diagnostic("PG1009", specLocation, {
          message: `\`${specifier}\` is not a policy module (policy modules are named \`*.policy.ts\`); a policy may import only other policies and \`pruneguard/dsl\``,
        }),
      );
      return invalidAll();
    }
    const module = this.load(target, specLocation);
    for (const l of locals) {
      if (l.imported === "*") {
        report(diagnostic("PG1009", l.location, { message: "import a base policy by its default export (`import org from \"./org.policy.js\"`), not as a namespace" }));
        bindings.set(l.local, { kind: "invalid" });
      } else bindings.set(l.local, { kind: "policy", module, name: l.imported });
    }
  }
}

const OUTSIDE = {
  "outside-root": "is outside the project root",
  "link-outside-root": "is a symbolic link that leads outside the project root",
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
  if (ts.isExportDeclaration(st)) return "A re-export";
  if (ts.isEnumDeclaration(st)) return "An enum (it compiles to code)";
  if (ts.isModuleDeclaration(st)) return "A namespace (it compiles to code)";
  return `A ${ts.SyntaxKind[st.kind]} statement`;
}
