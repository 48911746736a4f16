// The compiler and the editor refuse the same policy mistakes. Each mistake below is a small policy
// project; the line marked `// ✗` is where it is. It is compiled by the policy compiler (in memory) and
// type-checked by the repository's TypeScript 7 `tsc` and by TS 6 (the compiler ts-morph bundles), the two
// compilers an editor may run, with a user's settings: `strict`, module/moduleResolution NodeNext, an ES
// module package, `pruneguard/dsl` resolving to this repository's DSL. A mistake both refuse must be
// reported by each on the marked line (the compiler with the code given, TS 7 with the code given, TS 6
// on the line, as its codes may differ). A mistake only one of them refuses is listed with the section
// of docs/policy-language.md that says so, and the test holds the document to it: every such code, or the
// construct, is named there. A control project with no mistake must be clean in all three.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { getLibFiles } from "@ts-morph/common";
import { ts } from "ts-morph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicies } from "../../compiler/index.js";

const ROOT = path.resolve(".");
const TSC = path.join(ROOT, "node_modules/.bin/tsc");
const HEADER = `import { definePolicy, extendPolicy, store, hours, minutes, days, pins, pin } from "pruneguard/dsl";\n`;
const ORG = `${HEADER}export default definePolicy({
  name: "org",
  stores: { toolLog: store.sqlite({ retention: hours(2), holds: true }), transcript: store.postgres({ retention: days(30) }) },
  kinds: {
    toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
    userTurn: { store: "transcript", modes: ["summarize"], lossy: "forbid" },
  },
  session: { maxLength: hours(8) },
});
`;
/** A stand-alone policy whose kinds object holds `kind` and whose other fields are `rest`. */
const policy = (kind: string, rest = "", stores = `toolLog: store.sqlite({ retention: hours(8) })`) => `${HEADER}export default definePolicy({
  name: "p",
  stores: {
    ${stores}
  },
  kinds: {
    ${kind}
  },
${rest}});
`;
/** An overlay of ORG (in `org.policy.ts`) whose object literal holds `body`. */
const overlay = (body: string, specifier = "./org.policy.js") => ({
  "org.policy.ts": ORG,
  "team.policy.ts": `${HEADER}import org from "${specifier}";\nexport default extendPolicy(org, {\n  name: "team",\n${body}\n});\n`,
});
const FINE = `toolResult: { store: "toolLog", modes: ["drop"], lossy: "with-flag" },`;

interface Mistake {
  readonly name: string;
  /** Files by path; the mistake is on the line marked `// ✗`. */
  readonly files: Readonly<Record<string, string>>;
  /** The compiler's error code on that line, or `null` where it accepts the mistake. */
  readonly compiler: string | null;
  /** TS 7's error code on that line, or `null` where tsc accepts it. */
  readonly tsc: string | null;
}

/** Refused by both: the editor underlines what the compiler refuses. */
const BOTH: readonly Mistake[] = [
  { name: "a misspelt kind property", files: { "p.policy.ts": policy(`toolResult: { store: "toolLog", modes: ["drop"], lossy: "with-flag", repersists: true }, // ✗`) }, compiler: "PG1012", tsc: "TS2322" },
  { name: "a misspelt property in an overlay's override", files: overlay(`  kinds: { toolResult: { modes: ["drop"], pinz: [] } }, // ✗`), compiler: "PG1012", tsc: "TS2322" },
  { name: "a misspelt store option", files: { "p.policy.ts": policy(FINE, "", `toolLog: store.sqlite({ retention: hours(8), hold: true }) // ✗`) }, compiler: "PG1012", tsc: "TS2561" },
  { name: "a misspelt policy property", files: { "p.policy.ts": policy(FINE, `  sesion: { maxLength: hours(8) }, // ✗\n`) }, compiler: "PG1012", tsc: "TS2561" },
  { name: "a misspelt session property", files: { "p.policy.ts": policy(FINE, `  session: { maxLenght: hours(8) }, // ✗\n`) }, compiler: "PG1012", tsc: "TS2561" },
  { name: "a misspelt compaction property", files: { "p.policy.ts": policy(FINE, `  session: { compaction: { atToken: 120_000 } }, // ✗\n`) }, compiler: "PG1012", tsc: "TS2561" },
  { name: "a kind naming a store that is not declared", files: { "p.policy.ts": policy(`toolResult: { store: "toolLg", modes: ["drop"], lossy: "with-flag" }, // ✗`) }, compiler: "PG2001", tsc: "TS2322" },
  { name: "a lossy rule that is not one", files: { "p.policy.ts": policy(`toolResult: { store: "toolLog", modes: ["drop"], lossy: "allow" }, // ✗`) }, compiler: "PG1011", tsc: "TS2322" },
  { name: "a mode that is not one", files: { "p.policy.ts": policy(`toolResult: { store: "toolLog", modes: ["drop", "delete"], lossy: "with-flag" }, // ✗`) }, compiler: "PG1011", tsc: "TS2322" },
  { name: "a kind without modes", files: { "p.policy.ts": policy(`toolResult: { store: "toolLog", lossy: "with-flag" }, // ✗`) }, compiler: "PG1013", tsc: "TS2322" },
  { name: "a bare number for a retention", files: { "p.policy.ts": policy(FINE, "", `toolLog: store.sqlite({ retention: 7_200_000 }) // ✗`) }, compiler: "PG1011", tsc: "TS2322" },
  { name: "arithmetic on durations", files: { "p.policy.ts": policy(FINE, "", `toolLog: store.sqlite({ retention: hours(1) + minutes(30) }) // ✗`) }, compiler: "PG1016", tsc: "TS2322" },
  { name: "a tombstone that does not name its span", files: { "p.policy.ts": policy(FINE, `  tombstone: "pruned, unrecoverable", // ✗\n`) }, compiler: "PG2007", tsc: "TS2322" },
  { name: "an unknown DSL export", files: { "p.policy.ts": `import { defineTeamPolicy } from "pruneguard/dsl"; // ✗\nexport default defineTeamPolicy({ name: "p" });\n` }, compiler: "PG1010", tsc: "TS2724" },
  { name: "a DSL builder used without importing it", files: { "p.policy.ts": policy(FINE, "", `toolLog: store.sqlite({ retention: seconds(60) }) // ✗`) }, compiler: "PG1014", tsc: "TS2304" },
  { name: "an extensionless relative import", files: overlay("", "./org.policy"), compiler: "PG1021", tsc: "TS2307" },
  { name: "an overlay allowing lossy where its base forbids it", files: overlay(`  kinds: { userTurn: { lossy: "with-flag" } }, // ✗`), compiler: "PG2101", tsc: "TS2322" },
  { name: "an overlay adding a mode", files: overlay(`  kinds: { userTurn: { modes: ["drop"] } }, // ✗`), compiler: "PG2103", tsc: "TS2322" },
  { name: "an overlay misspelling a base kind", files: overlay(`  kinds: { toolReslt: { modes: ["drop"] } }, // ✗`), compiler: "PG1015", tsc: "TS2322" },
  {
    name: "a misspelt member of a const object",
    files: { "p.policy.ts": policy(`toolResult: { store: "toolLog", modes: ["drop"], lossy: Lossy.Forbidd }, // ✗`).replace("export default", `const Lossy = { Forbid: "forbid", WithFlag: "with-flag" } as const;\nexport default`) },
    compiler: "PG1022",
    tsc: "TS2551",
  },
  { name: "an overlay's new kind naming a store neither declares", files: overlay(`  kinds: { hit: { store: "nowhere", modes: ["drop"], lossy: "forbid" } }, // ✗`), compiler: "PG2001", tsc: "TS2322" },
];

/**
 * Refused by one only, each with the words of docs/policy-language.md that say so. The compiler refuses
 * what types cannot see: code that would have to run, and rules about values (a pattern, a number's
 * range) or about a base's stores that the editor does not evaluate. tsc refuses a `.ts` import
 * extension unless the project allows it, which the compiler does not know.
 */
const ONE: ReadonlyArray<Mistake & { readonly documented: string }> = [
  { name: "a value read from the environment", files: { "p.policy.ts": policy(FINE, `  tombstone: process.env.TOMBSTONE as "{span}", // ✗\n`) }, compiler: "PG1003", tsc: null, documented: "PG1003" },
  { name: "a call to a function that is not a DSL builder", files: { "p.policy.ts": policy(FINE, `  session: { lossyBudget: Math.max(1, 2) }, // ✗\n`) }, compiler: "PG1006", tsc: null, documented: "PG1006" },
  {
    name: "a call to a function the policy declares",
    files: { "p.policy.ts": policy(`toolResult: toolKind(), // ✗`).replace("export default", `const toolKind = () => ({ store: "toolLog", modes: ["drop"], lossy: "with-flag" }) as const;\nexport default`) },
    compiler: "PG1006",
    tsc: null,
    documented: "PG1006",
  },
  { name: "an import of a module that is not a policy", files: { "p.policy.ts": `${HEADER}import { readFileSync } from "node:fs"; // ✗\nexport default definePolicy({ name: "p", stores: {}, kinds: {} });\n` }, compiler: "PG1009", tsc: null, documented: "PG1009" },
  { name: "an empty mode list", files: { "p.policy.ts": policy(`toolResult: { store: "toolLog", modes: [], lossy: "with-flag" }, // ✗`) }, compiler: "PG2003", tsc: null, documented: "PG2003" },
  { name: "a pin pattern the engine cannot run", files: { "p.policy.ts": policy(FINE, `  pins: [pin("ord", "ord_\\\\d+(?=\\\\s)")], // ✗\n`) }, compiler: "PG2012", tsc: null, documented: "PG2012" },
  { name: "a kind name longer than the runtime takes", files: { "p.policy.ts": policy(`${"t".repeat(65)}: { store: "toolLog", modes: ["drop"], lossy: "with-flag" }, // ✗`) }, compiler: "PG1011", tsc: null, documented: "longer than 64" },
  { name: "a search budget too small for its coverage line", files: { "p.policy.ts": policy(FINE, `  session: { searchTokens: 20 }, // ✗\n`) }, compiler: "PG1011", tsc: null, documented: "PG1011" },
  { name: "an overlay shortening a base store's retention", files: overlay(`  stores: { toolLog: store.sqlite({ retention: minutes(30), holds: true }) }, // ✗`), compiler: "PG2102", tsc: null, documented: "PG2102" },
  { name: "a relative import naming the source file", files: overlay("", "./org.policy.ts"), compiler: null, tsc: "TS5097", documented: "allowImportingTsExtensions" },
];

const CONTROL: Mistake = { name: "no mistake", files: overlay(`  kinds: { toolResult: { modes: ["drop"], lossy: "forbid" } },`), compiler: null, tsc: null };

/** An overlay importing ORG's default and a pin through `index.policy.ts`, a barrel whose text is `barrel`. */
const throughBarrel = (barrel: string, importLine = `import org, { ticket } from "./index.policy.js";`) => ({
  "org.policy.ts": ORG.replace("export default", `export const ticket = pin("ticket", "T-\\\\d+");\nexport default`),
  "index.policy.ts": barrel,
  "team.policy.ts": `${HEADER}${importLine}\nexport default extendPolicy(org, {\n  name: "team",\n  kinds: { toolResult: { modes: ["drop"], lossy: "forbid", pins: [ticket] } },\n});\n`,
});

/** Ordinary TypeScript that both read: barrels, named and default, between policy modules. */
const CLEAN: readonly Mistake[] = [
  { name: "a barrel's named and default re-exports", files: throughBarrel(`export { ticket } from "./org.policy.js";\nexport { default } from "./org.policy.js";\n`), compiler: null, tsc: null },
  { name: "a barrel re-exporting the default as a name", files: throughBarrel(`export { default as org, ticket } from "./org.policy.js";\n`, `import { org, ticket } from "./index.policy.js";`), compiler: null, tsc: null },
  { name: "a barrel with export *", files: throughBarrel(`export * from "./org.policy.js";\nexport { default } from "./org.policy.js";\n`), compiler: null, tsc: null },
];

const CASES = [...BOTH, ...ONE, CONTROL, ...CLEAN];
const folder = (i: number) => `case${String(i).padStart(2, "0")}`;

/** The marked line of a case: `file:line`, in its own folder. An import mistake with no mark is line 2 of the overlay. */
function markedLine(m: Mistake): { file: string; line: number } | undefined {
  for (const [file, text] of Object.entries(m.files)) {
    const i = text.split("\n").findIndex((l) => l.includes("// ✗"));
    if (i >= 0) return { file, line: i + 1 };
  }
  return m === CONTROL ? undefined : { file: "team.policy.ts", line: 2 };
}

/** Errors by case: `file:line code` with `file` relative to the case's folder. */
type Found = Map<number, string[]>;
let work: string;
const found: Record<"tsc7" | "tsc6", Found> = { tsc7: new Map(), tsc6: new Map() };
let tscVersion = "";

function record(into: Found, absolute: string, line: number, code: string): void {
  const rel = path.relative(work, absolute).split(path.sep);
  const i = CASES.findIndex((_, n) => folder(n) === rel[0]);
  if (i < 0) return; // the DSL's own sources: checked by the repository's stricter tsc
  into.get(i)!.push(`${rel.slice(1).join("/")}:${line} ${code}`);
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), "pruneguard-tsc-agreement-"));
  symlinkSync(path.join(ROOT, "node_modules"), path.join(work, "node_modules"), "dir");
  writeFileSync(path.join(work, "package.json"), JSON.stringify({ name: "policies", private: true, type: "module" }));
  writeFileSync(
    path.join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2024", strict: true, module: "NodeNext", moduleResolution: "NodeNext", skipLibCheck: true, types: ["node"], noEmit: true,
        paths: { "pruneguard/dsl": [path.join(ROOT, "dsl/index.ts")] },
      },
      include: ["case*/**/*.ts"],
    }),
  );
  CASES.forEach((m, i) => {
    for (const [file, text] of Object.entries(m.files)) {
      mkdirSync(path.dirname(path.join(work, folder(i), file)), { recursive: true });
      writeFileSync(path.join(work, folder(i), file), text);
    }
    found.tsc7.set(i, []);
    found.tsc6.set(i, []);
  });
  tscVersion = spawnSync(TSC, ["--version"], { encoding: "utf8" }).stdout.trim();
  const r = spawnSync(TSC, ["-p", work, "--pretty", "false"], { cwd: work, encoding: "utf8" });
  const output = `${r.stdout}${r.stderr}`;
  if (r.status !== 0 && !/error TS\d+/.test(output)) throw new Error(`tsc exited ${r.status ?? r.signal}:\n${output}`);
  if (process.env["DEBUG_AGREEMENT"]) console.log(output);
  for (const m of output.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+):/gm)) record(found.tsc7, path.resolve(work, m[1]!), Number(m[2]), m[3]!);
  for (const d of ts6Diagnostics(path.join(work, "tsconfig.json"))) {
    if (d.file === undefined || d.start === undefined || d.category !== ts.DiagnosticCategory.Error) continue;
    record(found.tsc6, d.file.fileName, d.file.getLineAndCharacterOfPosition(d.start).line + 1, `TS${d.code}`);
  }
}, 300_000);

/**
 * TS 6's diagnostics for a project, from a plain `ts.createProgram` (ts-morph's `ts`), not a ts-morph
 * `Project`: a Project's host does not tell a file's module format from the nearest package.json, so
 * there an ES module's extensionless import resolves as CommonJS would, which neither tsc nor an editor
 * does. Its lib files come from ts-morph's bundle, as a Project's would.
 */
function ts6Diagnostics(tsconfig: string): readonly ts.Diagnostic[] {
  const config = ts.getParsedCommandLineOfConfigFile(tsconfig, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n")); } })!;
  const libDir = "/__ts6_lib__";
  const libs = new Map(getLibFiles().map((f) => [`${libDir}/${f.fileName}`, f.text]));
  const host = ts.createCompilerHost(config.options);
  const { fileExists, readFile, getSourceFile } = host;
  host.getDefaultLibLocation = () => libDir;
  host.getDefaultLibFileName = (options) => `${libDir}/${ts.getDefaultLibFileName(options)}`;
  host.fileExists = (f) => libs.has(f) || fileExists(f);
  host.readFile = (f) => libs.get(f) ?? readFile(f);
  host.getSourceFile = (f, language, ...rest) => (libs.has(f) ? ts.createSourceFile(f, libs.get(f)!, language) : getSourceFile(f, language, ...rest));
  return ts.getPreEmitDiagnostics(ts.createProgram({ rootNames: config.fileNames, options: config.options, host }));
}

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The compiler's errors for a case, as `file:line code`. */
function compilerErrors(m: Mistake): string[] {
  const r = compilePolicies({ files: { ...m.files } });
  return r.diagnostics.filter((d) => d.category === "error").map((d) => `${d.location?.file}:${d.location?.line} ${d.code}`);
}

describe("the compiler and tsc refuse the same policy mistakes", () => {
  it("runs TypeScript 7's tsc and TypeScript 6", () => {
    expect(tscVersion).toMatch(/^Version 7\./);
    expect(ts.version).toMatch(/^6\./);
  });

  it.each([CONTROL, ...CLEAN].map((m) => [m.name, m] as const))("%s: clean in all three", (_name, m) => {
    const i = CASES.indexOf(m);
    expect(compilerErrors(m)).toEqual([]);
    expect(found.tsc7.get(i)).toEqual([]);
    expect(found.tsc6.get(i)).toEqual([]);
  });

  it.each(BOTH.map((m) => [m.name, m] as const))("%s: refused by both, on the line where it is", (_name, m) => {
    const at = markedLine(m)!;
    const where = `${at.file}:${at.line}`;
    expect(compilerErrors(m), "the compiler").toContain(`${where} ${m.compiler}`);
    const i = CASES.indexOf(m);
    expect(found.tsc7.get(i), "TS 7").toContain(`${where} ${m.tsc}`);
    expect(found.tsc6.get(i)!.some((f) => f.startsWith(`${where} `)), `TS 6: ${found.tsc6.get(i)!.join(", ")}`).toBe(true);
  });

  const doc = readFileSync("docs/policy-language.md", "utf8");
  const section = /^## The compiler and the editor\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1] ?? "";
  it("docs/policy-language.md has a section on what only one of them refuses", () => {
    expect(section).not.toBe("");
  });

  it.each(ONE.map((m) => [m.name, m] as const))("%s: refused by one only, as documented", (_name, m) => {
    const at = markedLine(m)!;
    const where = `${at.file}:${at.line}`;
    const i = CASES.indexOf(m);
    const errors = compilerErrors(m);
    if (m.compiler === null) expect(errors, "the compiler accepts it").toEqual([]);
    else expect(errors, "the compiler").toContain(`${where} ${m.compiler}`);
    if (m.tsc === null) {
      expect(found.tsc7.get(i), "TS 7 accepts it").toEqual([]);
      expect(found.tsc6.get(i), "TS 6 accepts it").toEqual([]);
    } else {
      expect(found.tsc7.get(i), "TS 7").toContain(`${where} ${m.tsc}`);
      expect(found.tsc6.get(i)!.some((f) => f.startsWith(`${where} `)), "TS 6").toBe(true);
    }
    expect(section, `docs/policy-language.md, "The compiler and the editor", names ${m.documented}`).toContain(m.documented);
  });
});

/**
 * The module resolution comes from the tsconfig that covers the policy, so these projects carry their own:
 * the same extensionless import, accepted under `bundler` and in a CommonJS package, refused under NodeNext in
 * an ES module, by the compiler (reading the project from disk) and by each tsc.
 */
interface Project {
  readonly name: string;
  readonly compilerOptions: Readonly<Record<string, unknown>>;
  readonly packageType: "module" | undefined;
  readonly files: Readonly<Record<string, string>>;
  /** `file:line code` of the compiler's and TS 7's errors; empty when both accept it. */
  readonly compiler: readonly string[];
  readonly tsc: readonly string[];
}

const PROJECTS: readonly Project[] = [
  { name: "bundler, an extensionless import", compilerOptions: { module: "esnext", moduleResolution: "bundler" }, packageType: "module", files: overlay("", "./org.policy"), compiler: [], tsc: [] },
  {
    name: "bundler, an extensionless barrel",
    compilerOptions: { module: "preserve" },
    packageType: "module",
    files: throughBarrel(`export { default, ticket } from "./org.policy";\n`, `import org, { ticket } from "./index.policy";`),
    compiler: [],
    tsc: [],
  },
  { name: "NodeNext, the same import", compilerOptions: { module: "NodeNext" }, packageType: "module", files: overlay("", "./org.policy"), compiler: ["team.policy.ts:2 PG1021"], tsc: ["team.policy.ts:2 TS2307"] },
  { name: "NodeNext in a CommonJS package, the same import", compilerOptions: { module: "NodeNext" }, packageType: undefined, files: overlay("", "./org.policy"), compiler: [], tsc: [] },
];

describe("the compiler reads the module resolution tsc reads, from the policy's tsconfig", () => {
  let projects: string;
  const results = new Map<Project, { tsc7: string[]; tsc6: string[] }>();
  beforeAll(() => {
    projects = mkdtempSync(path.join(tmpdir(), "pruneguard-tsc-resolution-"));
    symlinkSync(path.join(ROOT, "node_modules"), path.join(projects, "node_modules"), "dir");
    PROJECTS.forEach((p, i) => {
      const dir = path.join(projects, `project${i}`);
      mkdirSync(dir);
      writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: `project${i}`, private: true, ...(p.packageType ? { type: p.packageType } : {}) }));
      writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { target: "ES2024", strict: true, skipLibCheck: true, types: ["node"], noEmit: true, ...p.compilerOptions, paths: { "pruneguard/dsl": [path.join(ROOT, "dsl/index.ts")] } }, include: ["*.ts"] }),
      );
      for (const [file, text] of Object.entries(p.files)) writeFileSync(path.join(dir, file), text);
      const r = spawnSync(TSC, ["-p", dir, "--pretty", "false"], { cwd: dir, encoding: "utf8" });
      const output = `${r.stdout}${r.stderr}`;
      if (r.status !== 0 && !/error TS\d+/.test(output)) throw new Error(`tsc exited ${r.status ?? r.signal}:\n${output}`);
      const tsc7 = [...output.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+):/gm)].map((m) => `${path.relative(dir, path.resolve(dir, m[1]!))}:${m[2]} ${m[3]}`);
      const tsc6 = ts6Diagnostics(path.join(dir, "tsconfig.json"))
        .filter((d) => d.file !== undefined && d.start !== undefined && d.category === ts.DiagnosticCategory.Error)
        .map((d) => `${path.relative(dir, d.file!.fileName)}:${d.file!.getLineAndCharacterOfPosition(d.start!).line + 1} TS${d.code}`);
      results.set(p, { tsc7, tsc6 });
    });
  }, 300_000);
  afterAll(() => {
    if (projects) rmSync(projects, { recursive: true, force: true });
  });

  it.each(PROJECTS.map((p) => [p.name, p] as const))("%s", (_name, p) => {
    const dir = path.join(projects, `project${PROJECTS.indexOf(p)}`);
    const r = compilePolicies(Object.keys(p.files).filter((f) => f.endsWith(".policy.ts")), { cwd: dir });
    expect(r.diagnostics.filter((d) => d.category === "error").map((d) => `${d.location?.file}:${d.location?.line} ${d.code}`), "the compiler").toEqual(p.compiler);
    const { tsc7, tsc6 } = results.get(p)!;
    expect(tsc7, "TS 7").toEqual(p.tsc);
    expect(tsc6.map((f) => f.replace(/ TS\d+$/, "")), "TS 6").toEqual(p.tsc.map((f) => f.replace(/ TS\d+$/, "")));
  });
});
