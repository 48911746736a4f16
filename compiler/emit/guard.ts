/**
 * `<policy>.guard.ts`: the runtime half of a policy for agent code. It holds the policy's tables (pins,
 * kinds, session limits, store declarations) and the `Stores` type, passes them to the runtime's
 * `defineGuard` in one call, and re-exports what that returns under the names agent code imports: the
 * runtime policy, `openStores`, `createWindow` and `resumeWindow` (a `ContextWindow` typed by this policy's
 * `Requests`), the directive modes, schema and tools; with the IR hash, and every type of
 * `<policy>.types.ts`. The wiring itself lives in the runtime, so each guard is data a reader can check
 * against the policy.
 */
import { PRUNE_MODES, type PruneMode } from "../../src/types.js";
import { formatDuration } from "../../src/policy/durations.js";
import { requestShapeOf } from "../analysis/requests.js";
import type { PinIR, PolicyIR } from "../ir/schema.js";
import { describeCompaction, describeStore, headerLines, isLargePolicy } from "./describe.js";
import type { EmitOptions, EmittedFile } from "./index.js";
import { irHash } from "./ir-json.js";
import { sha256 } from "./json.js";
import { code, member, printValue, quote, render, type Declaration, type Value } from "./printer.js";
import { typesFile } from "./types.js";

export const guardFile = (policy: PolicyIR): string => `${policy.name}.guard.ts`;

/** The modes a directive may name under this policy: those of the kinds that can be pruned at all. */
export function directiveModes(policy: PolicyIR): PruneMode[] {
  const prunable = policy.kinds.filter((k) => requestShapeOf(k, policy).prunable);
  const used = new Set((prunable.length > 0 ? prunable : policy.kinds).flatMap((k) => k.modes));
  const modes = PRUNE_MODES.filter((m) => used.has(m));
  return modes.length > 0 ? modes : [...PRUNE_MODES];
}

export function emitGuard(policy: PolicyIR, options: EmitOptions): EmittedFile {
  const hash = irHash(policy);
  const pinRef = pinTable(policy);
  const types = `./${typesFile(policy).replace(/\.ts$/, ".js")}`;
  const modes = directiveModes(policy);
  const first = policy.stores[0];
  const large = isLargePolicy(policy);
  const session: string[] = [
    policy.session.maxLengthMs === null ? "sessions have no length limit" : `sessions last up to ${formatDuration(policy.session.maxLengthMs)}`,
    policy.session.lossyBudget === null ? "no limit on lossy commitments" : `at most ${policy.session.lossyBudget} lossy commitment${policy.session.lossyBudget === 1 ? "" : "s"} each`,
    ...(policy.session.searchTokens === null ? [] : [`search answers of at most ${policy.session.searchTokens} tokens`]),
    ...(policy.session.compaction === null ? [] : [describeCompaction(policy.session.compaction)]),
    ...(policy.session.providerCompaction === null ? [] : [`provider-side compaction ${policy.session.providerCompaction === "allow" ? "allowed, checked first" : "forbidden"}`]),
  ];
  const { maxLengthMs, lossyBudget, searchTokens, compaction, providerCompaction } = policy.session;
  // Settings the policy leaves to the runtime's defaults are left out, so the literal says what is set.
  const limits: Record<string, Value> = {
    maxLengthMs, lossyBudget, ...(searchTokens === null ? {} : { searchTokens }), ...(compaction === null ? {} : { compaction }),
    ...(providerCompaction === null ? {} : { providerCompaction }),
  };
  // The call that wires the tables to the runtime; its argument is data, printed like every other literal.
  const call = "defineGuard<SpanKind, Requests, PolicyName, StoreName, Stores>(";
  const definition: Record<string, Value | undefined> = {
    name: policy.name,
    kinds: code("kinds"),
    session: code("session"),
    pins: policy.pins.map((p) => code(member("pin", pinRef.get(pinKey(p))!.key))),
    tombstone: policy.tombstone?.text,
    storeDeclarations: code("storeDeclarations"),
    defaultAuditStore: first?.name,
    directiveModes: modes,
  };
  const exported = (name: string, type: string, doc: string): Declaration => ({ kind: "const", doc, name, type, value: code(member("guard", name)) });
  const decls: Declaration[] = [
    { kind: "comment", lines: headerLines(policy, hash) },
    { kind: "import", names: [...(large ? ["contentHash"] : []), "defineGuard"], from: options.runtimeImport },
    {
      kind: "import",
      typeOnly: true,
      names: ["BackingStore", "DirectiveSchema", "DirectiveTool", "GuardedWindow", "GuardWindowOptions", "KindTable", "OpenStoresOptions", ...(pinRef.size > 0 ? ["PinPattern"] : []), "PruneMode", "RuntimePolicy", "SessionLimits"],
      from: options.runtimeImport,
    },
    { kind: "import", typeOnly: true, names: ["PolicyName", "Requests", "SpanKind", "StoreName"], from: types },
    { kind: "exportTypeStar", from: types },
    { kind: "const", doc: "The hash of the policy IR this module was generated from.", name: "irHash", value: hash },
    ...(pinRef.size > 0
      ? [{ kind: "const", exported: false, doc: "Identifier patterns the policy pins: carried into any digest or compressed form that lost them.", name: "pin", value: Object.fromEntries([...pinRef.values()].map((p) => [p.key, { name: p.pin.name, pattern: p.pin.pattern }])), suffix: "satisfies Record<string, PinPattern>" } satisfies Declaration]
      : []),
    ...kindsDeclarations(policy, pinRef, large),
    { kind: "const", exported: false, doc: `Session limits: ${session.join("; ")}.`, name: "session", type: "SessionLimits", value: limits },
    {
      kind: "const",
      doc: "The stores the policy declares, as data: what a program needs to open them.",
      name: "storeDeclarations",
      value: Object.fromEntries(
        policy.stores.map((s) => [s.name, { engine: s.engine, retentionMs: s.retentionMs, holds: s.holds, distinguishesAbsent: s.distinguishesAbsent, writable: s.writable }]),
      ),
      suffix: "as const",
    },
    {
      kind: "interface",
      alias: true,
      doc: `The stores a window of policy \`${policy.name}\` needs, by the names the policy gives them (a type, not an interface, so it is a \`ContextWindowOptions\` \`stores\` too).`,
      name: "Stores",
      members: policy.stores.map((s) => ({ doc: describeStore(s), name: s.name, type: "BackingStore" })),
    },
    {
      kind: "const",
      exported: false,
      doc: `Policy \`${policy.name}\` wired to the runtime: the runtime's \`defineGuard\` builds what this module exports from the tables above; a window it opens checks every prune against the stores at run time.`,
      name: "guard",
      value: code(`${call}${printValue(definition, "", "const guard = ".length + call.length)})`),
    },
    exported("policy", "RuntimePolicy<SpanKind>", `The runtime form of policy \`${policy.name}\`, as \`ContextWindow\` takes it.`),
    exported(
      "openStores",
      "(options: OpenStoresOptions) => Promise<Stores>",
      `Opens the stores policy \`${policy.name}\` declares, each with its declared retention, holds, provenance and writability (\`{ memory: true }\` opens them in memory, for tests).`,
    ),
    {
      kind: "type",
      doc: `Options of \`createWindow\` and \`resumeWindow\`${first ? `; \`auditStore\` defaults to \`${first.name}\`, the policy's first store` : ""}.`,
      name: "CreateWindowOptions",
      union: ["GuardWindowOptions<StoreName, Stores>"],
    },
    {
      kind: "type",
      doc: `A context window typed by policy \`${policy.name}\`: \`prune\` takes only this policy's refs, with the request the policy gives the ref's kind.`,
      name: "PolicyWindow",
      union: ["GuardedWindow<SpanKind, Requests, PolicyName>"],
    },
    exported("createWindow", "(options: CreateWindowOptions) => PolicyWindow", `Opens a context window under policy \`${policy.name}\`; every prune goes through the runtime check against its stores.`),
    exported(
      "resumeWindow",
      "(options: CreateWindowOptions) => Promise<PolicyWindow>",
      "Opens the window of an existing session (after a restart, or in another process) from its stores: every span back in its place, or said to be lost. Give it the same stores and `auditStore` as the windows that wrote the session.",
    ),
    exported("directiveModes", "readonly PruneMode[]", "The prune modes any kind of this policy allows; model directives in another mode are refused before they reach a kind."),
    exported("directiveSchema", "DirectiveSchema", "The zod schema of model directives under this policy (strict; `accept_lossy` is the JSON boolean only)."),
    exported(
      "directiveTools",
      "readonly DirectiveTool[]",
      "The directive tools under this policy, one per operation, for `openAIChatTools`, `anthropicTools`, `aiSDKTools` and `handleToolCall`.",
    ),
  ];
  return { path: guardFile(policy), contents: render(decls) };
}

type PinRef = Map<string, { key: string; pin: PinIR }>;

/** A kind's runtime rules; a pin is whatever `pinRef` makes of its key (a `pin.x` reference, or the key). */
function runtimeKind(k: PolicyIR["kinds"][number], pinOf: (key: string) => Value): Record<string, Value | undefined> {
  return {
    store: k.store,
    modes: k.modes,
    lossy: k.lossy,
    // Defaults are left out (no re-persist, no pins of its own), so each line says what is special.
    repersist: k.repersist ? true : undefined,
    pins: k.pins.length > 0 ? k.pins.map((p) => pinOf(pinKey(p))) : undefined,
    compressTargetTokens: k.compressTargetTokens ?? undefined,
  };
}

/**
 * The kinds' JSON text a large guard embeds: `runtimeKind` per kind, pins by their key in the `pin` table,
 * `undefined` members left out. `kindsFromJson` in a test turns it back into what the literal form says.
 */
export function kindsJson(policy: PolicyIR): string {
  const pinRef = pinTable(policy);
  return JSON.stringify(Object.fromEntries(policy.kinds.map((k) => [k.name, runtimeKind(k, (key) => pinRef.get(key)!.key)])));
}

function kindsDeclarations(policy: PolicyIR, pinRef: PinRef, large: boolean): Declaration[] {
  const doc = "Each kind's runtime rules; `Requests` in the types module says what they mean for a prune.";
  if (!large) {
    return [{
      kind: "const",
      exported: false,
      doc,
      name: "kinds",
      type: 'KindTable<SpanKind>',
      value: Object.fromEntries(policy.kinds.map((k) => [k.name, runtimeKind(k, (key) => code(member("pin", pinRef.get(key)!.key)))])),
    }];
  }
  const text = kindsJson(policy);
  const hasPins = policy.kinds.some((k) => k.pins.length > 0);
  return [
    { kind: "const", exported: false, doc: "The SHA-256 of `kindsJson`, checked when this module loads.", name: "kindsHash", value: sha256(text) },
    {
      kind: "const",
      exported: false,
      doc: `The ${policy.kinds.length} kinds' runtime rules as JSON (pins by their key in \`pin\`): a string tsc does not check element by element.`,
      name: "kindsJson",
      value: text,
    },
    {
      kind: "function",
      exported: false,
      doc: "Parses `kindsJson` once its hash is verified: an edited or truncated string fails when the module loads, not at a prune.",
      name: "loadKinds",
      params: "",
      returns: 'KindTable<SpanKind>',
      body: [
        `if (contentHash(kindsJson) !== kindsHash) throw new Error(${quote(`${guardFile(policy)}: kindsJson does not match its hash; regenerate it with \`pruneguard compile\``)});`,
        hasPins
          ? 'return JSON.parse(kindsJson, (key, value: unknown) => (key === "pins" ? (value as Array<keyof typeof pin>).map((p) => pin[p]) : value)) as KindTable<SpanKind>;'
          : 'return JSON.parse(kindsJson) as KindTable<SpanKind>;',
      ],
    },
    { kind: "const", exported: false, doc, name: "kinds", type: 'KindTable<SpanKind>', value: code("loadKinds()") },
  ];
}

const pinKey = (p: PinIR): string => `${p.name}\u0000${p.pattern}`;

/** Every distinct pin of the policy, in order of first use, under a unique key (its name, or `name_2`). */
function pinTable(policy: PolicyIR): PinRef {
  const table = new Map<string, { key: string; pin: PinIR }>();
  const used = new Set<string>();
  for (const p of [...policy.pins, ...policy.kinds.flatMap((k) => k.pins)]) {
    if (table.has(pinKey(p))) continue;
    let key = p.name;
    for (let n = 2; used.has(key); n++) key = `${p.name}_${n}`;
    used.add(key);
    table.set(pinKey(p), { key, pin: p });
  }
  return table;
}
