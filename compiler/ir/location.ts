/**
 * Source locations carried by every IR node and diagnostic.
 *
 * Plain data and a plain check, without zod: the incremental build reads locations back from its
 * manifest (in every diagnostic it replays) before anything heavy is loaded, and zod alone costs a
 * `check` with nothing to do ~30 ms of start-up (BENCHMARKS.md, figure 4). The IR's zod schema
 * (`schema.ts`) builds its `Location` from `LOCATION_POSITIONS`; a test holds the two to one answer.
 */
import { hasExactKeys, isRecord } from "./shape.js";

/**
 * A source range. Lines and columns are 1-based; the end is exclusive (the column just past the last
 * character). `file` is relative to the compiler's working directory, with POSIX separators.
 */
export interface Location {
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

/** The numeric members of a location: each an integer ≥ 1. */
export const LOCATION_POSITIONS = ["line", "column", "endLine", "endColumn"] as const;

/** Whether `v` is a `Location`: exactly its five members, `file` a string, the rest integers ≥ 1. */
export function isLocation(v: unknown): v is Location {
  if (!isRecord(v) || !hasExactKeys(v, ["file", ...LOCATION_POSITIONS])) return false;
  return typeof v.file === "string" && LOCATION_POSITIONS.every((k) => Number.isSafeInteger(v[k]) && (v[k] as number) >= 1);
}
