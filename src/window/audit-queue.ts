import type { AuditDraft } from "../audit.js";
import type { BackingStore } from "../stores/store.js";

/**
 * Audit records waiting for a store that failed. No decision goes unlogged: a draft that could not be
 * written waits here, and every later write (and every prune, before its transaction) flushes the queue
 * first, in order, so each store's chain keeps the order the decisions were made in.
 */
export class PendingAudit {
  readonly #session: string;
  readonly #queue: Array<{ store: BackingStore; draft: AuditDraft }> = [];

  constructor(session: string) {
    this.#session = session;
  }

  get size(): number {
    return this.#queue.length;
  }

  /** Appends a record; if the store fails, keeps it to retry. The record's seq, when it was written. */
  async append(store: BackingStore, draft: AuditDraft): Promise<number | null> {
    try {
      await this.flush();
      return (await store.appendAudit(this.#session, draft)).seq;
    } catch {
      this.#queue.push({ store, draft });
      return null;
    }
  }

  /** Writes every waiting record, oldest first; throws (keeping the rest) when a store still fails. */
  async flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const next = this.#queue[0]!;
      await next.store.appendAudit(this.#session, next.draft);
      this.#queue.shift();
    }
  }
}
