// The documented agent code type-checks: every ```ts block of README.md and docs/*.md that is not a
// policy file (those are compiled by test/compiler/docs.test.ts) is type-checked as a module of its own
// against the real packages, so an example cannot rot when an API changes.
//
// How the blocks are compiled. Each block becomes one file of one program in a folder under the OS temp
// directory, checked by the repository's TypeScript 7 `tsc` and, under the `user` profile below, by
// TS 6 through ts-morph: the two compilers the type fixtures use (TS 6 is held to the marked lines, as
// its codes may differ). Imports of `pruneguard`, `pruneguard/dsl`, `pruneguard/postgres`,
// `pruneguard/adapters` and `pruneguard-cli/testing` resolve to this repository's sources (tsconfig `paths`); `ai`, `openai`,
// `@anthropic-ai/sdk` and the rest to the installed packages; `./generated/org.guard.js` to a copy of
// the committed guards importing the runtime as `pruneguard`, as a user's do (the docs write agent code
// from a project root with a `generated/` folder). Only errors inside the snippets count: the sources
// are checked by the repository's own stricter `tsc`.
//
// The settings are a user's, not the repository's. Every snippet must pass profile `user`: `strict: true`
// and otherwise TypeScript's defaults for an ES module on Node (module/moduleResolution NodeNext, target
// ES2024, which Node 22.13 runs, @types/node, skipLibCheck) — in particular no
// `exactOptionalPropertyTypes` and no `noUncheckedIndexedAccess`, which the repository uses and most
// projects do not. Profile `init` is a fresh `tsc --init` project of TypeScript 7, which turns both on:
// snippets pass it too, except the gaps pinned in INIT_GAPS, each with its reason (both profiles keep
// @types/node, which `tsc --init` leaves out and an agent on Node has).
//
// Conventions for a block, written as HTML comments on the line(s) just before its opening fence (they
// do not render):
//   <!-- snippet-preamble
//   import { ContextWindow } from "pruneguard";
//   declare const win: ContextWindow;
//   -->
//       code prepended to the block (imports, and `declare`s for what the surrounding prose assumes), so
//       a short example can stand alone without showing its set-up;
//   <!-- snippet-fragment: why -->
//       the block is deliberately partial and is not checked; the reason is required. Use it rarely.
// A line of a block with a comment `// error TS2741…` shows a compile error on purpose: the block must
// report exactly the marked codes on exactly the marked lines, and nothing else.
//
// Left out by rule (not agent code): policy files (a block importing `pruneguard/dsl` with a default
// export, as in test/compiler/docs.test.ts), and docs/diagnostics.md, the catalogue rendered from
// compiler/diagnostics/catalogue.ts, whose examples are deliberately wrong policy fragments.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { Project, ts } from "ts-morph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(".");
const TSC = path.join(ROOT, "node_modules/.bin/tsc");
const DOCS = ["README.md", ...readdirSync("docs").filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
/** Documents whose ```ts blocks are all policy code, each with the reason. */
const POLICY_ONLY_DOCS: Record<string, string> = {
  "docs/diagnostics.md": "rendered from the diagnostic catalogue; its examples are deliberately wrong policy fragments",
};

export interface Snippet {
  /** `README.md:117`: the document and the line of the opening fence. */
  readonly id: string;
  readonly doc: string;
  /** 1-based line of the block's first code line in the document. */
  readonly firstLine: number;
  readonly preamble: string;
  readonly code: string;
  /** `line TSnnnn` (document lines) for each `// error TSnnnn` mark. */
  readonly expected: string[];
}

export interface Skipped {
  readonly id: string;
  /** Policy code, checked by the compiler's tests; or a fragment marked as such. */
  readonly kind: "policy" | "fragment";
  readonly reason: string;
}

/** The ```ts blocks of one document: the agent-code snippets, and the blocks left out with why. */
export function snippetsOf(doc: string, markdown: string): { snippets: Snippet[]; skipped: Skipped[] } {
  const snippets: Snippet[] = [];
  const skipped: Skipped[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const start = i;
    while (++i < lines.length && lines[i] !== "```");
    if (fence[1] !== "ts" && fence[1] !== "typescript") continue;
    const id = `${doc}:${start + 1}`;
    const code = lines.slice(start + 1, i).join("\n");
    // The HTML comment ending on the line just before the fence, if any.
    let comment = "";
    if (/-->\s*$/.test(lines[start - 1] ?? "")) {
      let j = start - 1;
      while (j >= 0 && !lines[j]!.includes("<!--")) j--;
      comment = lines.slice(j, start).join("\n");
    }
    const fragment = /^<!--\s*snippet-fragment:\s*([\s\S]*?)\s*-->$/.exec(comment);
    const preamble = /^<!--\s*snippet-preamble\s*\n([\s\S]*?)\n-->$/.exec(comment);
    if (comment && !fragment && !preamble && /snippet-/.test(comment)) throw new Error(`${id}: unreadable snippet comment ${comment}`);
    if (POLICY_ONLY_DOCS[doc]) skipped.push({ id, kind: "policy", reason: POLICY_ONLY_DOCS[doc] });
    else if (/from "pruneguard\/dsl"/.test(code) && /^export default /m.test(code)) skipped.push({ id, kind: "policy", reason: "a policy file (test/compiler/docs.test.ts)" });
    else if (fragment) {
      if (!fragment[1]) throw new Error(`${id}: a snippet-fragment comment must say why`);
      skipped.push({ id, kind: "fragment", reason: fragment[1] });
    } else {
      const expected = code.split("\n").flatMap((l, k) => [...l.matchAll(/\/\/ error (TS\d+)\b/g)].map((m) => `${start + 2 + k} ${m[1]}`));
      snippets.push({ id, doc, firstLine: start + 2, preamble: preamble?.[1] ?? "", code, expected });
    }
  }
  return { snippets, skipped };
}

const all = DOCS.map((doc) => snippetsOf(doc, readFileSync(doc, "utf8")));
const SNIPPETS = all.flatMap((d) => d.snippets);
const SKIPPED = all.flatMap((d) => d.skipped);

function fileName(s: Snippet): string {
  return `${s.doc.replace(/[^\w]+/g, "_")}_${s.firstLine}.ts`;
}

/**
 * The compiler settings, by profile. `user` is what every snippet must pass: `strict: true` and otherwise
 * TypeScript's defaults for an ES module on Node. `init` adds the checks TypeScript 7's `tsc --init` turns
 * on (`exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`, `verbatimModuleSyntax`…): snippets pass it
 * too, but for the gaps pinned in INIT_GAPS.
 */
const PROFILES = {
  user: { target: "ES2024", strict: true },
  init: {
    target: "ESNext",
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    noUncheckedSideEffectImports: true,
  },
} as const;
type Profile = keyof typeof PROFILES;

/**
 * Snippets known not to compile under the `init` profile, by the snippet's first line: the codes it
 * reports there, and why. Each is an API gap to close; when it is closed, the pin fails and goes.
 */
const INIT_GAPS: Record<string, { codes: string[]; why: string }> = {};

/** Each snippet's errors per profile as `line TSnnnn: message`, lines of its document (`preamble` for the preamble). */
const findings: Record<Profile, Map<string, string[]>> = { user: new Map(), init: new Map() };
const outputs: Record<Profile, string> = { user: "", init: "" };
let work: string;

function check(profile: Profile, offsets: ReadonlyMap<string, { snippet: Snippet; preambleLines: number }>): void {
  const config = `tsconfig.${profile}.json`;
  writeFileSync(
    path.join(work, config),
    JSON.stringify({
      compilerOptions: {
        ...PROFILES[profile],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        skipLibCheck: true,
        types: ["node"],
        noEmit: true,
        // Each snippet is its own module even when it has no import of its own.
        moduleDetection: "force",
        paths: {
          pruneguard: [path.join(ROOT, "src/index.ts")],
          "pruneguard/dsl": [path.join(ROOT, "dsl/index.ts")],
          "pruneguard/postgres": [path.join(ROOT, "src/postgres.ts")],
          "pruneguard/adapters": [path.join(ROOT, "src/adapters.ts")],
          // The CLI package's one entry point, for policy tests.
          "pruneguard-cli/testing": [path.join(ROOT, "compiler/testing.ts")],
        },
      },
      files: [...offsets.keys()],
    }),
  );
  const r = spawnSync(TSC, ["-p", path.join(work, config), "--pretty", "false", "--listFiles"], { cwd: work, encoding: "utf8" });
  const output = `${r.stdout}${r.stderr}`;
  outputs[profile] = output;
  // tsc exits 0 when clean and non-zero with errors reported; a failure that reports none is a broken run.
  if (r.status !== 0 && !/error TS\d+/.test(output)) throw new Error(`tsc (${profile}) exited ${r.status ?? r.signal}:\n${output}`);
  const found = new Map([...offsets.values()].map(({ snippet }) => [snippet.id, [] as string[]]));
  // Diagnostics are `file(line,col): error TSnnnn: message`, continuation lines indented; the sources'
  // own diagnostics (files outside the work folder) do not count.
  for (const m of output.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/gm)) {
    const at = offsets.get(path.basename(m[1]!));
    if (!at || path.resolve(work, m[1]!) !== path.join(work, path.basename(m[1]!))) continue;
    const line = Number(m[2]) - at.preambleLines;
    found.get(at.snippet.id)!.push(`${line > 0 ? at.snippet.firstLine + line - 1 : "preamble"} ${m[3]}: ${m[4]}`);
  }
  findings[profile] = found;
}

/** The lines (of their documents) where TS 6 reports errors in each snippet under the `user` profile. */
const ts6Lines = new Map<string, string[]>();

/**
 * The `user` profile under TS 6, the compiler ts-morph bundles (users have both, as the type fixtures
 * say). Its codes may differ from TS 7's on a marked line (a missing required `acceptLossy` is TS2741
 * under TS 7 and TS2345 under TS 6), so it is held to the marked lines, not codes.
 */
function checkTs6(offsets: ReadonlyMap<string, { snippet: Snippet; preambleLines: number }>): void {
  const project = new Project({ tsConfigFilePath: path.join(work, "tsconfig.user.json") });
  for (const { snippet } of offsets.values()) ts6Lines.set(snippet.id, []);
  for (const d of project.getPreEmitDiagnostics()) {
    if (d.getCategory() !== ts.DiagnosticCategory.Error) continue;
    const file = d.getSourceFile()?.getFilePath();
    const at = file && path.dirname(file) === work.split(path.sep).join("/") ? offsets.get(path.basename(file)) : undefined;
    if (!at) continue;
    const line = (d.getLineNumber() ?? 0) - at.preambleLines;
    ts6Lines.get(at.snippet.id)!.push(`${line > 0 ? at.snippet.firstLine + line - 1 : "preamble"}: ${ts.flattenDiagnosticMessageText(d.compilerObject.messageText, " ")}`);
  }
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), "pruneguard-snippets-"));
  symlinkSync(path.join(ROOT, "node_modules"), path.join(work, "node_modules"), "dir");
  // The committed guards, as a user's would be: importing the runtime as `pruneguard` (this repository's
  // import `../src/index.js`, its `runtimeImport`).
  mkdirSync(path.join(work, "generated"));
  for (const f of readdirSync(path.join(ROOT, "generated")).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(path.join(ROOT, "generated", f), "utf8");
    writeFileSync(path.join(work, "generated", f), text.replaceAll('from "../src/index.js"', 'from "pruneguard"'));
  }
  writeFileSync(path.join(work, "package.json"), JSON.stringify({ name: "snippets", private: true, type: "module" }));
  const offsets = new Map<string, { snippet: Snippet; preambleLines: number }>();
  for (const s of SNIPPETS) {
    const preambleLines = s.preamble ? s.preamble.split("\n").length : 0;
    writeFileSync(path.join(work, fileName(s)), s.preamble ? `${s.preamble}\n${s.code}\n` : `${s.code}\n`);
    offsets.set(fileName(s), { snippet: s, preambleLines });
  }
  for (const profile of Object.keys(PROFILES) as Profile[]) check(profile, offsets);
  checkTs6(offsets);
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The codes and lines reported, without the messages. */
function codes(found: readonly string[]): string[] {
  return found.map((f) => f.replace(/:.*$/s, "")).sort();
}

describe("documented agent code type-checks against the real packages", () => {
  it("finds the snippets (the README's runtime and agent-loop examples, PostgreSQL, generated code)", () => {
    expect(SNIPPETS.map((s) => s.doc)).toEqual(expect.arrayContaining(["README.md", "docs/postgres.md", "docs/generated-code.md"]));
    expect(SNIPPETS.filter((s) => s.doc === "README.md").length).toBeGreaterThanOrEqual(4);
    // What is left out is policy code, or a fragment that says why; fragments stay rare.
    expect(SKIPPED.filter((s) => s.kind === "fragment").length).toBeLessThanOrEqual(2);
  });

  it("tsc read every snippet, under both profiles, with no configuration error", () => {
    for (const profile of Object.keys(PROFILES) as Profile[]) {
      expect(outputs[profile]).not.toMatch(/error TS(5\d{3}|6\d{3}):/);
      for (const s of SNIPPETS) expect(outputs[profile], `${profile}: ${s.id}`).toContain(fileName(s));
    }
  });

  it.each(SNIPPETS.map((s) => [s.id, s] as const))("%s", (_, s) => {
    const user = findings.user.get(s.id)!;
    expect(codes(user), `tsc reported:\n${user.join("\n")}`).toEqual([...s.expected].sort());
    const gap = INIT_GAPS[s.code.split("\n")[0]!];
    const init = findings.init.get(s.id)!;
    const extra = codes(init).filter((f) => !s.expected.includes(f)).map((f) => f.replace(/^\S+ /, ""));
    expect(extra, `tsc --init settings reported:\n${init.join("\n")}`).toEqual(gap?.codes ?? []);
    const ts6 = ts6Lines.get(s.id)!;
    expect(ts6.map((f) => f.replace(/:.*$/s, "")).sort(), `TS 6 reported:\n${ts6.join("\n")}`).toEqual(s.expected.map((e) => e.replace(/ .*$/, "")).sort());
  });

  it("every pinned tsc --init gap names a snippet", () => {
    for (const first of Object.keys(INIT_GAPS)) expect(SNIPPETS.some((s) => s.code.split("\n")[0] === first), first).toBe(true);
  });
});
