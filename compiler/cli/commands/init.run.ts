/** The implementation of `pruneguard init`, loaded only when the command runs (see `init.ts`). */
import { existsSync, type Stats } from "node:fs";
import * as path from "node:path";
import { DEFAULT_EMIT_OPTIONS } from "../../emit/files.js";
import { printable, wrapHanging } from "../../diagnostics/format.js";
import { ts } from "../../frontend/host.js";
import { lineColumn, MAX_NESTING, nestingOverflow } from "../../frontend/nesting.js";
import { PolicyName } from "../../ir/schema.js";
import { parseProjectConfig } from "../config.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import {
  CI_STEPS,
  DEPENDENCIES,
  MANIFEST_IGNORE,
  nodeTestScript,
  NPM_PLACEHOLDER_TEST,
  policyTest,
  settingHolds,
  starterPolicy,
  TSCONFIG_SETTINGS,
  tsconfigFile,
  type TestRunner,
} from "../init-template.js";
import { resolveInputs } from "../inputs.js";
import { textWidth } from "../report.js";
import { ProjectRoot, refusalError, type PathState } from "./init.confine.js";
import type { InitFlags } from "./init.js";

/**
 * What init did with one file: wrote it (it was not there), added to it, kept it as it is (it exists), or
 * did not write it on purpose (it is absent, and writing it would undo the user's choice).
 */
interface Action {
  readonly file: string;
  readonly status: "written" | "added" | "kept" | "skipped";
  readonly detail: string;
}

/** A tsconfig option init sets, and what the project's tsconfig.json says now. */
interface TsconfigAdvice {
  readonly option: string;
  readonly want: string | boolean | readonly string[];
  /** As written in tsconfig.json (not following `extends`); `null` when it is not set there or there is no tsconfig.json. */
  readonly has: unknown;
  readonly ok: boolean;
  readonly why: string;
}

/** An action decided, and the write that carries it out (none when nothing changes). */
interface Planned {
  readonly action: Action;
  readonly write?: () => void;
}

/** The action of `pruneguard init` (registered in `init.ts`). */
export async function runInit(flags: InitFlags, cli: CliContext): Promise<void> {
  const { io } = cli;
  if (!PolicyName.safeParse(flags.name).success) throw new CliError(`--name ${flags.name}: a policy name is lower-case words separated by '-', like "org" or "acme-agents"`);
  const root = new ProjectRoot(io.cwd);
  const policies = posix(path.normalize(flags.policies));
  const out = posix(path.normalize(flags.out));
  const policyRel = `${policies}/${flags.name}.policy.ts`;
  const testRel = `test/${flags.name}.policy.test.ts`;
  const outputs = [`${flags.name}.guard.ts`, `${flags.name}.ir.json`, `${flags.name}.types.ts`].map((f) => `${out}/${f}`);

  // Every path init may write is checked before anything is read or written, so a refusal leaves the project
  // and whatever a link points at exactly as they were, and names every path at once. (The starting policy's
  // outputs are checked below, still before any write, once init knows it writes them.)
  const checks = new Map(["package.json", policyRel, testRel, ".gitignore"].map((rel) => [rel, root.check(rel)]));
  const refusals = [...checks.values()].flatMap((c) => (c.ok ? [] : [c.refusal]));
  if (refusals.length > 0) throw refusalError(refusals);
  const state = (rel: string): PathState => {
    let c = checks.get(rel);
    if (c === undefined) checks.set(rel, (c = root.check(rel)));
    if (!c.ok) throw refusalError([c.refusal]);
    return c.state;
  };

  const pkgState = state("package.json");
  let pkgText: string | undefined;
  let pkg: Record<string, unknown> | undefined;
  if (pkgState.kind === "file") {
    pkgText = root.read("package.json", pkgState.stats);
    let parsed: unknown;
    try {
      parsed = JSON.parse(pkgText);
    } catch {
      throw new CliError("package.json is not valid JSON; init left it alone");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new CliError("package.json is not a JSON object; init left it alone");
    pkg = parsed as Record<string, unknown>;
  }
  const field = { policies: [policies], out };
  const existingField = pkg?.["pruneguard"];
  const fieldConflict = existingField !== undefined && JSON.stringify(existingField) !== JSON.stringify(field);
  const runner: TestRunner = hasDependency(pkg, "vitest") ? "vitest" : "node:test";
  const warnings: string[] = [];

  // The starting policy goes only into a project with no policy at all: one whose policies were renamed or
  // removed on purpose does not get it back (nor, then, its outputs or its test).
  const policyState = state(policyRel);
  const policyText = starterPolicy(flags.name);
  const others = policyState.kind === "absent" ? await existingPolicies(io.cwd, [policies, ...configuredPolicies(existingField)]) : [];
  const plan: Planned[] = [];
  let starter: "written" | "as written" | "other";
  if (policyState.kind === "file") {
    const same = root.read(policyRel, policyState.stats) === policyText;
    starter = same ? "as written" : "other";
    plan.push({ action: { file: policyRel, status: "kept", detail: same ? "the starting policy, as init writes it" : "" } });
  } else if (others.length > 0) {
    starter = "other";
    const shown = others.slice(0, 3).join(", ") + (others.length > 3 ? ", …" : "");
    plan.push({ action: { file: policyRel, status: "skipped", detail: `the project has policies (${shown}); the starting policy goes only where there is none` } });
  } else {
    starter = "written";
    plan.push({ action: { file: policyRel, status: "written", detail: "a starting organisation policy" }, write: () => root.create(policyRel, policyText) });
  }

  // What `check` compares the starting policy with, so the project checks clean as init leaves it. Only new
  // files, in an output folder that has none of them; anything else is `compile`'s to decide.
  if (starter === "written") {
    const refused = outputs.flatMap((o) => {
      const c = root.check(o);
      return c.ok ? [] : [c.refusal];
    });
    if (refused.length > 0) throw refusalError(refused);
    plan.push(await planOutputs(root, out, outputs, policyRel, policyText, fieldConflict ? undefined : runtimeImportOf(existingField), state));
  } else {
    const outThere = existsSync(path.resolve(io.cwd, out));
    plan.push({ action: outThere ? { file: `${out}/`, status: "kept", detail: "pruneguard compile keeps it up to date" } : { file: `${out}/`, status: "skipped", detail: "pruneguard compile writes it" } });
  }

  const testState = state(testRel);
  const testText = policyTest(flags.name, policyRel, testRel, runner);
  let testThere = true;
  if (testState.kind === "file") {
    plan.push({ action: { file: testRel, status: "kept", detail: "" } });
  } else if (starter === "other") {
    testThere = false;
    const why = policyState.kind === "file" ? `${policyRel} is not that policy any more` : "which this project does not have";
    plan.push({ action: { file: testRel, status: "skipped", detail: `it tests the starting policy, ${why}` } });
  } else {
    plan.push({ action: { file: testRel, status: "written", detail: `a test of the starting policy, in ${runner}` }, write: () => root.create(testRel, testText) });
  }
  const testScript = runner === "node:test" && testThere ? nodeTestScript(testRel) : undefined;
  const notes: string[] = [];

  const pkgPlan = planPackage(root, io.cwd, pkgState, pkgText, pkg, field, testScript, warnings);
  plan.push(pkgPlan.planned);
  const tsconfig = planTsconfig(root, [policies, out, ...(testThere ? [testRel] : [])]);
  plan.push(tsconfig.planned);
  plan.push(planIgnore(root, state(".gitignore"), out));
  for (const p of plan) p.write?.();
  const actions = plan.map((p) => p.action);

  const missing = DEPENDENCIES.filter((d) => !hasDependency(pkg, d.name));
  const install = [
    ...(missing.some((d) => !d.dev) ? [`npm install ${missing.filter((d) => !d.dev).map((d) => d.name).join(" ")}`] : []),
    ...(missing.some((d) => d.dev) ? [`npm install --save-dev ${missing.filter((d) => d.dev).map((d) => d.name).join(" ")}`] : []),
  ];
  const outputsThere = outputs.every((o) => {
    const c = root.check(o);
    return c.ok && c.state.kind === "file";
  });
  const compiled = starter === "written" ? actions.some((a) => a.file === `${out}/` && a.status === "written") : starter === "as written" && outputsThere;
  let testCommand: string | undefined;
  if (testThere && runner === "vitest") testCommand = `npx vitest run ${testRel}`;
  else if (testThere && pkgPlan.npmTestRuns) testCommand = "npm test";
  else if (testScript !== undefined) {
    testCommand = testScript;
    notes.push(`npm test does not run ${testRel}: package.json has a test script of its own; add \`${testScript}\` to it.`);
  }
  const next = [...(compiled ? [] : ["npx pruneguard compile"]), "npx tsc --noEmit -p .", "npx pruneguard check", ...(testCommand === undefined ? [] : [testCommand])];
  const typeSet = pkgPlan.planned.action.status === "added" && (pkg?.["type"] === undefined || freshFromNpmInit(pkg, io.cwd));
  const packageType = pkg === undefined || typeSet ? "module" : String(pkg["type"]);

  if (flags.format === "json") {
    const notRead = tsconfig.notRead === undefined ? {} : { tsconfigNotRead: tsconfig.notRead };
    io.stdout(`${JSON.stringify({ actions, warnings, notes, tsconfig: tsconfig.advice, ...notRead, packageType, install, ci: CI_STEPS, next }, null, 2)}\n`);
  } else {
    const width = textWidth(io);
    /** `text` broken at spaces into lines of at most `width` columns, each after the first starting with `indent`. */
    const wrap = (text: string, indent: string): string[] => wrapHanging(text, width, { indent }).split("\n");
    const lines: string[] = [];
    for (const a of actions) {
      const head = `${a.status.padEnd(8)}${a.file}${a.status === "kept" ? " (exists)" : ""}`;
      lines.push(...wrap(a.detail === "" ? head : `${head}: ${a.detail}`, " ".repeat(8)));
    }
    if (tsconfig.notRead !== undefined) lines.push(...wrap(`        tsconfig.json was not read: ${tsconfig.notRead}`, " ".repeat(10)));
    const lacking = tsconfig.advice.filter((t) => !t.ok);
    if (lacking.length > 0) {
      lines.push("", ...wrap("tsconfig.json lacks settings the guards, the policies and their test need (compilerOptions):", "  "));
      for (const t of lacking) {
        const now = t.has === null ? "" : ` (is ${JSON.stringify(t.has)})`;
        lines.push(...wrap(`  "${t.option}": ${JSON.stringify(t.want)}${now}: ${t.why}`, "    "));
      }
      lines.push(...wrap(`  and its "include" should name ${[policies, out, ...(testThere ? [testRel] : [])].join(", ")}`, "    "));
    }
    for (const n of notes) lines.push("", ...wrap(`note: ${n}`, "  "));
    for (const w of warnings) lines.push("", ...wrap(`warning: ${w}`, "  "));
    if (install.length > 0) lines.push("", ...wrap("Install what these files import (package.json does not list it yet), first:", "  "), ...install.map((c) => `  ${c}`));
    lines.push("", ...wrap("CI (printed, not written): the steps of a GitHub Actions job; docs/adopting.md has the whole workflow.", "  "));
    // Lines to paste into a workflow file, as they are (the longest is 105 columns).
    lines.push(...CI_STEPS.map((s) => `  ${s}`));
    lines.push("", ...wrap(`Next: ${next.join(" && ")}`, "  "));
    // `npm ci`, the CI job's first step, needs the lock file `npm install` writes.
    lines.push(...wrap(`Then commit ${policies}/, ${out}/, ${testThere ? "test/, " : ""}package.json, package-lock.json, tsconfig.json and .gitignore.`, "  "));
    // Warnings and notes quote package.json and tsconfig.json, which a pull request can plant: no control or bidirectional character reaches the terminal.
    io.stdout(`${printable(lines.join("\n"))}\n`);
  }
  cli.exit(warnings.length > 0 ? ExitCode.diagnostics : ExitCode.ok);
}

const posix = (p: string) => p.split(path.sep).join("/").replace(/\/$/, "");

function hasDependency(pkg: Record<string, unknown> | undefined, name: string): boolean {
  return ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"].some((k) => {
    const deps = pkg?.[k];
    return typeof deps === "object" && deps !== null && Object.hasOwn(deps, name);
  });
}

/** The policy entries a `"pruneguard"` field already names (none when it has no valid ones). */
function configuredPolicies(field: unknown): string[] {
  if (field === undefined) return [];
  const r = parseProjectConfig(field);
  return "config" in r ? [...(r.config.policies ?? [])] : [];
}

function runtimeImportOf(field: unknown): string {
  if (field === undefined) return DEFAULT_EMIT_OPTIONS.runtimeImport;
  const r = parseProjectConfig(field);
  return ("config" in r ? r.config.runtimeImport : undefined) ?? DEFAULT_EMIT_OPTIONS.runtimeImport;
}

/** The policy files under `entries` (folders, files or globs, as compile reads them), relative to `cwd`. */
async function existingPolicies(cwd: string, entries: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const e of new Set(entries)) {
    // An entry that matches nothing (or does not exist) holds no policy: resolveInputs says so by throwing.
    // Patterns from package.json: confined to the project, never walked through a link out of it.
    const files = await resolveInputs([e], cwd, [], { untrusted: true }).catch(() => []);
    for (const f of files) found.add(posix(path.relative(cwd, f)));
  }
  return [...found].sort();
}

/** The starting policy's outputs, compiled in memory now and written as new files, or why not. */
async function planOutputs(
  root: ProjectRoot,
  out: string,
  outputs: readonly string[],
  policyRel: string,
  policyText: string,
  runtimeImport: string | undefined,
  state: (rel: string) => PathState,
): Promise<Planned> {
  const file = `${out}/`;
  if (runtimeImport === undefined) return { action: { file, status: "skipped", detail: 'package.json\'s "pruneguard" field differs from what init sets; run pruneguard compile' } };
  if (outputs.some((o) => state(o).kind !== "absent")) return { action: { file, status: "skipped", detail: "it has outputs of this policy already; run pruneguard compile" } };
  const { compilePolicies, emitAll } = await import("../../index.js");
  const r = compilePolicies({ files: { [policyRel]: policyText }, entries: [policyRel] });
  const emitted = r.hasErrors ? [] : emitAll(r.policies, { runtimeImport });
  if (emitted.length === 0 || emitted.some((f) => !outputs.includes(`${out}/${f.path}`))) {
    // The starting policy compiles clean (test/compiler/init.test.ts); this is the compiler changing under it.
    return { action: { file, status: "skipped", detail: "the starting policy did not compile as expected; run pruneguard compile" } };
  }
  return {
    action: { file, status: "written", detail: `the starting policy compiled: ${emitted.map((f) => f.path).join(", ")}` },
    write: () => {
      for (const f of emitted) root.create(`${out}/${f.path}`, f.contents);
    },
  };
}

/**
 * package.json: created (minimal) where there is none; else `"type": "module"` added when no type is set, the
 * `"pruneguard"` field when there is none, and the test script when there is none. A type or field that is
 * there is left as it is; one that is not what init sets is a warning.
 */
function planPackage(
  root: ProjectRoot,
  cwd: string,
  state: PathState,
  text: string | undefined,
  pkg: Record<string, unknown> | undefined,
  field: Record<string, unknown>,
  testScript: string | undefined,
  warnings: string[],
): { planned: Planned; npmTestRuns: boolean } {
  const fieldText = JSON.stringify(field);
  if (pkg === undefined || text === undefined || state.kind === "absent") {
    const created = {
      name: packageName(cwd),
      private: true,
      type: "module",
      ...(testScript === undefined ? {} : { scripts: { test: testScript } }),
      pruneguard: field,
    };
    const detail = `a minimal one: "type": "module"${testScript === undefined ? "" : ", a test script"} and "pruneguard": ${fieldText}`;
    return {
      planned: { action: { file: "package.json", status: "written", detail }, write: () => root.create("package.json", `${JSON.stringify(created, null, 2)}\n`) },
      npmTestRuns: testScript !== undefined,
    };
  }

  const added: string[] = [];
  const kept: string[] = [];
  let next: Record<string, unknown> = { ...pkg };
  const type = pkg["type"];
  if (type === undefined) {
    next = insertAfter(next, ["description", "version", "name"], "type", "module");
    added.push('"type": "module"');
  } else if (type === "module") kept.push('"type": "module"');
  else if (freshFromNpmInit(pkg, cwd)) {
    // npm 11's `npm init -y` writes "commonjs" into a project with no code yet: nothing relies on it.
    next = { ...next, type: "module" };
    added.push(`"type": "module" (for npm init's "commonjs": the project has no code yet)`);
  }
  else {
    warnings.push(
      `package.json has "type": ${JSON.stringify(type)}, which init left as it is. The policy test and the guards are ES modules, and ` +
        `with it Node loads this package's .ts files as CommonJS: node --test stops at the test's first import. Change it to ` +
        '"type": "module" (what init sets where no type is set), or rename the test to .mts.',
    );
  }
  let npmTestRuns = false;
  if (testScript !== undefined) {
    const scripts = pkg["scripts"];
    const current = typeof scripts === "object" && scripts !== null && !Array.isArray(scripts) ? (scripts as Record<string, unknown>)["test"] : undefined;
    if (scripts !== undefined && (typeof scripts !== "object" || scripts === null || Array.isArray(scripts))) {
      // Not an object npm could read: left alone, the test is run by hand.
    } else if (current === undefined || current === NPM_PLACEHOLDER_TEST) {
      next = { ...next, scripts: { ...(scripts as Record<string, unknown> | undefined), test: testScript } };
      added.push(current === undefined ? "a test script" : "a test script (for npm's placeholder)");
      npmTestRuns = true;
    } else if (typeof current === "string" && current.includes(testScript.split(" ").pop()!)) {
      kept.push("the test script");
      npmTestRuns = true;
    }
  }
  const existing = pkg["pruneguard"];
  if (existing === undefined) {
    next = { ...next, pruneguard: field };
    added.push(`"pruneguard": ${fieldText}`);
  } else if (JSON.stringify(existing) === fieldText) kept.push('the "pruneguard" field');
  else {
    warnings.push(
      `package.json has a "pruneguard" field already (${JSON.stringify(existing)}), which init left as it is; init would set ${fieldText}. ` +
        "compile, check and explain read the field: make it name the policies and output folder you use.",
    );
  }
  if (added.length === 0) return { planned: { action: { file: "package.json", status: "kept", detail: kept.length > 0 ? `it has ${kept.join(", ")}` : "" } }, npmTestRuns };
  // The file is written back from what JSON.parse read: where that would change a value (a number past what a
  // double holds, a key given twice), init adds nothing and says what to add by hand.
  const loses = rewriteLoses(text, pkg);
  if (loses !== null) {
    warnings.push(`package.json ${loses}, which writing it back would change; init left it alone. Add by hand: ${added.join(", ")}.`);
    return { planned: { action: { file: "package.json", status: "skipped", detail: "writing it back would change its values (see the warning)" } }, npmTestRuns: false };
  }
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? "  ";
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const json = JSON.stringify(next, null, indent).replace(/\n/g, eol);
  const stats: Stats = state.stats;
  return {
    planned: { action: { file: "package.json", status: "added", detail: added.join(", ") }, write: () => root.replace("package.json", `${json}${text.endsWith("\n") ? eol : ""}`, stats) },
    npmTestRuns,
  };
}

/**
 * Why `JSON.stringify(JSON.parse(text))` would not say what `text` says, or `null`: a number whose digits the
 * parsed double does not give back (`12345678901234567890`, `1e400`; `1.0` or `1E3` only change spelling and
 * are allowed), or an object that names a key twice (JSON.parse keeps the last). `text` is the bounded file
 * init read; one pass over it.
 */
export function rewriteLoses(text: string, parsed: unknown): string | null {
  let lossy: string | null = null;
  JSON.parse(text, function (this: unknown, _key: string, value: unknown, context?: { source?: string }) {
    const source = context?.source;
    if (lossy === null && typeof value === "number" && typeof source === "string" && (!Number.isFinite(value) || decimal(source) !== decimal(JSON.stringify(value)))) lossy = source;
    return value;
  } as (key: string, value: unknown) => unknown);
  if (lossy !== null) return `has the number ${JSON.stringify(lossy).slice(0, 40)}, which a JavaScript number does not hold`;
  let keys = 0;
  const count = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(count);
    else if (typeof v === "object" && v !== null) for (const x of Object.values(v)) (keys++, count(x));
  };
  count(parsed);
  return keysIn(text) > keys ? "names a key twice in one object" : null;
}

/** A JSON number's exact decimal value, spelled one way (`1.0`, `1E0` and `10e-1` all `1e0`). */
function decimal(n: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(n);
  if (m === null) return n;
  const frac = m[3] ?? "";
  let digits = `${m[2]}${frac}`.replace(/^0+/, "");
  let exp = Number(m[4] ?? 0) - frac.length;
  if (digits === "") return "0";
  const trailing = /0*$/.exec(digits)![0].length;
  digits = digits.slice(0, digits.length - trailing);
  exp += trailing;
  return `${m[1]}${digits}e${exp}`;
}

/** How many object keys `text` (valid JSON) spells: strings followed by a `:`. */
function keysIn(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '"') continue;
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
    let k = j + 1;
    while (k < text.length && (text[k] === " " || text[k] === "\t" || text[k] === "\n" || text[k] === "\r")) k++;
    if (text[k] === ":") n++;
    i = j;
  }
  return n;
}

/** `obj` with `key: value` after the first of `after` it has (else first), keeping the order of the rest. */
function insertAfter(obj: Record<string, unknown>, after: readonly string[], key: string, value: unknown): Record<string, unknown> {
  const anchor = after.find((k) => Object.hasOwn(obj, k));
  const entries = Object.entries(obj);
  const at = anchor === undefined ? 0 : entries.findIndex(([k]) => k === anchor) + 1;
  entries.splice(at, 0, [key, value]);
  return Object.fromEntries(entries);
}

/** A package name for a new package.json: the folder's name as npm accepts one, else `agents`. */
function packageName(cwd: string): string {
  const name = path
    .basename(path.resolve(cwd))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|-+$/g, "")
    .slice(0, 214);
  return name === "" || name === "node_modules" || name === "favicon.ico" ? "agents" : name;
}

/** The members `npm init -y` writes (npm 11), and nothing else. */
const NPM_INIT_KEYS = new Set(["name", "version", "description", "main", "scripts", "keywords", "author", "license", "type"]);

/**
 * Whether package.json is what `npm init -y` wrote, untouched, in a project with no code yet: its members are
 * npm's, its test script npm's placeholder and nothing else, no dependency, and its `main` names no file.
 * Its `"type": "commonjs"` is then npm's default, not a choice anything relies on.
 */
function freshFromNpmInit(pkg: Record<string, unknown>, cwd: string): boolean {
  if (pkg["type"] !== "commonjs" || !Object.keys(pkg).every((k) => NPM_INIT_KEYS.has(k))) return false;
  const scripts = pkg["scripts"];
  if (typeof scripts !== "object" || scripts === null || Array.isArray(scripts)) return false;
  const entries = Object.entries(scripts);
  if (entries.length !== 1 || entries[0]![0] !== "test" || entries[0]![1] !== NPM_PLACEHOLDER_TEST) return false;
  const main = pkg["main"] ?? "index.js";
  // Only a plain name in the project is looked up; anything else is not what npm writes.
  if (typeof main !== "string" || !/^[\w.-]+$/.test(main)) return false;
  return !existsSync(path.join(cwd, main));
}

/** The manifest's ignore rule in .gitignore: a line of its own, appended when no rule names it. */
function planIgnore(root: ProjectRoot, state: PathState, out: string): Planned {
  const text = state.kind === "file" ? root.read(".gitignore", state.stats) : undefined;
  const rules = new Set([MANIFEST_IGNORE, `/${MANIFEST_IGNORE}`, `**/${MANIFEST_IGNORE}`, `${out}/${MANIFEST_IGNORE}`, `/${out}/${MANIFEST_IGNORE}`]);
  if (text !== undefined && text.split(/\r?\n/).some((l) => rules.has(l.trim()))) return { action: { file: ".gitignore", status: "kept", detail: `it ignores ${MANIFEST_IGNORE}` } };
  const rule = `# pruneguard compile's incremental cache (local to this machine)\n${MANIFEST_IGNORE}\n`;
  if (state.kind === "absent" || text === undefined) {
    // A project without a .gitignore gets the one every npm project needs, too.
    return {
      action: { file: ".gitignore", status: "written", detail: `ignores node_modules/ and ${MANIFEST_IGNORE}, compile's local cache` },
      write: () => root.create(".gitignore", `node_modules/\n${rule}`),
    };
  }
  const stats = state.stats;
  return {
    action: { file: ".gitignore", status: "added", detail: `a rule for ${MANIFEST_IGNORE}, compile's local cache` },
    write: () => root.replace(".gitignore", `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${rule}`, stats),
  };
}

/**
 * tsconfig.json: written where there is none; else kept, and checked (as written, JSON with comments, not
 * following `extends`) for the settings init writes. One init would not write through (a link, not a regular
 * file) is neither written nor read, as the compiler does not read one linked out of the root: the advice is
 * then given as for none, with the reason.
 */
function planTsconfig(root: ProjectRoot, include: readonly string[]): { planned: Planned; advice: TsconfigAdvice[]; notRead?: string } {
  const checked = root.check("tsconfig.json");
  const advise = (options: Record<string, unknown>) =>
    TSCONFIG_SETTINGS.map((s) => {
      const has = options[s.option] ?? null;
      return { option: s.option, want: s.value, has, ok: settingHolds(s.value, has), why: s.why };
    });
  if (!checked.ok) {
    return { planned: { action: { file: "tsconfig.json", status: "kept", detail: "" } }, advice: advise({}), notRead: `it ${checked.refusal.why}` };
  }
  if (checked.state.kind === "absent") {
    const text = tsconfigFile(include);
    const detail = `NodeNext, strict, "types": ["node"], no emit; it checks ${include.join(", ")}`;
    return {
      planned: { action: { file: "tsconfig.json", status: "written", detail }, write: () => root.create("tsconfig.json", text) },
      advice: TSCONFIG_SETTINGS.map((s) => ({ option: s.option, want: s.value, has: s.value, ok: true, why: s.why })),
    };
  }
  const text = root.read("tsconfig.json", checked.state.stats);
  // tsc's JSON reader recurses once per bracket: a file nested thousands deep would exhaust the stack.
  const deep = nestingOverflow(text);
  if (deep >= 0) {
    const { line, column } = lineColumn(text, deep);
    const notRead = `it nests more than ${MAX_NESTING} levels deep (line ${line}, column ${column}), deeper than init reads`;
    return { planned: { action: { file: "tsconfig.json", status: "kept", detail: "it is not JSON init can read" } }, advice: advise({}), notRead };
  }
  const parsed = ts.parseConfigFileTextToJson("tsconfig.json", text);
  const config = parsed.config as { compilerOptions?: Record<string, unknown> } | undefined;
  const advice = advise(config?.compilerOptions ?? {});
  const lacking = advice.filter((a) => !a.ok).length;
  const detail = parsed.error !== undefined || config === undefined ? "it is not JSON init can read" : lacking === 0 ? "it has the settings init writes" : `it lacks ${lacking} of the settings init writes (below)`;
  return { planned: { action: { file: "tsconfig.json", status: "kept", detail } }, advice };
}
