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

const bodies = new WeakMap<PolicyIR, string>();
const hashes = new WeakMap<PolicyIR, string>();

/**
 * The policy as the `policy` member of its `ir.json`: canonical JSON (keys sorted at every depth), compact,
 * each member of a non-empty list on a line of its own. Made once per policy object, for the hash and the file.
 */
function body(policy: PolicyIR): string {
  let text = bodies.get(policy);
  if (text === undefined) {
    const entries = Object.entries(sortKeys(policy) as Record<string, unknown>).map(([key, value]) => {
      const json = Array.isArray(value) && value.length > 0 ? `[\n${value.map((v) => JSON.stringify(v)).join(",\n")}\n]` : JSON.stringify(value);
      return `${JSON.stringify(key)}:${json}`;
    });
    text = `{${entries.join(",")}}`;
    bodies.set(policy, text);
  }
  return text;
}

/**
 * SHA-256 of the policy's canonical JSON, as its `ir.json` holds it (the `policy` member's bytes, so a tool
 * can check the file against the hash it carries). Every emitter of a policy asks for it; it is computed
 * once per policy object.
 */
export function irHash(policy: PolicyIR): string {
  let hash = hashes.get(policy);
  if (hash === undefined) {
    hash = sha256(body(policy));
    hashes.set(policy, hash);
  }
  return hash;
}

export function emitIrJson(policy: PolicyIR, _options?: EmitOptions): EmittedFile {
  const head = [`"generated":${JSON.stringify(IR_GENERATED)}`, `"hash":${JSON.stringify(irHash(policy))}`, `"irVersion":${IR_VERSION}`];
  return { path: `${policy.name}.ir.json`, contents: `{${head.join(",")},\n"policy":${body(policy)}}\n` };
}
