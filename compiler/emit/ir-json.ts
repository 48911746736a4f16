/**
 * `generated/<policy>.ir.json`: the validated, resolved IR of one policy, with a hash of its content.
 *
 * The file is for tools and for a reader chasing a location, not for reading top to bottom (the types and
 * guard modules explain a policy), so it is canonical JSON without indentation: sorted keys, and one line
 * per store, kind and pin, so a change to one kind is a one-line diff. Indented, it was ten times the size
 * of its policy source, most of it whitespace around the source locations every node carries.
 */
import type { PolicyIR } from "../ir/schema.js";
import { IR_VERSION } from "../ir/version.js";
import { sha256, sortKeys } from "./json.js";
import { IR_GENERATED, type EmitOptions, type EmittedFile } from "./files.js";


const hashes = new WeakMap<PolicyIR, string>();
const sortedPolicies = new WeakMap<PolicyIR, Record<string, unknown>>();

/** The policy with its keys sorted at every depth, made once for the hash and the file. */
function sorted(policy: PolicyIR): Record<string, unknown> {
  let s = sortedPolicies.get(policy);
  if (s === undefined) {
    s = sortKeys(policy) as Record<string, unknown>;
    sortedPolicies.set(policy, s);
  }
  return s;
}

/**
 * SHA-256 of the policy's canonical JSON (sorted keys, two-space indent, trailing newline: the form the
 * first IR files were written in, kept so the hashes in generated headers stay what they were). Every
 * emitter of a policy asks for it; it is computed once per policy object.
 */
export function irHash(policy: PolicyIR): string {
  let hash = hashes.get(policy);
  if (hash === undefined) {
    hash = sha256(`${JSON.stringify(sorted(policy), null, 2)}\n`);
    hashes.set(policy, hash);
  }
  return hash;
}

export function emitIrJson(policy: PolicyIR, _options?: EmitOptions): EmittedFile {
  const entries = Object.entries(sorted(policy)).map(([key, value]) => {
    const text = Array.isArray(value) && value.length > 0 ? `[\n${value.map((v) => JSON.stringify(v)).join(",\n")}\n]` : JSON.stringify(value);
    return `${JSON.stringify(key)}:${text}`;
  });
  const head = [`"generated":${JSON.stringify(IR_GENERATED)}`, `"hash":${JSON.stringify(irHash(policy))}`, `"irVersion":${IR_VERSION}`];
  return { path: `${policy.name}.ir.json`, contents: `{${head.join(",")},\n"policy":{${entries.join(",")}}}\n` };
}
