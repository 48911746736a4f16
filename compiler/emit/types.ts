/**
 * `<policy>.types.ts`: the span kinds of a policy and, per kind, the exact prune request it accepts.
 *
 * The shapes are chosen for the consumer's type-check cost as much as for the rules (see
 * docs/generated-code.md): one named interface per distinct rule shape, shared by every kind with that
 * shape, and a `Requests` interface mapping kind → request. A ref carries its own request type
 * (`Ref<K>` = `SpanRef<K, Requests[K]>`), so a prune call checks its request against the ref without
 * inferring anything from the kind union. No template-literal types, no large intersections.
 */
import { requestShapeOf, type LossyFlag, type RequestShape } from "../analysis/requests.js";
import type { PolicyIR } from "../ir/schema.js";
import type { PruneMode } from "../../src/types.js";
import { describeKind, describeKindShort, describeStore, headerLines, isLargePolicy } from "./describe.js";
import type { EmitOptions, EmittedFile } from "./index.js";
import { irHash } from "./ir-json.js";
import { quote, render, type Declaration, type Member } from "./printer.js";

export const typesFile = (policy: PolicyIR): string => `${policy.name}.types.ts`;

export function emitTypes(policy: PolicyIR, options: EmitOptions): EmittedFile {
  const shapes = policy.kinds.map((k) => requestShapeOf(k, policy));
  const interfaces = new Map<string, Declaration>();
  const requestOf = (shape: RequestShape): string => {
    if (!shape.prunable) return `PruneguardTypeError<${quote(shape.reason)}>`;
    return requestInterfaces(shape.modes, shape.acceptLossy)
      .map((d) => {
        if (!interfaces.has(d.name)) interfaces.set(d.name, d);
        return d.name;
      })
      .join(" | ");
  };
  const describe = isLargePolicy(policy) ? describeKindShort : describeKind;
  const requests: Member[] = policy.kinds.map((k, i) => ({ doc: describe(k, policy), name: k.name, type: requestOf(shapes[i]!) }));
  const orNever = (xs: readonly string[]) => (xs.length === 0 ? ["never"] : xs);
  const decls: Declaration[] = [
    { kind: "comment", lines: headerLines(policy, irHash(policy)) },
    { kind: "import", typeOnly: true, names: ["PruneguardTypeError", "SpanRef"].filter((n) => n === "SpanRef" || shapes.some((s) => !s.prunable)), from: options.runtimeImport },
    // A large policy names its kinds once, as the keys of `Requests`: 5,000 literal types fewer to parse.
    { kind: "type", doc: `The span kinds of policy \`${policy.name}\`.`, name: "SpanKind", union: isLargePolicy(policy) ? ["keyof Requests"] : orNever(policy.kinds.map((k) => quote(k.name))) },
    {
      kind: "type",
      doc: `The stores policy \`${policy.name}\` declares: ${policy.stores.map(describeStore).join("; ") || "none"}.`,
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
      doc: "A span of kind `K`, as `append` returns it: a branded id that carries the prune request its kind accepts.",
      name: "Ref",
      params: "<K extends SpanKind = SpanKind>",
      union: ["SpanRef<K, Requests[K]>"],
    },
  ];
  return { path: typesFile(policy), contents: render(decls) };
}

const PREFIX: Record<LossyFlag, string> = { optional: "Backed", never: "BackedNoLoss", required: "LossyOnly" };

/** The interfaces a kind's request is the union of: one for its non-summarize modes, one for summarize. */
function requestInterfaces(modes: readonly PruneMode[], flag: LossyFlag): Array<Extract<Declaration, { kind: "interface" }>> {
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
    const members: Member[] = [
      { name: "mode", type: group.map(quote).join(" | ") },
      ...(group[0] === "summarize" ? [{ doc: "The digest that replaces the span; the kind's pins are carried into it.", name: "digest", type: "string" }] : []),
      flag === "optional"
        ? { doc: "Accept an irreversible loss when the copy cannot be verified.", name: "acceptLossy", type: "boolean", optional: true }
        : flag === "never"
          ? { doc: "The kind forbids lossy commitment: only `false` is meaningful.", name: "acceptLossy", type: "false", optional: true }
          : { doc: "Must be the literal `true`: a `boolean` is not an explicit acceptance.", name: "acceptLossy", type: "true" },
    ];
    return { kind: "interface", doc, name, members };
  });
}
