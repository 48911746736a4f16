/**
 * Decisions in doubt: the store sent COMMIT and the answer was lost, and reading back what committed failed
 * too. Until the window learns the outcome, every directive over one of the decision's spans first asks the
 * store again; none can commit a second record for the same decision. Prunes and range summaries are held
 * here alike — one `Doubt` for every span the decision covers.
 */
import type { PruneCommit } from "../stores/store.js";

/** A decision whose outcome is unknown: how to ask the store again, and what to do with the answer. */
export interface Doubt {
  resolve(): Promise<PruneCommit | null>;
  /** Applies what the store says committed (`null`: nothing), once. */
  finish(commit: PruneCommit | null): Promise<void>;
}

export class Doubts {
  readonly #bySpan = new Map<string, Doubt>();

  get size(): number {
    return this.#bySpan.size;
  }

  /** Whether a decision over `spanId` is in doubt. */
  has(spanId: string): boolean {
    return this.#bySpan.has(spanId);
  }

  /** Holds `spanIds` in doubt until `doubt` settles. */
  hold(spanIds: Iterable<string>, doubt: Doubt): void {
    for (const id of spanIds) this.#bySpan.set(id, doubt);
  }

  /** Lets go of `spanIds` (the doubt settled). */
  release(spanIds: Iterable<string>): void {
    for (const id of spanIds) this.#bySpan.delete(id);
  }

  /**
   * Settles the decision in doubt over `spanId`: `true` when there is none or it is now known (and applied),
   * `false` when the store still cannot say.
   */
  async settle(spanId: string): Promise<boolean> {
    const doubt = this.#bySpan.get(spanId);
    if (doubt === undefined) return true;
    let commit: PruneCommit | null;
    try {
      commit = await doubt.resolve();
    } catch {
      return false;
    }
    await doubt.finish(commit);
    return true;
  }

  /** Settles every decision in doubt it can; returns the span ids still in doubt. */
  async settleAll(): Promise<ReadonlySet<string>> {
    if (this.#bySpan.size === 0) return new Set();
    for (const spanId of [...new Set(this.#bySpan.keys())]) if (this.#bySpan.has(spanId)) await this.settle(spanId);
    return new Set(this.#bySpan.keys());
  }
}
