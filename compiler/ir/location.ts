/** Source locations carried by every IR node and diagnostic. */
import { z } from "zod";

/**
 * A source range. Lines and columns are 1-based; the end is exclusive (the column just past the last
 * character). `file` is relative to the compiler's working directory, with POSIX separators.
 */
export const Location = z.strictObject({
  file: z.string(),
  line: z.int().min(1),
  column: z.int().min(1),
  endLine: z.int().min(1),
  endColumn: z.int().min(1),
});
export type Location = z.infer<typeof Location>;
