/**
 * A stand-in for the compiler's type and guard emitters, used by benchmark 5 only when `pruneguard
 * compile` does not write `<policy>.guard.ts` (an older checkout). It writes the shape src/typed.ts
 * expects and the real emitters follow: one interface per distinct rule shape, a `Requests` map
 * kind → request, a `kinds` object typed `RuntimePolicy<SpanKind>["kinds"]`, and `createWindow`
 * returning `GuardedWindow<SpanKind, Requests>`. The report says which of the two produced the figures.
 */
import { kindName, shapeOf, type KindShape } from "./policies.js";

/** A file to write, relative to the output folder. */
export interface PrototypeFile {
  readonly path: string;
  readonly contents: string;
}

const PINS: Readonly<Record<string, string>> = {
  "pins.requestId": "\\breq[_-][A-Za-z0-9]{4,64}\\b",
  "pins.errorCode": "\\b[A-Z]{1,4}\\d{3,5}\\b",
  "pins.ticket": "\\b[A-Z][A-Z0-9]{1,9}-[1-9]\\d{0,6}\\b",
  deployTicket: "DEP-\\d{4,6}",
};

const STORES = ["toolLog", "transcript", "archive", "notes"] as const;

/** The request type of a kind, as interface names joined by `|`, declaring the interfaces it needs. */
function requestOf(s: KindShape, interfaces: Map<string, string>): string {
  if (s.store === null && s.lossy === "forbid") return 'PruneguardTypeError<"this kind has no store and forbids lossy commitment: it cannot be pruned">';
  const prefix = s.store === null ? "LossyOnly" : s.lossy === "forbid" ? "BackedNoLoss" : "Backed";
  const flag = s.store === null ? "readonly acceptLossy: true;" : s.lossy === "forbid" ? "readonly acceptLossy?: false;" : "readonly acceptLossy?: boolean;";
  const plain = s.modes.filter((m) => m !== "summarize");
  const groups = [...(plain.length > 0 ? [plain] : []), ...(s.modes.includes("summarize") ? [["summarize"]] : [])];
  return groups
    .map((g) => {
      const name = prefix + g.map((m) => m[0]!.toUpperCase() + m.slice(1)).join("");
      if (!interfaces.has(name)) {
        const digest = g[0] === "summarize" ? "\n  readonly digest: string;" : "";
        interfaces.set(name, `export interface ${name} {\n  readonly mode: ${g.map((m) => JSON.stringify(m)).join(" | ")};${digest}\n  ${flag}\n}\n`);
      }
      return name;
    })
    .join(" | ");
}

export function prototypeEmit(name: string, kinds: number, runtimeImport: string): PrototypeFile[] {
  const interfaces = new Map<string, string>();
  const requests: string[] = [];
  const runtime: string[] = [];
  for (let i = 0; i < kinds; i++) {
    const s = shapeOf(i);
    requests.push(`  readonly ${kindName(i)}: ${requestOf(s, interfaces)};`);
    const parts = [
      `store: ${s.store === null ? "null" : JSON.stringify(s.store)}`,
      `modes: [${s.modes.map((m) => JSON.stringify(m)).join(", ")}]`,
      `lossy: ${JSON.stringify(s.lossy)}`,
      ...(s.repersist ? ["repersist: true"] : []),
      ...(s.pins ? [`pins: [${s.pins.map((p) => `pin[${JSON.stringify(p)}]`).join(", ")}]`] : []),
      ...(s.compressTargetTokens !== undefined ? [`compressTargetTokens: ${s.compressTargetTokens}`] : []),
    ];
    runtime.push(`  ${kindName(i)}: { ${parts.join(", ")} },`);
  }
  const kindUnion = Array.from({ length: kinds }, (_, i) => `  | "${kindName(i)}"`).join("\n");
  const types = [
    `// prototype of the generated types (benchmark 5); policy ${name}`,
    `import type { PruneguardTypeError, SpanRef } from ${JSON.stringify(runtimeImport)};`,
    ``,
    `export type SpanKind =\n${kindUnion};`,
    `export type StoreName = ${STORES.map((s) => JSON.stringify(s)).join(" | ")};`,
    ``,
    ...interfaces.values(),
    `export interface Requests {\n${requests.join("\n")}\n}`,
    ``,
    `export type Ref<K extends SpanKind = SpanKind> = SpanRef<K, Requests[K]>;`,
    ``,
  ].join("\n");
  const guard = [
    `// prototype of the generated guard (benchmark 5); policy ${name}`,
    `import { ContextWindow, guardWindow } from ${JSON.stringify(runtimeImport)};`,
    `import type { BackingStore, Clock, GuardedWindow, PinPattern, RuntimePolicy, SessionLimits } from ${JSON.stringify(runtimeImport)};`,
    `import type { Requests, SpanKind } from "./${name}.types.js";`,
    `export type * from "./${name}.types.js";`,
    ``,
    `const pin = {\n${Object.entries(PINS).map(([k, p]) => `  ${JSON.stringify(k)}: { name: ${JSON.stringify(k)}, pattern: ${JSON.stringify(p)} },`).join("\n")}\n} satisfies Record<string, PinPattern>;`,
    ``,
    `const kinds: RuntimePolicy<SpanKind>["kinds"] = {\n${runtime.join("\n")}\n};`,
    ``,
    `const session: SessionLimits = { maxLengthMs: 28_800_000, lossyBudget: 5 };`,
    ``,
    `export interface Stores {\n${STORES.map((s) => `  readonly ${s}: BackingStore;`).join("\n")}\n}`,
    ``,
    `export interface CreateWindowOptions {\n  readonly session: string;\n  readonly stores: Stores;\n  readonly clock?: Clock;\n}`,
    ``,
    `export type PolicyWindow = GuardedWindow<SpanKind, Requests>;`,
    ``,
    `export function createWindow(options: CreateWindowOptions): PolicyWindow {`,
    `  const window = new ContextWindow<SpanKind>({`,
    `    session: options.session,`,
    `    kinds,`,
    `    stores: { ${STORES.map((s) => `${s}: options.stores.${s}`).join(", ")} },`,
    `    ...(options.clock === undefined ? {} : { clock: options.clock }),`,
    `    limits: session,`,
    `  });`,
    `  return guardWindow<SpanKind, Requests>(window);`,
    `}`,
    ``,
  ].join("\n");
  return [
    { path: `${name}.types.ts`, contents: types },
    { path: `${name}.guard.ts`, contents: guard },
  ];
}
