/**
 * What `pruneguard init` writes: a starting organisation policy that compiles with no diagnostic at all,
 * and the settings it records and prints. docs/adopting.md shows the same policy; test/compiler/init.test.ts
 * keeps the two equal.
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

/** The compiler options generated guards and the provider SDKs need, as init prints them. */
export const TSCONFIG_SETTINGS: ReadonlyArray<{ readonly option: string; readonly value: string | boolean; readonly why: string }> = [
  { option: "module", value: "NodeNext", why: "generated guards are ES modules importing `pruneguard` by its package exports" },
  { option: "moduleResolution", value: "NodeNext", why: "resolves `pruneguard`, `pruneguard/dsl` and the `./org.guard.js` imports as Node does" },
  { option: "strict", value: true, why: "the guards' prune types (acceptLossy: true as a literal) are checked under strict" },
  { option: "skipLibCheck", value: true, why: "the AI SDK's and the provider SDKs' own declarations do not all pass a strict check" },
];

/** The manifest `compile` keeps beside its output: a local cache, never committed. */
export const MANIFEST_IGNORE = ".pruneguard-manifest.json";

/** The steps of a CI job, as init prints them (docs/adopting.md has the whole workflow). */
export const CI_STEPS = [
  "- run: npm ci",
  "- run: npx pruneguard check          # errors, or generated/ stale: exit 1",
  "- run: npx pruneguard diff --base origin/${{ github.base_ref }} --format markdown > pruneguard-diff.md",
  "  if: github.event_name == 'pull_request'   # exit 1 when the change loosens a policy",
];
