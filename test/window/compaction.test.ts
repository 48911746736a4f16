/**
 * Compaction points (issue 23): a decision is checked, held, audited and answered at once, and reaches what
 * the model reads only at a compaction point, so consecutive renderings share their whole earlier prefix
 * and the provider's prompt cache survives. Nothing is lost by the deferral: recall, search and the map
 * read the decided state, and a pending span's copy is held already.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ContextWindow, ManualClock, MemoryStore, toAISDK, toAnthropic, toOpenAI, toOpenAIResponses, Transcript, type KindPolicy, type WindowEntry,
} from "../../src/index.js";
import { fuzzRuns, HOUR } from "../reliability/helpers.js";

const KINDS = {
  turn: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  toolCall: { store: "log", modes: ["drop"], lossy: "with-flag" },
  toolResult: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const satisfies Record<string, KindPolicy>;

type Kind = keyof typeof KINDS;

function setup(limits: ConstructorParameters<typeof ContextWindow<Kind>>[0]["limits"] = {}) {
  const clock = new ManualClock(Date.UTC(2026, 11, 3, 9, 0));
  const log = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
  const win = new ContextWindow<Kind>({ session: "s", clock, stores: { log }, kinds: KINDS, limits: { maxLengthMs: 8 * HOUR, lossyBudget: 2, ...limits } });
  return { win, clock, log };
}

/** A tool output of about `tokens` tokens. */
const output = (i: number, tokens: number) => Array.from({ length: Math.ceil(tokens / 9) }, (_, k) => `line ${k} of output ${i}: ok`).join("\n");

describe("decide now, apply at a compaction point", () => {
  it("a prune is answered at once and says when it applies; the window shows the span until then", async () => {
    const { win } = setup({ compaction: { minFreedTokens: 5_000, atTokens: null } });
    await win.append({ kind: "toolResult", text: output(1, 1_000) });
    const before = win.render();
    const out = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(out).toMatchObject({ status: "reversible", applies: { at: "next-compaction", thresholdTokens: 5_000 } });
    if (out.status !== "reversible" || out.applies.at !== "next-compaction") throw new Error("expected a pending prune");
    expect(out.applies.pendingTokens).toBeGreaterThan(900);
    expect(out.applies.line).toMatch(/^applies at the next compaction: ~1\.\dk of 5\.0k tokens pending; compacting now rewrites ~1\.\dk cached tokens$/);
    expect(win.render()).toBe(before);
    // The tool result says both: what will stand in the span's place, and when.
    const tool = await win.handleToolCall({ name: "prune", arguments: { span_id: "span_1", mode: "drop" } });
    expect(tool?.text).toBe("span_1: prune rejected (already pruned)");
    const compacted = await win.compact();
    expect(compacted).toMatchObject({ op: "compact", status: "compacted", applied: 1 });
    // The loose notice of the refused second prune stays at the end until the next append.
    expect(win.render()).toBe("span_1 pruned, recall #1\n\nspan_1: prune rejected (already pruned)");
    expect((await win.auditLog()).map((r) => `${r.op}:${r.status}`)).toEqual(["prune:reversible", "prune:rejected", "compact:compacted"]);
  });

  it("applies by itself at the next rendering once the pending prunes free the policy's threshold, all of them at once", async () => {
    const { win } = setup({ compaction: { minFreedTokens: 2_500, atTokens: null } });
    for (let i = 1; i <= 4; i++) await win.append({ kind: "toolResult", text: output(i, 1_000) });
    const first = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    const second = await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    expect([first, second].map((o) => (o.op === "prune" && o.status === "reversible" ? o.applies.at : o.status))).toEqual(["next-compaction", "next-compaction"]);
    expect(win.render()).toContain("line 0 of output 1");
    const third = await win.applyDirective({ op: "prune", span_id: "span_3", mode: "drop" });
    expect(third).toMatchObject({ status: "reversible", applies: { at: "next-compaction" } });
    if (third.status !== "reversible" || third.applies.at !== "next-compaction") throw new Error("expected a pending prune");
    expect(third.applies.line).toMatch(/^applies before your next request: /);
    expect(win.render().split("\n\n").slice(0, 3)).toEqual(["span_1 pruned, recall #1", "span_2 pruned, recall #2", "span_3 pruned, recall #3"]);
  });

  it("a compaction point the window makes by itself is audited, in decision order, with no directive", async () => {
    const { win, log } = setup({ compaction: { minFreedTokens: 1_500, atTokens: null } });
    for (let i = 1; i <= 3; i++) await win.append({ kind: "toolResult", text: output(i, 1_000) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    // The rendering compacts: it cannot await the store, so the record waits for the next write.
    expect(win.render().startsWith("span_1 pruned, recall #1\n\nspan_2 pruned, recall #2")).toBe(true);
    expect(win.compactionPoints).toBe(1);
    expect(win.pendingAudit).toBe(1);
    expect((await log.auditLog("s")).map((r) => r.op)).toEqual(["prune", "prune"]);
    // The next decision writes it first; the chain holds it between the decisions it came between.
    await win.applyDirective({ op: "map" });
    const records = await win.auditLog();
    expect(records.map((r) => `${r.op}:${r.status}`)).toEqual(["prune:reversible", "prune:reversible", "compact:compacted", "map:mapped"]);
    expect(records[2]!.directive).toBeNull();
    expect(win.pendingAudit).toBe(0);
    // Renderings with nothing new to apply make no compaction point, and no record.
    win.render();
    win.render();
    expect(win.compactionPoints).toBe(1);
    expect(win.pendingAudit).toBe(0);
  });

  it("auditLog() and end() write a waiting compaction record", async () => {
    const { win, log } = setup({ compaction: { minFreedTokens: 1_024, atTokens: null } });
    await win.append({ kind: "toolResult", text: output(1, 1_500) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    win.render();
    expect((await win.auditLog()).map((r) => r.op)).toEqual(["prune", "compact"]);
    await win.append({ kind: "toolResult", text: output(2, 1_500) });
    await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    win.render();
    await win.end();
    // The session's end is recorded last, after the waiting compaction record.
    expect((await log.auditLog("s")).map((r) => r.op)).toEqual(["prune", "compact", "prune", "compact", "end"]);
  });

  it("a waiting compaction record is written once, however many callers flush at the same time", async () => {
    const { win, log } = setup({ compaction: { minFreedTokens: 1_024, atTokens: null } });
    await win.append({ kind: "toolResult", text: output(1, 1_500) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    win.render();
    const [a, b] = await Promise.all([win.auditLog(), win.auditLog(), win.auditLog()]);
    expect(a!.map((r) => r.op)).toEqual(["prune", "compact"]);
    expect(b!.map((r) => r.op)).toEqual(["prune", "compact"]);
    expect((await log.auditLog("s")).map((r) => `${r.seq}:${r.op}`)).toEqual(["1:prune", "2:compact"]);
  });

  it("a record queued while an earlier write is under way goes after it, in the chain too", async () => {
    const { win, log, clock } = setup({ compaction: { minFreedTokens: 1_024, atTokens: null } });
    for (let i = 1; i <= 2; i++) await win.append({ kind: "toolResult", text: output(i, 1_500) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    // The next record's write is held open; the rendering in the meantime makes a compaction point.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const append = log.appendAudit.bind(log);
    log.appendAudit = async (session, draft) => {
      await gate;
      return append(session, draft);
    };
    clock.advance(1);
    const invalid = win.applyDirective("{not json");
    await Promise.resolve();
    expect(win.pendingAudit).toBe(1); // the invalid directive's record, being written
    win.render();
    expect(win.pendingAudit).toBe(2);
    release();
    await invalid;
    log.appendAudit = append;
    await win.auditLog();
    const chain = await log.auditLog("s");
    expect(chain.map((r) => `${r.op}:${r.status}`)).toEqual(["prune:reversible", "null:invalid", "compact:compacted"]);
    // The chain's order is the decisions' order.
    expect(chain.map((r) => r.decided)).toEqual([...chain.map((r) => r.decided!)].sort((x, y) => x - y));
  });

  it("a store failing to write a waiting record fails the next prune as a store error, never as a prune in doubt", async () => {
    const { OutcomeUnknownError } = await import("../../src/errors.js");
    const { win, log } = setup({ compaction: { minFreedTokens: 1_024, atTokens: null } });
    for (let i = 1; i <= 2; i++) await win.append({ kind: "toolResult", text: output(i, 1_500) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    win.render();
    // The compaction record's write commits and its reply is lost; the store cannot say yet.
    const append = log.appendAudit.bind(log);
    let sayable = false;
    log.appendAudit = async (session, draft) => {
      const record = await append(session, draft);
      log.appendAudit = append;
      throw new OutcomeUnknownError("log", "reply lost", async () => {
        if (!sayable) throw new Error("still cannot say");
        return record;
      });
    };
    const out = await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" });
    expect(out).toMatchObject({ op: "prune", status: "rejected", reason: "store-error" });
    // Once the store can say, the record that committed is not written again, and span_2 prunes.
    sayable = true;
    expect(await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" })).toMatchObject({ status: "reversible" });
    const ops = (await log.auditLog("s")).map((r) => `${r.op}:${r.status}`);
    expect(ops).toEqual(["prune:reversible", "compact:compacted", "prune:rejected", "prune:reversible"]);
    expect(win.pendingAudit).toBe(0);
  });

  it("applies what is pending once the window renders past atTokens", async () => {
    const { win } = setup({ compaction: { minFreedTokens: 50_000, atTokens: 3_000 } });
    await win.append({ kind: "toolResult", text: output(1, 1_000) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    await win.append({ kind: "toolResult", text: output(2, 1_000) });
    expect(win.render()).toContain("line 0 of output 1");
    await win.append({ kind: "toolResult", text: output(3, 1_200) });
    expect(win.render().startsWith("span_1 pruned, recall #1\n\n")).toBe(true);
  });

  it("nothing is lost by the deferral: recall, search and the map read the decided state", async () => {
    const { win } = setup({ compaction: { minFreedTokens: 50_000, atTokens: null } });
    const text = `${output(1, 500)}\nX-Request-Id: req_7f3a9c2e41`;
    await win.append({ kind: "toolResult", text });
    await win.append({ kind: "scratch", text: "a note only the window has" });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    await win.applyDirective({ op: "prune", span_id: "span_2", mode: "drop", accept_lossy: true });
    expect(await win.recall("span_1")).toMatchObject({ status: "found", text });
    expect(await win.recall("span_2")).toMatchObject({ status: "pruned-unrecoverable" });
    const found = await win.search("req_7f3a9c2e41");
    expect(found).toMatchObject({ status: "match", matches: [{ spanId: "span_1", source: "copy", handle: "#1" }] });
    const map = await win.map();
    expect(map.spans).toEqual([]);
    // The budget was spent at the decision: a third lossy commitment beyond the budget of 2 is refused.
    await win.append({ kind: "scratch", text: "two" });
    await win.append({ kind: "scratch", text: "three" });
    await win.applyDirective({ op: "prune", span_id: "span_3", mode: "drop", accept_lossy: true });
    expect(await win.applyDirective({ op: "prune", span_id: "span_4", mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "lossy-budget" });
    // The tombstones appear at the compaction point.
    expect(win.render()).toContain("a note only the window has");
    await win.compact();
    expect(win.render()).toContain("span_2 pruned, unrecoverable, contents unknown");
    expect(win.render()).not.toContain("a note only the window has");
  });

  it("a rejection is read at the end of the window at once, under its span from the next compaction point", async () => {
    const { win } = setup();
    await win.append({ kind: "scratch", text: "note" });
    await win.append({ kind: "turn", text: "later turn" });
    const before = win.render();
    const r = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    expect(r.status).toBe("rejected");
    expect(win.render()).toBe(`${before}\n\nspan_1 kept: prune rejected (no backing store); accept_lossy to force`);
  });

  it('"immediate" applies every decision at once, as before compaction points', async () => {
    const { win } = setup({ compaction: "immediate" });
    await win.append({ kind: "toolResult", text: output(1, 300) });
    expect(await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).toMatchObject({ applies: { at: "now" } });
    expect(win.render()).toBe("span_1 pruned, recall #1");
  });

  it("the model can ask for the compaction point, and one with nothing pending says so", async () => {
    const { win } = setup();
    expect(await win.applyDirective({ op: "compact" })).toMatchObject({ status: "compacted", applied: 0, line: "compacted: nothing was pending" });
    await win.append({ kind: "toolResult", text: output(1, 300) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    const r = await win.handleToolCall({ name: "compact", arguments: {} });
    expect(r?.text).toMatch(/^compacted: 1 decision applied, ~\d+ tokens freed, ~\d+ rewritten$/);
    expect(win.render()).toBe("span_1 pruned, recall #1");
    expect(await win.applyDirective({ op: "compact", now: true })).toMatchObject({ status: "invalid" });
  });
});

describe("the runtime's own traffic folds away at the compaction point", () => {
  it("prune and map calls acted on go with their results; search and recall answers stay; nothing is orphaned", async () => {
    const { win } = setup({ compaction: { minFreedTokens: 50_000, atTokens: null } });
    const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
    await t.user("read the logs");
    await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "t1", name: "read", input: { f: "a" } }] }), () => output(1, 400));
    const calls = await t.appendAnthropic({
      content: [
        { type: "tool_use", id: "p1", name: "prune", input: { span_id: "span_3", mode: "drop" } },
        { type: "tool_use", id: "m1", name: "map", input: {} },
        { type: "tool_use", id: "s1", name: "search", input: { query: "line 0" } },
        { type: "tool_use", id: "t2", name: "read", input: { f: "b" } },
      ],
    });
    await t.handleToolCalls(calls, () => "b's contents");
    const ids = (es: readonly WindowEntry[]) => es.map((e) => (e.state === "live" ? (e.span.message && "callId" in e.span.message ? `${e.span.message.role}:${e.span.message.callId}` : e.span.id) : `${e.state}:${e.spanId}`));
    expect(ids(win.entries())).toContain("tool-call:p1");
    const c = await win.compact();
    expect(c).toMatchObject({ folded: 2 });
    const after = ids(win.entries());
    expect(after.filter((x) => /:(p1|m1)$/.test(x))).toEqual([]);
    expect(after.filter((x) => /:(s1|t2)$/.test(x))).toEqual(["tool-call:s1", "tool-call:t2", "tool-result:s1", "tool-result:t2"]);
    expect(after).toContain("pruned:span_3");
    // A folded span still answers recall, and is never named as another window's by search.
    const folded = (await win.auditLog()).length;
    expect(folded).toBeGreaterThan(0);
    const s = await win.search("no-such-text-anywhere");
    expect(s.status === "no-match" && s.coverage.holes).toEqual([]);
  });

  it("a recall or search sharing a call id with a prune or map stays: the fold is by the call's own operation", async () => {
    const { win } = setup({ compaction: { minFreedTokens: 50_000, atTokens: null } });
    const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
    await t.user("secret token: req_8f3a2c91");
    await t.assistant("noted");
    // One id for four calls (a provider that reuses ids, or a hostile response): each keeps its own fate.
    const calls = await t.appendOpenAIChat({
      content: null,
      tool_calls: [
        { id: "call_X", type: "function", function: { name: "prune", arguments: '{"span_id":"span_1","mode":"drop"}' } },
        { id: "call_X", type: "function", function: { name: "recall", arguments: '{"span_id":"span_1"}' } },
        { id: "call_X", type: "function", function: { name: "map", arguments: "{}" } },
        { id: "call_X", type: "function", function: { name: "search", arguments: '{"query":"req_8f3a2c91"}' } },
      ],
    });
    const answers = await t.handleToolCalls(calls);
    expect(answers.map((a) => a.isError)).toEqual([false, false, false, false]);
    const tools = () => win.entries().flatMap((e) => (e.state === "live" && e.span.message && "toolName" in e.span.message ? [`${e.span.message.role}:${e.span.message.toolName}`] : []));
    expect(await win.compact()).toMatchObject({ folded: 2 });
    expect(tools()).toEqual(["tool-call:recall", "tool-call:search", "tool-result:recall", "tool-result:search"]);
    // The recall's answer still shows the bytes it recalled.
    expect(win.render()).toContain("│ span_1 recalled (#1):\n│ │ secret token: req_8f3a2c91");
  });
});

describe("renderings are prefix-stable between compaction points", () => {
  /** A rendering as blocks: provider renderings are flattened to (role, block) strings. */
  const renderings = (win: ContextWindow<Kind>) => {
    const entries = win.entries(); // without loose notices: those stay at the end and may change
    const ai = toAISDK(entries);
    return {
      views: entries.map((e) => JSON.stringify(e)),
      aisdk: [ai.instructions ?? "", ...ai.messages.flatMap((m) => (typeof m.content === "string" ? [`${m.role}:${m.content}`] : m.content.map((b) => `${m.role}:${JSON.stringify(b)}`)))],
      openai: toOpenAI(entries).map((m) => JSON.stringify(m)),
      responses: toOpenAIResponses(entries).map((m) => JSON.stringify(m)),
      anthropic: (() => {
        const a = toAnthropic(entries);
        return [JSON.stringify(a.system ?? ""), ...a.messages.flatMap((m) => m.content.map((b) => `${m.role}:${JSON.stringify(b)}`))];
      })(),
    };
  };
  type Rendered = ReturnType<typeof renderings>;
  /**
   * Every block of the earlier rendering is the later one's, in place. The last block is left out: a
   * provider message gains blocks when the next span has its role (an OpenAI message holds all of one
   * turn's calls), and Anthropic trims trailing whitespace from a final assistant turn.
   */
  const prefixHolds = (a: Rendered, b: Rendered) => {
    for (const key of Object.keys(a) as (keyof Rendered)[]) {
      const keep = key === "views" ? a[key].length : Math.max(0, a[key].length - 1);
      expect({ key, blocks: b[key].slice(0, keep) }).toEqual({ key, blocks: a[key].slice(0, keep) });
    }
  };

  const step = fc.oneof(
    fc.record({ t: fc.constant("append" as const), kind: fc.constantFrom<Kind>("turn", "toolResult", "scratch"), tokens: fc.integer({ min: 5, max: 900 }) }),
    fc.record({ t: fc.constant("tool" as const), tokens: fc.integer({ min: 5, max: 900 }) }),
    fc.record({ t: fc.constant("prune" as const), at: fc.nat(), mode: fc.constantFrom("drop", "summarize", "compress"), lossy: fc.boolean() }),
    fc.record({ t: fc.constant("range" as const), at: fc.nat(), len: fc.integer({ min: 2, max: 4 }) }),
    fc.record({ t: fc.constant("read" as const), what: fc.constantFrom("recall", "search", "map") }),
    fc.record({ t: fc.constant("time" as const), minutes: fc.integer({ min: 1, max: 50 }) }),
    fc.record({ t: fc.constant("compact" as const) }),
  );

  it("for every renderer, over generated sessions: only a compaction point changes what was rendered", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), fc.constantFrom(1_024, 2_000, 8_000), async (steps, minFreedTokens) => {
        const { win, clock } = setup({ compaction: { minFreedTokens, atTokens: null }, lossyBudget: null });
        const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
        let previous = renderings(win);
        let compactions = 0;
        let n = 0;
        for (const s of steps) {
          const points = win.compactionPoints;
          const ids = win.entries().map((e) => (e.state === "live" ? e.span.id : e.spanId));
          const id = (at: number) => ids[at % Math.max(1, ids.length)] ?? "span_1";
          let point = false;
          if (s.t === "append") await win.append({ kind: s.kind, text: output(n++, s.tokens) });
          else if (s.t === "tool") {
            const calls = await t.appendAnthropic({ content: [{ type: "tool_use", id: `c${n}`, name: "read", input: { n } }] });
            await t.handleToolCalls(calls, () => output(n++, s.tokens));
          } else if (s.t === "prune") {
            const o = await win.applyDirective({ op: "prune", span_id: id(s.at), mode: s.mode, ...(s.mode === "summarize" ? { digest: "a digest" } : {}), ...(s.lossy ? { accept_lossy: true } : {}) });
            point = "applies" in o && o.applies.at === "now";
          } else if (s.t === "range") {
            const o = await win.applyDirective({ op: "summarize_range", from: id(s.at), to: id(s.at + s.len), digest: "a run" });
            point = "applies" in o && o.applies.at === "now";
          } else if (s.t === "read") {
            if (s.what === "recall") await win.recall(id(n));
            else if (s.what === "search") await win.search("line 0");
            else await win.map();
          } else if (s.t === "time") clock.advance(s.minutes * 60_000);
          else {
            await win.compact();
            point = true;
          }
          const next = renderings(win);
          // A compaction point may also come at a rendering, once what is pending is due: the only other change.
          if (!point && win.compactionPoints === points) prefixHolds(previous, next);
          else compactions++;
          previous = next;
        }
        expect(compactions).toBeLessThanOrEqual(steps.length + 1);
      }),
      { numRuns: fuzzRuns(60) },
    );
  });

  it("no rendered line changes with the clock alone", async () => {
    const { win, clock } = setup({ compaction: "immediate" });
    const noHolds = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR, holds: false });
    const other = new ContextWindow<Kind>({ session: "s2", clock, stores: { log: noHolds }, kinds: KINDS, limits: { maxLengthMs: 8 * HOUR, compaction: "immediate" } });
    for (const w of [win, other]) {
      await w.append({ kind: "toolResult", text: "a result" });
      await w.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    }
    const seen = [win.render(), other.render()];
    expect(seen[1]).toBe("span_1 pruned, recall #1 until 11:00Z");
    for (let m = 0; m < 119; m += 7) {
      clock.advance(7 * 60_000);
      if (clock.now() >= Date.UTC(2026, 11, 3, 11, 0)) break;
      expect([win.render(), other.render()]).toEqual(seen);
    }
  });
});

describe("the model can see the price", () => {
  it("the map and the pending line say what compacting now would rewrite, as lines the grammar reads", async () => {
    const { parseRuntimeLine } = await import("../../src/render/grammar.js");
    const ctx = { tombstone: "{span} pruned, unrecoverable, contents unknown" };
    const { win } = setup({ compaction: { minFreedTokens: 50_000, atTokens: null } });
    for (let i = 1; i <= 3; i++) await win.append({ kind: "toolResult", text: output(i, 2_000) });
    const out = await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    if (out.status !== "reversible" || out.applies.at !== "next-compaction") throw new Error("expected a pending prune");
    expect(out.applies.rewriteTokens).toBeGreaterThan(5_000);
    const map = await win.map();
    expect(map.pending).toMatchObject({ decisions: 1, thresholdTokens: 50_000 });
    const lines = map.line.split("\n");
    // Far below the size from which pruning pays (3 × 50k): the map and the prune's answer say so first.
    expect(lines[1]).toMatch(/^no need to prune yet: ~\d\.\dk tokens, pruning pays from ~150k$/);
    expect(out.applies.advice).toMatch(/^no need to prune yet: /);
    expect(lines[2]).toMatch(/^pending: 1 decision free ~\d\.\dk of 50k tokens; compacting now rewrites ~\d\.\dk cached tokens$/);
    for (const line of [lines[1]!, lines[2]!, out.applies.line, out.applies.advice!, (await win.compact()).line]) expect(parseRuntimeLine(line, ctx)).not.toBeNull();
    expect((await win.map()).pending).toBeNull();
  });
});

// Issue 24, item 2: after a restart the rendered map agrees with map() and with the prunes it forecasts.
describe("the map after resume", () => {
  it("render({ map: true }), map() and the prunes agree for every fate, on a resumed window", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { SqliteStore } = await import("../../src/stores/sqlite/sqlite-store.js");
    const path = join(mkdtempSync(join(tmpdir(), "pruneguard-map-resume-")), "agent.db");
    const clock = new ManualClock(Date.UTC(2026, 11, 3, 9, 0));
    const kinds = {
      tool: { store: "log", modes: ["drop"], lossy: "with-flag" },
      strict: { store: "log", modes: ["drop"], lossy: "forbid" },
      note: { store: null, modes: ["drop"], lossy: "with-flag" },
      pinned: { store: null, modes: ["drop"], lossy: "forbid" },
    } as const satisfies Record<string, KindPolicy>;
    const options = () => ({ session: "s", clock, stores: { log: new SqliteStore({ name: "log", path, retentionMs: 2 * HOUR, clock }) }, kinds, limits: { maxLengthMs: 8 * HOUR, compaction: "immediate" as const } });
    const first = new ContextWindow(options());
    for (const kind of ["tool", "strict", "note", "pinned"] as const) await first.append({ kind, text: `a ${kind} span` });
    clock.advance(10 * 60_000);
    const resumed = await ContextWindow.resume(options());
    const rendered = resumed.render({ map: true }).split("\n").filter((l) => /^span_\d+ drop: /.test(l));
    const asked = (await resumed.map()).line.split("\n").filter((l) => /^span_\d+ drop: /.test(l));
    expect(rendered).toEqual(asked);
    // The unbacked spans' bytes lived only in the first process: they come back lost, not live.
    expect(rendered).toEqual(["span_1 drop: reversible", "span_2 drop: reversible"]);
    expect((await resumed.recall("span_3")).status).toBe("lost");
    // New spans after the restart get every fate, and the map says each the way the prune then decides it.
    for (const kind of ["note", "pinned"] as const) await resumed.append({ kind, text: `a new ${kind} span` });
    const after = resumed.render({ map: true }).split("\n").filter((l) => /^span_\d+ drop: /.test(l));
    expect(after).toEqual((await resumed.map()).line.split("\n").filter((l) => /^span_\d+ drop: /.test(l)));
    expect(after).toEqual(["span_1 drop: reversible", "span_2 drop: reversible", "span_5 drop: lossy only with accept_lossy", "span_6 drop: never (lossy forbidden)"]);
    expect((await resumed.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" })).status).toBe("reversible");
    expect((await resumed.applyDirective({ op: "prune", span_id: "span_2", mode: "drop" })).status).toBe("reversible");
    expect((await resumed.applyDirective({ op: "prune", span_id: "span_5", mode: "drop" })).status).toBe("rejected");
    expect((await resumed.applyDirective({ op: "prune", span_id: "span_5", mode: "drop", accept_lossy: true })).status).toBe("lossy");
    expect((await resumed.applyDirective({ op: "prune", span_id: "span_6", mode: "drop", accept_lossy: true })).status).toBe("rejected");
  });
});
