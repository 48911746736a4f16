/**
 * Shape checks for JSON the compiler reads back from disk (its manifest, and the package.json config): plain
 * functions with no dependency, so reading them costs no start-up (BENCHMARKS.md, figure 4).
 */

/** A plain object (what `JSON.parse` makes of `{…}`), for the shape checks of data read back from disk. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Whether every own key of `v` is one of `keys` (a strict object: no extra keys) and every required one is there. */
export function hasExactKeys(v: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(v);
  return own.length === keys.length && own.every((k) => keys.includes(k));
}
