/**
 * Durations for retention and session limits.
 *
 * A `Duration` is a number of milliseconds branded so that a bare number (is `2` hours or milliseconds?)
 * is a type error where the DSL expects a duration.
 */

declare const durationBrand: unique symbol;

/** A span of time in milliseconds, made by `seconds`, `minutes`, `hours` or `days`. */
export type Duration = number & { readonly [durationBrand]: "ms" };

/** Retention that never expires. Write `retention: forever`. */
export const forever = "forever";
export type Forever = typeof forever;

/** How long a store keeps a copy: a duration, or `forever`. */
export type Retention = Duration | Forever;

/**
 * Milliseconds per unit. The compiler reads this table to evaluate `hours(2)` without running policy code,
 * so the DSL and the compiler cannot disagree on what a unit means.
 */
export const DURATION_UNITS = Object.freeze({
  seconds: 1_000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
} as const);
export type DurationUnit = keyof typeof DURATION_UNITS;

function make(unit: DurationUnit, n: number): Duration {
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`${unit}(${n}): expected a finite number >= 0`);
  return (n * DURATION_UNITS[unit]) as Duration;
}

/** `n` seconds. */
export function seconds(n: number): Duration {
  return make("seconds", n);
}
/** `n` minutes. */
export function minutes(n: number): Duration {
  return make("minutes", n);
}
/** `n` hours. */
export function hours(n: number): Duration {
  return make("hours", n);
}
/** `n` days. */
export function days(n: number): Duration {
  return make("days", n);
}

/** Milliseconds of a retention, or `null` for `forever`. */
export function retentionMs(r: Retention): number | null {
  return r === forever ? null : r;
}

/** Renders milliseconds the way a reviewer reads them: `2h`, `30d`, `90m`, `1h 30m`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "forever";
  if (ms === 0) return "0s";
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1_000]] as const) {
    if (rest >= size) {
      const n = Math.floor(rest / size);
      parts.push(`${n}${unit}`);
      rest -= n * size;
    }
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.join(" ");
}
