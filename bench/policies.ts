/**
 * Generated policies for the compiler and type-check benchmarks, in the DSL shape of
 * examples/policies/*.policy.ts: four stores and kinds cycling through every rule shape a kind can have
 * (backed with lossy allowed, backed with lossy forbidden, unbacked lossy-only, never prunable), with
 * pins and compress targets on some, so every phase of the compiler has work on every kind.
 */
import type { LossyRule, PruneMode } from "../src/types.js";

export interface KindShape {
  readonly store: "toolLog" | "transcript" | "archive" | "notes" | null;
  readonly modes: readonly PruneMode[];
  readonly lossy: LossyRule;
  readonly repersist?: boolean;
  readonly pins?: readonly string[];
  readonly compressTargetTokens?: number;
}

const SHAPES: readonly KindShape[] = [
  { store: "toolLog", modes: ["drop", "summarize", "compress"], lossy: "with-flag", repersist: true, pins: ["pins.requestId", "pins.errorCode"], compressTargetTokens: 200 },
  { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
  { store: "transcript", modes: ["summarize", "compress"], lossy: "forbid", pins: ["pins.ticket"] },
  { store: "archive", modes: ["drop"], lossy: "forbid" },
  { store: "notes", modes: ["drop", "summarize"], lossy: "with-flag" },
  { store: null, modes: ["drop"], lossy: "with-flag" },
  { store: "toolLog", modes: ["compress"], lossy: "with-flag", pins: ["deployTicket"], compressTargetTokens: 120 },
  { store: null, modes: ["drop"], lossy: "forbid" },
];

export function kindName(i: number): string {
  return `k${i}`;
}

export function shapeOf(i: number): KindShape {
  return SHAPES[i % SHAPES.length]!;
}

/** A policy module with `kinds` kinds; `name` is lower-case-with-dashes and names the output files. */
export function policySource(name: string, kinds: number): string {
  const lines = [
    `/** Generated for the pruneguard benchmarks: ${kinds} kinds. */`,
    `import { days, definePolicy, forever, hours, pin, pins, store } from "pruneguard/dsl";`,
    ``,
    `export const deployTicket = pin("deployTicket", /DEP-\\d{4,6}/);`,
    ``,
    `export default definePolicy({`,
    `  name: ${JSON.stringify(name)},`,
    `  stores: {`,
    `    toolLog: store.sqlite({ retention: hours(12), holds: true }),`,
    `    transcript: store.postgres({ retention: days(30) }),`,
    `    archive: store.postgres({ retention: forever }),`,
    `    notes: store.memory({ retention: hours(8), holds: true }),`,
    `  },`,
    `  kinds: {`,
  ];
  for (let i = 0; i < kinds; i++) {
    const s = shapeOf(i);
    const parts = [
      `store: ${s.store === null ? "null" : JSON.stringify(s.store)}`,
      `modes: [${s.modes.map((m) => JSON.stringify(m)).join(", ")}]`,
      `lossy: ${JSON.stringify(s.lossy)}`,
      ...(s.repersist ? ["repersist: true"] : []),
      ...(s.pins ? [`pins: [${s.pins.join(", ")}]`] : []),
      ...(s.compressTargetTokens !== undefined ? [`compressTargetTokens: ${s.compressTargetTokens}`] : []),
    ];
    lines.push(`    ${kindName(i)}: { ${parts.join(", ")} },`);
  }
  lines.push(`  },`, `  session: { maxLength: hours(8), lossyBudget: 5 },`, `  pins: [pins.uuid, pins.gitSha],`, `});`, ``);
  return lines.join("\n");
}

/**
 * The request a consumer writes to prune a span of kind `i`, as an object literal (without `span`), or
 * `null` when the kind can never be pruned. Cycles through the kind's modes by call site.
 */
export function requestLiteral(i: number, site: number): string | null {
  const s = shapeOf(i);
  if (s.store === null && s.lossy === "forbid") return null;
  const mode = s.modes[site % s.modes.length]!;
  const parts = [`mode: "${mode}"`];
  if (mode === "summarize") parts.push(`digest: "digest ${site}"`);
  if (s.store === null) parts.push("acceptLossy: true");
  return `{ ${parts.join(", ")} }`;
}
