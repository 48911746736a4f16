import { expect } from "vitest";
import { compilePolicies, formatDiagnostic, type CompileResult, type Diagnostic } from "../../compiler/index.js";

export const HEADER = `import { definePolicy, extendPolicy, store, hours, days, minutes, forever, pins, pin } from "pruneguard/dsl";\n`;

/** Compiles in-memory files; keys are paths relative to `/`. */
export function compile(files: Record<string, string>, entries?: string[]): CompileResult {
  return compilePolicies(entries ? { files, entries } : { files });
}

/** A one-file policy: the header line (line 1), then `body` from line 2. */
export function compileOne(body: string): CompileResult {
  return compile({ "p.policy.ts": HEADER + body });
}

export function codes(r: CompileResult): string[] {
  return r.diagnostics.map((d) => d.code);
}

/** Asserts a diagnostic with `code` at `line:column` (1-based) in `file`, and returns it. */
export function expectDiagnostic(r: CompileResult, code: string, line: number, column: number, file = "p.policy.ts"): Diagnostic {
  const d = r.diagnostics.find((x) => x.code === code);
  expect(d, `expected ${code}, got ${JSON.stringify(r.diagnostics.map((x) => `${x.code} ${x.location?.line}:${x.location?.column} ${x.message}`))}`).toBeDefined();
  if (process.env["DEBUG_DIAG"]) console.log(formatDiagnostic(d!, { sources: r.sources }));
  expect({ file: d!.location?.file, line: d!.location?.line, column: d!.location?.column }).toEqual({ file, line, column });
  return d!;
}

export function expectClean(r: CompileResult): void {
  expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([]);
  expect(r.policies.length).toBeGreaterThan(0);
}

/** A valid base policy used by overlay and check fixtures. */
export const ORG = `${HEADER}export const ticket = pin("ticket", "T-\\\\d+");
export default definePolicy({
  name: "org",
  stores: {
    toolLog: store.sqlite({ retention: hours(2), holds: true }),
    transcript: store.postgres({ retention: days(30) }),
  },
  kinds: {
    toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true, pins: [pins.requestId, ticket] },
    userTurn: { store: "transcript", modes: ["summarize"], lossy: "forbid" },
  },
  session: { maxLength: hours(8), lossyBudget: 3 },
  pins: [pins.uuid],
});
`;

/** An overlay of ORG whose `extendPolicy` second argument is `body` (an object literal's inside), from line 3. */
export function compileOverlay(body: string): CompileResult {
  return compile({
    "org.policy.ts": ORG,
    "team.policy.ts": `${HEADER}import org, { ticket } from "./org.policy.js";\nexport default extendPolicy(org, {\n  name: "team",\n${body}\n});\n`,
  });
}

/** The 1-based column of the first `token` in `line`. */
export function col(line: string, token: string): number {
  const i = line.indexOf(token);
  if (i < 0) throw new Error(`${JSON.stringify(token)} is not in ${JSON.stringify(line)}`);
  return i + 1;
}

/**
 * Runs the CLI in this process: `main(argv)` with stdout and stderr captured, as `bin/pruneguard.js` runs it
 * (cli.test.ts keeps a real spawn or two for the bin itself).
 */
export async function runCli(args: readonly string[], cwd = process.cwd(), color = false): Promise<{ code: number; stdout: string; stderr: string; all: string }> {
  const { main } = await import("../../compiler/cli/main.js");
  let stdout = "";
  let stderr = "";
  const code = await main(args, { cwd, color, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr, all: stdout + stderr };
}
