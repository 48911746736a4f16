/**
 * "Did you mean" hints for misspelt names, worded for diagnostics. Which name is nearest is decided by
 * `closest` in `src/policy/suggest.ts`, which the runtime's own errors share.
 */
import { closest } from "../../src/policy/suggest.js";

export { closest };

export function didYouMean(name: string, candidates: readonly string[]): string {
  const c = closest(name, candidates);
  return c === undefined ? "" : ` (did you mean \`${c}\`?)`;
}

/**
 * The hint for a name that is not a member of a namespace: the nearest member, if one is close, and all of
 * them, so a reader sees what there is to choose from: `` (did you mean `uuid`? presets: requestId, uuid)``.
 */
export function memberHint(name: string, members: readonly string[], noun: string): string {
  const c = closest(name, members);
  return ` (${c === undefined ? "" : `did you mean \`${c}\`? `}${noun}: ${members.join(", ")})`;
}
