/**
 * The nearest name to a misspelt one, for "did you mean" hints. Shared by the compiler's diagnostics
 * (`compiler/frontend/suggest.ts` words them) and the runtime's own errors (an unknown store engine in
 * `openStores`), which may not import from the compiler: this base layer is what both may import.
 */

/** Names longer than this get no suggestion: nobody misspells a 65-character name, and the distance is quadratic. */
const LONGEST = 64;

/**
 * The candidate within a small edit distance of `name` (a third of its length, at least 2), if any;
 * case is ignored, and of equally near candidates the first wins.
 */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  if (name.length > LONGEST) return undefined;
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const c of candidates) {
    // The distance is at least the difference in length: most candidates are ruled out without computing it.
    if (c.length > LONGEST || Math.abs(c.length - name.length) >= bestDistance) continue;
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** The Levenshtein distance of `a` and `b` (insertions, deletions and substitutions), in one row of memory. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] as number;
}
