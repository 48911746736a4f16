/**
 * What `pruneguard init` writes: a starting organisation policy that compiles with no diagnostic at all, a
 * test of it, a tsconfig.json that checks both (and the generated guards) under TypeScript 6 and 7, and the
 * settings and CI steps it prints. docs/adopting.md shows the same policy, test and tsconfig;
 * test/compiler/init.test.ts keeps them equal.
 */

/** The starting policy, named `name`. */
export function starterPolicy(name: string): string {
  return `/**
 * The organisation's pruning policy: which kinds of context span an agent may prune, which store keeps a
 * copy of each, and when a prune may become a lossy commitment. \`pruneguard compile\` reads this file
 * without running it and writes typed guards to generated/; \`pruneguard explain\` prints what every prune
 * of each kind can become. The language: node_modules/pruneguard-cli/docs/policy-language.md.
 *
 * Teams tighten it in overlays of their own (\`extendPolicy(org, { … })\`); the compiler refuses an overlay
 * that loosens it, and \`pruneguard diff\` shows a reviewer what a change to this file does.
 */
import { days, definePolicy, hours, pins, store } from "pruneguard/dsl";

export default definePolicy({
  name: ${JSON.stringify(name)},
  stores: {
    // Tool calls and their results, kept a day: longer than a session, so every copy outlasts it.
    toolLog: store.sqlite({ retention: hours(24) }),
    // The conversation itself, kept 30 days for recall and review.
    transcript: store.sqlite({ retention: days(30) }),
  },
  kinds: {
    // Tool output is most of a context window: prunable in every mode, reversibly while its copy is
    // verified; otherwise only with accept_lossy, leaving a tombstone. An expired copy is written back.
    toolResult: {
      store: "toolLog",
      modes: ["drop", "summarize", "compress"],
      lossy: "with-flag",
      repersist: true,
      pins: [pins.requestId, pins.errorCode, pins.filePath],
    },
    toolCall: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
    // What people said is never lost: summarized only, and only while its copy can be verified.
    userTurn: { store: "transcript", modes: ["summarize"], lossy: "forbid", pins: [pins.ticket] },
    // The agent's own notes: nothing keeps them, so a prune is always an explicit lossy commitment.
    scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
  },
  // Sessions end after 8 hours, with at most 5 lossy commitments each.
  session: { maxLength: hours(8), lossyBudget: 5 },
  // Identifiers carried into any digest or compressed form that lost them, for every kind.
  pins: [pins.uuid, pins.gitSha],
});
`;
}

/** The test runner a policy test is written for: `vitest` when the package has it, else Node's own. */
export type TestRunner = "node:test" | "vitest";

/** The identifier a policy's test calls it by: its name in camelCase (`acme-agents` → `acmeAgents`). */
export function policyVariable(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The test of the starting policy, `testFile` testing `policyFile` (both relative to the package root, where
 * test runners start). Only `describe` and `it` come from the runner, so the file for another runner differs
 * in that one import; everything else is `pruneguard-cli/testing`, whose failed expectations throw, and
 * `node:assert`.
 */
export function policyTest(name: string, policyFile: string, testFile: string, runner: TestRunner): string {
  const v = policyVariable(name);
  return `// ${testFile}: what ${policyFile} must go on deciding.
// \`pruneguard-cli/testing\` compiles the policy the way \`pruneguard compile\` does (it never runs it) and
// answers what it decides; an expectation that fails throws PolicyExpectationError, with a concrete prune as
// its counterexample. The API: "Policy tests" in node_modules/pruneguard-cli/docs/adopting.md.
import assert from "node:assert/strict";
import { describe, it } from ${JSON.stringify(runner)};
import { compilePolicy, hours } from "pruneguard-cli/testing";

const ${v} = compilePolicy(${JSON.stringify(policyFile)});

describe(${JSON.stringify(`the ${name} policy`)}, () => {
  it("keeps every prune of a tool result reversible for the whole session", () => {
    ${v}.expectReversible("toolResult");
    ${v}.expectReversible("toolCall");
  });

  it("never loses what a user said: summarized only, while its copy can be verified", () => {
    ${v}.expectReversible("userTurn", { mode: "summarize" });
    const drop = ${v}.prune({ kind: "userTurn", mode: "drop" });
    assert.equal(drop.outcome === "rejected" && drop.reason, "mode-not-allowed");
  });

  it("prunes a scratch note only as an explicit lossy commitment", () => {
    ${v}.expectFateAt("scratch", hours(3), "lossy-with-flag");
    ${v}.expectPrune({ kind: "scratch", mode: "drop", age: hours(3) }, "rejected");
    ${v}.expectPrune({ kind: "scratch", mode: "drop", age: hours(3), acceptLossy: true }, "lossy");
  });

  it("recalls a tool result pruned three hours in, byte for byte", async () => {
    const run = await ${v}.session([
      { append: "toolResult", text: "GET /deploy -> 500 req_8f3a2c91", as: "log" },
      { advance: hours(3) },
      { rotate: true },
      { prune: "log", mode: "drop" },
    ]);
    assert.equal(run.outcomes[0]?.status, "reversible");
    await run.expectRecoverable("log");
  });
});
`;
}

/**
 * The script that runs a policy test written for Node's runner, on every Node `engines` allows (22.13 on).
 * Node strips TypeScript's types by default only from 22.18 (and 23.6); on 22.13–22.17 it needs
 * `--experimental-strip-types`, which later versions still accept (stripping is on anyway) and which
 * `node --test` passes on to the process that runs the test. The test has no syntax that stripping cannot
 * erase and imports no `.ts` file of its own (the policy is compiled from source, not imported).
 */
export const nodeTestScript = (testFile: string): string => `node --experimental-strip-types --test ${testFile}`;

/** The test script \`npm init\` writes: a placeholder that always fails, which init replaces as if there were none. */
export const NPM_PLACEHOLDER_TEST = 'echo "Error: no test specified" && exit 1';

/**
 * The compiler options the guards, the policies and their test need, as init writes them into a new
 * tsconfig.json and checks an existing one for. Each holds under TypeScript 6 and 7 alike: 6.0 changed the
 * defaults (\`types\` is \`[]\`, so Node's globals and \`node:*\` modules need \`"types": ["node"]\`) and 7 removed
 * what 6 deprecated (\`moduleResolution\` \`node\`, \`baseUrl\`), none of which is used here.
 */
export const TSCONFIG_SETTINGS: ReadonlyArray<{ readonly option: string; readonly value: string | boolean | readonly string[]; readonly why: string }> = [
  { option: "module", value: "NodeNext", why: "the guards are ES modules importing `pruneguard` through its package exports" },
  { option: "moduleResolution", value: "NodeNext", why: "`pruneguard/dsl` and the guards' `./org.guard.js` imports resolve as in Node" },
  { option: "strict", value: true, why: "the guards' prune types (acceptLossy: true as a literal) are checked under strict" },
  { option: "skipLibCheck", value: true, why: "the AI SDK's and provider SDKs' declarations do not all pass a strict check" },
  { option: "types", value: ["node"], why: "TypeScript 6 and 7 load no @types by default; the policy test imports node:*" },
];

/** Whether an option as a tsconfig.json says it (`has`) is the setting init wants. */
export function settingHolds(want: string | boolean | readonly string[], has: unknown): boolean {
  if (typeof want === "string") return typeof has === "string" && has.toLowerCase() === want.toLowerCase();
  if (typeof want === "boolean") return has === want;
  return Array.isArray(has) && want.every((w) => has.includes(w));
}

/** The tsconfig.json init writes where there is none: it checks the policies, the guards and the policy test. */
export function tsconfigFile(include: readonly string[]): string {
  const options: Record<string, unknown> = { target: "ES2022" };
  for (const s of TSCONFIG_SETTINGS) options[s.option] = s.value;
  // A checking configuration: \`tsc -p .\` writes nothing beside the sources. A build of the agent code sets
  // outDir instead (docs/adopting.md).
  options["noEmit"] = true;
  const json = (v: unknown) => (Array.isArray(v) ? `[${v.map((x) => JSON.stringify(x)).join(", ")}]` : JSON.stringify(v));
  const lines = Object.entries(options).map(([k, v]) => `    ${JSON.stringify(k)}: ${json(v)}`);
  return `{\n  "compilerOptions": {\n${lines.join(",\n")}\n  },\n  "include": ${json(include)}\n}\n`;
}

/** The manifest \`compile\` keeps beside its output: a local cache, never committed. */
export const MANIFEST_IGNORE = ".pruneguard-manifest.json";

/** The dependencies the files init writes import, and how each is installed. */
export const DEPENDENCIES: ReadonlyArray<{ readonly name: string; readonly dev: boolean }> = [
  { name: "pruneguard", dev: false },
  { name: "pruneguard-cli", dev: true },
  { name: "typescript", dev: true },
  { name: "@types/node", dev: true },
];

/** The steps of a CI job, as init prints them (docs/adopting.md has the whole workflow). */
export const CI_STEPS = [
  "- run: npm ci",
  "- run: npx pruneguard check    # exit 1 on an error, or when generated/ is stale",
  "- run: npx tsc --noEmit -p .   # the policies, the guards and the policy test type-check",
  "- run: npm test                # the policy test",
  "- run: npx pruneguard diff --base origin/${{ github.base_ref }} --format markdown > pruneguard-diff.md",
  "  if: github.event_name == 'pull_request'   # exit 1 when the change loosens a policy",
];
