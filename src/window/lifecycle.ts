/**
 * A session's life around its decisions: a span appended (its copy persisted, its id minted by the home
 * store), a session resumed from its stores, compaction points asked for, copies checked behind the
 * runtime's back, the audit log read, and the end (holds released, every decision applied).
 */
import { inDecisionOrder, type AuditRecord } from "../audit.js";
import { errorMessage } from "../errors.js";
import { contentHash } from "../hash.js";
import { chooseHint } from "../hint.js";
import type { CompactOutcome } from "../outcome.js";
import type { Span } from "../types.js";
import { compactDraft, endDraft, startDraft } from "./audit-drafts.js";
import { compactedLine } from "./compaction.js";
import type { WindowCore } from "./core.js";
import { newSpan, type Entry, type GoneEntry, type LiveEntry } from "./entries.js";
import type { AppendInput } from "./window-options.js";
import type { Restored } from "./resume.js";
import { entryView } from "./view.js";

/**
 * Appends a span and, when its kind names a store, persists it there first so that a later prune can be
 * reversible. A store failure does not lose the span: it stays live without a handle, and a later prune
 * sees that (and may re-persist). Returns the new entry.
 */
export async function appendSpan(core: WindowCore, input: AppendInput<string>): Promise<LiveEntry> {
  if (!core.hasKind(input.kind)) throw new TypeError(`ContextWindow.append: unknown kind ${String(input.kind)}`);
  const policy = core.policyOf(input.kind);
  if (typeof input.text !== "string") throw new TypeError("ContextWindow.append: text must be a string");
  checkPlacement(input);
  // The session's start is kept by the home store (the first window's wins), so every window of the
  // session, resumed or in another process, counts `limits.maxLengthMs` from the same time. Nothing can
  // be pruned before a first append, so nothing was decided with this window's own start.
  if (!core.startSettled) {
    core.startedAt = await core.home.sessionStart(core.session, core.startedAt);
    // Which policy this window writes the session under: a resume reads it (`policyName`).
    if (core.settings.policyName !== null) await core.audit(core.home, startDraft(core.settings.policyName));
    core.startSettled = true;
  }
  const { state } = core;
  // The home store mints the id and records the span (never its bytes), so a process that resumes the
  // session puts it back in its place or says it was lost; without that record it fails closed.
  const draft = newSpan("span_0", { ...input, ...state.calls.groupFor(input) });
  // Only a span with a copy that may be dropped becomes an index line: its hint is chosen now, once, not
  // inside its prune (a range summary's member of another kind gets its hint when it is summarized). Chosen
  // before the home store registers the span: nothing that can fail comes after the registration but the
  // copy's persist, which a span survives.
  const hint = policy.store !== null && policy.modes.includes("drop") ? chooseHint(draft, core.settings.indexHintTokens) : undefined;
  const registered = await core.home.registerSpan(core.session, {
    kind: draft.kind, hash: draft.hash, group: draft.group ?? null, message: draft.message ?? null, store: policy.store,
  });
  const span: Span = { ...draft, id: registered.spanId };
  const entry: LiveEntry = { state: "live", pos: state.entries.length, span, handle: null, store: policy.store, persistError: null, copiedAt: null, notice: null };
  if (hint !== undefined) entry.hint = hint;
  if (policy.store !== null) {
    const store = core.store(policy.store);
    if (store.capabilities.writable) {
      try {
        const persisted = await store.persist({ session: core.session, spanId: span.id, kind: span.kind, text: span.text, hash: span.hash });
        entry.handle = persisted.handle;
        entry.copiedAt = persisted.createdAt;
      } catch (err) {
        entry.persistError = errorMessage(err);
        core.telemetry?.storeFailure("append", policy.store, err);
      }
    }
  }
  state.push(entry);
  core.notices = [];
  core.shown.appended(entryView(entry, core.now(), core.settings.tombstone));
  return entry;
}

const ROLES: ReadonlySet<unknown> = new Set(["system", "user", "assistant", "tool-call", "tool-result"]);

/**
 * Refuses, before anything changes, a span whose place in a conversation no renderer could send: every
 * renderer reads a tool message's `callId` and `toolName` as strings (an id of another type made every later
 * rendering throw, also after a resume), and a group is a string.
 */
function checkPlacement(input: AppendInput<string>): void {
  if (input.group !== undefined && typeof input.group !== "string") throw new TypeError("ContextWindow.append: group must be a string");
  const m: unknown = input.message;
  if (m === undefined) return;
  if (typeof m !== "object" || m === null) throw new TypeError("ContextWindow.append: message must be an object");
  const { role, callId, toolName, isError } = m as { readonly role?: unknown; readonly callId?: unknown; readonly toolName?: unknown; readonly isError?: unknown };
  if (!ROLES.has(role)) throw new TypeError("ContextWindow.append: message.role must be system, user, assistant, tool-call or tool-result");
  if (role !== "tool-call" && role !== "tool-result") return;
  if (typeof callId !== "string") throw new TypeError(`ContextWindow.append: a ${role} message's callId must be a string`);
  if (typeof toolName !== "string") throw new TypeError(`ContextWindow.append: a ${role} message's toolName must be a string`);
  if (role === "tool-result" && isError !== undefined && typeof isError !== "boolean") throw new TypeError("ContextWindow.append: a tool-result message's isError must be a boolean");
}

/** Puts a resumed session's entries back in place; a restart is a compaction point. */
export function restore(core: WindowCore, restored: Restored): void {
  core.lastDecided = restored.lastDecided;
  // The session's horizon is the one it began with, not one restarted by the resume.
  core.startedAt = restored.startedAt;
  core.startSettled = true;
  const { state } = core;
  for (const id of restored.unused) state.unused.add(id);
  for (const id of restored.summaries) state.summariesBefore.add(id);
  for (const e of restored.entries) {
    state.push(e);
    // Tool call/result pairing goes on where it stopped: a result for a call made before the restart joins it.
    const message = e.state === "live" ? e.span.message : e.state === "summary" || e.state === "fold" ? undefined : e.message ?? undefined;
    if (message !== undefined) state.calls.groupFor({ message });
    // A directive call answered before the restart folds again once the window knows the tools' names.
    if ((e.state === "live" || e.state === "lost") && message?.role === "tool-result") {
      state.resumedResults.set(`${message.toolName}\0${message.callId}`, { callId: message.callId, toolName: message.toolName, isError: message.isError === true });
    }
    if (e.state === "pruned" || e.state === "tombstone") state.groupPruned(e.group, e.state === "tombstone");
    // A provider's compaction holds the spans it covered: a late result of a call among them joins its fate.
    if (e.state === "summary") for (const m of leavesOf(e)) state.groupPruned(m.group, m.state === "tombstone");
  }
  if (state.directiveNames.size > 0) state.learnedTools();
  // The resumed window renders what the session decided.
  core.compactNow();
}

/** A compaction point asked for, audited like every directive. `raw` is the directive as audited. */
export async function compactAsked(core: WindowCore, raw: string): Promise<CompactOutcome> {
  const { made, ...report } = core.compactNow();
  const seq = await core.audit(core.home, compactDraft(raw, made));
  return { op: "compact", status: "compacted", ...report, line: compactedLine(report), auditSeq: seq };
}

/**
 * Asks the stores whether every reversibly pruned span's copy (members of range summaries too) is still
 * there and byte-identical, and marks those that are not, so their lines stop offering a recall. Returns
 * how many it found lost; a store that fails is skipped.
 */
export async function checkCopies(core: WindowCore): Promise<number> {
  let lost = 0;
  for (const e of [...core.state.all()]) {
    if (e.state !== "pruned" || e.copyLost || e.handle === null || e.store === null) continue;
    let found;
    try {
      found = await core.store(e.store).lookup(core.session, { handle: e.handle });
    } catch {
      continue;
    }
    if (found.status !== "found" || found.hash !== e.hash || contentHash(found.text) !== e.hash) {
      core.state.markCopyLost(e);
      lost++;
    }
  }
  // Lines that offered a recall of a lost copy stop offering it now.
  if (lost > 0) core.compactNow();
  return lost;
}

/** Every decision of this session, across its stores, oldest first; records waiting are written first. */
export async function auditLog(core: WindowCore): Promise<AuditRecord[]> {
  if (core.pendingAudit.size > 0) await core.pendingAudit.flush().catch(() => undefined);
  const all: AuditRecord[] = [];
  for (const store of core.distinctStores()) all.push(...(await store.auditLog(core.session)));
  return inDecisionOrder(all);
}

/**
 * Ends the session: applies what was decided and not yet applied, so the last rendering shows every
 * decision, and releases its holds, so their copies age out under normal retention.
 */
export async function endSession(core: WindowCore): Promise<void> {
  if (core.ended) return;
  // Decisions in doubt settle first (when the store can say): one applied after the release would rely on
  // a hold that no longer keeps its copy.
  if (core.doubts.size > 0) await core.doubts.settleAll();
  core.ended = true;
  // From the release on, a pruned span's copy is kept only by its store's retention, and a line must not
  // offer a recall past it.
  const rekept = releaseKeeps(core, core.now());
  if (rekept || core.shown.pendingCount > 0) core.compactAutomatically();
  // Recorded before the holds go: a window resumed on the session reads which copies only retention keeps.
  await core.audit(core.home, endDraft());
  if (core.pendingAudit.size > 0) await core.pendingAudit.flush().catch(() => undefined);
  for (const store of core.distinctStores()) await store.releaseHolds(core.session);
}

/**
 * What keeps each pruned span's copy once the session's holds are released: its store's retention from
 * when the copy was written, or nothing known (then the line stops offering a recall now). Returns
 * whether any line's promise changed.
 */
function releaseKeeps(core: WindowCore, now: number): boolean {
  let changed = false;
  for (const e of core.state.all()) {
    if (e.state !== "pruned" || e.handle === null || e.copyLost || e.store === null) continue;
    if (!core.store(e.store).capabilities.holds) continue; // nothing held: its promise stands
    const kept = e.retainedUntil === undefined ? now : e.retainedUntil;
    // Unchanged when retention already outlasted the hold, but no longer "for the session": until then, it says.
    if (kept === e.keptUntil && (kept === null || e.until === kept)) continue;
    e.keptUntil = kept;
    if (kept !== null) e.until = kept;
    changed = true;
  }
  // A folded member's line now says until when (or that its copy may be lost): its fold's line is drawn again.
  if (changed) core.state.promiseChanged();
  return changed;
}

/** The index lines and tombstones under a summary or fold, depth first (an explicit stack: summaries nest thousands deep). */
function* leavesOf(e: Entry): Generator<GoneEntry> {
  const stack: Entry[] = [e];
  while (stack.length > 0) {
    const m = stack.pop()!;
    if (m.state === "pruned" || m.state === "tombstone") yield m;
    else if (m.state === "summary" || m.state === "fold") for (let i = m.members.length - 1; i >= 0; i--) stack.push(m.members[i]!);
  }
}
