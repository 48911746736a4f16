/** The implementation of `pruneguard init`, loaded only when the command runs (see `init.ts`). */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { ts } from "../../frontend/host.js";
import { PolicyName } from "../../ir/schema.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { CI_STEPS, MANIFEST_IGNORE, starterPolicy, TSCONFIG_SETTINGS } from "../init-template.js";
import type { InitFlags } from "./init.js";

/** What init did with one file: wrote it, added to it, found it as it would write it, or left it alone. */
interface Action {
  readonly file: string;
  readonly status: "written" | "added" | "already there" | "left alone";
  readonly detail: string;
}

/** A tsconfig option init would set, and what the project's tsconfig.json says now. */
interface TsconfigAdvice {
  readonly option: string;
  readonly want: string | boolean;
  /** As written in tsconfig.json (not following `extends`); `null` when it is not set there or there is no tsconfig.json. */
  readonly has: unknown;
  readonly ok: boolean;
  readonly why: string;
}

/** The action of `pruneguard init` (registered in `init.ts`). */
export async function runInit(flags: InitFlags, cli: CliContext): Promise<void> {
  const { io } = cli;
  if (!PolicyName.safeParse(flags.name).success) throw new CliError(`--name ${flags.name}: a policy name is lower-case words separated by '-', like "org" or "acme-agents"`);
  const pkgFile = path.join(io.cwd, "package.json");
  const pkgText = await readText(pkgFile);
  if (pkgText === undefined) throw new CliError(`no package.json in ${io.cwd}: run pruneguard init in the root of your package (npm init -y makes one)`);
  let pkg: unknown;
  try {
    pkg = JSON.parse(pkgText);
  } catch {
    throw new CliError("package.json is not valid JSON; init left it alone");
  }
  if (typeof pkg !== "object" || pkg === null || Array.isArray(pkg)) throw new CliError("package.json is not a JSON object; init left it alone");

  const policies = posix(path.normalize(flags.policies));
  const out = posix(path.normalize(flags.out));
  const actions: Action[] = [];
  actions.push(await writeNew(io.cwd, `${policies}/${flags.name}.policy.ts`, starterPolicy(flags.name), "a starting organisation policy"));
  actions.push(await addField(pkgFile, pkgText, pkg as Record<string, unknown>, { policies: [policies], out }));
  actions.push(await addIgnore(io.cwd, out));
  const tsconfig = await tsconfigAdvice(io.cwd);
  const moduleType = (pkg as Record<string, unknown>)["type"] === "module";

  if (flags.format === "json") {
    io.stdout(`${JSON.stringify({ actions, tsconfig, packageType: moduleType ? "module" : "commonjs", ci: CI_STEPS, next: ["pruneguard compile", "pruneguard check"] }, null, 2)}\n`);
  } else {
    const lines = actions.map((a) => `${a.status.padEnd(14)} ${a.file}: ${a.detail}`);
    lines.push("", "tsconfig.json (compilerOptions) for the generated guards and the provider SDKs:");
    for (const t of tsconfig) lines.push(`  ${t.ok ? "ok  " : "set "} "${t.option}": ${JSON.stringify(t.want)}${t.ok ? "" : t.has === null ? "" : ` (is ${JSON.stringify(t.has)})`}  — ${t.why}`);
    lines.push(`  and include "${policies}" and "${out}" in the files it checks`);
    if (!moduleType) lines.push(`  package.json has no "type": "module": the guards are ES modules, so use .mts files or set it (Node ≥ 22.13)`);
    lines.push("", "CI (a GitHub Actions job's steps; docs/adopting.md in pruneguard-cli has the whole workflow):", ...CI_STEPS.map((s) => `  ${s}`));
    lines.push("", `Next: pruneguard compile && pruneguard check, then commit ${policies}/, ${out}/, package.json and .gitignore.`);
    io.stdout(`${lines.join("\n")}\n`);
  }
  cli.exit(actions.some((a) => a.status === "left alone") ? ExitCode.diagnostics : ExitCode.ok);
}

const posix = (p: string) => p.split(path.sep).join("/").replace(/\/$/, "");

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

async function write(file: string, text: string, flag: "wx" | "w"): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text, { flag });
  } catch (err) {
    throw new CliError(`cannot write ${file}: ${(err as Error).message}`);
  }
}

/** A file init owns: written when absent, else left as it is. */
async function writeNew(cwd: string, rel: string, text: string, what: string): Promise<Action> {
  const file = path.join(cwd, rel);
  const now = await readText(file);
  if (now === text) return { file: rel, status: "already there", detail: `${what}, as init writes it` };
  if (now !== undefined) return { file: rel, status: "left alone", detail: `it exists; init writes ${what} only where there is none` };
  await write(file, text, "wx");
  return { file: rel, status: "written", detail: what };
}

/** The `"pruneguard"` field, added to package.json in its own indentation; an existing field is left as it is. */
async function addField(file: string, text: string, pkg: Record<string, unknown>, field: Record<string, unknown>): Promise<Action> {
  const existing = pkg["pruneguard"];
  if (existing !== undefined) {
    const same = JSON.stringify(existing) === JSON.stringify(field);
    return same
      ? { file: "package.json", status: "already there", detail: `"pruneguard": ${JSON.stringify(field)}` }
      : { file: "package.json", status: "left alone", detail: `it has a "pruneguard" field already (${JSON.stringify(existing)}); init would write ${JSON.stringify(field)}` };
  }
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? "  ";
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const json = JSON.stringify({ ...pkg, pruneguard: field }, null, indent).replace(/\n/g, eol);
  await write(file, `${json}${text.endsWith("\n") ? eol : ""}`, "w");
  return { file: "package.json", status: "added", detail: `"pruneguard": ${JSON.stringify(field)} (where compile, check and explain look)` };
}

/** The manifest's ignore rule in .gitignore: a line of its own, appended when no rule names it. */
async function addIgnore(cwd: string, out: string): Promise<Action> {
  const file = path.join(cwd, ".gitignore");
  const text = await readText(file);
  const rules = new Set([MANIFEST_IGNORE, `/${MANIFEST_IGNORE}`, `**/${MANIFEST_IGNORE}`, `${out}/${MANIFEST_IGNORE}`, `/${out}/${MANIFEST_IGNORE}`]);
  if (text !== undefined && text.split(/\r?\n/).some((l) => rules.has(l.trim()))) return { file: ".gitignore", status: "already there", detail: `it ignores ${MANIFEST_IGNORE}` };
  const rule = `# pruneguard compile's incremental cache (local to this machine)\n${MANIFEST_IGNORE}\n`;
  if (text === undefined) {
    await write(file, rule, "wx");
    return { file: ".gitignore", status: "written", detail: `ignores ${MANIFEST_IGNORE}, compile's local cache` };
  }
  await write(file, `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${rule}`, "w");
  return { file: ".gitignore", status: "added", detail: `a rule for ${MANIFEST_IGNORE}, compile's local cache` };
}

/** The settings init recommends, against what tsconfig.json (JSON with comments) says. */
async function tsconfigAdvice(cwd: string): Promise<TsconfigAdvice[]> {
  const text = await readText(path.join(cwd, "tsconfig.json"));
  let options: Record<string, unknown> = {};
  if (text !== undefined) {
    const parsed = ts.parseConfigFileTextToJson("tsconfig.json", text);
    const config = parsed.config as { compilerOptions?: Record<string, unknown> } | undefined;
    options = config?.compilerOptions ?? {};
  }
  return TSCONFIG_SETTINGS.map((s) => {
    const has = options[s.option] ?? null;
    const ok = typeof s.value === "string" ? typeof has === "string" && has.toLowerCase() === s.value.toLowerCase() : has === s.value;
    return { option: s.option, want: s.value, has, ok, why: s.why };
  });
}
