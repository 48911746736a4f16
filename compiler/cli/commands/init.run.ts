/** The implementation of `pruneguard init`, loaded only when the command runs (see `init.ts`). */
import type { Stats } from "node:fs";
import * as path from "node:path";
import { ts } from "../../frontend/host.js";
import { PolicyName } from "../../ir/schema.js";
import { CliError, ExitCode, type CliContext } from "../context.js";
import { CI_STEPS, MANIFEST_IGNORE, starterPolicy, TSCONFIG_SETTINGS } from "../init-template.js";
import { ProjectRoot, refusalError, type PathState } from "./init.confine.js";
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

  // Every path is checked before anything is read or written, so a refusal leaves the project and whatever a
  // link points at exactly as they were, and names every path at once.
  const pkgCheck = root.check("package.json");
  const policyCheck = root.check(policyRel);
  const ignoreCheck = root.check(".gitignore");
  const refusals = [pkgCheck, policyCheck, ignoreCheck].flatMap((c) => (c.ok ? [] : [c.refusal]));
  if (refusals.length > 0 || !pkgCheck.ok || !policyCheck.ok || !ignoreCheck.ok) throw refusalError(refusals);
  if (pkgCheck.state.kind === "absent") throw new CliError(`no package.json in ${io.cwd}: run pruneguard init in the root of your package (npm init -y makes one)`);
  const pkgText = root.read("package.json", pkgCheck.state.stats);
  let pkg: unknown;
  try {
    pkg = JSON.parse(pkgText);
  } catch {
    throw new CliError("package.json is not valid JSON; init left it alone");
  }
  if (typeof pkg !== "object" || pkg === null || Array.isArray(pkg)) throw new CliError("package.json is not a JSON object; init left it alone");

  const plan = [
    planNew(root, policyRel, policyCheck.state, starterPolicy(flags.name), "a starting organisation policy"),
    planField(root, pkgCheck.state.stats, pkgText, pkg as Record<string, unknown>, { policies: [policies], out }),
    planIgnore(root, ignoreCheck.state, out),
  ];
  const { advice: tsconfig, notRead } = tsconfigAdvice(root);
  for (const p of plan) p.write?.();
  const actions = plan.map((p) => p.action);
  const moduleType = (pkg as Record<string, unknown>)["type"] === "module";

  if (flags.format === "json") {
    const tsconfigNotRead = notRead === undefined ? {} : { tsconfigNotRead: notRead };
    io.stdout(`${JSON.stringify({ actions, tsconfig, ...tsconfigNotRead, packageType: moduleType ? "module" : "commonjs", ci: CI_STEPS, next: ["pruneguard compile", "pruneguard check"] }, null, 2)}\n`);
  } else {
    const lines = actions.map((a) => `${a.status.padEnd(14)} ${a.file}: ${a.detail}`);
    lines.push("", "tsconfig.json (compilerOptions) for the generated guards and the provider SDKs:");
    if (notRead !== undefined) lines.push(`  (tsconfig.json was not read: ${notRead})`);
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

/** A file init owns: written when absent, else left as it is. */
function planNew(root: ProjectRoot, rel: string, state: PathState, text: string, what: string): Planned {
  const now = state.kind === "file" ? root.read(rel, state.stats) : undefined;
  if (now === text) return { action: { file: rel, status: "already there", detail: `${what}, as init writes it` } };
  if (now !== undefined) return { action: { file: rel, status: "left alone", detail: `it exists; init writes ${what} only where there is none` } };
  return { action: { file: rel, status: "written", detail: what }, write: () => root.create(rel, text) };
}

/** The `"pruneguard"` field, added to package.json in its own indentation; an existing field is left as it is. */
function planField(root: ProjectRoot, stats: Stats, text: string, pkg: Record<string, unknown>, field: Record<string, unknown>): Planned {
  const existing = pkg["pruneguard"];
  if (existing !== undefined) {
    const same = JSON.stringify(existing) === JSON.stringify(field);
    return {
      action: same
        ? { file: "package.json", status: "already there", detail: `"pruneguard": ${JSON.stringify(field)}` }
        : { file: "package.json", status: "left alone", detail: `it has a "pruneguard" field already (${JSON.stringify(existing)}); init would write ${JSON.stringify(field)}` },
    };
  }
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? "  ";
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const json = JSON.stringify({ ...pkg, pruneguard: field }, null, indent).replace(/\n/g, eol);
  return {
    action: { file: "package.json", status: "added", detail: `"pruneguard": ${JSON.stringify(field)} (where compile, check and explain look)` },
    write: () => root.replace("package.json", `${json}${text.endsWith("\n") ? eol : ""}`, stats),
  };
}

/** The manifest's ignore rule in .gitignore: a line of its own, appended when no rule names it. */
function planIgnore(root: ProjectRoot, state: PathState, out: string): Planned {
  const text = state.kind === "file" ? root.read(".gitignore", state.stats) : undefined;
  const rules = new Set([MANIFEST_IGNORE, `/${MANIFEST_IGNORE}`, `**/${MANIFEST_IGNORE}`, `${out}/${MANIFEST_IGNORE}`, `/${out}/${MANIFEST_IGNORE}`]);
  if (text !== undefined && text.split(/\r?\n/).some((l) => rules.has(l.trim()))) return { action: { file: ".gitignore", status: "already there", detail: `it ignores ${MANIFEST_IGNORE}` } };
  const rule = `# pruneguard compile's incremental cache (local to this machine)\n${MANIFEST_IGNORE}\n`;
  if (state.kind === "absent" || text === undefined) {
    return { action: { file: ".gitignore", status: "written", detail: `ignores ${MANIFEST_IGNORE}, compile's local cache` }, write: () => root.create(".gitignore", rule) };
  }
  const stats = state.stats;
  return {
    action: { file: ".gitignore", status: "added", detail: `a rule for ${MANIFEST_IGNORE}, compile's local cache` },
    write: () => root.replace(".gitignore", `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${rule}`, stats),
  };
}

/**
 * The settings init recommends, against what tsconfig.json (JSON with comments) says. A tsconfig.json init
 * would not write through (a link, not a regular file) is not read either, as the compiler does not read one
 * linked out of the root: the advice is then given as for none, with the reason.
 */
function tsconfigAdvice(root: ProjectRoot): { advice: TsconfigAdvice[]; notRead?: string } {
  const checked = root.check("tsconfig.json");
  const text = checked.ok && checked.state.kind === "file" ? root.read("tsconfig.json", checked.state.stats) : undefined;
  let options: Record<string, unknown> = {};
  if (text !== undefined) {
    const parsed = ts.parseConfigFileTextToJson("tsconfig.json", text);
    const config = parsed.config as { compilerOptions?: Record<string, unknown> } | undefined;
    options = config?.compilerOptions ?? {};
  }
  const advice = TSCONFIG_SETTINGS.map((s) => {
    const has = options[s.option] ?? null;
    const ok = typeof s.value === "string" ? typeof has === "string" && has.toLowerCase() === s.value.toLowerCase() : has === s.value;
    return { option: s.option, want: s.value, has, ok, why: s.why };
  });
  return checked.ok ? { advice } : { advice, notRead: `it ${checked.refusal.why}` };
}
