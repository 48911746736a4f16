/**
 * The plan a provider-compaction request is built on says exactly what recording the compaction will do: the
 * same tool call/result groups, each member checked against what its store holds now, decided by the same
 * group decision as the store's transaction. So a request built without a pause (OpenAI's automatic
 * compaction, Anthropic's `pause_after_compaction: false`) is refused whenever recording would keep a span —
 * a copy deleted behind the runtime, a group split over two stores — and a group is recorded once, all or
 * nothing, each member under its own fate (a held copy or a tombstone), never kept and pruned at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ResponseCompactionItem } from "openai/resources/responses/responses";
import { afterAll, describe, expect, it } from "vitest";
import {
  anthropicCompaction, ContextWindow, ManualClock, MemoryStore, openAICompaction, openAICompactRequest, ProviderCompactionError, SqliteStore, toAnthropicBeta,
  toOpenAIResponses, Transcript, type KindPolicy, type ProviderCompactionPlan,
} from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-provider-plan-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NINE = Date.UTC(2026, 10, 13, 9, 0, 0);
const ITEM = { type: "compaction", id: "cmp_1", encrypted_content: "ENC" } satisfies ResponseCompactionItem;

type Stores = Record<string, MemoryStore | SqliteStore>;

function open(kinds: Record<string, KindPolicy>, stores: (clock: ManualClock) => Stores, lossyBudget = 5) {
  const clock = new ManualClock(NINE);
  const win = new ContextWindow({
    session: `plan-${Math.random().toString(36).slice(2)}`, clock, kinds, stores: stores(clock),
    limits: { compaction: "immediate", providerCompaction: "allow", lossyBudget },
  });
  return win;
}

/** A user turn, then a tool call and its result. */
async function callAndResult(win: ContextWindow<string>) {
  await win.append({ kind: "turn", text: "read the deploy log", message: { role: "user" } });
  await win.append({ kind: "call", text: '{"deploy":8812}', message: { role: "tool-call", callId: "c1", toolName: "read" } });
  await win.append({ kind: "result", text: "deploy 8812: upstream 502, req_8812_7f3a", message: { role: "tool-result", callId: "c1", toolName: "read" } });
}

const sorted = (ids: readonly string[]) => [...ids].sort();

/** Builds both no-pause requests, records a compaction, and checks the plan said what the record did. */
async function planAgreesWithRecord(win: ContextWindow<string>): Promise<ProviderCompactionPlan> {
  const plan = await win.providerCompactionPlan();
  const everyId = [...plan.reversible, ...plan.lossy, ...plan.kept.map((k) => k.spanId)];
  expect(new Set(everyId).size).toBe(everyId.length);
  if (plan.kept.length > 0) {
    await expect(openAICompaction(win)).rejects.toThrow(/automatic compaction is refused/);
    await expect(anthropicCompaction(win, { pauseAfterCompaction: false })).rejects.toThrow(/pauseAfterCompaction: false is refused/);
  } else {
    expect(await openAICompaction(win)).toEqual({ context_management: [{ type: "compaction" }] });
    expect((await anthropicCompaction(win, { pauseAfterCompaction: false })).context_management.edits).toHaveLength(1);
  }
  const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "call", toolResult: "result" });
  await t.appendOpenAIResponse({ output: [ITEM] });
  const outcome = t.compactions.at(-1)!;
  expect({ pruned: sorted(outcome.pruned), lossy: sorted(outcome.lossy), kept: sorted(outcome.kept.map((k) => k.spanId)) })
    .toEqual({ pruned: sorted(plan.reversible), lossy: sorted(plan.lossy), kept: sorted(plan.kept.map((k) => k.spanId)) });
  // One decision per group: no span refused and then pruned with its group (a group refused before the store
  // was asked is audited under the span it was asked for).
  const prunes = (await win.auditLog()).filter((r) => r.op === "prune" && r.kind !== "summary");
  for (const id of everyId) {
    const statuses = prunes.filter((r) => r.spanId === id).map((r) => r.status);
    expect(statuses.length, id).toBeLessThanOrEqual(1);
    if (!plan.kept.some((k) => k.spanId === id)) expect(statuses, id).toEqual([plan.lossy.includes(id) ? "lossy" : "reversible"]);
  }
  return plan;
}

describe("a provider compaction's plan is what recording it does", () => {
  it("a tool call and its result in two stores: kept together, and a request without a pause is refused", async () => {
    const win = open(
      { turn: { store: "a", modes: ["drop"], lossy: "forbid" }, call: { store: "a", modes: ["drop"], lossy: "forbid" }, result: { store: "b", modes: ["drop"], lossy: "forbid" } },
      (clock) => ({ a: new MemoryStore({ name: "a", clock }), b: new MemoryStore({ name: "b", clock, handlePrefix: "b" }) }),
    );
    await callAndResult(win);
    const plan = await planAgreesWithRecord(win);
    expect(plan.reversible).toEqual(["span_1"]);
    expect(plan.kept.map((k) => [k.spanId, k.reason])).toEqual([["span_2", "group"], ["span_3", "group"]]);
    expect(win.entries().slice(1).map((e) => e.state)).toEqual(["live", "live"]);
  });

  it("a backed call whose result has no copy and may be lost: one prune of the group, the call held, the result a tombstone", async () => {
    const win = open(
      { turn: { store: "a", modes: ["drop"], lossy: "forbid" }, call: { store: "a", modes: ["drop"], lossy: "forbid" }, result: { store: null, modes: ["drop"], lossy: "with-flag" } },
      (clock) => ({ a: new MemoryStore({ name: "a", clock }) }),
    );
    await callAndResult(win);
    const plan = await planAgreesWithRecord(win);
    expect(plan).toMatchObject({ reversible: ["span_1", "span_2"], lossy: ["span_3"], kept: [] });
    expect(await win.recall("span_2")).toMatchObject({ status: "found", text: '{"deploy":8812}' });
    expect(await win.recall("span_3")).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
  });

  it("the same group when the lossy budget is spent: kept whole, the budget named", async () => {
    const win = open(
      { turn: { store: "a", modes: ["drop"], lossy: "forbid" }, call: { store: "a", modes: ["drop"], lossy: "forbid" }, result: { store: null, modes: ["drop"], lossy: "with-flag" } },
      (clock) => ({ a: new MemoryStore({ name: "a", clock }) }), 0,
    );
    await callAndResult(win);
    const plan = await planAgreesWithRecord(win);
    expect(plan.kept.map((k) => [k.spanId, k.reason])).toEqual([["span_2", "lossy-budget"], ["span_3", "lossy-budget"]]);
    expect(plan.kept[0]!.message).toBe("grouped with span_3 (kind result has no copy to recall, and the session's lossy budget is spent)");
  });

  it("copies deleted behind the runtime: the plan asks the store, keeps them, and a request without a pause is refused", async () => {
    const path = join(dir, "deleted.db");
    const win = open({ turn: { store: "log", modes: ["drop"], lossy: "with-flag" } }, (clock) => ({ log: new SqliteStore({ name: "log", path, clock }) }));
    await win.append({ kind: "turn", text: "ship on friday", message: { role: "user" } });
    await win.append({ kind: "turn", text: "the second message", message: { role: "user" } });
    const db = new DatabaseSync(path);
    db.exec("DELETE FROM pruneguard_records WHERE span_id = 'span_1'");
    db.close();
    const plan = await win.providerCompactionPlan();
    expect(plan.reversible).toEqual(["span_2"]);
    expect(plan.kept).toEqual([{ spanId: "span_1", kind: "turn", reason: "not-reversible", message: "kind turn: its copy cannot be recalled (absent)" }]);
    await planAgreesWithRecord(win);
    expect(win.entries()[1]).toMatchObject({ state: "live" });
  });

  it("a store that cannot be asked keeps what it backs (store-error), and a request without a pause is refused", async () => {
    let failing = false;
    class Flaky extends MemoryStore {
      override async lookup(...args: Parameters<MemoryStore["lookup"]>): ReturnType<MemoryStore["lookup"]> {
        if (failing) throw new Error("connection reset");
        return super.lookup(...args);
      }
    }
    const win = open({ turn: { store: "a", modes: ["drop"], lossy: "forbid" } }, (clock) => ({ a: new Flaky({ name: "a", clock }) }));
    await win.append({ kind: "turn", text: "one", message: { role: "user" } });
    failing = true;
    const plan = await win.providerCompactionPlan();
    expect(plan).toMatchObject({ reversible: [], lossy: [], kept: [{ spanId: "span_1", reason: "store-error", message: "store a could not be asked whether its copies are there" }] });
    await expect(openAICompaction(win)).rejects.toThrow(/automatic compaction is refused/);
    failing = false;
    expect((await win.providerCompactionPlan()).reversible).toEqual(["span_1"]);
  });
});

describe("system text, which OpenAI's Responses input carries as messages", () => {
  it("is listed by the plan; OpenAI's automatic compaction (no pause) is refused; Anthropic's keeps it apart; a compaction between turns says it again after the item", async () => {
    const win = open({ sys: { store: "a", modes: ["drop"], lossy: "forbid" }, turn: { store: "a", modes: ["drop"], lossy: "forbid" } }, (clock) => ({ a: new MemoryStore({ name: "a", clock }) }));
    const t = new Transcript(win, { system: "sys", user: "turn", assistant: "turn", toolCall: "turn", toolResult: "turn" });
    await t.system("policy: never reveal the on-call rota");
    await t.user("who is on call?");
    const plan = await win.providerCompactionPlan();
    expect(plan).toMatchObject({ reversible: ["span_2"], lossy: [], kept: [], system: ["span_1"] });
    // The input the automatic compaction would cover holds the system text; the model would answer without it.
    expect(toOpenAIResponses(win)[0]).toMatchObject({ type: "message", role: "system" });
    const refused = openAICompaction(win);
    await expect(refused).rejects.toBeInstanceOf(ProviderCompactionError);
    await expect(refused).rejects.toThrow(/the window's system text \(span_1\) goes in the request's input.*instructions/);
    // Anthropic sends it as the top-level system, which its compaction never covers: no pause is needed for it.
    expect(toAnthropicBeta(win).system).toContain("on-call rota");
    expect((await anthropicCompaction(win, { pauseAfterCompaction: false })).context_management.edits).toHaveLength(1);
    // Between turns: recorded, the system text said again after the item, before the model answers.
    expect((await openAICompactRequest(win)).input).toHaveLength(2);
    expect(await t.appendOpenAICompaction({ output: [ITEM] })).toMatchObject({ status: "compacted", members: ["span_2"] });
    const input = toOpenAIResponses(win);
    expect(input.findIndex((i) => i.type === "message" && i.role === "system")).toBeGreaterThan(input.findIndex((i) => i.type === "compaction"));
    // Without system text, the same window's automatic compaction is built.
    const bare = open({ turn: { store: "a", modes: ["drop"], lossy: "forbid" } }, (clock) => ({ a: new MemoryStore({ name: "a", clock }) }));
    await bare.append({ kind: "turn", text: "who is on call?", message: { role: "user" } });
    expect(await openAICompaction(bare)).toEqual({ context_management: [{ type: "compaction" }] });
  });
});
