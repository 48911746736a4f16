/**
 * A provider's own compaction (Anthropic's `compact_20260112` edit, OpenAI's Responses `compaction` item) as a
 * decision of the window's: the provider summarized everything before its block, so for the model every span
 * before it is pruned — and pruneguard makes that true in its records before the block is sent back:
 *
 * 1. **Plan** (`planProviderCompaction`, before the request is sent): which spans the provider's compaction may
 *    free with their copies held (index lines), which only as lossy commitments the policy allows
 *    (tombstones, within the lossy budget), and which the policy keeps — said again after the block, which
 *    needs the provider to pause after compacting (Anthropic's `pause_after_compaction`) or the request is
 *    refused. The request builders (`providers/*-compaction.ts`) refuse what the plan cannot keep true.
 * 2. **Record** (`recordProviderCompaction`, when the response carries a block): the summary's id is minted and
 *    the block noted in the home store (so a resumed window sends it back); every live span before it is
 *    pruned through the prune's own pipeline (`prune.ts`: checked and held in one store transaction, one audit
 *    record each, the lossy budget where it applies; a span the check refuses stays live); then the positions
 *    that are no longer live become the summary's members (`WindowState.compactByProvider`: folded, recallable
 *    one level by the summary's id) and the ones still live are said again after it; a compaction point makes
 *    it what the model reads.
 *
 * A failed compaction (Anthropic: `content: null`; OpenAI: an item with no `encrypted_content`) changed nothing
 * on the provider's side: nothing is pruned, and the block is not kept (the provider treats one sent back as a
 * no-op).
 */
import { directiveForAudit } from "../audit.js";
import { errorMessage } from "../errors.js";
import { contentHash } from "../hash.js";
import type { ProviderCompactionOutcome } from "../outcome.js";
import { frameUntrusted, oneLine } from "../render/framing.js";
import type { KindPolicy } from "../types.js";
import { compactDraft } from "./audit-drafts.js";
import type { WindowCore } from "./core.js";
import { registeredNote, spanIdOf, type LiveEntry, type SummaryEntry } from "./entries.js";
import { prune } from "./prune.js";
import { planPrune, type PlannedMember, type PrunePlan } from "./plan.js";
import { decideGroup } from "../decision/group.js";
import { computeCheck, unbackedCheck } from "../stores/check.js";
import type { RecordState } from "../stores/records.js";
import type { BackingStore, CheckResult, LookupKey, LookupResult } from "../stores/store.js";
import { summaryHeader } from "./range.js";

/**
 * The kind a provider's compaction is registered under (not an identifier, so no policy kind can be named so):
 * its block is noted with it, and a resumed window draws the compaction again from it (`resume.ts`).
 */
export const PROVIDER_COMPACTION_KIND = "(provider compaction)";

/** The largest compaction block kept, in UTF-16 units of its JSON: a larger one is refused (and not sent back). */
export const MAX_BLOCK_CHARS = 4_000_000;

/** A provider's compaction as its response carried it. */
export interface ProviderCompaction {
  /** The provider whose renderer sends the block back: `anthropic` or `openai-responses`. */
  readonly provider: string;
  /** The block or item, as the response carried it (a parsed object; kept as its JSON text). */
  readonly block: unknown;
  /** The summary as text the model may read elsewhere (Anthropic's `content`); `null` when encrypted or failed. */
  readonly summary: string | null;
  /** The provider says the compaction failed (Anthropic: `content: null`; OpenAI: no `encrypted_content`): it changed nothing. */
  readonly failed: boolean;
  /**
   * Why the block is not one the provider's API takes back (a field its SDK's type does not declare, or of
   * another type; an empty summary): it is refused, not sent back. Absent when it is.
   */
  readonly malformed?: string;
}

/**
 * Why the plan keeps a span out of what a provider's compaction may free: the refusal a prune of it (with its
 * tool call/result group) would meet now, or `outcome-unknown` for an earlier prune still in doubt.
 */
export type KeptReason = "mode-not-allowed" | "lossy-forbidden" | "lossy-budget" | "not-reversible" | "group" | "store-error" | "outcome-unknown";

/** What a provider's compaction would do to the window now, span by span, under the policy. */
export interface ProviderCompactionPlan {
  /** The session's policy lets it use a provider's compaction at all (`limits.providerCompaction: "allow"`). */
  readonly allowed: boolean;
  /** Spans whose copies are held: each becomes an index line (recall and search find it). */
  readonly reversible: readonly string[];
  /** Spans with no copy the policy allows to lose (`lossy: "with-flag"`): each becomes a tombstone. */
  readonly lossy: readonly string[];
  /** Spans the policy keeps: said again after the block, so the provider must pause after compacting. */
  readonly kept: ReadonlyArray<{ readonly spanId: string; readonly kind: string; readonly reason: KeptReason; readonly message: string }>;
  /**
   * Live system text, which no provider compaction frees in the window. Anthropic keeps it apart from the
   * messages (the top-level `system`), so its compaction never covers it; OpenAI's Responses `input` carries it
   * as messages, which its compaction covers like any item: said again after the item, as a kept span is, so
   * OpenAI's automatic compaction (which cannot pause) is refused while there is any.
   */
  readonly system: readonly string[];
}

/** A provider compaction refused before anything was sent: the plan says why, span by span. */
export class ProviderCompactionError extends Error {
  override readonly name = "ProviderCompactionError";
  constructor(message: string, readonly plan: ProviderCompactionPlan | null) {
    super(message);
  }
}

/** Whether the session's policy allows a provider's compaction. */
export function providerCompactionAllowed(core: WindowCore): boolean {
  return core.settings.limits.providerCompaction === "allow";
}

/**
 * What a provider's compaction would free, lose and keep (see the module comment), decided as the record step
 * will decide it: the same groups (`coveredGroups`), each member checked against what its store holds now (one
 * `lookupMany` per store where the store has it) and decided by the same group decision the store's
 * transaction runs, under the lossy budget's counter. What can still change between the plan and the record
 * (a copy deleted in between) is found by the record step's own check, which keeps the span.
 */
export async function planProviderCompaction(core: WindowCore): Promise<ProviderCompactionPlan> {
  // A pending prune whose copy is no longer promised is not applied: its span is planned as the live span it is.
  core.settleLapses();
  const budget = core.settings.limits.lossyBudget ?? null;
  let left = budget === null ? Number.POSITIVE_INFINITY : budget - (await core.home.lossySpent(core.session));
  const reversible: string[] = [];
  const lossy: string[] = [];
  const kept: Array<ProviderCompactionPlan["kept"][number]> = [];
  const keepAll = (members: readonly LiveEntry[], reason: KeptReason, message: string) => {
    for (const m of members) kept.push({ spanId: m.span.id, kind: m.span.kind, reason, message });
  };
  const groups = coveredGroups(core);
  const read = await readCopies(core, groups);
  const keep = { now: core.now(), holdUntil: core.holdUntil() };
  for (const g of groups) {
    if (g.refusal !== null) {
      keepAll(g.members, g.refusal.reason, g.refusal.message);
      continue;
    }
    const { plan } = g;
    if (core.doubts.size > 0 && g.members.some((m) => core.doubts.has(m.span.id))) {
      keepAll(g.members, "outcome-unknown", "an earlier prune of it may have committed; the store cannot say yet");
      continue;
    }
    const checks = plan.members.map((p) => read(plan.store, p));
    if (checks.includes(null)) {
      keepAll(g.members, "store-error", `store ${plan.store.name} could not be asked whether its copies are there`);
      continue;
    }
    const decided = decideGroup({
      members: plan.members.map((p) => ({ policy: p.policy, store: p.policy.store === null ? null : plan.store.capabilities, retentionMs: plan.store.retentionMs })),
      lead: plan.lead, acceptLossy: g.acceptLossy, lossyLeft: left, keep,
    }, checks as CheckResult[]);
    if (decided.refusal !== null) {
      const by = plan.members[decided.refusal.member]!.entry;
      const why = decided.decisions[decided.refusal.member]!;
      const said = keptMessage(by.span.kind, decided.refusal.reason, why.status === "rejected" ? why.reason : null);
      for (const m of g.members) {
        const message = m === by ? said : `grouped with ${by.span.id} (${said})`;
        kept.push({ spanId: m.span.id, kind: m.span.kind, reason: decided.refusal.reason as KeptReason, message });
      }
      continue;
    }
    for (const [i, d] of decided.decisions.entries()) {
      const id = plan.members[i]!.entry.span.id;
      if (d.status === "lossy") {
        left--;
        lossy.push(id);
      } else reversible.push(id);
    }
  }
  const system = core.state.entries.flatMap((e) => (e.state === "live" && e.span.message?.role === "system" ? [e.span.id] : []));
  return { allowed: providerCompactionAllowed(core), reversible, lossy, kept, system };
}

/** Why a kept span's prune would be refused, in words. */
function keptMessage(kind: string, reason: string, detail: { readonly code: string; readonly copy?: string } | null): string {
  switch (reason) {
    case "lossy-forbidden":
      return detail?.copy === "expires"
        ? `kind ${kind} forbids lossy prunes, and its copy would run out mid-session`
        : `kind ${kind} has no copy to recall and forbids lossy prunes`;
    case "lossy-budget":
      return `kind ${kind} has no copy to recall, and the session's lossy budget is spent`;
    case "not-reversible":
      return `kind ${kind}: its copy cannot be recalled (${detail?.copy ?? "no copy"})`;
    default:
      return `kind ${kind}: ${reason}`;
  }
}

/** A tool call/result group (or a lone span) a provider's compaction covers, planned as a prune of it would be. */
type CoveredGroup = {
  readonly members: readonly LiveEntry[];
  /** The group has a member with no copy to hold: the prune asks for a lossy commitment, which its policy may refuse. */
  readonly acceptLossy: boolean;
} & ({ readonly plan: PrunePlan; readonly refusal: null } | { readonly plan: null; readonly refusal: { readonly reason: KeptReason; readonly message: string } });

/**
 * The covered live spans, one entry per tool call/result group in window order, as `prune` plans them: what
 * the plan and the record step both walk, so that a group is decided once, all or nothing, and the same way.
 */
function coveredGroups(core: WindowCore): CoveredGroup[] {
  const seen = new Set<LiveEntry>();
  const groups: CoveredGroup[] = [];
  for (const e of core.state.entries) {
    if (!covered(e) || seen.has(e)) continue;
    const planned = planPrune(core.planContext, e.span.id, "drop", null);
    const members = "plan" in planned ? planned.plan.members.map((p) => p.entry) : e.span.group === undefined ? [e] : core.planContext.groupMembers(e.span.group);
    for (const m of members) seen.add(m);
    // The provider frees a span with no copy to hold as surely as one with: the prune asks for the lossy
    // commitment, which the kind's policy and the budget then allow (a tombstone) or refuse (kept).
    const acceptLossy = members.some((m) => !backed(m, core.policyOf(m.span.kind)));
    if ("plan" in planned) groups.push({ members, acceptLossy, plan: planned.plan, refusal: null });
    else groups.push({ members, acceptLossy, plan: null, refusal: { reason: planned.refusal.reason as KeptReason, message: planned.refusal.message } });
  }
  return groups;
}

/**
 * Reads what each backed member's store holds now, as the prune's transaction will read it (`computeCheck`
 * over the record its handle names, or the span's own record without one): one `lookupMany` per store that
 * has it, one `lookup` per span otherwise. Returns the check of a member, or `null` when its store failed.
 */
async function readCopies(core: WindowCore, groups: readonly CoveredGroup[]): Promise<(store: BackingStore, p: PlannedMember) => CheckResult | null> {
  const keyOf = (p: PlannedMember): LookupKey => (p.entry.handle === null ? { spanId: p.entry.span.id } : { handle: p.entry.handle });
  const wanted = new Map<BackingStore, PlannedMember[]>();
  for (const g of groups) {
    if (g.plan === null) continue;
    for (const p of g.plan.members) {
      if (p.policy.store === null) continue;
      let list = wanted.get(g.plan.store);
      if (list === undefined) wanted.set(g.plan.store, (list = []));
      list.push(p);
    }
  }
  const found = new Map<PlannedMember, LookupResult | null>();
  for (const [store, members] of wanted) {
    try {
      const answers = store.lookupMany !== undefined
        ? await store.lookupMany(core.session, members.map(keyOf))
        : await Promise.all(members.map((p) => store.lookup(core.session, keyOf(p))));
      for (const [i, p] of members.entries()) found.set(p, answers[i] ?? null);
    } catch {
      for (const p of members) found.set(p, null);
    }
  }
  return (store, p) => {
    if (p.policy.store === null) return unbackedCheck();
    const r = found.get(p);
    if (r === undefined || r === null) return null;
    return computeCheck(p.entry.handle, p.entry.span.id, p.entry.span.hash, recordOf(r), store);
  };
}

/** A lookup's answer as the record a prune's transaction reads. */
function recordOf(r: LookupResult): RecordState {
  if (r.status === "found") return { state: "live", handle: r.handle, spanId: r.spanId, hash: r.hash, createdAt: r.createdAt };
  if (r.status === "expired") return { state: "expired", handle: r.handle, spanId: r.spanId };
  return { state: "absent" };
}

/** A live span a provider's compaction covers: every one but system text, which providers keep apart. */
function covered(e: { readonly state: string }): e is LiveEntry {
  return e.state === "live" && (e as LiveEntry).span.message?.role !== "system";
}

/** Whether the prune can hold a copy: the kind names a store and the span has a handle, or may be written back. */
function backed(e: LiveEntry, policy: KindPolicy): boolean {
  return policy.store !== null && (e.handle !== null || policy.repersist === true);
}

/** The one line the model reads beside the block: the summary's header (a runtime line), as of `now`. */
function headerOf(entry: SummaryEntry, now: number): string {
  return summaryHeader(entry.spanId, entry.members, now);
}

/** Records a provider's compaction from its response (see the module comment). Never throws for the block's content. */
export async function recordProviderCompaction(core: WindowCore, input: ProviderCompaction): Promise<ProviderCompactionOutcome> {
  const { provider } = input;
  const base = { op: "provider_compaction" as const, provider, pruned: [], lossy: [], kept: [], members: [] };
  const allowed = providerCompactionAllowed(core);
  const given = { op: "provider_compaction", provider, ...(input.failed ? { failed: true } : {}), ...(allowed ? {} : { forbidden: true }) };
  const audited = directiveForAudit(given);
  // A block that cannot be sent back is refused, audited like every refusal (a failed one is failed first: it is
  // not sent back either way).
  const read = blockText(input);
  const refuse = (r: BlockRefusal) => unrecorded(core, base, directiveForAudit({ ...given, refused: r.refused }), r.message);
  if ("refused" in read && read.refused !== NOT_WELL_FORMED.refused) return refuse(read);
  if (input.failed) {
    await core.audit(core.home, compactDraft(audited, false));
    return { ...base, status: "failed", spanId: null, line: "", message: "the provider's compaction failed (no summary): nothing was compacted, and the block is not sent back" };
  }
  if ("refused" in read) return refuse(read);
  if (input.malformed !== undefined) {
    return refuse({
      refused: "malformed",
      message: `the compaction block is not one the provider takes back (${oneLine(input.malformed, 120)}); it is not sent back, so the provider reads the whole window again`,
    });
  }
  const { block } = read;
  if (!allowed) {
    // The request was built around pruneguard (its builders refuse under this policy). The provider compacted
    // on its side only: not sending the block back undoes that, and nothing of the window is freed for it.
    return unrecorded(core, base, audited, "the policy forbids provider compaction (session.providerCompaction): nothing was pruned for it, and the block is not sent back, so the provider reads the whole window again");
  }
  await core.doubts.settleAll();
  // Nothing it could stand for (every span before it is system text, or one the policy keeps, and none was
  // pruned before): a summary of nothing has no line to show. Not recorded, nothing lost.
  const plan = await planProviderCompaction(core);
  if (plan.reversible.length + plan.lossy.length === 0 && !core.state.entries.some(gone)) {
    return unrecorded(core, { ...base, kept: plan.kept.map((k) => ({ spanId: k.spanId, reason: k.reason, message: k.message })) }, audited, COVERS_NOTHING);
  }
  // The summary's id is minted by the home store, and its block noted there, before any span is pruned for it:
  // a resumed window finds the block and draws the compaction again.
  const noted = noteOf({ provider, summary: input.summary, block });
  const hash = contentHash(noted);
  let spanId: string;
  try {
    spanId = (await core.home.registerSpan(core.session, { kind: PROVIDER_COMPACTION_KIND, hash, group: null, message: null, store: null })).spanId;
    await core.home.noteReplacement(core.session, spanId, noted);
  } catch (err) {
    const message = `the store failed before the provider's compaction could be recorded (${errorMessage(err)}); the block is not sent back, so the provider reads the whole window again`;
    return finish(core, { ...base, status: "store-error", spanId: null, line: "", message });
  }
  const pruned: string[] = [];
  const lossy: string[] = [];
  const kept: Array<ProviderCompactionOutcome["kept"][number]> = [];
  // Group by group, as planned: a group is pruned all or nothing, under one consent to lossy commitments.
  for (const g of coveredGroups(core)) {
    const lead = g.members[0]!;
    const raw = directiveForAudit({ op: "prune", span_id: lead.span.id, mode: "drop", ...(g.acceptLossy ? { accept_lossy: true } : {}), by: "provider_compaction", summary: spanId });
    const outcome = await prune(core, lead.span.id, "drop", null, g.acceptLossy, raw);
    if (outcome.status === "reversible" || outcome.status === "lossy") {
      // Each member as the decision left it: a group may hold a copy of one member and lose another.
      for (const m of g.members) (core.state.get(m.span.id)?.state === "tombstone" ? lossy : pruned).push(m.span.id);
    } else {
      const reason = outcome.status === "invalid" ? "invalid" : outcome.reason;
      for (const m of g.members) kept.push({ spanId: m.span.id, reason, message: outcome.message });
    }
  }
  // Every prune for it refused (a copy found lost, a store failure): the summary would stand for nothing. Its
  // note stays registered; a resumed window draws nothing for a note whose compaction has no members either.
  if (!core.state.entries.some(gone)) {
    core.state.unused.add(spanId);
    return unrecorded(core, { ...base, kept }, audited, COVERS_NOTHING);
  }
  await core.audit(core.home, {
    op: "prune", status: "reversible", spanId, kind: "summary", mode: "summarize", conditions: null, handle: null,
    repersisted: false, acceptLossy: false, reason: null, pinsCarried: 0, directive: audited, spanHash: hash,
  });
  const entry = providerSummary(spanId, { name: provider, block }, input.summary);
  core.state.compactByProvider(entry, core.now());
  entry.text = providerSummaryText(entry, core.now());
  // The provider rewrote its prompt from the start: a compaction point now costs no cache it still had.
  core.compactAutomatically();
  const line = headerOf(entry, core.now());
  const message = `${provider} compacted ${entry.members.length} position${entry.members.length === 1 ? "" : "s"}: ${pruned.length} span${pruned.length === 1 ? "" : "s"} pruned with copies held` +
    `${lossy.length > 0 ? `, ${lossy.length} lost as the policy allows` : ""}${kept.length > 0 ? `, ${kept.length} kept and said again after the block` : ""}`;
  return { op: "provider_compaction", status: "compacted", provider, spanId, members: entry.members.map(spanIdOf), pruned, lossy, kept, line, message };
}

/**
 * The block's JSON text, as it is noted and sent back byte for byte, or why it cannot be sent back: not JSON
 * (100,000 levels deep), not an object, over `MAX_BLOCK_CHARS`, or holding text that is not well-formed (a lone
 * surrogate) anywhere but in its summary. The summary is the provider's prose, which the window shows
 * well-formed (`providerSummary`) and sends back as it came; anything else in a block is opaque to the window
 * (OpenAI's `encrypted_content`, ids, signatures), came from an API that writes well-formed UTF-8 JSON, and
 * sent back with a lone surrogate cannot be read as text by the provider: refused, so the provider reads the
 * whole window again, as after a failed compaction.
 */
function blockText(input: ProviderCompaction): { readonly block: string } | BlockRefusal {
  let block: string;
  let malformed = false;
  try {
    // The replacer returns every value as it is: the text is JSON.stringify's own.
    block = JSON.stringify(input.block, function (key: string, value: unknown) {
      if (!key.isWellFormed() || (typeof value === "string" && !value.isWellFormed() && value !== input.summary)) malformed = true;
      return value;
    }) ?? "null";
  } catch (err) {
    return { refused: "not JSON", message: `the compaction block is not JSON (${errorMessage(err)}); it is not sent back` };
  }
  if (block.length > MAX_BLOCK_CHARS) {
    return {
      refused: "too large",
      message: `the compaction block is ${block.length} characters, over ${MAX_BLOCK_CHARS}; it is not sent back, so the provider reads the whole window again`,
    };
  }
  if (typeof input.block !== "object" || input.block === null) return { refused: "not an object", message: "the compaction block is not an object; it is not sent back" };
  return malformed ? NOT_WELL_FORMED : { block };
}

/** Why a compaction block cannot be sent back: a word for the audit record, a message for the model and the outcome. */
interface BlockRefusal {
  readonly refused: string;
  readonly message: string;
}

const NOT_WELL_FORMED: BlockRefusal = {
  refused: "not well-formed",
  message: "the compaction block holds text that is not well-formed (a lone surrogate) outside its summary, which the provider cannot read back; it is not sent back, so the provider reads the whole window again",
};

/** What the home store keeps of a provider's compaction: its provider, its summary text, its block's JSON text. */
interface Noted {
  readonly provider: string;
  readonly summary: string | null;
  readonly block: string;
}

function noteOf(n: Noted): string {
  return JSON.stringify({ provider: n.provider, summary: n.summary, block: n.block });
}

/**
 * The compaction a resumed window draws again from its note, when the note is the one registered (`hash`):
 * `null` for a note gone or altered (the spans it covered then show their own lines).
 */
export function restoredSummary(spanId: string, note: string | null, hash: string): SummaryEntry | null {
  const n = registeredNote<Noted>(note, hash);
  if (n === null) return null;
  if (typeof n.provider !== "string" || typeof n.block !== "string" || (n.summary !== null && typeof n.summary !== "string")) return null;
  return providerSummary(spanId, { name: n.provider, block: n.block }, n.summary);
}

/** A summary written by the provider, members filled in by `compactByProvider`. */
export function providerSummary(spanId: string, provider: { readonly name: string; readonly block: string }, summary: string | null): SummaryEntry {
  // The text every other renderer, render() and search read is well-formed; the block keeps the provider's bytes.
  return { state: "summary", spanId, kind: "summary", members: [], digest: summary?.toWellFormed() ?? "", ids: [], text: "", handle: null, store: null, replacement: null, provider };
}

/** What a renderer other than the block's own provider reads: the header, and the summary framed when it is text. */
export function providerSummaryText(entry: SummaryEntry, now: number): string {
  const header = headerOf(entry, now);
  return entry.digest === "" ? header : `${header}\n${frameUntrusted(entry.digest)}`;
}

/** A position a provider's compaction would make one of its members: no longer live (`splitForProvider`). */
function gone(e: { readonly state: string }): boolean {
  return e.state !== "live" && e.state !== "lost";
}

const COVERS_NOTHING = "the provider's compaction covers no span pruneguard may free (every span before it is system text or kept by the policy): "
  + "the block is not sent back, so the provider reads the whole window again; nothing was lost";

/** A compaction not recorded (a block that cannot be sent back, forbidden, standing for nothing): audited as changing nothing, its block not sent back. */
async function unrecorded(
  core: WindowCore, base: Omit<ProviderCompactionOutcome, "status" | "spanId" | "line" | "message">, audited: string, message: string,
): Promise<ProviderCompactionOutcome> {
  await core.audit(core.home, compactDraft(audited, false));
  return finish(core, { ...base, status: "refused", spanId: null, line: "", message });
}

/** An outcome that changed nothing in the window: said to the model too, so it knows the block was not kept. */
function finish(core: WindowCore, outcome: ProviderCompactionOutcome): ProviderCompactionOutcome {
  core.notice(`provider compaction not recorded: ${oneLine(outcome.message, 400)}`);
  return outcome;
}

/** A provider's clearing the response reports (Anthropic `applied_edits`), done by an edit pruneguard did not build. */
export interface ProviderClearing {
  readonly provider: string;
  /** The edit's type (`clear_tool_uses_20250919`). */
  readonly edit: string;
  readonly toolUses: number;
  readonly tokens: number;
}

/**
 * Records a clearing the provider did outside the checks (the request carried a `clear_tool_uses` edit the
 * builders refuse): audited, and said to the model, which now reads placeholders with no handle where tool
 * results were. The window still holds every span (it renders them all; the provider cleared its own copy of
 * the request), so recall and search still answer for them.
 */
export async function recordProviderClearing(core: WindowCore, clearing: ProviderClearing): Promise<string> {
  const count = Math.max(0, Math.floor(clearing.toolUses));
  const directive = directiveForAudit({ op: "provider_clearing", provider: clearing.provider, edit: clearing.edit, cleared_tool_uses: count, cleared_input_tokens: clearing.tokens, unchecked: true });
  await core.audit(core.home, compactDraft(directive, false));
  const line = `the provider cleared ${count} tool ${count === 1 ? "use" : "uses"} outside pruneguard's checks; their spans are still in this window: search finds them, recall by span id gives their bytes`;
  core.notice(line);
  return line;
}
