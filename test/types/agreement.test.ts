// The two layers agree: for every kind × mode × acceptLossy of the example policies, what the generated
// types accept and what the generated guard executes at run time.
//
// Types side: one consumer file per policy with one prune call per combination, type-checked with TS 6
// (ts-morph); a call is "accepted" when its line has no error. Run-time side: the same call through the
// policy's `createWindow` on memory stores in four store states — the copy is there (fresh append), the
// copy expired (the clock passes every finite retention and the stores rotate), the copy was lost (the
// store failed when the span was appended, so the window holds no handle), and the store is down at
// prune time. A call "executes" in a state when the outcome is reversible or lossy.
//
// Agreement means:
//   1. the types never accept a call the runtime refuses in every state (types are never looser), and
//   2. the types never reject a call the runtime executes in every state;
// so the types are stricter only where the runtime's answer depends on the store's state now. There is
// exactly one such place, pinned below: `acceptLossy: true` on a backed kind that forbids lossy
// commitment. The runtime executes it when the copy is there or can be re-persisted (reversibly; the flag
// is ignored) and refuses it otherwise (lossy forbidden, or the store is down); the types say
// `acceptLossy?: false`, because the flag can never be honoured. (Also stricter, and outside this matrix by design: a `boolean`-typed acceptLossy on an
// unbacked kind, whose runtime answer depends on the value; the type fixtures pin that one.)
import * as path from "node:path";
import { Project } from "ts-morph";
import { describe, expect, it } from "vitest";
import { ManualClock, MemoryStore, PRUNE_MODES, type BackingStore, type PruneMode } from "../../src/index.js";
import * as org from "../../generated/org.guard.js";
import * as payments from "../../generated/team-payments.guard.js";
import * as search from "../../generated/team-search.guard.js";

type Guard = typeof org | typeof payments | typeof search;
const GUARDS: ReadonlyArray<readonly [string, Guard]> = [["org", org], ["team-payments", payments], ["team-search", search]];
const FLAGS = ["absent", "false", "true"] as const;
type Flag = (typeof FLAGS)[number];
type State = "present" | "expired" | "lost" | "down";
const STATES: readonly State[] = ["present", "expired", "lost", "down"];
const DAY = 86_400_000;

interface Combo {
  readonly kind: string;
  readonly mode: PruneMode;
  readonly flag: Flag;
}

function combos(guard: Guard): Combo[] {
  return Object.keys(guard.policy.kinds).flatMap((kind) => PRUNE_MODES.flatMap((mode) => FLAGS.map((flag) => ({ kind, mode, flag }))));
}

function requestText(c: Combo): string {
  return `{ mode: "${c.mode}"${c.mode === "summarize" ? ', digest: "d"' : ""}${c.flag === "absent" ? "" : `, acceptLossy: ${c.flag}`} }`;
}

/** Which combinations the types accept, by compiling one call per combination. */
function typesAccept(name: string, guard: Guard, project: Project): boolean[] {
  const cs = combos(guard);
  const kinds = Object.keys(guard.policy.kinds);
  const head = [
    `import { createWindow } from "../../../generated/${name}.guard.js";`,
    "declare const win: ReturnType<typeof createWindow>;",
    ...kinds.map((k, i) => `const r${i} = await win.append({ kind: "${k}", text: "x" });`),
  ];
  const lines = cs.map((c) => `await win.tryPrune(r${kinds.indexOf(c.kind)}, ${requestText(c)});`);
  const file = project.createSourceFile(path.resolve(`test/types/fixtures/__agreement_${name}.ts`), [...head, ...lines].join("\n"), { overwrite: true });
  const errors = project.getPreEmitDiagnostics().filter((d) => d.getSourceFile() === file);
  const bad = new Set(errors.map((d) => d.getLineNumber()));
  // Errors anywhere but on a prune line would make the matrix meaningless.
  expect(errors.filter((d) => (d.getLineNumber() ?? 0) <= head.length).map((d) => d.getMessageText())).toEqual([]);
  project.removeSourceFile(file);
  return cs.map((_, i) => !bad.has(head.length + i + 1));
}

/** The policy's stores in memory; the kind's store may fail at append (state `lost`) or at prune (`down`). */
function openStores(guard: Guard, clock: ManualClock, failPersist: string | null, failCommit: string | null): Record<string, BackingStore> {
  const out: Record<string, BackingStore> = {};
  Object.entries(guard.storeDeclarations).forEach(([name, d], i) => {
    const store = new MemoryStore({ name, clock, handlePrefix: "abcdefgh"[i]!, retentionMs: d.retentionMs, holds: d.holds, distinguishesAbsent: d.distinguishesAbsent, writable: d.writable });
    if (name === failPersist) Object.assign(store, { persist: () => Promise.reject(new Error("store unavailable at append")) });
    if (name === failCommit) Object.assign(store, { commitPrune: () => Promise.reject(new Error("store unavailable at prune")) });
    out[name] = store;
  });
  return out;
}

async function runtimeExecutes(guard: Guard, c: Combo, state: State): Promise<boolean> {
  const clock = new ManualClock(Date.UTC(2026, 10, 13));
  const kindPolicy = (guard.policy.kinds as Record<string, { store: string | null }>)[c.kind]!;
  const stores = openStores(guard, clock, state === "lost" ? kindPolicy.store : null, state === "down" ? kindPolicy.store : null);
  const win = (guard.createWindow as (o: { session: string; stores: unknown; clock: ManualClock }) => { append(i: { kind: string; text: string }): Promise<string>; tryPrune(s: string, r: unknown): Promise<{ status: string }> })({ session: "agreement", stores, clock });
  const ref = await win.append({ kind: c.kind, text: `a ${c.kind} span` });
  if (state === "expired") {
    clock.advance(400 * DAY);
    for (const s of Object.values(stores)) await s.rotate();
  }
  const request = { mode: c.mode, ...(c.mode === "summarize" ? { digest: "d" } : {}), ...(c.flag === "absent" ? {} : { acceptLossy: c.flag === "true" }) };
  const outcome = await win.tryPrune(ref, request);
  return outcome.status === "reversible" || outcome.status === "lossy";
}

describe("types and runtime agree on every kind × mode × acceptLossy of the example policies", () => {
  const project = new Project({ tsConfigFilePath: path.resolve("test/types/fixtures/tsconfig.json") });

  for (const [name, guard] of GUARDS) {
    it(name, async () => {
      const cs = combos(guard);
      const accepted = typesAccept(name, guard, project);
      const looser: string[] = [];
      const stricter: string[] = [];
      for (const [i, c] of cs.entries()) {
        const runs = await Promise.all(STATES.map((s) => runtimeExecutes(guard, c, s)));
        const label = `${c.kind} ${c.mode} acceptLossy=${c.flag} → types ${accepted[i] ? "accept" : "reject"}, runtime ${STATES.map((s, j) => `${s}:${runs[j] ? "executes" : "refuses"}`).join(" ")}`;
        // 1. Never looser: what the types accept, the runtime executes in some state.
        if (accepted[i] && !runs.some(Boolean)) looser.push(label);
        // 2. Stricter only where the runtime's answer depends on the state (it executes in some, not all).
        if (!accepted[i] && runs.every(Boolean)) stricter.push(label);
        if (!accepted[i] && runs.some(Boolean)) {
          // …and that happens in exactly one place: acceptLossy: true on a backed kind that forbids lossy.
          const k = (guard.policy.kinds as Record<string, { store: string | null; lossy: string; modes: readonly string[] }>)[c.kind]!;
          expect({ label, backed: k.store !== null, lossy: k.lossy, allowed: k.modes.includes(c.mode), flag: c.flag }).toEqual({
            label, backed: true, lossy: "forbid", allowed: true, flag: "true",
          });
        }
      }
      expect(looser).toEqual([]);
      expect(stricter).toEqual([]);
      expect(accepted, "no case was accepted, so agreement was only shown for refusals").toContain(true);
    });
  }
});
