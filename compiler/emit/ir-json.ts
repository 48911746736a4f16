/** `generated/<policy>.ir.json`: the validated, resolved IR of one policy, with a hash of its content. */
import { IR_VERSION, type PolicyIR } from "../ir/schema.js";
import { canonicalJson, sha256 } from "./json.js";
import type { EmitOptions, EmittedFile } from "./index.js";

export function irHash(policy: PolicyIR): string {
  return sha256(canonicalJson(policy));
}

export function emitIrJson(policy: PolicyIR, _options?: EmitOptions): EmittedFile {
  return {
    path: `${policy.name}.ir.json`,
    contents: canonicalJson({
      generated: "by pruneguard compile; do not edit",
      irVersion: IR_VERSION,
      hash: irHash(policy),
      policy,
    }),
  };
}
