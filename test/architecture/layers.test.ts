/**
 * Architecture rules, read from the module specifiers of every .ts file of the four layers (src/, dsl/,
 * compiler/, generated/): `import` and `export … from` declarations, `import("…")` calls and
 * `import("…")` types, parsed with ts-morph. Relative specifiers are resolved against the importing
 * file's folder (`./x.js` names `x.ts`); any other specifier names a package.
 *
 * Data flows one way: policy (dsl/, over src/policy/) → compiler → generated → runtime (src/).
 *
 * - (a) Layer direction: each layer imports only the folders and files of `LAYERS` below, and only the
 *   packages it ships with; type-only imports count too (a type is a dependency of the source).
 * - (b) src/policy/, the base layer, imports nothing else from src/.
 * - (c) No cycle of value imports in src/. A type-only import (`import type`, `export type … from`) is no
 *   edge; `import { type A, b }` and `export … from` are, and so is a lazy `import("…")`. Under
 *   `verbatimModuleSyntax` even `import { type A } from` is kept as `import {} from`, which loads the module.
 * - (d) Convention: no runtime file (src/**) is longer than 500 lines unless its first comment block (the
 *   comments before its first line of code) says why, with the words "Longer than 500 lines because".
 * - (e) No two files in src/ have one base name, except index.ts.
 * - (f) No file in src/ sits beside a folder of its own name (`x.ts` beside `x/`): a folder's face is its
 *   `index.ts`, or a file named for what it holds.
 *
 * Each rule is a pure function over a `Map<file, imports[]>` (or the files' texts), tested first on small
 * graphs that break it, then run on the repository.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Project, SyntaxKind, type SourceFile } from "ts-morph";
import { describe, expect, it } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

// ---- the graph --------------------------------------------------------------------------------------

interface Import {
  readonly specifier: string;
  /** For a relative specifier, the repository path it names (`.js` read as `.ts`); else the package name. */
  readonly target: string;
  readonly relative: boolean;
  readonly typeOnly: boolean;
}

/** Each file (repository path, `/`-separated) with its imports and re-exports. */
type Graph = ReadonlyMap<string, readonly Import[]>;

/** The package a bare specifier names: `@scope/name`, `name`, or a builtin as written (`node:fs`). */
function packageName(specifier: string): string {
  if (specifier.startsWith("node:")) return specifier;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

function resolveImport(from: string, specifier: string, typeOnly: boolean): Import {
  const relative = specifier.startsWith("./") || specifier.startsWith("../");
  const target = relative ? path.posix.join(path.posix.dirname(from), specifier).replace(/\.js$/, ".ts") : packageName(specifier);
  return { specifier, target, relative, typeOnly };
}

/** A file's imports, re-exports, `import("…")` calls and `import("…")` types. */
function importsOf(source: SourceFile, file: string): Import[] {
  const imports: Import[] = [];
  for (const d of source.getImportDeclarations()) imports.push(resolveImport(file, d.getModuleSpecifierValue(), d.isTypeOnly()));
  for (const d of source.getExportDeclarations()) {
    const specifier = d.getModuleSpecifierValue();
    if (specifier !== undefined) imports.push(resolveImport(file, specifier, d.isTypeOnly()));
  }
  for (const call of source.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    if (call.getExpression().getKind() !== SyntaxKind.ImportKeyword) continue;
    const arg = call.getArguments()[0];
    const literal = arg?.asKind(SyntaxKind.StringLiteral) ?? arg?.asKind(SyntaxKind.NoSubstitutionTemplateLiteral);
    // A computed specifier cannot be checked: it is kept as a package of that name, which no rule allows.
    imports.push(resolveImport(file, literal?.getLiteralValue() ?? `<computed import(${arg?.getText() ?? ""})>`, false));
  }
  for (const type of source.getDescendantsOfKind(SyntaxKind.ImportType)) {
    const literal = type.getArgument().asKind(SyntaxKind.LiteralType)?.getLiteral().asKind(SyntaxKind.StringLiteral);
    if (literal) imports.push(resolveImport(file, literal.getLiteralValue(), true));
  }
  return imports;
}

const project = new Project({ skipAddingFilesFromTsConfig: true, compilerOptions: { allowJs: false } });

/** Every .ts file under the given folders, with its imports. */
function readGraph(folders: readonly string[]): Graph {
  const graph = new Map<string, Import[]>();
  for (const folder of folders) {
    for (const entry of readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
      const file = path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
      graph.set(file, importsOf(project.addSourceFileAtPath(path.join(root, file)), file));
    }
  }
  return graph;
}

// ---- (a), (b): allowed edges -------------------------------------------------------------------------

interface LayerRule {
  /** The files it governs: a folder prefix ending in `/`. */
  readonly layer: string;
  /**
   * The files they may import: a folder prefix ending in `/`, or one file. `{stem}` stands for the
   * importing file's name up to its first dot (`org` for `generated/org.guard.ts`).
   */
  readonly files: readonly string[];
  /** The packages they may import; `node:*` is every builtin. */
  readonly packages: readonly string[];
}

function allowed(patterns: readonly string[], target: string, stem: string): boolean {
  return patterns.some((p) => {
    const pattern = p.replaceAll("{stem}", stem);
    if (pattern.endsWith("*")) return target.startsWith(pattern.slice(0, -1));
    return pattern.endsWith("/") ? target.startsWith(pattern) : target === pattern;
  });
}

/** Each import of a governed file that its layer's rule does not allow (the first rule whose layer holds the file). */
function edgeViolations(graph: Graph, rules: readonly LayerRule[]): string[] {
  const out: string[] = [];
  for (const [file, imports] of graph) {
    const rule = rules.find((r) => file.startsWith(r.layer));
    if (!rule) continue;
    const stem = path.posix.basename(file).split(".")[0]!;
    for (const i of imports) {
      if (i.relative ? allowed(rule.files, i.target, stem) : allowed(rule.packages, i.target, stem)) continue;
      const what = i.relative ? `${i.target}; ${rule.layer} may import only ${rule.files.join(", ")}` : `package ${i.target}; ${rule.layer} may import only ${rule.packages.join(", ") || "no package"}`;
      out.push(`${file} imports ${i.typeOnly ? "(type) " : ""}"${i.specifier}" (${what})`);
    }
  }
  return out;
}

const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { dependencies: object; peerDependencies: object };
/** What the runtime package (src/ and dsl/) ships with. */
const RUNTIME_PACKAGES = ["node:*", ...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)];
/** What the CLI package (compiler/) ships with: the runtime's dependencies, `pg`, and `cliDeps` of .ci/pack.mjs. */
const CLI_PACKAGES = ["node:*", ...Object.keys(pkg.dependencies), "pg", "ts-morph", "commander", "chokidar", "tinyglobby"];

/** (a) The layers, and every edge each may have. The scanned folders are these layers. */
const LAYERS: readonly LayerRule[] = [
  // The runtime: only itself (nothing from dsl/, compiler/, generated/, bench/, test/, examples/).
  { layer: "src/", files: ["src/"], packages: RUNTIME_PACKAGES },
  // The policy DSL builds on the runtime's policy base layer and nothing else of it.
  { layer: "dsl/", files: ["dsl/", "src/policy/"], packages: RUNTIME_PACKAGES },
  // A compiled guard: the runtime's public entry, and its own `<stem>.types.ts`.
  { layer: "generated/", files: ["src/index.ts", "generated/{stem}.types.ts"], packages: [] },
  // The compiler reads policies (dsl/, src/policy/) and shares these runtime modules. The CLI package
  // loads each as `pruneguard/internal/…` (.ci/pack.mjs), so this list is that internal surface: adding to
  // it is a decision, not a fix.
  {
    layer: "compiler/",
    files: [
      "compiler/",
      "dsl/",
      "src/policy/",
      "src/index.ts",
      "src/types.ts",
      "src/outcome.ts",
      "src/errors.ts",
      "src/hash.ts",
      "src/audit.ts",
      "src/token-count.ts",
      "src/render/tombstone.ts",
      "src/stores/store.ts",
      "src/stores/audit-reader.ts",
      "src/stores/engine-adapters.ts",
      // The PostgreSQL store's loader (for migrate): it imports pg only when called, and says to install it.
      "src/stores/postgres/load.ts",
    ],
    packages: CLI_PACKAGES,
  },
];

/** (b) The policy base layer. */
const POLICY_BASE: readonly LayerRule[] = [{ layer: "src/policy/", files: ["src/policy/"], packages: RUNTIME_PACKAGES }];

// ---- (c): value cycles --------------------------------------------------------------------------------

/**
 * The cycles of value imports among the files under `scope`: one per strongly connected component
 * (Tarjan), with its files (sorted) and a shortest path from its first file back to it.
 */
function valueCycles(graph: Graph, scope: string): Array<{ files: string[]; path: string[] }> {
  const edges = new Map<string, string[]>();
  for (const [file, imports] of graph) {
    if (!file.startsWith(scope)) continue;
    edges.set(file, [...new Set(imports.filter((i) => i.relative && !i.typeOnly && i.target.startsWith(scope)).map((i) => i.target))].sort());
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || edges.get(v)?.includes(v)) components.push(component.sort());
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  // A shortest path inside each component from its first file back to it (breadth first).
  return components.map((component) => {
    const members = new Set(component);
    const start = component[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    search: while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of edges.get(v) ?? []) {
        if (!members.has(w) || previous.has(w)) continue;
        previous.set(w, v);
        if (w === start) break search;
        queue.push(w);
      }
    }
    const cycle = [start];
    for (let v = previous.get(start)!; v !== start; v = previous.get(v)!) cycle.unshift(v);
    return { files: component, path: [start, ...cycle] };
  });
}

/**
 * The cycles src/ has today, each by the files of its strongly connected component, sorted. None: keep
 * it so. Were one ever let in, its files go here, with why, so that any other cycle (or this one
 * growing) still fails; an entry no cycle matches any more fails too, so the list only shrinks.
 */
const KNOWN_CYCLES: readonly (readonly string[])[] = [];

/** New cycles (not in `known`), and known ones that are gone. */
function cycleViolations(cycles: ReadonlyArray<{ files: readonly string[]; path: readonly string[] }>, known: readonly (readonly string[])[]): string[] {
  const key = (files: readonly string[]) => [...files].sort().join(" ");
  const knownKeys = new Set(known.map(key));
  const found = new Set(cycles.map((c) => key(c.files)));
  return [
    ...cycles
      .filter((c) => !knownKeys.has(key(c.files)))
      .map((c) => `value import cycle: ${c.path.join(" → ")}${c.files.length > c.path.length - 1 ? ` (one of the cycles among ${c.files.join(", ")})` : ""}`),
    ...known.filter((k) => !found.has(key(k))).map((k) => `KNOWN_CYCLES lists a cycle that is gone (remove it): ${k.join(", ")}`),
  ];
}

// ---- (d), (e), (f): file size and names ----------------------------------------------------------------------

const LINE_LIMIT = 500;
const LONG_FILE_REASON = "Longer than 500 lines because";

/** The comments before a file's first line of code. */
function firstCommentBlock(text: string): string {
  return /^(?:#![^\n]*\n)?(?:\s*(?:\/\*[\s\S]*?\*\/|\/\/[^\n]*))*/.exec(text)![0];
}

function lineCount(text: string): number {
  const lines = text.split("\n").length;
  return text.endsWith("\n") ? lines - 1 : lines;
}

/** The files longer than the limit whose first comment block does not say why. */
function oversizedFiles(texts: ReadonlyMap<string, string>): string[] {
  return [...texts]
    .filter(([, text]) => lineCount(text) > LINE_LIMIT && !firstCommentBlock(text).includes(LONG_FILE_REASON))
    .map(([file, text]) => `${file} has ${lineCount(text)} lines (over ${LINE_LIMIT}; its first comment block does not say "${LONG_FILE_REASON} …")`);
}

/** The base names (other than index.ts) that more than one file has. */
function duplicateBaseNames(files: Iterable<string>): string[] {
  const byName = new Map<string, string[]>();
  for (const f of files) {
    const name = path.posix.basename(f);
    if (name !== "index.ts") byName.set(name, [...(byName.get(name) ?? []), f]);
  }
  return [...byName].filter(([, fs]) => fs.length > 1).map(([name, fs]) => `${name} is the name of ${fs.sort().join(" and ")}`);
}

/** The files `x.ts` that sit beside a folder `x/` holding files too. */
function filesBesideFolders(files: Iterable<string>): string[] {
  const all = [...files];
  const folders = new Set(all.map((f) => path.posix.dirname(f)).flatMap((d) => d.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"))));
  return all
    .filter((f) => f.endsWith(".ts") && folders.has(f.slice(0, -".ts".length)))
    .sort()
    .map((f) => `${f} sits beside the folder ${f.slice(0, -".ts".length)}/ (move it in, as its index.ts or a file named for what it holds)`);
}

// ---- the rules on small graphs that break them ----------------------------------------------------------

/** A graph from `file: [specifier, …]`; `type ` before a specifier makes it type-only. */
function graphOf(files: Record<string, readonly string[]>): Graph {
  return new Map(Object.entries(files).map(([file, specs]) => [file, specs.map((s) => (s.startsWith("type ") ? resolveImport(file, s.slice(5), true) : resolveImport(file, s, false)))]));
}

describe("each rule rejects what it forbids", () => {
  it("reading: every form of specifier, type-only only where the whole declaration is", () => {
    const text = [
      'import { a, type B } from "./a.js";',
      'import type { C } from "../c.js";',
      'import { type D } from "./d.js";',
      'import "./side-effect.js";',
      'export { e } from "./e.js";',
      'export type { F } from "./f.js";',
      'export * from "./g.js";',
      'const h = await import("./h.js");',
      'type I = import("node:sqlite").DatabaseSync;',
      'import pg from "pg";',
      'import { encode } from "gpt-tokenizer/encoding/o200k_base";',
      'export const x: C | B | D | I = a ?? h ?? pg ?? encode;',
    ].join("\n");
    const imports = importsOf(project.createSourceFile("/virtual/src/x/y.ts", text, { overwrite: true }), "src/x/y.ts");
    expect(imports.map((i) => `${i.typeOnly ? "type " : ""}${i.target}`)).toEqual([
      "src/x/a.ts", "type src/c.ts", "src/x/d.ts", "src/x/side-effect.ts", "pg", "gpt-tokenizer",
      "src/x/e.ts", "type src/x/f.ts", "src/x/g.ts", "src/x/h.ts", "type node:sqlite",
    ]);
  });

  it("(a) layer direction: a wrong-way import, another guard's types, a runtime internal, an unshipped package", () => {
    const graph = graphOf({
      "src/window/window.ts": ["../stores/store.js", "../../compiler/index.js", "type ../../test/helpers.js", "zod", "ts-morph"],
      "dsl/policy.ts": ["../src/policy/kinds.js", "type ../src/types.js"],
      "generated/org.guard.ts": ["../src/index.js", "./org.types.js", "./team.types.js", "../src/window/window.js", "zod"],
      "compiler/emit/guard.ts": ["../../src/policy/durations.js", "../../src/window/window.js", "../../generated/org.guard.js", "ts-morph", "@anthropic-ai/sdk/x"],
    });
    expect(edgeViolations(graph, LAYERS)).toEqual([
      'src/window/window.ts imports "../../compiler/index.js" (compiler/index.ts; src/ may import only src/)',
      'src/window/window.ts imports (type) "../../test/helpers.js" (test/helpers.ts; src/ may import only src/)',
      `src/window/window.ts imports "ts-morph" (package ts-morph; src/ may import only ${RUNTIME_PACKAGES.join(", ")})`,
      'dsl/policy.ts imports (type) "../src/types.js" (src/types.ts; dsl/ may import only dsl/, src/policy/)',
      'generated/org.guard.ts imports "./team.types.js" (generated/team.types.ts; generated/ may import only src/index.ts, generated/{stem}.types.ts)',
      'generated/org.guard.ts imports "../src/window/window.js" (src/window/window.ts; generated/ may import only src/index.ts, generated/{stem}.types.ts)',
      'generated/org.guard.ts imports "zod" (package zod; generated/ may import only no package)',
      expect.stringContaining('compiler/emit/guard.ts imports "../../src/window/window.js" (src/window/window.ts; compiler/ may import only'),
      expect.stringContaining('compiler/emit/guard.ts imports "../../generated/org.guard.js" (generated/org.guard.ts;'),
      expect.stringContaining('compiler/emit/guard.ts imports "@anthropic-ai/sdk/x" (package @anthropic-ai/sdk;'),
    ]);
  });

  it("(b) the policy base layer: any other src/ module", () => {
    const graph = graphOf({ "src/policy/pins.ts": ["./kinds.js", "type ../types.js", "re2js"], "src/window/window.ts": ["../types.js"] });
    expect(edgeViolations(graph, POLICY_BASE)).toEqual([
      'src/policy/pins.ts imports (type) "../types.js" (src/types.ts; src/policy/ may import only src/policy/)',
    ]);
  });

  it("(c) cycles: value imports and re-exports close one, a type-only import does not, the allow-list holds only live ones", () => {
    const graph = graphOf({
      "src/a.ts": ["./b.js", "./d.js"],
      "src/b.ts": ["./c.js"],
      "src/c.ts": ["./a.js"],
      "src/d.ts": ["type ./a.js", "./d.js"],
      "src/e.ts": ["./f.js"],
      "src/f.ts": ["type ./e.js"],
    });
    const cycles = valueCycles(graph, "src/");
    expect(cycles.map((c) => c.path)).toEqual([["src/d.ts", "src/d.ts"], ["src/a.ts", "src/b.ts", "src/c.ts", "src/a.ts"]]);
    expect(cycleViolations(cycles, [["src/a.ts", "src/b.ts", "src/c.ts"]])).toEqual(["value import cycle: src/d.ts → src/d.ts"]);
    // Two cycles through one file are one component, a known cycle grown: a new one (shortest path, every file).
    const joined = valueCycles(graphOf({ "src/a.ts": ["./b.js", "./c.js"], "src/b.ts": ["./a.js"], "src/c.ts": ["./d.js"], "src/d.ts": ["./a.js"] }), "src/");
    expect(cycleViolations(joined, [["src/a.ts", "src/b.ts"]])).toEqual([
      "value import cycle: src/a.ts → src/b.ts → src/a.ts (one of the cycles among src/a.ts, src/b.ts, src/c.ts, src/d.ts)",
      "KNOWN_CYCLES lists a cycle that is gone (remove it): src/a.ts, src/b.ts",
    ]);
    expect(cycleViolations([], [["src/a.ts", "src/b.ts"]])).toEqual(["KNOWN_CYCLES lists a cycle that is gone (remove it): src/a.ts, src/b.ts"]);
    expect(valueCycles(graphOf({ "src/e.ts": ["./f.js"], "src/f.ts": ["type ./e.js"] }), "src/")).toEqual([]);
  });

  it("(d) long files: over 500 lines without the reason in the first comment block", () => {
    const body = "export const x = 1;\n".repeat(LINE_LIMIT);
    const texts = new Map([
      ["src/ok.ts", body],
      ["src/long.ts", `${body}x;\n`],
      ["src/explained.ts", `/**\n * ${LONG_FILE_REASON} it is one table.\n */\n${body}`],
      ["src/late.ts", `/** A file. */\n${body}// ${LONG_FILE_REASON} too late.\n`],
    ]);
    expect(oversizedFiles(texts)).toEqual([
      expect.stringMatching(/^src\/long\.ts has 501 lines/),
      expect.stringMatching(/^src\/late\.ts has 502 lines/),
    ]);
  });

  it("(e) names: two files of one base name, index.ts excepted", () => {
    expect(duplicateBaseNames(["src/a/options.ts", "src/b/options.ts", "src/a/index.ts", "src/b/index.ts", "src/c.ts"])).toEqual([
      "options.ts is the name of src/a/options.ts and src/b/options.ts",
    ]);
  });

  it("(f) a file beside a folder of its name, at any depth; a name that only starts alike is no folder of it", () => {
    expect(filesBesideFolders(["src/telemetry.ts", "src/telemetry/spans.ts", "src/a/b.ts", "src/a/b/c/d.ts", "src/render-lines.ts", "src/render/x.ts", "src/c.ts"])).toEqual([
      "src/a/b.ts sits beside the folder src/a/b/ (move it in, as its index.ts or a file named for what it holds)",
      "src/telemetry.ts sits beside the folder src/telemetry/ (move it in, as its index.ts or a file named for what it holds)",
    ]);
  });
});

// ---- the rules on the repository --------------------------------------------------------------------

describe("the repository's architecture", () => {
  const graph = readGraph(LAYERS.map((l) => l.layer.slice(0, -1)));
  const runtimeFiles = [...graph.keys()].filter((f) => f.startsWith("src/"));

  it("reads every layer", () => {
    for (const l of LAYERS) expect([...graph.keys()].some((f) => f.startsWith(l.layer)), l.layer).toBe(true);
    // The resolver works on this codebase's style: every relative import names a file that was read.
    const unresolved = [...graph].flatMap(([file, imports]) => imports.filter((i) => i.relative && !graph.has(i.target)).map((i) => `${file}: "${i.specifier}"`));
    expect(unresolved).toEqual([]);
  });

  it("(a) each layer imports only what LAYERS allows it", () => {
    expect(edgeViolations(graph, LAYERS)).toEqual([]);
  });

  it("(b) src/policy/ imports nothing else from src/", () => {
    expect(edgeViolations(graph, POLICY_BASE)).toEqual([]);
  });

  it("(c) src/ has no cycle of value imports", () => {
    expect(cycleViolations(valueCycles(graph, "src/"), KNOWN_CYCLES)).toEqual([]);
  });

  it(`(d) no runtime file is longer than ${LINE_LIMIT} lines without saying why`, () => {
    expect(oversizedFiles(new Map(runtimeFiles.map((f) => [f, readFileSync(path.join(root, f), "utf8")])))).toEqual([]);
  });

  it("(e) no two runtime files have one name, except index.ts", () => {
    expect(duplicateBaseNames(runtimeFiles)).toEqual([]);
  });

  it("(f) no runtime file sits beside a folder of its name", () => {
    expect(filesBesideFolders(runtimeFiles)).toEqual([]);
  });
});
