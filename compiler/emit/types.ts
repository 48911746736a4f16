/**
 * `<policy>.types.ts`: the span kinds of a policy and, per kind, the exact prune request it accepts.
 *
 * The shapes are chosen for the consumer's type-check cost as much as for the rules (see
 * docs/generated-code.md): one named interface per distinct rule shape, shared by every kind with that
 * shape, instantiated per kind with the kind and the policy (`BackedNoLossDrop<"auditNote", PolicyName>`)
 * so that a refused request's message names both, and a `Requests` interface mapping kind → request. A
 * ref carries its kind and its policy (`Ref<K>` = `SpanRef<K, PolicyName>`); the window reads the rule
 * from `Requests` by the ref's kind, so the rule never depends on how a ref was typed.
 */
import { requestShapeOf, type LossyFlag, type RequestShape } from "../analysis/requests.js";
import type { KindIR, PolicyIR } from "../ir/schema.js";
import type { PruneMode } from "../../src/types.js";
import { describeKind, describeKindShort, describeStore, headerLines, isLargePolicy } from "./describe.js";
import type { EmitOptions, EmittedFile } from "./index.js";
import { irHash } from "./ir-json.js";
import { quote, render, type Declaration, type Member } from "./printer.js";

export const typesFile = (policy: PolicyIR): string => `${policy.name}.types.ts`;

export function emitTypes(policy: PolicyIR, options: EmitOptions): EmittedFile {
  const shapes = policy.kinds.map((k) => requestShapeOf(k, policy));
  const interfaces = new Map<string, Declaration>();
  // A large policy shares one request type per rule shape between its kinds, as before kinds were named in
  // messages: a type per kind is one more target for tsc to relate per kind a consumer prunes (BENCHMARKS.md,
  // figure 5). Its messages name the policy and the rule; the kind is the ref's at the error's position.
  const named = !isLargePolicy(policy);
  // The interfaces of each rule shape, worked out once per shape (the kinds of a policy share a few).
  const byShape = new Map<string, ReturnType<typeof requestInterfaces>>();
  const requestOf = (shape: RequestShape, kind: string): string => {
    if (!shape.prunable) return `PruneguardTypeError<${quote(shape.reason.replace(`kind ${kind} `, `kind ${kind} of policy ${policy.name} `))}>`;
    const key = `${shape.acceptLossy} ${shape.modes.join(",")}`;
    let decls = byShape.get(key);
    if (decls === undefined) byShape.set(key, (decls = requestInterfaces(shape.modes, shape.acceptLossy, named ? null : policy.name)));
    return decls
      .map((d) => {
        if (!interfaces.has(d.name)) interfaces.set(d.name, d);
        return named ? `${d.name}<${quote(kind)}, PolicyName>` : d.name;
      })
      .join(" | ");
  };
  const flags = new Set(shapes.flatMap((s) => (s.prunable ? [s.acceptLossy] : [])));
  // Each store's description, by name (the first of a name, as `policy.stores.find` reads it).
  const described = policy.stores.map(describeStore);
  const stores = new Map<string, string>();
  policy.stores.forEach((s, i) => {
    if (!stores.has(s.name)) stores.set(s.name, described[i]!);
  });
  const describe = (k: KindIR, i: number) => (isLargePolicy(policy) ? describeKindShort(k, policy, shapes[i]) : describeKind(k, policy, shapes[i], stores));
  const requests: Member[] = policy.kinds.map((k, i) => ({ doc: describe(k, i), name: k.name, type: requestOf(shapes[i]!, k.name) }));
  const orNever = (xs: readonly string[]) => (xs.length === 0 ? ["never"] : xs);
  const decls: Declaration[] = [
    { kind: "comment", lines: headerLines(policy, irHash(policy)) },
    {
      kind: "import",
      typeOnly: true,
      names: [
        "PruneRequestOf",
        ...(shapes.some((s) => !s.prunable) || flags.has("never") || flags.has("required") ? ["PruneguardTypeError"] : []),
        "SpanRef",
      ],
      from: options.runtimeImport,
    },
    {
      kind: "type",
      doc: `The name of this policy: its refs carry it, so a ref of another policy does not compile on its windows.`,
      name: "PolicyName",
      union: [quote(policy.name)],
    },
    // A large policy names its kinds once, as the keys of `Requests`: 5,000 literal types fewer to parse.
    { kind: "type", doc: `The span kinds of policy \`${policy.name}\`.`, name: "SpanKind", union: isLargePolicy(policy) ? ["keyof Requests"] : orNever(policy.kinds.map((k) => quote(k.name))) },
    {
      kind: "type",
      doc: `The stores policy \`${policy.name}\` declares: ${described.join("; ") || "none"}.`,
      name: "StoreName",
      union: orNever(policy.stores.map((s) => quote(s.name))),
    },
    ...interfaces.values(),
    {
      kind: "interface",
      doc: `What a prune of each kind of policy \`${policy.name}\` must carry; hover a kind for its rules.`,
      name: "Requests",
      members: requests,
    },
    {
      kind: "type",
      doc: "A span of kind `K` of a window of this policy, as `append` and `ref` return it; a prune of it takes the request `Requests` gives its kind.",
      name: "Ref",
      params: "<K extends SpanKind = SpanKind>",
      union: ["SpanRef<K, PolicyName, RequestOf<K>>"],
    },
    {
      kind: "type",
      doc: "The request a prune of a `Ref<K>` takes, as `prune` reads it: `K`'s rule, or every member's for a union. For kind-generic helpers: `(ref: Ref<K>, request: RequestOf<K>) => win.prune(ref, request)` compiles for any `K`.",
      name: "RequestOf",
      params: "<K extends SpanKind = SpanKind>",
      union: ["PruneRequestOf<Requests, K, PolicyName>"],
    },
  ];
  return { path: typesFile(policy), contents: render(decls) };
}

/**
 * What a wrong `acceptLossy` meets, as the compiler's message shows it: the kind, the policy and the rule.
 * Template literal types over the interface's own parameters, so one interface still serves every kind.
 */
const LOSSY_FORBIDDEN = (kind: string, policy: string) =>
  `kind ${kind} of policy ${policy} forbids lossy commitment: remove acceptLossy; the prune is reversible when its store verifies the copy, and refused when it cannot`;
const LOSSY_REQUIRED = (kind: string, policy: string) =>
  `kind ${kind} of policy ${policy} keeps no copy a store can verify: every prune of it is a lossy commitment and must say acceptLossy: true (the literal; a boolean is not an acceptance)`;

/** A message as a type: a template literal over the interface's `K` and `P`, or, shared, a string naming the policy. */
const message = (text: (kind: string, policy: string) => string, shared: string | null): string =>
  shared === null ? `\`${text("${K}", "${P}")}\`` : quote(text("(this kind)", shared).replace("kind (this kind)", "a kind"));

const PREFIX: Record<LossyFlag, string> = { optional: "Backed", never: "BackedNoLoss", required: "LossyOnly" };

/** The interfaces a kind's request is the union of: one for its non-summarize modes, one for summarize. */
function requestInterfaces(modes: readonly PruneMode[], flag: LossyFlag, shared: string | null): Array<Extract<Declaration, { kind: "interface" }>> {
  const plain = modes.filter((m) => m !== "summarize");
  const groups = [...(plain.length > 0 ? [plain] : []), ...(modes.includes("summarize") ? [["summarize" as const]] : [])];
  return groups.map((group) => {
    const name = `${PREFIX[flag]}${group.map((m) => m[0]!.toUpperCase() + m.slice(1)).join("")}`;
    const what = `A ${group.join(" or ")} prune of a kind`;
    const doc =
      flag === "optional"
        ? `${what} a store backs: reversible when the runtime verifies the copy; \`acceptLossy: true\` lets it commit a loss (a tombstone) when it cannot.`
        : flag === "never"
          ? `${what} a store backs and that forbids lossy commitment: reversible when the runtime verifies the copy, rejected when it cannot.`
          : `${what} nothing can back: always a lossy commitment that leaves a tombstone, so the request must say \`acceptLossy: true\`.`;
    // `| undefined` on the optional flags: under `exactOptionalPropertyTypes`, `acceptLossy: opts.lossy` (an
    // optional boolean) must compile, as the runtime reads `undefined` as absent. The message types are
    // the alternative a wrong value meets, so the compiler's error names the kind, the policy and the rule.
    const members: Member[] = [
      { name: "mode", type: group.map(quote).join(" | ") },
      ...(group[0] === "summarize" ? [{ doc: "The digest that replaces the span; the kind's pins are carried into it.", name: "digest", type: "string" }] : []),
      flag === "optional"
        ? { doc: "Accept an irreversible loss when the copy cannot be verified.", name: "acceptLossy", type: "boolean | undefined", optional: true }
        : flag === "never"
          ? { doc: "The kind forbids lossy commitment: only `false` is meaningful.", name: "acceptLossy", type: `false | undefined | PruneguardTypeError<${message(LOSSY_FORBIDDEN, shared)}>`, optional: true }
          : { doc: "Must be the literal `true`: a `boolean` is not an explicit acceptance.", name: "acceptLossy", type: `true | PruneguardTypeError<${message(LOSSY_REQUIRED, shared)}>` },
    ];
    return { kind: "interface", doc, name, ...(shared === null ? { params: "<K extends string, P extends string>" } : {}), members };
  });
}
