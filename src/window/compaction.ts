/**
 * Compaction points: when what the model reads is rewritten. A prune is checked, held, audited and
 * answered when it arrives (decide), but the rendering keeps showing the span until a compaction point
 * (apply), because providers cache prompt prefixes and a rewrite at position p re-bills every token after
 * p. Between compaction points the rendering only grows at its end, so every request shares the whole
 * earlier prefix with the one before, byte for byte.
 *
 * A compaction point comes at the first rendering after the pending prunes would free the policy's
 * `minFreedTokens` or the rendering reached `atTokens` (or the session's `maxTokens`) — so the prune
 * calls of one step are one rewrite — when code calls `compact()` or the model asks
 * (`{"op":"compact"}`), and when a line already rendered would otherwise stop telling the truth (a
 * copy's promise lapsed, or a copy was found lost). `"immediate"` makes every decision a compaction point.
 *
 * Nothing is lost by the deferral: the decided state (recall, search, map, range summaries) is the
 * window's, and a pending span's copy is already held; the deferral changes only when its line appears.
 * Unless the copy's promise ends before the compaction point (a hold lapsing at the session's horizon,
 * retention, `end()`, a copy found lost): then the decision is not applied at all and the span stays live
 * (`lapse.ts`).
 */
import { DEFAULT_COMPACTION, type CompactionPolicy } from "../policy/kinds.js";
import { countTokens } from "../tokens.js";
import type { CompactionReport, PendingState, WhenApplied } from "../outcome.js";
import type { WindowEntry } from "./view.js";

/** `980`, `9.8k`, `48k`: a token count as the model reads it. */
export function tokensShort(n: number): string {
  const v = Math.max(0, Math.round(n));
  if (v < 1000) return String(v);
  // 9,950 and up round to 10k: `(9960 / 1000).toFixed(1)` would print `10.0k`, which the grammar does not read.
  return v < 9_950 ? `${(v / 1000).toFixed(1)}k` : `${Math.round(v / 1000)}k`;
}

/** The line a pending decision adds to its answer, and the map to its head. */
export function pendingLine(pendingTokens: number, thresholdTokens: number, rewriteTokens: number, due: boolean): string {
  const when = due ? "applies before your next request" : "applies at the next compaction";
  return `${when}: ~${tokensShort(pendingTokens)} of ${tokensShort(thresholdTokens)} tokens pending; compacting now rewrites ~${tokensShort(rewriteTokens)} cached tokens`;
}

/**
 * The size from which pruning pays, for a compaction policy: three times what a compaction point needs
 * pending (below it, the live spans a model keeps are most of the window, and each prune sent in a step of
 * its own re-reads the whole window for less than it frees), and never above the size that forces a
 * compaction point. `null` when every decision is a compaction point.
 */
export function pruneFloor(policy: CompactionPolicy | "immediate", atTokens: number | null): number | null {
  if (policy === "immediate") return null;
  const floor = 3 * policy.minFreedTokens;
  return atTokens === null ? floor : Math.min(floor, atTokens);
}

/** `no need to prune yet: ~9.8k tokens, pruning pays from ~36k`: the advice a prune's answer and the map carry below the floor. */
export function adviceLine(usedTokens: number, floor: number): string {
  return `no need to prune yet: ~${tokensShort(usedTokens)} tokens, pruning pays from ~${tokensShort(floor)}`;
}

/** `pending: 3 decisions free ~12k of 12k tokens; compacting now rewrites ~48k cached tokens` (the map's second line). */
export function mapPendingLine(p: PendingState): string {
  return `pending: ${p.decisions} decision${p.decisions === 1 ? "" : "s"} free ~${tokensShort(p.pendingTokens)} of ${tokensShort(p.thresholdTokens)} tokens; compacting now rewrites ~${tokensShort(p.rewriteTokens)} cached tokens`;
}

/**
 * `compacted: 3 decisions applied, 2 calls folded, ~11k tokens freed, ~48k rewritten`; with `, 1 not applied`
 * after the decisions when a copy stopped being promised first (each such span says so on its own line);
 * `compacted: nothing was pending` when nothing changed, and with `; lines shown before brought up to date, ~93
 * rewritten` when nothing decided was pending but lines already shown changed (and that was a compaction point).
 */
export function compactedLine(r: CompactionReport): string {
  if (r.applied === 0 && r.folded === 0 && r.notApplied === 0) {
    // Nothing decided was pending, but lines already shown changed (a notice cleared, a lapsed promise redrawn).
    return r.rewrittenTokens === 0 ? "compacted: nothing was pending" : `compacted: nothing was pending; lines shown before brought up to date, ~${tokensShort(r.rewrittenTokens)} rewritten`;
  }
  const notApplied = r.notApplied === 0 ? "" : `, ${r.notApplied} not applied`;
  const folded = r.folded === 0 ? "" : `, ${r.folded} call${r.folded === 1 ? "" : "s"} folded`;
  return `compacted: ${r.applied} decision${r.applied === 1 ? "" : "s"} applied${notApplied}${folded}, ~${tokensShort(r.freedTokens)} tokens freed, ~${tokensShort(r.rewrittenTokens)} rewritten`;
}

/** The rendered tokens of a view, about: a live span's count plus its header, a line by the tokenizer. */
const viewTokens = new WeakMap<WindowEntry, number>();
function tokensOf(v: WindowEntry): number {
  let n = viewTokens.get(v);
  if (n === undefined) viewTokens.set(v, (n = v.state === "live" ? v.span.tokens + 6 : countTokens(v.text)));
  return n;
}

/** Whether two views of one position read the same to the model (and to a provider renderer). */
function sameView(a: WindowEntry, b: WindowEntry): boolean {
  if (a.state === "live" || b.state === "live") {
    return a.state === "live" && b.state === "live" && a.span === b.span && a.notice === b.notice && a.handle === b.handle;
  }
  return a.state === b.state && a.text === b.text && a.line === b.line && a.message?.role === b.message?.role;
}

/**
 * What the model reads between compaction points: the positions as the last compaction point rendered
 * them, then the spans appended since; and what is pending. The window decides; this only remembers
 * what was shown and says when it is due to change.
 */
export class ShownWindow {
  readonly policy: CompactionPolicy | "immediate";
  readonly #atTokens: number | null;
  #views: WindowEntry[] = [];
  /** Position in `#views` by span id. */
  #at = new Map<string, number>();
  /** `#before[i]`: the tokens of the views before position i (one more entry than views), so a tail's cost is one subtraction. */
  #before: number[] = [0];
  /** Span ids decided since the last compaction point (prune targets, group members, summaries). */
  readonly #pending = new Set<string>();
  #pendingTokens = 0;
  #firstPending = Number.POSITIVE_INFINITY;
  /** When a shown line stops being true (a copy's promise lapses): a compaction point then. */
  #nextLapse = Number.POSITIVE_INFINITY;
  /** Compaction points so far. */
  count = 0;
  /** How many of the views the last compaction point rendered (the rest were appended since). */
  compacted = 0;

  constructor(policy: CompactionPolicy | "immediate" | null | undefined, maxTokens: number | null) {
    this.policy = policy ?? DEFAULT_COMPACTION;
    this.#atTokens = this.policy === "immediate" ? null : (this.policy.atTokens ?? maxTokens);
  }

  get immediate(): boolean {
    return this.policy === "immediate";
  }

  /** The size from which pruning pays (`pruneFloor`), `null` when every decision is a compaction point. */
  get pruneFloor(): number | null {
    return pruneFloor(this.policy, this.#atTokens);
  }

  /** The advice for a window of `usedTokens` (`adviceLine`), or `null` from the floor on. */
  advice(usedTokens: number = this.#tokens): string | null {
    const floor = this.pruneFloor;
    return floor === null || usedTokens >= floor ? null : adviceLine(usedTokens, floor);
  }

  get threshold(): number {
    return this.policy === "immediate" ? 0 : this.policy.minFreedTokens;
  }

  /** The rendering as of now: what the last compaction point showed, and what was appended since. */
  views(): readonly WindowEntry[] {
    return this.#views;
  }

  /**
   * Compares a rendering to the one shown: returns it with every view that reads the same as a shown one
   * replaced by the shown object (so its token count is not taken again), and the first position where the
   * two differ (`-1`: none; they read the same).
   */
  reconcile(views: WindowEntry[]): { readonly views: WindowEntry[]; readonly firstChange: number } {
    let firstChange = views.length === this.#views.length ? -1 : Math.min(views.length, this.#views.length);
    for (let i = 0; i < views.length; i++) {
      const v = views[i]!;
      const at = this.#at.get(v.state === "live" ? v.span.id : v.spanId);
      const old = at === undefined ? undefined : this.#views[at];
      if (old !== undefined && sameView(old, v)) views[i] = old;
      if (views[i] !== this.#views[i] && (firstChange < 0 || i < firstChange)) firstChange = i;
    }
    return { views, firstChange };
  }

  /** Tokens of the shown rendering from position `from` on. */
  tokensFrom(from: number): number {
    return this.#tokens - this.#before[Math.min(Math.max(0, from), this.#views.length)]!;
  }

  /** Tokens of everything shown now. */
  get totalTokens(): number {
    return this.#tokens;
  }

  /**
   * A compaction point that found nothing to rewrite: not counted as one. Pending decisions that turned out
   * to change nothing shown are forgotten, and everything shown counts as rendered by the last compaction
   * point (it stays as it is until the next one, so a cache breakpoint may move to its end).
   */
  unchanged(nextLapse: number | null): void {
    if (nextLapse !== null) this.#nextLapse = nextLapse;
    this.#pending.clear();
    this.#pendingTokens = 0;
    this.#firstPending = Number.POSITIVE_INFINITY;
    this.compacted = this.#views.length;
  }

  /** A compaction point: `views` is now what the model reads; nothing is pending. */
  reset(views: WindowEntry[], nextLapse: number): void {
    this.#views = views;
    this.#at = new Map(views.map((v, i) => [v.state === "live" ? v.span.id : v.spanId, i]));
    this.#before = [0];
    for (const v of views) this.#before.push(this.#before[this.#before.length - 1]! + tokensOf(v));
    this.#pending.clear();
    this.#pendingTokens = 0;
    this.#firstPending = Number.POSITIVE_INFINITY;
    this.#nextLapse = nextLapse;
    this.compacted = views.length;
    this.count++;
  }

  /** A span appended: it shows at the end at once (that changes nothing already rendered). */
  appended(view: WindowEntry): void {
    const id = view.state === "live" ? view.span.id : view.spanId;
    this.#at.set(id, this.#views.length);
    this.#views.push(view);
    this.#before.push(this.#tokens + tokensOf(view));
  }

  /** Decisions that change what `spanIds` show as; applying them frees `freed` tokens. */
  decided(spanIds: readonly string[], freed: number): void {
    for (const id of spanIds) {
      this.#pending.add(id);
      const at = this.#at.get(id);
      if (at !== undefined && at < this.#firstPending) this.#firstPending = at;
    }
    this.#pendingTokens += freed;
  }

  /** Decisions over `spanIds` that will not be applied after all (`lapse.ts`): their `freed` tokens are no longer pending. */
  undecided(spanIds: readonly string[], freed: number): void {
    for (const id of spanIds) this.#pending.delete(id);
    this.#pendingTokens = this.#pending.size === 0 ? 0 : Math.max(0, this.#pendingTokens - freed);
    if (this.#pending.size === 0) this.#firstPending = Number.POSITIVE_INFINITY;
  }

  isPending(spanId: string): boolean {
    return this.#pending.has(spanId);
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Whether the window should apply what is pending now. */
  due(): boolean {
    if (this.#pending.size === 0) return false;
    if (this.policy === "immediate") return true;
    if (this.#pendingTokens >= this.policy.minFreedTokens) return true;
    return this.#atTokens !== null && this.#tokens >= this.#atTokens;
  }

  /** Tokens of everything rendered now. */
  get #tokens(): number {
    return this.#before[this.#before.length - 1]!;
  }

  /** Whether a shown line has stopped being true at `now`. */
  lapsed(now: number): boolean {
    return now >= this.#nextLapse;
  }

  /** Tokens of the rendering from the first pending position on. */
  rewriteTokens(): number {
    return this.#tokens - this.#before[Math.min(this.#firstPending, this.#views.length)]!;
  }

  /** What is pending now, or `null`. */
  pendingState(): PendingState | null {
    if (this.#pending.size === 0) return null;
    return { decisions: this.#pending.size, pendingTokens: this.#pendingTokens, thresholdTokens: this.threshold, rewriteTokens: this.rewriteTokens() };
  }

  /** What a decision just recorded says about when it applies. */
  applied(): WhenApplied {
    if (this.#pending.size === 0) return { at: "now" };
    const rewriteTokens = this.rewriteTokens();
    return {
      at: "next-compaction", pendingTokens: this.#pendingTokens, thresholdTokens: this.threshold, rewriteTokens,
      line: pendingLine(this.#pendingTokens, this.threshold, rewriteTokens, this.due()), advice: this.advice(),
    };
  }
}
