import type { AuditDraft, AuditRecord } from "../audit.js";
import { OutcomeUnknownError } from "../errors.js";
import type { BackingStore } from "../stores/store.js";

/** A record waiting to be written; `resolve` when an append of it may have committed (its reply was lost). */
interface Waiting {
  readonly store: BackingStore;
  readonly draft: AuditDraft;
  resolve: (() => Promise<unknown>) | null;
  /** Its seq once written. */
  seq: number | null;
}

/**
 * Audit records waiting for a store that failed, or for the next write (a decision made where nothing can
 * be awaited: an automatic compaction point). No decision goes unlogged: a draft that could not be written
 * waits here, and every later write (and every prune, before its transaction) flushes the queue first, in
 * order, so each store's chain keeps the order the decisions were made in. A write joins the queue before
 * it flushes, so a record queued while an earlier flush is under way still goes after it.
 *
 * No decision is logged twice either: an append whose outcome the store could not tell (it sent COMMIT,
 * lost the reply and could not read back: `OutcomeUnknownError`) waits with the store's `resolve`, which
 * is asked before the draft is appended again — a record that did commit is not written a second time.
 * One flush runs at a time: a flush asked for while one is under way joins it.
 */
export class PendingAudit {
  readonly #session: string;
  readonly #queue: Waiting[] = [];
  #flushing: Promise<void> | null = null;

  constructor(session: string) {
    this.#session = session;
  }

  get size(): number {
    return this.#queue.length;
  }

  /** Appends a record after every record waiting; if a store fails, keeps it to retry. The record's seq, when it was written. */
  async append(store: BackingStore, draft: AuditDraft): Promise<number | null> {
    const item: Waiting = { store, draft, resolve: null, seq: null };
    this.#queue.push(item);
    try {
      await this.flush();
    } catch {
      // Its store, or one of a record before it, failed: it waits (with `resolve` when its own append's
      // outcome is unknown) behind the records that are still waiting.
    }
    return item.seq;
  }

  /**
   * Queues a record to be written with the next one (or the next `flush`), in order: for decisions made
   * where nothing can be awaited (an automatic compaction point, inside a rendering).
   */
  defer(store: BackingStore, draft: AuditDraft): void {
    this.#queue.push({ store, draft, resolve: null, seq: null });
  }

  /** Writes every waiting record, oldest first; throws (keeping the rest) when a store still fails or still cannot say. */
  async flush(): Promise<void> {
    // Joins a flush under way; and once it is done, drains again what was queued after its last look.
    while (this.#queue.length > 0) {
      this.#flushing ??= this.#drain().finally(() => {
        this.#flushing = null;
      });
      await this.#flushing;
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const next = this.#queue[0]!;
      if (next.resolve !== null) {
        // Throws while the store still cannot say; the record stays first in line.
        const committed = (await next.resolve()) as AuditRecord | null;
        if (committed !== null) {
          next.seq = committed.seq;
          this.#queue.shift();
          continue;
        }
        next.resolve = null;
      }
      try {
        next.seq = (await next.store.appendAudit(this.#session, next.draft)).seq;
      } catch (err) {
        next.resolve = unknownOutcome(err);
        throw err;
      }
      this.#queue.shift();
    }
  }
}

/** The store's way to ask again whether a failed append committed, when the failure left that unknown. */
function unknownOutcome(err: unknown): (() => Promise<unknown>) | null {
  return err instanceof OutcomeUnknownError ? err.resolve : null;
}
