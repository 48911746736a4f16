/**
 * Model-based tests: random sequences of append, prune (every mode, with `accept_lossy` true, false and
 * absent), recall, clock advances, rotation and — on the SQLite file — crash-and-reopen, checked after
 * every step against the reference model in `model.ts`.
 *
 * Invariants, each seen to fail when broken on purpose with a test-only store wrapper from
 * `helpers.ts` (`PRUNEGUARD_SABOTAGE=<name> npx vitest run test/reliability/model.test.ts`):
 * - every freed span has a verified handle or a tombstone, and a held copy is never deleted by
 *   rotation — `skip-hold` (reversible prunes place no hold): fails at the first rotate past retention
 *   with "expected { rotated: 1, keptByHold: 0 } to deeply equal { rotated: 0, keptByHold: 1 }";
 * - every directive has exactly one audit record — `drop-audit` (every third recall record is never
 *   stored): fails after three recalls with "audit records of sess-0: expected 2 to be 3";
 * - recall never answers `unknown` for a span the window held — `expired-as-absent` (lookups forget
 *   rotated records): fails with "recall #1 in sess-0: … expected 'unknown' to be 'pruned-unrecoverable'",
 *   and after a crash with "recall span_1 in sess-0 after a crash: … 'unknown'";
 * - found text is byte-identical — `alter-bytes` (lookups return changed text with a matching hash):
 *   fails with "span_1: #1 resolves to other bytes" and, after a crash, "recalled text differs from what
 *   the window held". The same check found a real defect with no sabotage at all: the lone-surrogate
 *   case in `regressions.json`.
 *
 * The memory store runs twice: with a window that applies every decision at once (its rendering is the
 * model's state after every command), and with the default compaction points, where the decided state is
 * the model's, the rendering may lag it (never lead it), and the window's own compaction records are not
 * counted as directives.
 *
 * Scope after a crash: only spans of backed kinds must stay answerable; unbacked kinds (store: null)
 * lived in the crashed process's memory, so a reader window answers `unknown` for them (see
 * `tenancy.test.ts` for the gap this leaves for their tombstones).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, it } from "vitest";
import { MemoryStore } from "../../src/stores/memory.js";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { ManualClock } from "../../src/types.js";
import { fuzzRuns, maybeSabotage, RETENTION_MS, tempDir, timeoutFor } from "./helpers.js";
import { initial, OpCommand, opArbs, START_TIME, type Model, type Op, type Real } from "./model.js";
import regressions from "./regressions.json" with { type: "json" };

const dir = tempDir("model");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

type Variant = "memory" | "sqlite" | "memory, deferred compaction";

async function setup(variant: Variant) {
  const clock = new ManualClock(START_TIME);
  if (variant !== "sqlite") {
    const store = new MemoryStore({ name: "log", retentionMs: RETENTION_MS, clock });
    return { ...initial(maybeSabotage(store), clock, undefined, variant !== "memory"), close: () => store.close(), cleanup: () => {} };
  }
  const path = join(dir, `model-${files++}.db`);
  const open = () => new SqliteStore({ name: "log", path, retentionMs: RETENTION_MS, clock, busyTimeoutMs: 100 });
  const holder = { store: open() };
  const reopen = async () => {
    // A crash loses nothing committed: close the connection without any shutdown work and open again.
    await holder.store.close();
    holder.store = open();
    if (holder.store.integrityCheck() !== "ok") throw new Error("integrity check failed after reopen");
    return maybeSabotage(holder.store);
  };
  const state = initial(maybeSabotage(holder.store), clock, reopen);
  return {
    ...state,
    close: () => holder.store.close(),
    cleanup: () => rmSync(path, { force: true }),
  };
}

async function runOps(variant: Variant, cmds: Iterable<fc.AsyncCommand<Model, Real>>): Promise<void> {
  const s = await setup(variant);
  try {
    await fc.asyncModelRun(() => ({ model: s.model, real: s.real }), cmds);
  } finally {
    await s.close();
    s.cleanup();
  }
}

const SIZES = { memory: { runs: 300, commands: 40 }, sqlite: { runs: 80, commands: 30 }, "memory, deferred compaction": { runs: 150, commands: 40 } } as const;

describe("model-based: the window and its store against a reference model", () => {
  for (const variant of ["memory", "sqlite", "memory, deferred compaction"] as const) {
    const { runs, commands } = SIZES[variant];
    it(`${variant}: every invariant holds after every command (${fuzzRuns(runs)} runs)`, { timeout: timeoutFor(runs, 60) }, async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands(opArbs(variant === "sqlite"), { maxCommands: commands, size: "max" }), (cmds) => runOps(variant, cmds)),
        { numRuns: fuzzRuns(runs) },
      );
    });
  }
});

describe("model-based: regression cases replayed every run", () => {
  const cases = regressions.cases as ReadonlyArray<{ name: string; stores: Variant[]; ops: Op[]; knownBug?: string }>;
  it("the regression file parses", () => {
    if (!Array.isArray(cases)) throw new Error("regressions.json: cases must be an array");
  });
  for (const c of cases) {
    for (const variant of c.stores) {
      // A known bug runs as an expected failure: fixing it makes this test fail, so the case gets flipped.
      (c.knownBug === undefined ? it : it.fails)(`${c.name} (${variant})${c.knownBug ? ` — known bug: ${c.knownBug}` : ""}`, async () => {
        await runOps(variant, c.ops.map((op) => new OpCommand(op)));
      });
    }
  }
});
