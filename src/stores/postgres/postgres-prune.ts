/**
 * The PostgreSQL store's commit transaction: one prune in two round trips — lock and read the records, the
 * handle counter, the session's counters and the chain head; then, after the guard's `decide` ran here,
 * write the re-persists, holds, audit records and the new head with COMMIT. `PostgresStore.commitPrune`
 * runs it (retrying a lost race) and reads back what committed when the reply to COMMIT was lost.
 */
import type { AuditRecord } from "../../audit.js";
import { commitResult, lossySpent, planCommit, type CommitPlan } from "../commit.js";
import type { BackingStore, PruneCommit, PruneTransaction } from "../store.js";
import type { TxSession } from "./driver.js";
import { headOf, recordOf, type PostgresAccess } from "./postgres-access.js";
import { RawSql, sql } from "./sql.js";

/** What a prune sent with its COMMIT: enough to recognise it in the chain and answer as if the reply had come. */
export interface Sent {
  readonly plan: CommitPlan;
  readonly records: readonly AuditRecord[];
}

/**
 * One attempt of a prune on `tx`. `store` is what `planCommit` checks against, `mintHandle` makes the
 * store's `n`th handle; `sent` is set to what goes out with COMMIT just before it is sent.
 */
export async function prune(
  pg: PostgresAccess,
  store: Pick<BackingStore, "name" | "capabilities" | "retentionMs">,
  mintHandle: (n: number) => string,
  tx: TxSession,
  txn: PruneTransaction,
  sent: { value: Sent | null },
): Promise<PruneCommit> {
  const { records: R, handles: H } = pg.t;
  const session = txn.session;
  const backed = txn.items.filter((i) => i.backed);
  const spanIds = [...new Set(backed.map((i) => i.spanId))];
  const handles = [...new Set(backed.flatMap((i) => (i.handle === null ? [] : [i.handle])))];
  const own = new RawSql(sql`store = ${pg.name} AND session = ${session}`);
  const lockRecords = spanIds.length > 0;
  // The counter is locked only when some span has no record yet, i.e. a re-persist would mint.
  const mayMint = lockRecords && store.capabilities.writable;

  // Round trip 1: BEGIN (added by the driver), lock and read the records, the counter and the chain head.
  const statements: string[] = [];
  if (lockRecords) {
    const match = handles.length > 0 ? sql`(span_id IN (${spanIds}) OR handle IN (${handles}))` : sql`span_id IN (${spanIds})`;
    statements.push(sql`SELECT handle, span_id, kind, text, hash, created_at, expired_at FROM ${R}
      WHERE ${own} AND ${new RawSql(match)} ORDER BY span_id FOR UPDATE`);
  }
  if (mayMint) {
    const missing = new RawSql(sql`(SELECT count(*) FROM ${R} WHERE ${own} AND span_id IN (${spanIds})) < ${spanIds.length}`);
    statements.push(
      sql`INSERT INTO ${H} (store, session, next) SELECT ${pg.name}, ${session}, 0 WHERE ${missing} ON CONFLICT DO NOTHING`,
      sql`SELECT next FROM ${H} WHERE ${own} AND ${missing} FOR UPDATE`,
    );
  }
  // The session's counters, then the chain head: the lock order is records, handles, session, head.
  // With the budget asked for, the chain's lossy records are counted too (after the head's lock: every
  // commit of the chain is finished), so a counter reset below them spends the budget instead of refilling it.
  const counted = txn.lossyBudget !== null && txn.lossyBudget !== undefined;
  statements.push(...pg.lockSession(session), ...pg.lockHead(session), ...(counted ? [pg.chainLossy(session)] : []));
  const results = await tx.batch(statements);
  const recordRows = lockRecords ? results[0]!.map(recordOf) : [];
  const counterRows = mayMint ? results[lockRecords ? 2 : 1]! : [];
  const last = results.length - (counted ? 2 : 1);
  const counter = Number(results[last - 2]![0]?.["lossy_used"] ?? 0);
  const lossyUsed = counted ? lossySpent(counter, Number(results[last + 1]![0]?.["n"] ?? 0)) : counter;
  const head = headOf(results[last]!);

  const bySpan = new Map(recordRows.map((r) => [r.spanId, r]));
  const byHandle = new Map(recordRows.map((r) => [r.handle, r]));
  let next = counterRows[0] === undefined ? null : Number(counterRows[0]["next"]);
  const firstNext = next;
  const plan = planCommit(store, txn, {
    find: (item) => (item.handle === null ? bySpan.get(item.spanId) : byHandle.get(item.handle)),
    own: (spanId) => bySpan.get(spanId),
    mint: () => {
      // Only reachable when round trip 1 found a span without a record, so the counter was locked and read.
      if (next === null) throw new Error(`store ${pg.name}: handle counter not locked`);
      return mintHandle(++next);
    },
  }, lossyUsed);

  // Round trip 2: re-persists, holds, audit records, the new chain head and COMMIT.
  const now = pg.now();
  const writes: string[] = [];
  for (const { item, repersist, hold, handle } of plan.writes) {
    const key = new RawSql(sql`${own} AND span_id = ${item.spanId}`);
    if (repersist === "rewrite") {
      writes.push(sql`UPDATE ${R} SET text = ${item.text}, hash = ${item.hash}, kind = ${item.kind}, created_at = ${now}, expired_at = NULL WHERE ${key}`);
    } else if (repersist === "insert") {
      writes.push(sql`INSERT INTO ${R} (store, session, span_id, handle, kind, text, hash, created_at)
        VALUES (${pg.name}, ${session}, ${item.spanId}, ${handle}, ${item.kind}, ${item.text}, ${item.hash}, ${now})`);
    }
    if (hold) writes.push(sql`UPDATE ${R} SET held = TRUE, held_until = ${txn.holdUntil} WHERE ${key}`);
  }
  if (next !== null && next !== firstNext) writes.push(sql`UPDATE ${H} SET next = ${next} WHERE ${own}`);
  if (plan.lossy > 0) writes.push(sql`UPDATE ${pg.t.sessions} SET lossy_used = lossy_used + ${plan.lossy} WHERE ${own}`);
  const { records, statements: auditWrites } = pg.seal(session, head, plan.drafts);
  sent.value = { plan, records };
  await tx.commit([...writes, ...auditWrites]);
  return commitResult(plan, records);
}
