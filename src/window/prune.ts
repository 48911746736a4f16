/**
 * The prune pipeline, one step after another: settle a decision in doubt over the span → plan (its group,
 * modes, store, replacement bodies) → note the replacement in the home store → commit (`commitDecision`:
 * the check, the decision, the holds and the audit records in one store transaction) → apply what
 * committed to the state → record it for the next compaction point. A step that cannot go on ends in a
 * refusal (`refusals.ts`), audited, with the window unchanged.
 */
import { directiveForAudit } from "../audit.js";
import { errorMessage } from "../errors.js";
import type { PruneOutcome, RejectedOutcome } from "../outcome.js";
import { grewLine, rejectionWhy } from "../render/lines.js";
import type { PruneCommit, PruneItem } from "../stores/store.js";
import { decide } from "../telemetry/index.js";
import type { PruneMode } from "../types.js";
import { commitDecision, type CommitInDoubt } from "./commit-step.js";
import type { WindowCore } from "./core.js";
import type { Decided } from "./decide.js";
import type { PendingDecision, Replaced } from "./lapse.js";
import { goneText, type GoneEntry, type LiveEntry } from "./entries.js";
import { committedOutcome, rejectedOutcome } from "./outcomes.js";
import { planPrune, type PrunePlan } from "./plan.js";
import { refuseChecked, refuseEarly, storeFailed } from "./refusals.js";

/** Prunes `spanId` in `mode` (a checked span id; refs were read before). `raw` is the directive as audited. */
export async function prune(core: WindowCore, spanId: string, mode: PruneMode, digest: string | null, acceptLossy: boolean, raw: string): Promise<PruneOutcome> {
  // A pending prune of it whose copy is no longer promised is not applied: the span is live again, and this is a new decision.
  core.settleLapses();
  // No decision in doubt (the common case): no promise to await. Otherwise every span the prune would take
  // is settled first, its group's members too: a member that joined the group after the decision in doubt
  // (a result whose call was pruned) is not held by that doubt, and pruning it again would commit twice.
  if (core.doubts.size > 0) {
    const ids = new Set([spanId]);
    const first = planPrune(core.planContext, spanId, mode, digest === null ? null : digest.toWellFormed());
    if (!("refusal" in first)) for (const p of first.plan.members) ids.add(p.entry.span.id);
    for (const id of ids) {
      if (!core.doubts.has(id) || (await core.doubts.settle(id))) continue;
      const entry = core.state.get(spanId);
      const which = id === spanId ? spanId : `${id}, pruned with it,`;
      return refuseEarly(core, {
        spanId, kind: entry ? (entry.state === "live" ? entry.span.kind : entry.kind) : null, mode, reason: { code: "outcome-unknown" },
        message: `${spanId} kept: an earlier prune of ${which} may have committed, and the store still cannot say whether it did`,
        entry: entry?.state === "live" ? entry : null, raw,
      });
    }
  }
  const planned = planPrune(
    core.planContext,
    // Made well-formed like span text at append: JSON can carry a lone surrogate, which providers refuse.
    spanId, mode, digest === null ? null : digest.toWellFormed(),
  );
  if ("refusal" in planned) {
    const { reason, kind, message, entry } = planned.refusal;
    return refuseEarly(core, { spanId, kind, mode, reason: { code: reason }, message, entry, raw });
  }
  const { plan } = planned;
  // The body that replaces the span is noted in the home store before the prune commits, so a process
  // that resumes the session can render it.
  try {
    for (const p of plan.members) if (p.body !== null) await core.home.noteReplacement(core.session, p.entry.span.id, p.body);
  } catch (err) {
    return storeFailed(core, plan.target, mode, raw, err);
  }
  const items: PruneItem[] = plan.members.map((p) => ({
    spanId: p.entry.span.id, kind: p.entry.span.kind, backed: p.policy.store !== null, handle: p.entry.handle, hash: p.entry.span.hash, text: p.entry.span.text,
  }));
  const result = await commitDecision(core, {
    store: plan.store,
    items,
    members: plan.members.map((p) => ({ policy: p.policy, store: p.policy.store === null ? null : plan.store.capabilities, retentionMs: plan.store.retentionMs })),
    lead: plan.lead,
    acceptLossy,
    subjects: plan.members.map((p, i) => ({
      spanId: p.entry.span.id, kind: p.entry.span.kind, hash: p.entry.span.hash, mode: p.mode, acceptLossy,
      pinsCarried: p.pinsCarried.length, directive: i === plan.lead ? raw : null,
    })),
  });
  if (result.status === "failed") return storeFailed(core, plan.target, mode, raw, result.error);
  if (result.status === "in-doubt") return holdInDoubt(core, plan, mode, raw, result.error, result.doubt);
  return committed(core, plan, mode, result.commit, result.decided);
}

/**
 * A span that arrives after its group was pruned (the result of a call the model pruned while the call
 * was pending) joins the group's fate: it is dropped through the same check, as a lossy commitment
 * only if the group's was one. If the check refuses, it stays live with the rejection line.
 */
export async function joinGroupFate(core: WindowCore, entry: LiveEntry): Promise<void> {
  const group = entry.span.group;
  if (group === undefined) return;
  const fate = core.state.prunedGroups.get(group);
  if (fate === undefined) return;
  const lossy = fate === "lossy";
  const raw = directiveForAudit({ op: "prune", span_id: entry.span.id, mode: "drop", ...(lossy ? { accept_lossy: true } : {}), joins: group });
  await decide(core.telemetry, "prune", () => prune(core, entry.span.id, "drop", null, lossy, raw));
}

/**
 * Applies each member the store committed to the state; returns the tokens they free and the decision as it
 * is kept until a compaction point applies it (`lapse.ts`).
 */
function applyMembers(core: WindowCore, plan: PrunePlan, commit: PruneCommit, decided: Decided, onlyUnchanged: boolean): { readonly freed: number; readonly pending: PendingDecision } {
  const now = core.now();
  let freed = 0;
  const members: Replaced[] = [];
  for (const [i, p] of plan.members.entries()) {
    // A decision settled late applies only to members still as they were when it was made.
    if (onlyUnchanged && core.state.get(p.entry.span.id) !== p.entry) continue;
    const applied = core.state.applyCommitted(p, commit.items[i]!, decided.keeps[i] ?? null, now, core.settings.tombstone, core.settings.indexHintTokens);
    freed += applied.freed;
    members.push({ live: p.entry, gone: applied.gone });
  }
  return { freed, pending: { type: "prune", store: plan.store, members, freed } };
}

/** The outcome of a prune the store committed (or refused inside its transaction); rewrites the window. */
function committed(core: WindowCore, plan: PrunePlan, mode: PruneMode, commit: PruneCommit, decided: Decided): PruneOutcome {
  const lead = commit.items[plan.lead]!;
  if (decided.refusal !== null) return refuseChecked(core, plan, mode, lead, commit.items, decided.refusal);
  // Committed: now, and only now, rewrite the window.
  const { freed: tokensFreed, pending } = applyMembers(core, plan, commit, decided, false);
  const now = core.now();
  const { tombstone } = core.settings;
  const spanId = plan.target.span.id;
  const gone = core.state.get(spanId) as GoneEntry;
  const applies = core.decided(plan.members.map((p) => p.entry.span.id), tokensFreed, pending);
  return committedOutcome(
    {
      spanId, kind: gone.kind, mode, line: goneText(gone, now, tombstone), tokensFreed, applies,
      // A replacement larger than the span (a long digest, or any line in place of a tiny span) is allowed, and said.
      grew: tokensFreed < 0 ? grewLine(spanId, -tokensFreed) : null,
      pinsCarried: plan.members[plan.lead]!.pinsCarried,
      groupPruned: plan.members.filter((p) => p.entry !== plan.target).map((p) => p.entry.span.id),
      group: plan.members.flatMap((p) => {
        const member = core.state.get(p.entry.span.id);
        if (p.entry === plan.target || member === undefined || (member.state !== "pruned" && member.state !== "tombstone")) return [];
        return [{ spanId: member.spanId, status: member.state === "tombstone" ? "lossy" as const : "reversible" as const, line: goneText(member, now, tombstone) }];
      }),
    },
    lead,
    tombstone,
    gone.until,
  );
}

/**
 * The store sent COMMIT and the answer was lost, and reading back what committed failed too. Until the
 * window learns the outcome, every directive for the group's spans first asks again; none can commit a
 * second record for the same decision.
 */
function holdInDoubt(core: WindowCore, plan: PrunePlan, mode: PruneMode, raw: string, err: Error, doubt: CommitInDoubt): RejectedOutcome {
  const spanIds = plan.members.map((p) => p.entry.span.id);
  core.doubts.hold(spanIds, {
    resolve: () => doubt.resolve(),
    finish: async (commit) => {
      core.doubts.release(spanIds);
      const decided = await doubt.settle(commit);
      if (commit === null) {
        await storeFailed(core, plan.target, mode, raw, err.cause ?? err);
        return;
      }
      // Apply what committed, as the original directive would have; the refusal of a group member
      // committed only audit records, so nothing changes in the window.
      if (commit.items.every((it) => it.decision.status !== "rejected")) {
        const { freed, pending } = applyMembers(core, plan, commit, decided, true);
        core.decided(spanIds, freed, pending);
      }
    },
  });
  const outcome = rejectedOutcome({
    spanId: plan.target.span.id, kind: plan.target.span.kind, mode, reason: "outcome-unknown", conditions: null,
    why: rejectionWhy("outcome-unknown", null, mode),
    message: `${plan.target.span.id} kept for now: the store may have committed the prune, but its answer was lost (${errorMessage(err)}); the next directive for it reads back what committed first`,
    auditSeq: null, lossyHintPolicy: null,
  });
  core.noticeOn(plan.target, outcome.line);
  return outcome;
}
