/**
 * A prune is decided at once and applied at the next compaction point; a copy's promise can end in between
 * (the session's holds lapse at its horizon, the store's retention runs out, `end()` releases the holds, a
 * copy is found lost). Red-team findings F1, F6 and F7:
 *
 * - F1: a pending prune whose copy is no longer promised is not applied. The span stays live (its bytes are
 *   in the window), a `kept` record says why (`not-applied:lapsed`, `not-applied:lost`), the model is told
 *   once, recall answers from the window's bytes, search finds them, and a resumed window shows it live.
 *   A pending range summary over such a member is not applied either.
 * - F6: a refusal notice under a span is cleared at the compaction point after the one that first showed it.
 * - F7: a line that said "copy may be lost" keeps saying so when the clock steps back.
 *
 * Each store runs the same scenario: MemoryStore, SQLite on a real file, PostgreSQL when this run has one.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow } from "../../src/window/window.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import type { BackingStore } from "../../src/stores/store.js";
import { ManualClock, type KindPolicy } from "../../src/types.js";
import type { AuditRecord } from "../../src/audit.js";
import type { ContextWindowOptions } from "../../src/window/window-options.js";
import { DEFAULT_TOMBSTONE } from "../../src/render/lines.js";
import { parseRuntimeLine, readRendered } from "../../src/render/grammar.js";
import { promiseLapsed } from "../../src/window/entries.js";
import { timelineHtml } from "../../compiler/cli/timeline.js";
import { sqliteFile } from "./sqlite-file.js";
import { dropSchemas, freshSchema, NO_SERVER, testPool } from "../stores/pg-helpers.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const NINE = Date.UTC(2026, 11, 7, 9, 0);

const KINDS = {
  toolResult: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  toolCall: { store: "log", modes: ["drop"], lossy: "with-flag" },
  turn: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  scratch: { store: null, modes: ["drop"], lossy: "forbid" },
} as const satisfies Record<string, KindPolicy>;
type Kind = keyof typeof KINDS;

/** A tool output of about `tokens` tokens that holds `marker` once. */
const output = (marker: string, tokens = 300) => [`result ${marker}`, ...Array.from({ length: Math.ceil(tokens / 9) }, (_, k) => `line ${k}: ok`)].join("\n");

/** A store under test, with a way to delete a copy behind the runtime's back. */
interface Opened {
  readonly store: BackingStore;
  deleteCopy(spanId: string): Promise<void>;
}

interface StoreCase {
  readonly name: string;
  readonly skip: string | null;
  open(clock: ManualClock, retentionMs: number | null): Promise<Opened>;
}

const pgSchemas: string[] = [];
let pgPool: ReturnType<typeof testPool> | undefined;
afterAll(async () => {
  if (pgPool !== undefined) {
    await dropSchemas(pgPool, pgSchemas);
    await pgPool.end();
  }
});

const STORES: readonly StoreCase[] = [
  {
    name: "MemoryStore",
    skip: null,
    async open(clock, retentionMs) {
      const store = new MemoryStore({ name: "log", clock, retentionMs });
      const deleted = new Set<string>();
      // MemoryStore keeps its records private: a record deleted behind the runtime is one its lookups no longer find.
      const lookup = store.lookup.bind(store);
      store.lookup = async (session, key) => {
        const r = await lookup(session, key);
        return r.status === "found" && deleted.has(r.spanId) ? { status: "absent" } : r;
      };
      // And a search reads it as gone.
      const searchCopies = store.searchCopies.bind(store);
      store.searchCopies = async (session, request) => {
        const r = await searchCopies(session, request);
        const dropped = r.candidates.filter((c) => deleted.has(c.spanId));
        return { ...r, candidates: r.candidates.filter((c) => !deleted.has(c.spanId)), gone: [...r.gone, ...dropped.map((c) => c.handle)] };
      };
      return { store, deleteCopy: async (spanId) => void deleted.add(spanId) };
    },
  },
  {
    name: "SQLite (a real file)",
    skip: null,
    async open(clock, retentionMs) {
      const { path, sql } = sqliteFile(clock, "lapse");
      const { SqliteStore } = await import("../../src/stores/sqlite/sqlite-store.js");
      const store = new SqliteStore({ name: "log", path, retentionMs, clock });
      return { store, deleteCopy: async (spanId) => sql("DELETE FROM pruneguard_records WHERE span_id = ?", spanId) };
    },
  },
  {
    name: "PostgreSQL",
    skip: NO_SERVER,
    async open(clock, retentionMs) {
      pgPool ??= testPool(2);
      const schema = await freshSchema(pgPool, "lapse", pgSchemas);
      const store = new PostgresStore({ name: "log", pool: pgPool, schema, clock, retentionMs });
      return {
        store,
        deleteCopy: async (spanId) => void (await pgPool!.query(`DELETE FROM ${schema}.records WHERE store = 'log' AND session = 's' AND span_id = $1`, [spanId])),
      };
    },
  },
];

function options(store: BackingStore, clock: ManualClock, limits: ContextWindowOptions<Kind>["limits"] = {}): ContextWindowOptions<Kind> {
  return {
    session: "s", clock, stores: { log: store }, kinds: KINDS,
    limits: { maxLengthMs: HOUR, compaction: { minFreedTokens: 50_000, atTokens: null }, ...limits },
  };
}

const statuses = (log: readonly AuditRecord[]) => log.map((r) => `${r.op}:${r.status}${r.reason === null ? "" : `:${r.reason}`}`);

/** Every non-blank line of a rendering is framed text or a runtime line the grammar reads. */
function expectWellFormed(text: string): void {
  expect(readRendered(text, { tombstone: DEFAULT_TOMBSTONE }).stray).toEqual([]);
}

/** span_1's prune was not applied: its bytes are in the rendering, the line says why, and so does its `kept` record. */
async function expectKeptLive(win: ContextWindow<Kind>, copy: "lapsed" | "lost"): Promise<void> {
  const text = win.render();
  expectWellFormed(text);
  expect(text).toContain("result req_feedbeef01");
  expect(text).toContain(`span_1 kept: prune not applied (copy ${copy})`);
  expect(text).not.toMatch(/span_1 pruned/);
  expect(statuses(await win.auditLog())).toContain(`prune:kept:not-applied:${copy}`);
}

/**
 * span_1 (a tool output) and span_2 appended at 09:00 into a store that keeps copies 30 minutes; the session's
 * holds last an hour. span_1 is pruned at 09:10 (held until 10:00, the horizon), pending: 50k tokens must be
 * pending before a compaction point comes by itself.
 */
async function pendingPrune(opened: Opened, clock: ManualClock, limits: ContextWindowOptions<Kind>["limits"] = {}) {
  const win = new ContextWindow<Kind>(options(opened.store, clock, limits));
  await win.append({ kind: "toolResult", text: output("req_feedbeef01") });
  await win.append({ kind: "turn", text: "tail" });
  clock.advance(10 * MIN);
  const pruned = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
  expect(pruned).toMatchObject({ status: "reversible", applies: { at: "next-compaction" } });
  expect(win.render()).toContain("result req_feedbeef01");
  return win;
}

for (const c of STORES) {
  const describeStore = c.skip === null ? describe : describe.skip;
  describeStore(`F1: a pending prune whose copy is no longer promised is not applied (${c.name}${c.skip === null ? "" : `, skipped: ${c.skip}`})`, () => {
    it("its holds lapse at the horizon and the store rotates the copy: recall and search read the window's bytes, the compaction point keeps it live and says why once", async () => {
      const clock = new ManualClock(NINE);
      const opened = await c.open(clock, 30 * MIN);
      const win = await pendingPrune(opened, clock);
      clock.advance(51 * MIN); // 10:01: the hold lapsed at 10:00, retention ended at 09:30
      await opened.store.rotate();
      const recalled = await win.recall("span_1");
      expect(recalled).toMatchObject({ status: "found", spanId: "span_1", source: "window" });
      expect(recalled.status === "found" && recalled.text).toBe(output("req_feedbeef01"));
      const found = await win.search("req_feedbeef01");
      expect(found).toMatchObject({ status: "match", matches: [{ spanId: "span_1", source: "live" }] });
      const compacted = await win.compact();
      expect(compacted).toMatchObject({ status: "compacted", applied: 0 });
      const text = win.render();
      expectWellFormed(text);
      expect(text.split("\n\n")[0]).toBe(`[span_1 toolResult]\n${output("req_feedbeef01").split("\n").map((l) => `│ ${l}`).join("\n")}\nspan_1 kept: prune not applied (copy lapsed)`);
      expect(text).not.toMatch(/span_1 pruned/);
      const log = await win.auditLog();
      expect(statuses(log)).toContain("prune:kept:not-applied:lapsed");
      const kept = log.find((r) => r.status === "kept")!;
      expect(kept).toMatchObject({ spanId: "span_1", kind: "toolResult", mode: "drop", store: "log" });
      // The notice is said once: the next compaction point clears it.
      await win.append({ kind: "turn", text: "more" });
      await win.compact();
      expect(win.render()).not.toContain("prune not applied");
      // A window of the session that never held the span (another process) reads the `kept` record: the span was
      // never pruned, its copy is gone, so it existed and is lost, not "pruned".
      const other = new ContextWindow<Kind>(options(opened.store, clock));
      const prunesOf = opened.store.prunesOf!.bind(opened.store);
      let asked = 0;
      opened.store.prunesOf = (session, id) => ((asked += 1), prunesOf(session, id));
      expect(await other.recall("span_1")).toMatchObject({ status: "lost", spanId: "span_1" });
      // The chain is read once for the span: whether its prune was applied, and the answer, from one read.
      expect(asked).toBe(1);
      // The span is live: a prune of it is decided again, from the store's answer now (its copy was rotated out).
      expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ status: "rejected" });
    });

    it("a copy deleted behind the runtime, found by checkCopies while the prune is pending: kept live, `not-applied:lost`", async () => {
      const clock = new ManualClock(NINE);
      const opened = await c.open(clock, 30 * MIN);
      const win = await pendingPrune(opened, clock);
      await opened.deleteCopy("span_1");
      expect(await win.checkCopies()).toBe(1);
      await expectKeptLive(win, "lost");
      await win.compact();
      expect(win.render()).toContain("result req_feedbeef01");
    });

    it("a search that finds the pending copy gone marks it lost: the prune is not applied, its bytes stay", async () => {
      const clock = new ManualClock(NINE);
      const opened = await c.open(clock, 30 * MIN);
      const win = await pendingPrune(opened, clock);
      await opened.deleteCopy("span_1");
      // Nothing else looks at the copy first: the search is what finds it gone, and then reads the span as the
      // live span it is again (not as a hole that "may have held it").
      const found = await win.search("req_feedbeef01");
      expect(found).toMatchObject({ status: "match", matches: [{ spanId: "span_1", source: "live" }], coverage: { holes: [] } });
      expect(statuses(await win.auditLog()).filter((s) => s.startsWith("search:"))).toHaveLength(1);
      await win.compact();
      await expectKeptLive(win, "lost");
      expect(await win.recall("span_1")).toMatchObject({ status: "found", source: "window" });
    });

    it("a recall that finds the pending copy gone answers from the window's bytes", async () => {
      const clock = new ManualClock(NINE);
      const opened = await c.open(clock, 30 * MIN);
      const win = await pendingPrune(opened, clock);
      await opened.deleteCopy("span_1");
      expect(await win.recall("span_1")).toMatchObject({ status: "found", source: "window", text: output("req_feedbeef01") });
      expect(win.render()).toContain("result req_feedbeef01");
      await win.compact();
      expect(win.render()).toContain("result req_feedbeef01");
    });

    it("a resumed window honours `kept`: the span is live, not pruned", async () => {
      const clock = new ManualClock(NINE);
      const opened = await c.open(clock, 30 * MIN);
      const win = await pendingPrune(opened, clock);
      clock.advance(51 * MIN); // the promise lapsed; the store has not rotated the copy yet
      // The compaction point's answer says so too.
      const line = (await win.compact()).line;
      expect(line).toMatch(/^compacted: 0 decisions applied, 1 not applied, ~0 tokens freed, ~\d+(\.\d)?k? rewritten$/);
      expect(parseRuntimeLine(line, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "compacted" });
      expect(win.render()).toContain("span_1 kept: prune not applied (copy lapsed)");
      await win.auditLog(); // every record written
      const resumed = await ContextWindow.resume<Kind>(options(opened.store, clock));
      const text = resumed.render();
      expect(text.startsWith("[span_1 toolResult]\n│ result req_feedbeef01")).toBe(true);
      expect(text).not.toMatch(/span_1 pruned/);
      expect(resumed.entries()[0]).toMatchObject({ state: "live" });
      // A window that never held the span (another process of the session) does not answer "pruned" either.
      const other = new ContextWindow<Kind>(options(opened.store, clock));
      expect(await other.recall("span_1")).toMatchObject({ status: "found" });
    });

    it("end() releases the holds: a pending prune whose copy only an expired retention would keep is not applied", async () => {
      const clock = new ManualClock(NINE);
      const opened = await c.open(clock, 30 * MIN);
      const win = await pendingPrune(opened, clock, { maxLengthMs: null });
      clock.advance(30 * MIN); // 09:40: the hold (until end) keeps the copy; its retention ended at 09:30
      await win.end();
      await expectKeptLive(win, "lapsed");
    });
  });

  describeStore(`a prune of a copy nothing keeps any longer is decided as expired, never "reversible until" a past time (${c.name}${c.skip === null ? "" : `, skipped: ${c.skip}`})`, () => {
    it("past its retention and the session's horizon, not yet rotated: refused as expired, lossy with the flag, the audit record says so", async () => {
      const clock = new ManualClock(NINE);
      const opened = await c.open(clock, 30 * MIN);
      const win = new ContextWindow<Kind>(options(opened.store, clock));
      await win.append({ kind: "toolResult", text: output("req_feedbeef01") });
      await win.append({ kind: "toolResult", text: output("req_feedbeef02") });
      await win.append({ kind: "turn", text: "tail" });
      clock.advance(61 * MIN); // 10:01: the holds' horizon was 10:00, retention ended at 09:30; nothing rotated
      const refused = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
      expect(refused).toMatchObject({
        status: "rejected", reason: "not-reversible", failed: ["existence"], message: "span_1 cannot be pruned: copy expired",
        line: "span_1 kept: prune rejected (copy expired); accept_lossy to force",
      });
      const lossy = await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop", accept_lossy: true });
      expect(lossy).toMatchObject({ status: "lossy", failed: ["existence"] });
      const log = await win.auditLog();
      expect(statuses(log).slice(-2)).toEqual(["prune:rejected:not-reversible:expired", "prune:lossy:expired"]);
      expect(log.at(-2)).toMatchObject({ spanId: "span_1", conditions: { existence: false } });
      await win.compact();
      const text = win.render();
      expectWellFormed(text);
      expect(text).toContain("result req_feedbeef01");
      expect(text).not.toMatch(/span_1 pruned|reversible until/);
    });
  });
}

describe("F1, neighbours", () => {
  it("span() and refs() read the span as live once its promise lapsed, before any compaction point", async () => {
    const clock = new ManualClock(NINE);
    const win = await pendingPrune({ store: new MemoryStore({ name: "log", clock, retentionMs: 30 * MIN }), deleteCopy: async () => undefined }, clock);
    expect(win.span("span_1")).toBeUndefined();
    clock.advance(51 * MIN);
    expect(win.span("span_1")?.text).toBe(output("req_feedbeef01"));
    expect(win.refs()).toHaveLength(2);
    // Told at the end of the window until a compaction point puts the line under the span.
    expect(win.render().endsWith("\n\nspan_1 kept: prune not applied (copy lapsed)")).toBe(true);
    expect(win.pendingAudit).toBe(1);
    expect(statuses(await win.auditLog())).toEqual(["prune:reversible", "prune:kept:not-applied:lapsed"]);
  });

  it("a tool call and its result pruned together are kept together when one copy lapses", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock, retentionMs: 30 * MIN });
    const win = new ContextWindow<Kind>(options(store, clock));
    await win.append({ kind: "toolCall", text: "call grep", message: { role: "tool-call", callId: "c1", toolName: "grep" } });
    await win.append({ kind: "toolResult", text: output("req_feedbeef02"), message: { role: "tool-result", callId: "c1", toolName: "grep" } });
    await win.append({ kind: "turn", text: "tail" });
    clock.advance(10 * MIN);
    expect(await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" })).toMatchObject({ status: "reversible", groupPruned: ["span_1"] });
    clock.advance(51 * MIN);
    await win.compact();
    const views = win.entries();
    expect(views.slice(0, 2).map((v) => v.state)).toEqual(["live", "live"]);
    expect(statuses(await win.auditLog()).filter((s) => s.startsWith("prune:kept"))).toEqual(["prune:kept:not-applied:lapsed", "prune:kept:not-applied:lapsed"]);
  });

  it("a pending range summary over a member whose copy lapsed is not applied: the run stays as it was", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock, retentionMs: 30 * MIN });
    const win = new ContextWindow<Kind>(options(store, clock));
    for (let i = 1; i <= 3; i++) await win.append({ kind: "toolResult", text: output(`req_0000aaa${i}`) });
    await win.append({ kind: "turn", text: "tail" });
    clock.advance(10 * MIN);
    const summary = await win.summarizeRange({ from: "span_1", to: "span_3", digest: "three outputs" });
    expect(summary).toMatchObject({ status: "summarized", spanId: "span_5" });
    clock.advance(51 * MIN);
    const found = await win.search("req_0000aaa2");
    expect(found).toMatchObject({ status: "match", matches: [{ spanId: "span_2", source: "live" }] });
    await win.compact();
    const text = win.render();
    expectWellFormed(text);
    expect(win.entries().slice(0, 3).map((v) => v.state)).toEqual(["live", "live", "live"]);
    expect(text).not.toContain("span_5 summary");
    expect(text).toContain("span_1–span_3 kept: summary span_5 not applied (span_1's copy lapsed)");
    const kept = statuses(await win.auditLog()).filter((s) => s.startsWith("prune:kept"));
    expect(kept).toEqual(["prune:kept:not-applied:lapsed", "prune:kept:not-applied:lapsed", "prune:kept:not-applied:lapsed", "prune:kept:not-applied:lapsed"]);
    expect(await win.recall("span_2")).toMatchObject({ status: "found", source: "window" });
  });

  it("a summary not applied and its members pruned one by one afterwards: a resumed window draws their lines, never the summary", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock });
    // span_1's copy reads as gone while `gone` is set (a store that lost it, then got it back).
    let gone = false;
    const lookup = store.lookup.bind(store);
    store.lookup = async (session, key) => {
      const r = await lookup(session, key);
      return gone && r.status === "found" && r.spanId === "span_1" ? { status: "absent" } : r;
    };
    const win = new ContextWindow<Kind>(options(store, clock));
    for (let i = 1; i <= 3; i++) await win.append({ kind: "toolResult", text: output(`req_0000ccc${i}`) });
    await win.append({ kind: "turn", text: "tail" });
    expect(await win.summarizeRange({ from: "span_1", to: "span_3", digest: "three outputs" })).toMatchObject({ status: "summarized", spanId: "span_5" });
    gone = true;
    expect(await win.checkCopies()).toBe(1);
    await win.compact();
    expect(win.entries().slice(0, 3).map((v) => v.state)).toEqual(["live", "live", "live"]);
    gone = false;
    for (const id of ["span_1", "span_2", "span_3"]) expect(await win.applyDirective({ op: "prune", span_id: id, mode: "drop" })).toMatchObject({ status: "reversible" });
    await win.compact();
    const resumed = await ContextWindow.resume<Kind>(options(store, clock));
    expect(resumed.entries().slice(0, 3).map((e) => [e.state === "live" ? e.span.id : e.spanId, e.state])).toEqual([["span_1", "pruned"], ["span_2", "pruned"], ["span_3", "pruned"]]);
    expect(resumed.render()).toBe(win.render());
  });

  it("a prune pending behind a summary over its index line: neither is applied once its copy lapses", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock, retentionMs: 30 * MIN });
    const win = new ContextWindow<Kind>(options(store, clock));
    for (let i = 1; i <= 3; i++) await win.append({ kind: "toolResult", text: output(`req_0000bbb${i}`) });
    clock.advance(10 * MIN);
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(await win.summarizeRange({ from: "span_1", to: "span_2", digest: "two outputs" })).toMatchObject({ status: "summarized" });
    clock.advance(51 * MIN);
    await win.compact();
    expect(win.entries().slice(0, 3).map((v) => v.state)).toEqual(["live", "live", "live"]);
    expect(win.render()).toContain("span_1 kept: prune not applied (copy lapsed)");
  });

  it("the audit page lays a kept prune in a lane of its own and counts the span live", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock, retentionMs: 30 * MIN });
    const win = await pendingPrune({ store, deleteCopy: async () => undefined }, clock);
    clock.advance(51 * MIN);
    await win.compact();
    const records = await win.auditLog();
    const html = timelineHtml({
      source: "memory", session: "s", chains: [{ store: "log", records, problem: null, head: null, lossyUsed: null, unreadable: 0 }],
      spans: [], copies: [], content: false, rows: 0, generatedAt: clock.now(),
    });
    expect(html).toContain("prune: not applied (copy no longer promised; kept live)");
    expect(html).toContain('class="s-kept"');
  });
});

describe("a summary not applied leaves nothing pending of its own", () => {
  it("over an applied index line: nothing is pending after; over a pending prune: that prune stays pending", async () => {
    for (const pendingFirst of [false, true]) {
      const clock = new ManualClock(NINE);
      const opened = await STORES[0]!.open(clock, null);
      const win = new ContextWindow<Kind>(options(opened.store, clock, { maxLengthMs: null }));
      for (const m of ["req_0000aaa1", "req_0000aaa2", "req_0000aaa3"]) await win.append({ kind: "toolResult", text: output(m) });
      await win.append({ kind: "turn", text: "tail" });
      await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
      if (!pendingFirst) await win.compact();
      expect(await win.summarizeRange({ from: "span_1", to: "span_3", digest: "three reads" })).toMatchObject({ status: "summarized" });
      await opened.deleteCopy("span_2");
      // The search finds span_2's copy gone: the summary is not applied.
      expect(await win.search("req_0000aaa2")).toMatchObject({ status: "match" });
      const map = await win.map();
      const compacted = await win.compact();
      if (pendingFirst) {
        // span_1's own prune is still decided, and applies.
        expect(map.pending).toMatchObject({ decisions: 1 });
        expect(compacted.line).toMatch(/^compacted: 1 decision applied/);
        expect(win.render()).not.toContain("result req_0000aaa1");
      } else {
        expect(map.pending).toBeNull();
        expect(compacted.line).toMatch(/^compacted: nothing was pending|^compacted: 0 decisions applied/);
      }
      expect(win.render()).toContain("result req_0000aaa2");
    }
  });
});

describe("a rendering while a range summary waits on its store", () => {
  /** A MemoryStore whose registration of a summary's id moves the clock to 10:01 and renders the window meanwhile. */
  function racing(clock: ManualClock): { store: MemoryStore; arm(win: ContextWindow<Kind>): void } {
    const store = new MemoryStore({ name: "log", clock, retentionMs: 30 * MIN });
    let armed: ContextWindow<Kind> | null = null;
    const register = store.registerSpan.bind(store);
    store.registerSpan = async (session, input) => {
      if (armed !== null && input.kind === "(range summary)") {
        clock.set(NINE + HOUR + MIN); // the session's holds lapse while the store answers
        armed.render(); // a host rendering is synchronous, not queued behind the summary
      }
      return register(session, input);
    };
    return { store, arm: (win) => void (armed = win) };
  }

  it("a member's pending prune put back live meanwhile: the summary is not applied, its members are kept", async () => {
    const clock = new ManualClock(NINE);
    const { store, arm } = racing(clock);
    const win = new ContextWindow<Kind>(options(store, clock));
    await win.append({ kind: "toolResult", text: output("req_0000aaa1") });
    clock.set(NINE + 10 * MIN);
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ status: "reversible" });
    clock.set(NINE + 55 * MIN);
    for (const m of ["req_0000aaa2", "req_0000aaa3"]) await win.append({ kind: "toolResult", text: output(m) });
    clock.set(NINE + 59 * MIN);
    arm(win);
    const summary = await win.summarizeRange({ from: "span_1", to: "span_3", digest: "three reads" });
    expect(summary).toMatchObject({ status: "rejected", reason: "range" });
    expect(win.entries().slice(0, 3).map((e) => e.state)).toEqual(["live", "live", "live"]);
    await win.compact();
    const text = win.render();
    expectWellFormed(text);
    for (const m of ["req_0000aaa1", "req_0000aaa2", "req_0000aaa3"]) expect(text).toContain(`result ${m}`);
    expect(statuses(await win.auditLog())).toEqual(expect.arrayContaining(["prune:kept:not-applied:lapsed", "prune:kept:not-applied:group"]));
    // A window resumed from the store reads every member live, as this one shows them.
    const resumed = await ContextWindow.resume<Kind>(options(store, clock));
    expect(resumed.entries().slice(0, 3).map((e) => e.state)).toEqual(["live", "live", "live"]);
  });

  it("an earlier summary put back meanwhile moves the run: the summary is applied where its members are now", async () => {
    const clock = new ManualClock(NINE);
    const { store, arm } = racing(clock);
    const win = new ContextWindow<Kind>(options(store, clock));
    for (let i = 1; i <= 3; i++) await win.append({ kind: "toolResult", text: output(`req_0000aaa${i}`) });
    clock.set(NINE + 10 * MIN);
    expect(await win.summarizeRange({ from: "span_1", to: "span_3", digest: "one" })).toMatchObject({ status: "summarized" });
    clock.set(NINE + 55 * MIN);
    for (let i = 5; i <= 8; i++) await win.append({ kind: "toolResult", text: output(`req_0000bbb${i}`) });
    clock.set(NINE + 59 * MIN);
    arm(win);
    expect(await win.summarizeRange({ from: "span_6", to: "span_7", digest: "two" })).toMatchObject({ status: "summarized", members: ["span_6", "span_7"] });
    await win.compact();
    const text = win.render();
    expectWellFormed(text);
    // The first summary was not applied (its copies lapsed), and the second took span_6 and span_7 only.
    for (const m of ["aaa1", "aaa2", "aaa3", "bbb5", "bbb8"]) expect(text).toContain(`result req_0000${m}`);
    for (const m of ["bbb6", "bbb7"]) expect(text).not.toContain(`result req_0000${m}`);
  });
});

describe("F6: a refusal notice under a span is cleared at the compaction point after the one that showed it", () => {
  it("shown at the end until a compaction point, under the span from it until the next; the prefix stays byte-identical in between", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow<Kind>(options(store, clock));
    await win.append({ kind: "scratch", text: "notes" });
    await win.append({ kind: "turn", text: "tail" });
    const refused = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(refused).toMatchObject({ status: "rejected" });
    const line = refused.op === "prune" && refused.status === "rejected" ? refused.line : "";
    expect(win.render().endsWith(`\n\n${line}`)).toBe(true);
    await win.compact();
    const shown = win.entries();
    expect(win.render().split("\n\n")[0]).toBe(`[span_1 scratch]\n│ notes\n${line}`);
    // Between compaction points the rendering only grows at its end.
    await win.append({ kind: "turn", text: "next" });
    expect(win.entries().slice(0, shown.length)).toEqual(shown);
    await win.compact();
    expect(win.render().split("\n\n")[0]).toBe("[span_1 scratch]\n│ notes");
  });

  it("a line a compaction point placed is not cleared before a rendering read it; the compact() that clears it says what it rewrote", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow<Kind>(options(store, clock));
    await win.append({ kind: "toolResult", text: output("req_feedbeef01") });
    await win.append({ kind: "turn", text: "tail" });
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ status: "reversible" });
    // The pending prune's copy disappears: checkCopies finds it, and its compaction point puts the line under the span.
    const lookup = store.lookup.bind(store);
    store.lookup = async (session, key) => {
      const r = await lookup(session, key);
      return r.status === "found" && r.spanId === "span_1" ? { status: "absent" } : r;
    };
    expect(await win.checkCopies()).toBe(1);
    // No rendering read it yet: a compaction point now keeps it.
    const first = await win.compact();
    expect(first).toMatchObject({ applied: 0, notApplied: 0, line: "compacted: nothing was pending" });
    const text = win.render();
    expect(text).toContain("span_1 kept: prune not applied (copy lost)");
    // Read once: the next compaction point clears it, a rewrite its answer states (and the grammar reads).
    const points = win.compactionPoints;
    const second = await win.compact();
    expect(win.compactionPoints).toBe(points + 1);
    expect(second.line).toMatch(/^compacted: nothing was pending; lines shown before brought up to date, ~\d+ rewritten$/);
    expect(parseRuntimeLine(second.line, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "compacted" });
    expect(win.render()).not.toContain("prune not applied");
    expect((await win.auditLog()).filter((r) => r.op === "compact").map((r) => r.status)).toEqual(["unchanged", "compacted"]);
  });

  it("every decision is a compaction point (`immediate`): the notice stays until the next one", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow<Kind>(options(store, clock, { compaction: "immediate" }));
    await win.append({ kind: "scratch", text: "notes" });
    await win.append({ kind: "turn", text: "tail" });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(win.render()).toContain("span_1 kept: prune rejected");
    await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    expect(win.render()).not.toContain("span_1 kept: prune rejected");
  });
});

describe("F7: a lapse is not undone by the clock stepping back", () => {
  it("an index line, a fold line and a summary's header that said copies may be lost keep saying so", async () => {
    const clock = new ManualClock(NINE);
    const store = new MemoryStore({ name: "log", clock, retentionMs: 30 * MIN });
    const win = new ContextWindow<Kind>(options(store, clock, { compaction: "immediate" }));
    for (let i = 1; i <= 22; i++) await win.append({ kind: "toolResult", text: output(`req_0000ccc${i}`, 40) });
    await win.append({ kind: "turn", text: "tail" });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(await win.summarizeRange({ from: "span_2", to: "span_3", digest: "two" })).toMatchObject({ spanId: "span_24" });
    for (let i = 4; i <= 22; i++) await win.applyDirective({ op: "prune", span_id: `span_${i}`, mode: "drop" });
    expect(win.render()).toContain("span_4-span_19: 16 pruned (16 toolResult); recall span_4-span_19 to list them");
    clock.advance(HOUR + MIN); // 10:01: the session's holds lapsed at 10:00, every copy's retention at 09:30
    const lapsed = win.render();
    expect(lapsed).toContain("span_1 pruned, copy may be lost");
    expect(lapsed).toContain("span_24 summary of span_2–span_3 (2), copies may be lost, recall span_24");
    expect(lapsed).toContain("span_4-span_19: 16 copies may be lost; recall span_4-span_19 to list them");
    expect(lapsed).toContain("span_20 pruned, copy may be lost");
    clock.set(NINE + HOUR - MIN); // NTP steps the clock back to 09:59
    await win.append({ kind: "turn", text: "after the step" });
    await win.applyDirective({ op: "prune", span_id: "span_23", mode: "drop" }); // a compaction point
    const after = win.render();
    expect(after).toContain("span_1 pruned, copy may be lost");
    expect(after).not.toContain("recall #1");
    expect(after).toContain("span_24 summary of span_2–span_3 (2), copies may be lost, recall span_24");
    expect(after).toContain("span_4-span_19: 16 copies may be lost; recall span_4-span_19 to list them");
    expect(after).toContain("span_20 pruned, copy may be lost");
    const listed = await win.recall("span_4-span_19");
    expect(listed.status === "expanded" && listed.text.split("\n")[0]).toMatch(/^span_4 pruned, copy may be lost/);
    // A summary over a member whose promise lapsed is still refused.
    expect(await win.summarizeRange({ from: "span_1", to: "span_25", digest: "all" })).toMatchObject({ status: "rejected", reason: "range" });
  });

  it("promiseLapsed remembers a lapse once a reading of the clock found it", () => {
    const e = {
      state: "pruned" as const, spanId: "span_1", kind: "toolResult", group: null, message: null, hash: "h", mode: "drop" as const,
      handle: "#1", store: "log", until: 1_000, keptUntil: 1_000, copyLost: false, hint: null, hintTokens: 0, replacement: null,
    };
    expect(promiseLapsed(e, 999)).toBe(false);
    expect(promiseLapsed(e, 1_000)).toBe(true);
    expect(promiseLapsed(e, 500)).toBe(true);
  });
});
