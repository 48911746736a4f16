/**
 * Search against a model, on generated sessions of hundreds of pruned spans:
 *
 * - every identifier the session can still read (a live span, or a pruned span whose copy is held) is
 *   found, in the span that held it, with the handle that recalls it;
 * - every search for an identifier that only an unrecoverable span held — pruned under a tombstone, or
 *   pruned reversibly and then its copy rotated out — names that span as a possible holder;
 * - a search for an identifier no span ever held names exactly the unrecoverable spans, no more, no less.
 *
 * Runs on a `MemoryStore` and on a real SQLite file (the FTS5 trigram index). Copies are lost the way
 * they are in production: a store without holds rotates them out under retention.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { SearchOutcome } from "../../src/outcome.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { SqliteStore } from "../../src/stores/sqlite.js";
import type { BackingStore } from "../../src/stores/store.js";
import { ManualClock, type KindPolicy } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { fuzzRuns, HOUR, RETENTION_MS, tempDir, timeoutFor } from "./helpers.js";
import { refSpanId } from "../../src/window/refs.js";

const KINDS: Record<string, KindPolicy> = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
};

/** What the model says became of a span. */
type Fate = "live" | "held" | "tombstone" | "lost";
const RECOVERABLE: ReadonlySet<Fate> = new Set(["live", "held"]);

interface Planned {
  readonly kind: "tool" | "note";
  /** Before the rotation (its copy, if pruned reversibly, is rotated out) or after. */
  readonly early: boolean;
  readonly action: "keep" | "drop";
  readonly filler: string;
}

const FILLERS = ["GET /orders 200 ok", `it's 100% "quoted" back_slash \\ naïve 🚀`, "retry 3/5 after 250ms", "", "x".repeat(300)];

const spanPlan = fc.record({
  kind: fc.constantFrom<"tool" | "note">("tool", "tool", "tool", "note"),
  early: fc.boolean(),
  action: fc.constantFrom<Planned["action"]>("keep", "drop", "drop", "drop"),
  filler: fc.constantFrom(...FILLERS),
});

const dir = tempDir("search-model");
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STORES: Array<[string, (clock: ManualClock) => BackingStore]> = [
  ["MemoryStore", (clock) => new MemoryStore({ name: "log", retentionMs: RETENTION_MS, clock, holds: false })],
  ["SqliteStore", (clock) => new SqliteStore({ name: "log", path: join(dir, `s${files++}.db`), retentionMs: RETENTION_MS, clock, holds: false })],
];

/** Identifiers unique per span, in a shape a store's index and a regex both see as one token. */
const idOf = (n: number, salt: string) => `id_${salt}${n.toString(36)}_q`;

async function runSession(open: (clock: ManualClock) => BackingStore, plan: readonly Planned[], salt: string): Promise<void> {
  const clock = new ManualClock(0);
  const store = open(clock);
  const win = new ContextWindow({ session: "model", clock, stores: { log: store }, kinds: KINDS });
  const fate = new Map<string, Fate>();
  const ids = new Map<string, string>();
  const appendAll = async (early: boolean) => {
    for (const [i, p] of plan.entries()) {
      if (p.early !== early) continue;
      const id = idOf(i, salt);
      const spanRef = await win.append({ kind: p.kind, text: `${p.filler}\nresult ${i}: ${id}\n${p.filler}` });
      const ref = refSpanId(spanRef);
      ids.set(ref, id);
      if (p.action === "keep") {
        fate.set(ref, "live");
        continue;
      }
      // A note has no store: its only prune is a lossy one. (A tool result with a verified copy is pruned
      // reversibly even when the directive accepts a loss.)
      const lossy = p.kind === "note";
      const o = await win.tryPrune({ span: spanRef, mode: "drop", acceptLossy: true });
      expect(o.status).toBe(lossy ? "lossy" : "reversible");
      fate.set(ref, lossy ? "tombstone" : "held");
    }
  };
  await appendAll(true);
  // Retention passes; this store places no holds, so every copy written so far is rotated out.
  clock.advance(RETENTION_MS + HOUR);
  await store.rotate();
  for (const [ref, f] of fate) if (f === "held") fate.set(ref, "lost");
  await appendAll(false);

  const unrecoverable = [...fate].filter(([, f]) => !RECOVERABLE.has(f)).map(([ref]) => ref);
  const asSearch = (o: unknown): SearchOutcome => {
    const s = o as SearchOutcome;
    expect(s.op).toBe("search");
    return s;
  };
  for (const [ref, f] of fate) {
    const id = ids.get(ref)!;
    const r = asSearch(ref.endsWith("3") ? await win.search({ query: `\\b${id}\\b`, regex: true }) : await win.applyDirective({ op: "search", query: id }));
    if (RECOVERABLE.has(f)) {
      const m = r.matches.find((x) => x.spanId === ref) ?? null;
      const shownOrOmitted = m !== null || r.omitted > 0;
      expect({ ref, f, found: shownOrOmitted }).toEqual({ ref, f, found: true });
      if (m !== null) expect(m).toMatchObject({ source: f === "live" ? "live" : "copy", ...(f === "held" ? { handle: expect.stringMatching(/^#\d+$/) } : {}) });
      expect(r.status).toBe("match");
    } else {
      expect({ ref, f, status: r.status }).toEqual({ ref, f, status: "no-match" });
      expect(r.coverage.holes.map((h) => h.spanId)).toContain(ref);
      expect(r.coverage.holes.find((h) => h.spanId === ref)!.why).toBe(f === "tombstone" ? "lossy" : "copy-lost");
      expect(namedIn(r.text, ref) || /\d+ more/.test(r.text)).toBe(true);
    }
  }
  // An identifier no span held: exactly the unrecoverable spans are named as possible holders.
  const never = asSearch(await win.search(`id_${salt}never`));
  expect(never.status).toBe("no-match");
  expect(never.coverage.holes.map((h) => h.spanId).sort()).toEqual([...unrecoverable].sort());
  expect(never.coverage.live + never.coverage.pruned + never.coverage.holes.length).toBe(fate.size);
  expect(never.tokens).toBeLessThanOrEqual(400);
  await store.close();
}

/** Whether the answer's text names `spanId`, on its own or inside a range `span_a–span_b`. */
function namedIn(text: string, spanId: string): boolean {
  const n = Number(spanId.slice(5));
  for (const m of text.matchAll(/span_(\d+)(?:–span_(\d+))?/g)) {
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (n >= a && n <= b) return true;
  }
  return false;
}

describe("search against a model of the session", () => {
  for (const [label, open] of STORES) {
    it(`${label}: recoverable identifiers are found; unrecoverable holders are named`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(spanPlan, { minLength: 200, maxLength: 400 }), fc.stringMatching(/^[a-z]{3}$/), async (plan, salt) => {
          await runSession(open, plan, salt);
        }),
        { numRuns: fuzzRuns(3) },
      );
    }, timeoutFor(3, 20_000));
  }
});
