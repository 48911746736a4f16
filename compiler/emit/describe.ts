/** The words generated code uses to explain a policy: file headers and the one-line JSDoc on each kind. */
import { formatDuration } from "../../src/policy/durations.js";
import { DEFAULT_COMPACTION } from "../../src/policy/kinds.js";
import { describeFate } from "../analysis/fate.js";
import { requestShapeOf, type RequestShape } from "../analysis/requests.js";
import type { KindIR, PolicyIR, SessionIR, StoreIR } from "../ir/schema.js";
import { GENERATED_MARK } from "./files.js";

/** The comment lines that head a generated file. */
export function headerLines(policy: PolicyIR, hash: string): string[] {
  return [
    GENERATED_MARK.slice(3),
    `policy ${policy.name}${policy.extends ? ` (extends ${policy.extends.name})` : ""}, from ${policy.file}`,
    `IR sha256:${hash}`,
    "Regenerate with `pruneguard compile`; `pruneguard check` fails when this file is stale.",
  ];
}

/** A store in a few words: `toolLog (sqlite, retention 2h, holds)`. */
export function describeStore(s: StoreIR): string {
  const traits = [
    s.engine,
    `retention ${formatDuration(s.retentionMs)}`,
    s.holds ? "holds" : "no holds",
    ...(s.distinguishesAbsent ? [] : ["cannot distinguish absent"]),
    ...(s.writable ? [] : ["read-only"]),
  ];
  return `${s.name} (${traits.join(", ")})`;
}

/**
 * When decided prunes reach the window, in a few words: `prunes applied once they free 20,000 tokens or
 * the window renders 120,000`. `null` is the runtime's default, said as such.
 */
export function describeCompaction(c: SessionIR["compaction"]): string {
  if (c === "immediate") return "each prune applied as it is decided (compaction: immediate)";
  const { minFreedTokens, atTokens } = c ?? DEFAULT_COMPACTION;
  const limit = atTokens === null ? "the window reaches its maxTokens, if set" : `the window renders ${tokens(atTokens)}`;
  return `prunes applied once they free ${tokens(minFreedTokens)} tokens or ${limit}${c === null ? " (the default)" : ""}`;
}

const tokens = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/**
 * What the policy says about one kind, on one line: store, modes, lossy rule, fate and why. An emitter that
 * describes every kind passes what it has already worked out per policy: the kind's request shape, and
 * each store's description by name.
 */
export function describeKind(
  kind: KindIR,
  policy: PolicyIR,
  shape: RequestShape = requestShapeOf(kind, policy),
  stores?: ReadonlyMap<string, string>,
): string {
  let store: string | undefined;
  if (stores) store = kind.store === null ? undefined : stores.get(kind.store);
  else {
    const s = policy.stores.find((s) => s.name === kind.store);
    store = s && describeStore(s);
  }
  const parts = [
    store !== undefined ? `store ${store}` : "no store",
    `modes ${kind.modes.join(", ")}`,
    kind.lossy === "forbid" ? "lossy forbidden" : "lossy with acceptLossy",
    ...(kind.repersist ? ["re-persists"] : []),
    `${describeFate(shape.fate)}: ${shape.fate.why.replaceAll("`", "")}`,
  ];
  return `\`${kind.name}\`: ${parts.join("; ")}.`;
}

/**
 * Above this many kinds the guard carries its kinds as a JSON string (parsed once at load, checked against
 * its SHA-256) instead of an object literal, and the types module's per-kind docs are one short line:
 * tsc then neither checks 5,000 object literals against `RuntimePolicy` nor parses a megabyte of docs in
 * every consumer's program (benchmark 5). Small policies keep the readable literal.
 */
export const LARGE_POLICY_KINDS = 200;

export const isLargePolicy = (policy: PolicyIR): boolean => policy.kinds.length > LARGE_POLICY_KINDS;

/** `describeKind` for a large policy: store, modes and fate in a few words (`explain` has the rest). */
export function describeKindShort(kind: KindIR, policy: PolicyIR, shape: RequestShape = requestShapeOf(kind, policy)): string {
  return `\`${kind.name}\`: ${kind.store ?? "no store"}; ${kind.modes.join(", ")}; ${kind.lossy === "forbid" ? "no loss" : "lossy with flag"}; ${describeFate(shape.fate)}.`;
}
