/**
 * `auditLog()` lists one session's decisions across its stores in the order they were made, even when the
 * clock does not move between them (before the decision clock they came grouped by store), and after a
 * resume the new process's decisions sort after the old one's.
 */
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, verifyAuditChain } from "../../src/index.js";

const kinds = {
  tool: { store: "log", modes: ["drop"], lossy: "with-flag" },
  note: { store: "notes", modes: ["drop"], lossy: "with-flag" },
} as const;

describe("auditLog in decision order across stores", () => {
  it("interleaves the stores' chains as the decisions were made, across a resume", async () => {
    const clock = new ManualClock(5_000);
    const log = new MemoryStore({ name: "log", clock });
    const notes = new MemoryStore({ name: "notes", clock, handlePrefix: "n" });
    const win = new ContextWindow({ session: "s", clock, stores: { log, notes }, kinds });
    const t = await win.append({ kind: "tool", text: "tool" });
    const n = await win.append({ kind: "note", text: "note" });
    await win.prune({ span: n, mode: "drop" });                       // notes #1
    await win.prune({ span: t, mode: "drop" });                       // log #1
    await win.recall(n);                                              // notes #2
    await win.applyDirective({ op: "prune", span_id: "span_9", mode: "drop" }); // log #2 (the audit store)
    const resumed = await ContextWindow.resume({ session: "s", clock, stores: { log, notes }, kinds });
    await resumed.recall(t);                                          // log #3
    await resumed.recall(n);                                          // notes #3
    const order = (await resumed.auditLog()).map((r) => `${r.store}#${r.seq} ${r.op} ${r.spanId}`);
    expect(order).toEqual([
      "notes#1 prune span_2", "log#1 prune span_1", "notes#2 recall span_2", "log#2 prune span_9", "log#3 recall span_1", "notes#3 recall span_2",
    ]);
    expect(verifyAuditChain(await log.auditLog("s"))).toBeNull();
    expect(verifyAuditChain(await notes.auditLog("s"))).toBeNull();
  });
});
