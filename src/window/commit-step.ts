/**
 * Commit: the one sequence by which a decision that frees spans reaches a store — a prune with its group and
 * a range summary alike. In order: the session's lossy budget (counted inside the commit transaction when
 * the decision commits in the home store, reserved on the home store's counter beforehand otherwise), the
 * audit records waiting (so each chain keeps decision order), the store's transaction (which runs the
 * decision step, `decide.ts`, over the checks it computes), then the budget given back for units no lossy
 * commitment used.
 *
 * Three results, never collapsed: committed (possibly a refusal the store decided and audited inside its
 * transaction), failed (nothing was committed; the caller says so), and in doubt (COMMIT was sent and its
 * answer lost, and reading back what committed failed too: the caller holds the spans in doubt, `doubts.ts`,
 * and settles later through `settle`, which gives the budget back once and writes again any committed copy
 * rotated out while it was in doubt).
 */
import { OutcomeUnknownError } from "../errors.js";
import type { BackingStore, PruneCommit, PruneItem } from "../stores/store.js";
import type { PruneSubject } from "./audit-drafts.js";
import type { WindowCore } from "./core.js";
import { decider, type Decided, type DecideInput } from "./decide.js";
import { keepOf } from "../decision/keep.js";

/** A decision ready to commit: its members as the store and the decision step read them. */
export interface CommitRequest {
  /** The store the whole decision commits in. */
  readonly store: BackingStore;
  readonly items: readonly PruneItem[];
  readonly members: DecideInput["members"];
  /** The member the decision is about (its refusal is the decision's own, not its group's). */
  readonly lead: number;
  readonly subjects: readonly PruneSubject[];
  /** Consent to a lossy commitment, counted against the session's budget. */
  readonly acceptLossy: boolean;
}

export type CommitResult =
  /** The store's transaction committed; `decided.refusal` when the decision step refused a member inside it. */
  | { readonly status: "committed"; readonly commit: PruneCommit; readonly decided: Decided }
  /** Nothing was committed (the store failed before or during its transaction); the budget is given back. */
  | { readonly status: "failed"; readonly error: unknown }
  /** COMMIT was sent and its answer lost; the store could not read back what committed. */
  | { readonly status: "in-doubt"; readonly error: OutcomeUnknownError; readonly doubt: CommitInDoubt };

/** How to learn a lost answer later, and what the decision was if it did commit. */
export interface CommitInDoubt {
  resolve(): Promise<PruneCommit | null>;
  /** Gives back budget no lossy commitment used (all of it when nothing committed); returns what was decided. */
  settle(commit: PruneCommit | null): Promise<Decided>;
}

export async function commitDecision(core: WindowCore, req: CommitRequest): Promise<CommitResult> {
  const { session, home } = core;
  const budget = core.settings.limits.lossyBudget;
  const counted = req.acceptLossy && budget !== null && budget !== undefined;
  const inTransaction = counted && req.store === home;
  let reserved = 0;
  /** The session's lossy units left as the commit transaction counted them (for telemetry); `null`: not counted. */
  let lossyCounted: number | null = null;
  if (counted && !inTransaction) {
    try {
      reserved = await home.reserveLossy(session, budget, req.items.length);
    } catch (error) {
      return { status: "failed", error };
    }
  }
  // A crash between the reservation and this leaves the units spent: the budget errs towards fewer losses.
  const giveBack = async (used: number) => {
    if (reserved > used) await home.releaseLossy(session, reserved - used).catch(() => undefined);
  };
  const holdUntil = core.holdUntil();
  // The store calls `decide` inside its transaction once per attempt; the attempt that commits is the last.
  const { decide, last } = decider({
    members: req.members, lead: req.lead, acceptLossy: req.acceptLossy, keep: { now: core.now(), holdUntil },
    decided: core.decide(req.items.length), subjects: req.subjects,
    // The budget left: counted in the transaction on the home store, or what was reserved on it beforehand.
    lossyLeft: (left: number) => {
      if (inTransaction) lossyCounted = left;
      return !counted ? Number.POSITIVE_INFINITY : inTransaction ? left : Math.min(reserved, left);
    },
  });
  // Records waiting go first, so the chain keeps decision order. A failure here is the audit queue's:
  // nothing of the decision was sent, so it is a store failure, never a decision in doubt.
  if (core.pendingAudit.size > 0) {
    try {
      await core.pendingAudit.flush();
    } catch (error) {
      await giveBack(0);
      return { status: "failed", error };
    }
  }
  let commit: PruneCommit;
  try {
    commit = await req.store.commitPrune({
      session, items: req.items, holdUntil, decide, ...(inTransaction ? { lossyBudget: budget } : {}),
    });
  } catch (error) {
    if (error instanceof OutcomeUnknownError) {
      const doubt: CommitInDoubt = {
        resolve: async () => {
          const committed = await (error.resolve() as Promise<PruneCommit | null>);
          return committed === null ? null : asDecided(committed, last);
        },
        settle: async (committed) => {
          await giveBack(committed === null ? 0 : lossyCount(committed));
          if (committed === null) return last;
          // A copy written back is kept by its retention from now (the hold the commit placed lapsed before it
          // was rotated out): that is its promise now, not the decision's, which has run out (and on which
          // `lapse.ts` would not apply the decision).
          const now = core.now();
          for (const i of await restoreCopies(session, req.store, req.items, committed)) {
            if (last.keeps[i] == null) continue;
            last.keeps[i] = keepOf({ now, holdUntil: core.holdUntil() }, { holds: req.store.capabilities.holds, retentionMs: req.store.retentionMs }, { expiresAt: null }, true);
          }
          return last;
        },
      };
      return { status: "in-doubt", error, doubt };
    }
    await giveBack(0);
    return { status: "failed", error };
  }
  if (reserved > 0) await giveBack(lossyCount(commit));
  if (lossyCounted !== null) core.telemetry?.note({ "pruneguard.lossy_budget.left": lossyCounted - lossyCount(commit) });
  return { status: "committed", commit: asDecided(commit, last), decided: last };
}

/**
 * The commit with each item's check as the decision read it (`checkAsDecided`: a copy the store still had
 * but nothing kept any longer reads as expired), so the outcome and the refusal say what was decided on.
 */
function asDecided(commit: PruneCommit, decided: Decided): PruneCommit {
  if (decided.checks.length !== commit.items.length || decided.checks.every((c, i) => c === commit.items[i]!.check)) return commit;
  return { ...commit, items: commit.items.map((item, i) => ({ ...item, check: decided.checks[i]! })) };
}

/**
 * Before a decision settled late is applied: the window kept the bytes while it was in doubt, and the hold
 * the commit placed may have lapsed meanwhile (an outage past the session's horizon) and the copy been
 * rotated out. A copy no longer there as committed is written again from those bytes (`persist` revives an
 * emptied copy under its handle), so the window dropping them loses nothing. Where that fails, the decision's
 * promise has run out with its hold, and the decision is not applied (`lapse.ts`): the span stays live. Returns
 * the items written again.
 */
async function restoreCopies(session: string, store: BackingStore, items: readonly PruneItem[], commit: PruneCommit): Promise<number[]> {
  const written: number[] = [];
  for (const [i, item] of items.entries()) {
    const handle = commit.items[i]?.handle ?? null;
    if (commit.items[i]?.decision.status !== "reversible" || handle === null) continue;
    try {
      const found = await store.lookup(session, { handle });
      if (found.status === "found" && found.hash === item.hash) continue;
      await store.persist({ session, spanId: item.spanId, kind: item.kind, text: item.text, hash: item.hash });
      written.push(i);
    } catch {
      // Not written again (a read-only store, a copy altered in place, a failing store): see above.
    }
  }
  return written;
}

function lossyCount(commit: PruneCommit): number {
  return commit.items.filter((it) => it.decision.status === "lossy").length;
}
