/**
 * For suites about what a decision does to the window (the line that replaces a span, tombstones, groups,
 * resume): their windows apply every decision at once (`compaction: "immediate"`), so what they render is
 * what the decision applied. When a decision is applied — compaction points — is `compaction.test.ts`'s.
 */
import type { ContextWindowOptions } from "../../src/window/window-options.js";

export function immediate<K extends string>(options: ContextWindowOptions<K>): ContextWindowOptions<K> {
  return { ...options, limits: { ...options.limits, compaction: options.limits?.compaction ?? "immediate" } };
}
