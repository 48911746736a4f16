/**
 * The range summary pipeline — the prune's, over a run: settle decisions in doubt → plan the run
 * (`planRange`) → verify the copies of members pruned earlier → mint the summary's id in the home store →
 * commit every live member through the prune's own commit step (`commitDecision`: checked and held in one
 * transaction, all or nothing, mode summarize, never lossy) → apply each committed member to the state and
 * put the summary in the run's place → record it for the next compaction point → note it in the home store
 * (`rangeNote`: a resumed window draws it again from that).
 */
import { KEPT_FOR_SESSION, type Keep } from "../decision/keep.js";
import { errorMessage } from "../errors.js";
import { contentHash } from "../hash.js";
import type { RangeOutcome, RangeRejectedOutcome, RangeSummaryOutcome } from "../outcome.js";
import { rangeRejectionLine, rejectionWhy } from "../render/lines.js";
import type { PruneCommit } from "../stores/store.js";
import { countTokens } from "../tokens.js";
import { commitDecision, type CommitInDoubt } from "./commit-step.js";
import type { WindowCore } from "./core.js";
import { goneTokens, spanIdOf, type Entry } from "./entries.js";
import { foldText } from "./fold.js";
import { planRange, rangeNote, summaryEntry, summaryPromise, summaryText, verifyPrunedMembers, type RangePlan } from "./range.js";
import { refuseRange } from "./refusals.js";
import type { Replaced } from "./lapse.js";
import { keptDraft } from "./audit-drafts.js";
import { SUMMARY_KIND } from "./resume.js";

/** Summarizes the run `from`…`to` (checked span ids) under `digest`. `raw` is the directive as audited. */
export async function summarizeRange(core: WindowCore, from: string, to: string, digest: string, raw: string): Promise<RangeOutcome> {
  digest = digest.toWellFormed(); // as at append: a lone surrogate from JSON is not sent on
  const refuse = (reason: RangeRejectedOutcome["reason"], message: string, auditSeq?: number | null) => refuseRange(core, from, to, raw, reason, message, auditSeq);
  // A prune or summary in doubt over any span: read back what committed before planning over it.
  const unsettled = await core.doubts.settleAll();
  // Pending decisions over its members whose copies are no longer promised are not applied: the run is planned as it stands.
  core.settleLapses();
  const planned = planRange(
    { entries: core.state.entries, now: core.now(), policyOf: (kind) => core.policyOf(kind), pinsFor: (policy) => core.pinsFor(policy) },
    from, to,
  );
  if ("refusal" in planned) return refuse(planned.refusal.reason, planned.refusal.message);
  let { plan } = planned;
  const doubted = plan.members.map(spanIdOf).find((id) => unsettled.has(id));
  if (doubted !== undefined) {
    return refuse("outcome-unknown", `${doubted} kept: an earlier decision over it may have committed, and the store still cannot say whether it did`);
  }
  // Members pruned earlier: their copies must still be there, and give the digest their pinned ids.
  let verified;
  try {
    verified = await verifyPrunedMembers(plan, {
      lookup: (store, handle) => core.store(store).lookup(core.session, { handle }),
      pinsFor: (kind) => core.pinsFor(core.policyOf(kind)),
      // Its line, its fold's, and a pending decision over it say so from now on.
      lost: (e) => core.state.markCopyLost(e),
    });
  } catch (err) {
    return refuse("store-error", `the store failed before the summary (${errorMessage(err)}); nothing was committed`);
  }
  if ("refusal" in verified) {
    return refuse(verified.refusal.reason, verified.refusal.message);
  }
  plan = { ...plan, ids: [...new Set([...plan.ids, ...verified.ids])] };
  // What a resumed window draws the summary again from: registered by its hash now, written once it is applied.
  const note = rangeNote(plan.members, digest, plan.ids, plan.partial, core.state.folded);
  // The summary's id is minted by the home store like any span's, so no other process can take it.
  let summaryId: string;
  try {
    summaryId = (await core.home.registerSpan(core.session, { kind: SUMMARY_KIND, hash: contentHash(note), group: null, message: null, store: null })).spanId;
  } catch (err) {
    return refuse("store-error", `the store failed before the summary (${errorMessage(err)}); nothing was committed`);
  }
  // Unused unless the summary is applied: an applied one is found in the window before `unused` is asked, and a
  // refused one (now, or when a doubt settles) stands for nothing the model was shown.
  core.state.unused.add(summaryId);
  if (plan.live.length === 0) {
    // Every member is held already (index lines and lower summaries): the decision touches no copy.
    const auditSeq = await core.audit(core.home, {
      op: "prune", status: "reversible", spanId: summaryId, kind: "summary", mode: "summarize", conditions: null, handle: null,
      repersisted: false, acceptLossy: false, reason: null, pinsCarried: 0, directive: raw,
    });
    return (await noted(core, summaryId, note, applyRange(core, plan, summaryId, digest, null, [], auditSeq))) ??
      runChanged(core, plan, summaryId, null, refuse, auditSeq);
  }
  // The same commit step as a prune's: every live member in mode summarize, never lossy, one record each.
  const store = core.store(core.policyOf(plan.live[0]!.span.kind).store!);
  const result = await commitDecision(core, {
    store,
    items: plan.live.map((e) => ({ spanId: e.span.id, kind: e.span.kind, backed: true, handle: e.handle, hash: e.span.hash, text: e.span.text })),
    members: plan.live.map((e) => ({ policy: core.policyOf(e.span.kind), store: store.capabilities, retentionMs: store.retentionMs })),
    lead: 0,
    acceptLossy: false,
    subjects: plan.live.map((e, i) => ({
      spanId: e.span.id, kind: e.span.kind, hash: e.span.hash, mode: "summarize", acceptLossy: false, pinsCarried: 0, directive: i === 0 ? raw : null,
    })),
  });
  if (result.status === "failed") return refuse("store-error", `the store failed during the check (${errorMessage(result.error)}); nothing was committed`);
  if (result.status === "in-doubt") return holdInDoubt(core, plan, summaryId, digest, note, from, to, result.error, result.doubt);
  const { commit, decided } = result;
  if (decided.refusal !== null) {
    const refusing = commit.items[decided.refusal.member]!;
    const why = rejectionWhy(decided.refusal.reason, refusing.check, "summarize");
    return refuse(decided.refusal.reason, `${plan.live[decided.refusal.member]!.span.id}: ${why}`, commit.items[0]!.audit.seq);
  }
  return (await noted(core, summaryId, note, applyRange(core, plan, summaryId, digest, commit, decided.keeps, commit.items[0]!.audit.seq))) ??
    runChanged(core, plan, summaryId, commit, refuse, commit.items[0]!.audit.seq);
}

/**
 * A range summary applied: its note (`rangeNote`) is written under its id in the home store, so a resumed
 * window draws it again in its run's place, digest and all. Only an applied summary is noted (one not applied
 * later gets a `kept` record, which a resume reads too). A store that fails here leaves the summary applied; a
 * window resumed on the session then shows its members' index lines instead.
 */
async function noted(
  core: WindowCore, summaryId: string, note: string, outcome: RangeSummaryOutcome | null, late = false,
): Promise<RangeSummaryOutcome | null> {
  if (outcome === null) return null;
  try {
    await core.home.noteReplacement(core.session, summaryId, note);
  } catch (err) {
    // Nothing to undo: the summary stands in this window; only a resume draws less. The outcome says so, and
    // telemetry reads it there — except `late` (applied once its doubt settled), whose outcome nobody gets.
    if (late) core.telemetry?.storeFailure("summarize_range", core.home.name, err, "note");
    return { ...outcome, noteError: errorMessage(err) };
  }
  return outcome;
}

/**
 * The run is no longer where it was planned: while the summary was committed, a rendering or another read put
 * a pending decision over one of its members back (its copy's promise ended: `lapse.ts`), or folded index
 * lines around it. What the store committed is not applied — exactly as a pending decision not applied: a
 * `kept` record for the summary and each member it pruned, the run left as it stands — and the model is told
 * to summarize again.
 */
function runChanged(
  core: WindowCore, plan: RangePlan, summaryId: string, commit: PruneCommit | null,
  refuse: (reason: RangeRejectedOutcome["reason"], message: string, auditSeq?: number | null) => Promise<RangeRejectedOutcome>, auditSeq: number | null,
): Promise<RangeRejectedOutcome> {
  core.pendingAudit.defer(core.home, { ...keptDraft({ spanId: summaryId, kind: "summary", mode: "summarize", handle: null, hash: null }, "group"), decided: core.decide(1) });
  if (commit !== null) {
    const store = core.store(core.policyOf(plan.live[0]!.span.kind).store!);
    plan.live.forEach((e, i) => {
      const item = commit.items[i]!;
      core.pendingAudit.defer(store, {
        ...keptDraft({ spanId: e.span.id, kind: e.span.kind, mode: "summarize", handle: item.handle, hash: e.span.hash }, "group"),
        decided: core.decide(1),
      });
    });
  }
  return refuse("range", "the run changed while the summary was committed (a pending decision over a member was not applied); nothing was summarized: summarize it again", auditSeq);
}

/** Where the planned run stands now, by identity: `null` when a member moved, or was replaced, meanwhile. */
function runStart(core: WindowCore, plan: RangePlan): number | null {
  const { entries } = core.state;
  const start = plan.members.length === 0 ? -1 : entries.indexOf(plan.members[0]!);
  if (start < 0) return null;
  for (let i = 1; i < plan.members.length; i++) if (entries[start + i] !== plan.members[i]) return null;
  return start;
}

/**
 * A range summary the store committed (or that touched no copy): rewrites the window. `null` when the run is
 * no longer as planned (`runStart`): then nothing is rewritten.
 */
function applyRange(
  core: WindowCore, plan: RangePlan, summaryId: string, digest: string, commit: PruneCommit | null, keeps: readonly (Keep | null)[], auditSeq: number | null,
): RangeSummaryOutcome | null {
  // The awaits before this let synchronous reads (a rendering) settle pending decisions, which can move the run.
  const start = runStart(core, plan);
  if (start === null) return null;
  // Committed: now, and only now, rewrite the window.
  const now = core.now();
  const { tombstone, indexHintTokens } = core.settings;
  // Each member as it reads now (a summary's or fold's line says its members' promise as of now).
  const before = plan.members.reduce(
    (n, e) => n + (e.state === "live" ? e.span.tokens : e.state === "summary" ? countTokens(summaryText(e, now)) : e.state === "fold" ? countTokens(foldText(e, now)) : e.state === "lost" ? countTokens(e.text) : goneTokens(e, now, tombstone)),
    0,
  );
  const pruned: Array<{ spanId: string; handle: string; repersisted: boolean }> = [];
  const replaced: Replaced[] = [];
  const members = plan.members.map((e): Entry => {
    if (e.state !== "live") return e;
    const i = plan.live.indexOf(e);
    const item = commit!.items[i]!;
    const { gone } = core.state.applyCommitted({ entry: e, mode: "summarize", body: null }, item, keeps[i] ?? KEPT_FOR_SESSION, now, tombstone, indexHintTokens);
    pruned.push({ spanId: gone.spanId, handle: gone.handle!, repersisted: item.decision.status === "reversible" && item.decision.repersist });
    replaced.push({ live: e, gone });
    return gone;
  });
  const { entry, carried } = summaryEntry(summaryId, members, digest, plan.ids, now, plan.partial);
  core.state.replaceRun(start, plan.members.length, entry);
  const tokensFreed = before - countTokens(entry.text);
  const store = plan.live.length === 0 ? null : core.store(core.policyOf(plan.live[0]!.span.kind).store!);
  const applies = core.decided([summaryId, ...members.map(spanIdOf)], tokensFreed, {
    type: "summary", store, summary: entry, before: plan.members, members: replaced, freed: tokensFreed,
  });
  return {
    op: "summarize_range", status: "summarized", spanId: summaryId, members: members.map(spanIdOf), pruned,
    // As a prune's: until when the first of its members' copies is kept, when that is before the horizon.
    until: summaryPromise(members, now).until,
    line: entry.text, tokensFreed, pinsCarried: carried, auditSeq, applies,
  };
}

/**
 * A range summary whose COMMIT answer was lost, and whose read-back failed too: the store may have
 * committed it. Held in doubt exactly as a prune is (one doubt for every member of the run): the window
 * keeps the run as it was, and the next directive for any member — a prune or another summary — reads back
 * what committed first and applies it; nothing is committed twice.
 */
function holdInDoubt(
  core: WindowCore, plan: RangePlan, summaryId: string, digest: string, note: string, from: string, to: string, err: Error, doubt: CommitInDoubt,
): RangeRejectedOutcome {
  const spanIds = plan.members.map(spanIdOf);
  core.doubts.hold(spanIds, {
    resolve: () => doubt.resolve(),
    finish: async (commit) => {
      core.doubts.release(spanIds);
      const decided = await doubt.settle(commit);
      // Nothing committed, or the store refused a member inside its transaction: the run stays as it is.
      if (commit === null || decided.refusal !== null) return;
      // The doubt kept every member from changing, but positions before the run may have (another summary):
      // `applyRange` finds the run where it stands.
      if ((await noted(core, summaryId, note, applyRange(core, plan, summaryId, digest, commit, decided.keeps, commit.items[0]!.audit.seq), true)) !== null) return;
      // The run is no longer whole: each live member still shows what the store committed for it.
      const now = core.now();
      let freed = 0;
      const members: Replaced[] = [];
      for (const [i, e] of plan.live.entries()) {
        if (core.state.get(e.span.id) !== e) continue;
        const applied = core.state.applyCommitted(
          { entry: e, mode: "summarize", body: null }, commit.items[i]!, decided.keeps[i] ?? null, now, core.settings.tombstone, core.settings.indexHintTokens,
        );
        freed += applied.freed;
        members.push({ live: e, gone: applied.gone });
      }
      const store = core.store(core.policyOf(plan.live[0]!.span.kind).store!);
      core.decided(plan.live.map((e) => e.span.id), freed, { type: "prune", store, members, freed });
    },
  });
  const message = `${from}–${to} kept for now: the store may have committed the summary, but its answer was lost (${errorMessage(err)}); the next directive for its spans reads back what committed first`;
  const line = rangeRejectionLine(from, to, message);
  core.notice(line);
  return { op: "summarize_range", status: "rejected", from, to, reason: "outcome-unknown", message, line, auditSeq: null };
}
