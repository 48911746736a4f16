/**
 * Long sessions (issue 34): compaction points stay true and cheap — a compaction that rewrites nothing is
 * no compaction point, and directive traffic folded before a restart stays folded after the resume.
 */
import { describe, expect, it } from "vitest";
import { ContextWindow, directiveTools, ManualClock, MemoryStore, refSpanId, Transcript, type KindPolicy, type WindowEntry } from "../../src/index.js";
import { parseRuntimeLine } from "../../src/render/grammar.js";
import { DEFAULT_TOMBSTONE } from "../../src/render/lines.js";
import { HOUR } from "../reliability/helpers.js";

const KINDS = {
  turn: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  toolCall: { store: "log", modes: ["drop"], lossy: "with-flag" },
  toolResult: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
} as const satisfies Record<string, KindPolicy>;
type Kind = keyof typeof KINDS;
const ROLES = { user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" } as const;

const output = (i: number, tokens: number) => Array.from({ length: Math.ceil(tokens / 9) }, (_, k) => `line ${k} of output ${i}: ok`).join("\n");

function open(log: MemoryStore, clock: ManualClock, extra: Partial<ConstructorParameters<typeof ContextWindow<Kind>>[0]> = {}) {
  return { session: "s", clock, stores: { log }, kinds: KINDS, limits: { maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 50_000, atTokens: null } }, ...extra };
}

const shape = (es: readonly WindowEntry[]) => es.map((e) => (e.state === "live" ? e.span.id : `${e.state}:${e.spanId}`));

describe("a compaction that rewrites nothing is no compaction point", () => {
  it("compact() with nothing pending: same rendering, no count, recorded as unchanged", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const win = new ContextWindow<Kind>(open(new MemoryStore({ name: "log", clock }), clock));
    await win.append({ kind: "toolResult", text: output(1, 500) });
    await win.append({ kind: "toolResult", text: output(2, 500) });
    await win.applyDirective({ op: "prune", span_id: "span_1", mode: "drop" });
    const made = await win.compact();
    expect(made).toMatchObject({ applied: 1, rewrittenTokens: expect.any(Number) });
    expect(made.rewrittenTokens).toBeGreaterThan(0);
    const points = win.compactionPoints;
    const before = win.render();
    for (let i = 0; i < 5; i++) {
      const again = await win.compact();
      expect(again).toMatchObject({ applied: 0, folded: 0, freedTokens: 0, rewrittenTokens: 0, line: "compacted: nothing was pending" });
    }
    expect(win.compactionPoints).toBe(points);
    expect(win.render()).toBe(before);
    const compacts = (await win.auditLog()).filter((r) => r.op === "compact");
    expect(compacts.map((r) => r.status)).toEqual(["compacted", "unchanged", "unchanged", "unchanged", "unchanged", "unchanged"]);
  });

  it("the rewrite a compaction point reports starts where the rendering first changed", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const win = new ContextWindow<Kind>(open(new MemoryStore({ name: "log", clock }), clock));
    for (let i = 1; i <= 4; i++) await win.append({ kind: "toolResult", text: output(i, 400) });
    await win.compact();
    const tail = win.entries().slice(2).reduce((n, e) => n + (e.state === "live" ? e.span.tokens + 6 : 0), 0);
    await win.applyDirective({ op: "prune", span_id: "span_3", mode: "drop" });
    const c = await win.compact();
    // span_3 and span_4 are re-sent; span_1 and span_2, before the change, stay cached.
    expect(c.rewrittenTokens).toBe(tail);
  });
});

describe("folded directive traffic stays folded after a resume", () => {
  async function session(clock: ManualClock, log: MemoryStore) {
    const win = new ContextWindow<Kind>(open(log, clock));
    const t = new Transcript(win, ROLES);
    await t.user("read the logs");
    for (let i = 0; i < 6; i++) {
      const uses = [{ type: "tool_use", id: `r${i}`, name: "read", input: { f: String(i) } }];
      if (i >= 2) {
        uses.unshift({ type: "tool_use", id: `p${i}`, name: "prune", input: { span_id: `span_${3 + (i - 2) * 2}`, mode: "drop" } } as never);
        uses.unshift({ type: "tool_use", id: `m${i}`, name: "map", input: {} } as never);
      }
      await t.handleToolCalls(await t.appendAnthropic({ content: uses }), () => output(i, 300));
      if (i === 3) await win.compact();
    }
    await win.compact();
    return win;
  }

  it("given the directive tools, a resumed window shows what the window showed before the restart", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const before = await session(clock, log);
    const shown = shape(before.entries());
    expect(shown.some((s) => /tool/.test(s))).toBe(false);
    const resumed = await ContextWindow.resume<Kind>(open(log, clock, { directiveTools: directiveTools() }));
    expect(shape(resumed.entries())).toEqual(shown);
    expect(resumed.tokens()).toBeLessThanOrEqual(before.tokens());
    // A folded call still answers recall: its bytes are in the store.
    const folded = (await resumed.auditLog()).find((r) => r.op === "prune" && r.status === "reversible");
    expect(folded).toBeDefined();
  });

  it("directive calls whose kind keeps no copy fold again after a resume, though they come back lost", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const kinds = { ...KINDS, toolCall: { store: null, modes: ["drop"], lossy: "with-flag" } } as const;
    const opts = open(log, clock, { kinds, directiveTools: directiveTools(), limits: { compaction: "immediate" } });
    const win = new ContextWindow<Kind>(opts);
    const t = new Transcript(win, ROLES);
    const notes: string[] = [];
    for (let i = 0; i < 4; i++) {
      notes.push(refSpanId(await t.user(`note ${i}: ${"some long user text ".repeat(40)}`)));
      const uses = i === 0 ? [] : [{ type: "tool_use", id: `p${i}`, name: "prune", input: { span_id: notes[i - 1], mode: "drop" } }];
      await t.handleToolCalls(await t.appendAnthropic({ content: uses }));
    }
    await win.compact();
    const shown = shape(win.entries());
    expect(shown.every((s) => !/lost/.test(s))).toBe(true);
    const resumed = await ContextWindow.resume<Kind>(opts);
    expect(shape(resumed.entries())).toEqual(shown);
    expect(resumed.tokens()).toBe(win.tokens());
    expect(resumed.render()).not.toContain("lost in a restart");
  });

  it("a range summary over a run that had directive traffic folded out of it is drawn again, the traffic folded after it", async () => {
    for (const tools of [true, false]) {
      const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
      const log = new MemoryStore({ name: "log", clock });
      // A run with a tool call in it: the call's kind allows summarize here.
      const kinds = { ...KINDS, toolCall: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" } } as const;
      const opts = open(log, clock, { kinds, directiveTools: directiveTools() });
      const win = new ContextWindow<Kind>(opts);
      const t = new Transcript(win, ROLES);
      await t.user("read the logs");
      // span_2 the map call, span_3 a read call, span_4 the map's answer, span_5 the read's result.
      await t.handleToolCalls(await t.appendAnthropic({ content: [
        { type: "tool_use", id: "m1", name: "map", input: {} }, { type: "tool_use", id: "r1", name: "read", input: { f: "a" } },
      ] }), () => output(1, 100));
      await t.user("and the next one");
      await win.compact();
      expect(shape(win.entries())).toEqual(["span_1", "span_3", "span_5", "span_6"]);
      const s = await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_6", digest: "read one file" });
      expect(s).toMatchObject({ status: "summarized", members: ["span_1", "span_3", "span_5", "span_6"] });
      if (s.status !== "summarized") throw new Error("expected a summary");
      await win.compact();
      const resumed = await ContextWindow.resume<Kind>(tools ? opts : open(log, clock, { kinds }));
      // Drawn again in the run's place; the folded traffic, in place until the window folds it again, after it.
      expect(shape(resumed.entries())).toEqual(tools ? [`summary:${s.spanId}`] : [`summary:${s.spanId}`, "span_2", "span_4"]);
      expect(await resumed.recall(s.spanId)).toMatchObject({ status: "expanded", members: s.members });
      if (tools) expect(resumed.tokens()).toBe(win.tokens());
    }
  });

  it.each(["recall", "search", "read"])("a %s call that reuses a folded prune call's id: the prune stays folded after the resume", async (second) => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow<Kind>(open(log, clock));
    const t = new Transcript(win, ROLES);
    await t.user("go");
    await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "a", name: "read", input: { f: "1" } }] }), () => output(1, 300));
    await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "t1", name: "prune", input: { span_id: "span_3", mode: "drop" } }] }), () => "x");
    // The provider gives the next call the same id: its result is the later one with that id.
    const input = second === "recall" ? { span_id: "span_3" } : second === "search" ? { query: "output 1" } : { f: "2" };
    await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "t1", name: second, input }] }), () => "read two");
    await win.compact();
    const shown = shape(win.entries());
    expect(shown.filter((s) => s === "span_4" || s === "span_5")).toEqual([]);
    const resumed = await ContextWindow.resume<Kind>(open(log, clock, { directiveTools: directiveTools() }));
    expect(shape(resumed.entries())).toEqual(shown);
    expect(resumed.tokens()).toBeLessThanOrEqual(win.tokens());
  });

  it("a range summary comes back as it was, no larger: its digest and its run are noted when it is applied", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const opts = open(log, clock, { limits: { maxLengthMs: 8 * HOUR, compaction: "immediate" } });
    const win = new ContextWindow<Kind>(opts);
    // Fewer members than a fold needs: as index lines they would stand one by one, several times the summary's size.
    for (let i = 1; i <= 12; i++) await win.append({ kind: "toolResult", text: output(i, 60) });
    expect(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_11", digest: "read eleven files" })).toMatchObject({ status: "summarized" });
    const resumed = await ContextWindow.resume<Kind>(opts);
    expect(resumed.render()).toBe(win.render());
    expect(resumed.tokens()).toBe(win.tokens());
    expect(shape(resumed.entries())).toEqual(["summary:span_13", "span_12"]);
    for (const id of ["span_1", "span_11"]) expect(await resumed.recall(id)).toMatchObject({ status: "found" });
    expect({ ...(await resumed.recall("span_13")), auditSeq: null }).toEqual({ ...(await win.recall("span_13")), auditSeq: null });
  });

  it("expanded after a restart, a range summary lists its members' index lines with their hints, as before it", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const opts = open(log, clock, { limits: { maxLengthMs: 8 * HOUR, compaction: "immediate" } });
    const win = new ContextWindow<Kind>(opts);
    await win.append({ kind: "turn", text: "q1 question", message: { role: "user" } });
    await win.append({ kind: "turn", text: "a1 answer", message: { role: "assistant" } });
    await win.append({ kind: "turn", text: "q2", message: { role: "user" } });
    const s = await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_2", digest: "first exchange" });
    if (s.status !== "summarized") throw new Error("expected a summary");
    const expanded = await win.recall(s.spanId);
    expect(expanded).toMatchObject({ status: "expanded", text: "span_1 pruned, recall #1: q1\nspan_2 pruned, recall #2: a1" });
    const resumed = await ContextWindow.resume<Kind>(opts);
    expect({ ...(await resumed.recall(s.spanId)), auditSeq: null }).toEqual({ ...expanded, auditSeq: null });
  });

  it("a range summary without its note comes back as index lines that fold, never as placeholders of a text never recorded", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    // A session whose summary was applied before summaries were noted.
    log.noteReplacement = () => Promise.reject(new Error("not noted"));
    const opts = open(log, clock, { limits: { maxLengthMs: 8 * HOUR, compaction: "immediate" } });
    const win = new ContextWindow<Kind>(opts);
    for (let i = 1; i <= 21; i++) await win.append({ kind: "toolResult", text: output(i, 60) });
    expect(await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_20", digest: "read twenty files" })).toMatchObject({ status: "summarized", noteError: "not noted" });
    const resumed = await ContextWindow.resume<Kind>(opts);
    const text = resumed.render();
    expect(text).not.toContain("not recorded before a restart");
    // The summary's digest was the model's text, never recorded: its members stand as what they are, folded.
    expect(text.split("\n")[0]).toBe("span_1-span_20: 20 pruned (20 toolResult); recall span_1-span_20 to list them");
    // One position for the run, as the summary was (the fold line and the summary's header differ by a few tokens).
    expect(resumed.entries()).toHaveLength(win.entries().length);
    for (const id of ["span_1", "span_20"]) expect(await resumed.recall(id)).toMatchObject({ status: "found" });
  });

  it("a fold line never prints a tool name that reads as a span id", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const win = new ContextWindow<Kind>(open(new MemoryStore({ name: "log", clock }), clock, { limits: { maxLengthMs: 8 * HOUR, compaction: "immediate" } }));
    for (let i = 1; i <= 17; i++) {
      for (const [kind, role] of [["toolCall", "tool-call"], ["toolResult", "tool-result"]] as const) {
        await win.append({ kind, text: `${role} ${i}`, message: { role, callId: `c${i}`, toolName: "span_900-span_999" } });
      }
    }
    for (let i = 1; i <= 16; i++) await win.applyDirective({ op: "prune", span_id: `span_${2 * i}`, mode: "drop" });
    await win.compact();
    expect(win.render().split("\n")[0]).toBe("span_1-span_32: 16 pruned (16 tool); recall span_1-span_32 to list them");
  });

  it("without them, the calls fold at the first compaction point after the window learns the tools", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const before = await session(clock, log);
    const resumed = await ContextWindow.resume<Kind>(open(log, clock));
    const live = shape(resumed.entries()).length;
    expect(live).toBeGreaterThan(shape(before.entries()).length);
    const t = new Transcript(resumed, ROLES);
    await t.handleToolCalls(await t.appendAnthropic({ content: [{ type: "tool_use", id: "r9", name: "read", input: { f: "9" } }] }), () => "nine");
    // The default tools, learned at the first handled call: the calls answered before the restart fold.
    await resumed.handleToolCall({ id: "x", name: "no-such-tool", arguments: {} });
    const c = await resumed.compact();
    expect(c.folded).toBeGreaterThan(0);
    expect(shape(resumed.entries()).filter((s) => !shape(before.entries()).includes(s))).toHaveLength(2); // r9's call and result
  });
});

describe("index lines fold", () => {
  /** A session of `calls` tool calls that prunes every result but the last `keep`, its prunes sent with its next call. */
  async function prunesEveryTurn(calls: number, keep = 4) {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow<Kind>(open(log, clock, { limits: { maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 2_000, atTokens: null } } }));
    const t = new Transcript(win, ROLES);
    await t.user("read the repository");
    const results: Array<{ id: string; text: string }> = [];
    let pruned = 0;
    let maxLines = 0;
    for (let i = 0; i < calls; i++) {
      const drops = results.slice(pruned, Math.max(pruned, results.length - keep));
      pruned += drops.length;
      const uses: Array<Record<string, unknown>> = drops.map((r, k) => ({ type: "tool_use", id: `p${i}_${k}`, name: "prune", input: { span_id: r.id, mode: "drop" } }));
      uses.push({ type: "tool_use", id: `r${i}`, name: i % 3 === 0 ? "grep" : "read_file", input: { n: i } });
      const text = `${output(i, 300)}\nmarker-${i}-end`;
      await t.handleToolCalls(await t.appendAnthropic({ content: uses as never }), () => text);
      const last = win.entries().findLast((e) => e.state === "live" && e.span.message?.role === "tool-result");
      if (last?.state === "live") results.push({ id: last.span.id, text });
      maxLines = Math.max(maxLines, win.entries().filter((e) => e.state !== "live").length);
    }
    return { win, log, clock, results: results.slice(0, pruned), maxLines };
  }

  it("the index takes a bounded number of lines however long the session runs", async () => {
    const short = await prunesEveryTurn(60);
    const long = await prunesEveryTurn(240);
    // Four times the calls: at most a fold line more (a fold of folds), never a line per pruned span.
    expect(long.maxLines).toBeLessThanOrEqual(short.maxLines + 2);
    // One fold line and fewer than MIN_RUN (16) pairs of index lines not folded yet, besides the first turn.
    expect(long.maxLines).toBeLessThan(2 * 16 + 2);
    const folds = long.win.entries().filter((e) => e.state === "fold");
    expect(folds.length).toBeGreaterThan(0);
    // The fold line is a runtime line of the grammar, like every line the runtime writes.
    expect(parseRuntimeLine(folds[0]!.text, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "fold", unrecoverable: 0 });
    expect(folds[0]!.text).toMatch(/^span_\d+-span_\d+: \d+ pruned \(\d+ read_file, \d+ grep\); recall span_\d+-span_\d+ to list them$/);
  });

  it("recall and search answer for every folded span as before folding; the fold's key lists its members", async () => {
    const { win, results } = await prunesEveryTurn(60);
    expect(results.length).toBeGreaterThan(40);
    for (const r of results) expect(await win.recall(r.id)).toMatchObject({ status: "found", text: r.text });
    const hit = await win.search("marker-7-end");
    expect(hit.status === "match" && hit.matches.map((m) => m.spanId)).toEqual([results[7]!.id]);
    const fold = win.entries().find((e) => e.state === "fold");
    if (fold?.state !== "fold") throw new Error("expected a fold");
    const listed = await win.applyDirective({ op: "recall", span_id: fold.spanId });
    expect(listed).toMatchObject({ status: "expanded", spanId: fold.spanId, members: fold.members });
    // Each member is a line of its own, a lower fold or an index line with its handle.
    if (listed.status !== "expanded") throw new Error("expected an expansion");
    expect(listed.text.split("\n")).toHaveLength(fold.members.length);
    expect(fold.members.length).toBeLessThanOrEqual(16);
  });

  it("a resumed window folds what the session pruned, and is no larger than before the restart", async () => {
    const { win, log, clock, results } = await prunesEveryTurn(60);
    const resumed = await ContextWindow.resume<Kind>(open(log, clock, { directiveTools: directiveTools() }));
    expect(resumed.tokens()).toBeLessThanOrEqual(win.tokens());
    for (const r of results.slice(0, 10)) expect(await resumed.recall(r.id)).toMatchObject({ status: "found", text: r.text });
  });
});

describe("a range summary may start or end in a folded run", () => {
  /** 24 tool outputs, the first 20 pruned and their index lines folded (span_1-span_16, then four lines). */
  async function folded() {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const opts = open(log, clock, { limits: { maxLengthMs: 8 * HOUR, compaction: "immediate" } });
    const win = new ContextWindow<Kind>(opts);
    for (let i = 1; i <= 24; i++) await win.append({ kind: "toolResult", text: output(i, 60) });
    for (let i = 1; i <= 20; i++) await win.applyDirective({ op: "prune", span_id: `span_${i}`, mode: "drop" });
    await win.compact();
    expect(shape(win.entries()).slice(0, 2)).toEqual(["fold:span_1-span_16", "pruned:span_17"]);
    return { win, opts };
  }

  it("a member's id names its fold's position: the whole fold is summarized, its members under the summary, byte-identical on recall, also after a restart", async () => {
    const { win, opts } = await folded();
    const s = await win.applyDirective({ op: "summarize_range", from: "span_5", to: "span_22", digest: "read twenty-two files" });
    expect(s).toMatchObject({ status: "summarized", members: ["span_1-span_16", "span_17", "span_18", "span_19", "span_20", "span_21", "span_22"] });
    if (s.status !== "summarized") throw new Error("expected a summary");
    const text = win.render();
    // The header names the run by span ids (a fold's key is not one), and the grammar reads it.
    expect(text.split("\n")[0]).toBe(`${s.spanId} summary of span_1–span_22 (7), recall ${s.spanId}`);
    expect(parseRuntimeLine(text.split("\n")[0]!, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "range-summary" });
    for (const i of [1, 5, 16, 22]) expect(await win.recall(`span_${i}`)).toMatchObject({ status: "found", text: output(i, 60) });
    expect(await win.applyDirective({ op: "recall", span_id: s.spanId })).toMatchObject({ status: "expanded", members: s.members });
    const resumed = await ContextWindow.resume<Kind>(opts);
    // Drawn again as it was: the same header and digest, the same positions under it (the fold made again).
    expect(resumed.render().split("\n\n")[0]).toBe(text.split("\n\n")[0]);
    expect(await resumed.applyDirective({ op: "recall", span_id: s.spanId })).toMatchObject({ status: "expanded", members: s.members });
    expect(await resumed.recall("span_5")).toMatchObject({ status: "found", text: output(5, 60) });
  });

  it("a run may end in a fold, and a summary's member names the summary: the new one nests it", async () => {
    const { win } = await folded();
    const lower = await win.applyDirective({ op: "summarize_range", from: "span_17", to: "span_20", digest: "four files" });
    expect(lower).toMatchObject({ status: "summarized", members: ["span_17", "span_18", "span_19", "span_20"] });
    if (lower.status !== "summarized") throw new Error("expected a summary");
    const upper = await win.applyDirective({ op: "summarize_range", from: "span_2", to: "span_18", digest: "twenty files" });
    expect(upper).toMatchObject({ status: "summarized", members: ["span_1-span_16", lower.spanId] });
  });

  it("two ids in one position, or an id no position holds, are refused with what is true", async () => {
    const { win } = await folded();
    expect(await win.applyDirective({ op: "summarize_range", from: "span_3", to: "span_9", digest: "x" })).toMatchObject({
      status: "rejected", reason: "range", message: "span_3 and span_9 both stand in span_1-span_16, one position; a range summary needs two or more positions in order",
    });
    expect(await win.applyDirective({ op: "summarize_range", from: "span_3", to: "span_99", digest: "x" })).toMatchObject({
      status: "rejected", reason: "unknown-span", message: "span_99 is not in this window",
    });
    expect(win.entries()).toHaveLength(9);
  });
});

describe("the runtime says when a prune cannot pay yet", () => {
  it("below three times minFreedTokens the answer and the map advise waiting; from there on they do not", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const win = new ContextWindow<Kind>(open(new MemoryStore({ name: "log", clock }), clock, { limits: { maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 2_000, atTokens: null } } }));
    for (let i = 1; i <= 4; i++) await win.append({ kind: "toolResult", text: output(i, 1_000) });
    const small = await win.handleToolCall({ id: "p1", name: "prune", arguments: { span_id: "span_1", mode: "drop" } });
    expect(small?.outcome).toMatchObject({ status: "reversible", applies: { at: "next-compaction", advice: expect.stringMatching(/^no need to prune yet: ~\d\.\dk tokens, pruning pays from ~6\.0k$/) } });
    expect(small?.text.split("\n").at(-1)).toMatch(/^no need to prune yet: /);
    expect((await win.map()).line.split("\n")[1]).toMatch(/^no need to prune yet: /);
    for (let i = 5; i <= 8; i++) await win.append({ kind: "toolResult", text: output(i, 1_000) });
    const large = await win.handleToolCall({ id: "p2", name: "prune", arguments: { span_id: "span_2", mode: "drop" } });
    expect(large?.outcome).toMatchObject({ status: "reversible" });
    if (large?.outcome.status !== "reversible") throw new Error("expected a reversible prune");
    expect(large.outcome.applies.at === "now" || large.outcome.applies.advice === null).toBe(true);
    expect(large.text).not.toMatch(/no need to prune yet/);
  });
});

describe("review findings on folds, lapses and lines (issue 34)", () => {
  it("a lapse no line shows is no compaction point, and pending prunes keep waiting after it", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const store = new MemoryStore({ name: "log", clock, retentionMs: HOUR, holds: false });
    const win = new ContextWindow<Kind>({ session: "s", clock, stores: { log: store }, kinds: KINDS, limits: { compaction: { minFreedTokens: 50_000, atTokens: null } } });
    for (let i = 1; i <= 3; i++) await win.append({ kind: "toolResult", text: output(i, 300) });
    clock.advance(HOUR / 2);
    for (let i = 4; i <= 6; i++) await win.append({ kind: "toolResult", text: output(i, 300) });
    for (const id of ["span_1", "span_2", "span_3", "span_4"]) await win.applyDirective({ op: "prune", span_id: id, mode: "drop" });
    await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_4", digest: "four outputs" });
    await win.compact();
    // The summary's line says until when the first of its members' copies is kept, as an index line would.
    expect(win.render()).toContain("span_7 summary of span_1–span_4 (4), recall span_7 until 10:00Z");
    const points = win.compactionPoints;
    clock.advance(HOUR / 2 + 60_000); // span_1–span_3's copies are no longer promised: the summary's line says so
    expect(win.render()).toContain("span_7 summary of span_1–span_4 (4), copies may be lost, recall span_7");
    expect(win.compactionPoints).toBe(points + 1);
    clock.advance(HOUR / 2); // span_4's lapses too: the line already says it, nothing shown changes
    win.render();
    expect(win.compactionPoints).toBe(points + 1);
    await win.applyDirective({ op: "prune", span_id: "span_5", mode: "drop" });
    expect(win.render()).toContain("[span_5 toolResult]"); // deferred: 50k are not pending
    expect(win.compactionPoints).toBe(points + 1);
  });

  it("a fold is a balanced tree: at most 16 members a level, logarithmic depth, full chunks kept as they were", async () => {
    const { foldLeaves, FANOUT } = await import("../../src/window/fold.js");
    const line = (n: number) => ({
      state: "pruned" as const, spanId: `span_${n}`, kind: "toolResult", group: null, message: null, hash: "h", mode: "drop" as const,
      handle: `#${n}`, store: "log", until: null, keptUntil: null, copyLost: false, hint: null, hintTokens: 0, replacement: null,
    });
    const known = new Map<string, import("../../src/window/entries.js").Entry>();
    const remember = (f: import("../../src/window/entries.js").Entry): void => {
      if (f.state !== "fold") return;
      known.set(f.spanId, f);
      f.members.forEach(remember);
    };
    const depth = (e: import("../../src/window/entries.js").Entry): number => (e.state === "fold" ? 1 + Math.max(...e.members.map(depth)) : 0);
    const widest = (e: import("../../src/window/entries.js").Entry): number => (e.state === "fold" ? Math.max(e.members.length, ...e.members.map(widest)) : 0);
    const lines = Array.from({ length: 5_000 }, (_, i) => line(i + 1));
    const fold = foldLeaves(lines, (k) => known.get(k), 0);
    remember(fold);
    expect(widest(fold)).toBeLessThanOrEqual(FANOUT);
    expect(depth(fold)).toBe(4); // 16^3 < 5,000 <= 16^4
    const grown = foldLeaves([...lines, ...Array.from({ length: 15 }, (_, i) => line(5_001 + i))], (k) => known.get(k), 0);
    const first = (e: import("../../src/window/entries.js").Entry): import("../../src/window/entries.js").Entry => (e.state === "fold" && e.members[0]!.state === "fold" ? first(e.members[0]!) : e);
    expect(first(grown)).toBe(first(fold)); // the first full chunk is the same object
    expect(grown.spanId).toBe("span_1-span_5015");
  });

  it("with holds, finite retention and a session horizon, index lines still fold", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock, retentionMs: 24 * HOUR });
    const win = new ContextWindow<Kind>({ session: "s", clock, stores: { log }, kinds: KINDS, limits: { maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 1_024, atTokens: null } } });
    for (let i = 1; i <= 40; i++) await win.append({ kind: "toolResult", text: output(i, 100) });
    for (let i = 1; i <= 36; i++) await win.applyDirective({ op: "prune", span_id: `span_${i}`, mode: "drop" });
    await win.compact();
    expect(win.entries().filter((e) => e.state === "fold")).toHaveLength(1);
  });

  it("a folded member whose copy is found lost is counted unrecoverable on the fold's line", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow<Kind>(open(log, clock));
    for (let i = 1; i <= 20; i++) await win.append({ kind: "toolResult", text: output(i, 100) });
    for (let i = 1; i <= 18; i++) await win.applyDirective({ op: "prune", span_id: `span_${i}`, mode: "drop" });
    await win.compact();
    const fold = win.entries().find((e) => e.state === "fold");
    expect(fold?.text).toMatch(/^span_1-span_18: 18 pruned \(18 toolResult\); recall/);
    // span_5's copy goes missing behind the runtime's back (a store that no longer answers for it).
    const lookup = log.lookup.bind(log);
    log.lookup = async (session, key) => ("handle" in key && key.handle === "#5" ? { status: "absent" } : lookup(session, key));
    expect(await win.checkCopies()).toBe(1);
    expect(win.entries().find((e) => e.state === "fold")?.text).toMatch(/^span_1-span_18: 17 pruned \(17 toolResult\), 1 unrecoverable; recall/);
  });

  // F3 (red team, semantic round): past the session's horizon and retention (or after end()), rotation deleted
  // every folded copy while the fold line went on counting them as pruned, recoverable; a resumed window showed
  // each as `copy lost`.
  it("a fold line counts members whose promise lapsed as copies that may be lost, redrawn when the clock passes it, as a resumed window says", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
    const options = open(log, clock, { limits: { maxLengthMs: 4 * HOUR, compaction: { minFreedTokens: 1_000_000, atTokens: null } } });
    const win = new ContextWindow<Kind>(options);
    for (let i = 1; i <= 20; i++) await win.append({ kind: "toolResult", text: output(i, 100) });
    await win.append({ kind: "toolResult", text: "tail" });
    for (let i = 1; i <= 20; i++) await win.applyDirective({ op: "prune", span_id: `span_${i}`, mode: "drop" });
    await win.compact();
    expect(win.render().split("\n")[0]).toBe("span_1-span_20: 20 pruned (20 toolResult); recall span_1-span_20 to list them");
    const points = win.compactionPoints;
    clock.advance(4 * HOUR + 60_000); // past the horizon (holds lapse) and the copies' retention
    const line = win.render().split("\n")[0]!;
    // No decision in between: the lapse itself is a compaction point, because a shown line changed.
    expect(win.compactionPoints).toBe(points + 1);
    expect(line).toBe("span_1-span_20: 20 copies may be lost; recall span_1-span_20 to list them");
    expect(parseRuntimeLine(line, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "fold", pruned: 0, mayBeLost: 20, unrecoverable: 0 });
    await log.rotate();
    // A window resumed now says no copy can be recalled either (the store rotated them: each is lost), folded
    // as the live window had them: one line, no larger.
    const resumed = await ContextWindow.resume<Kind>(options);
    expect(resumed.render().split("\n")[0]).toBe("span_1-span_20: 20 unrecoverable; recall span_1-span_20 to list them");
    expect(resumed.entries()).toHaveLength(win.entries().length);
    const listed = await resumed.recall("span_1-span_20");
    const lines = listed.status === "expanded" ? listed.text.split("\n") : [];
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => /: [0-9]+ unrecoverable;|copy lost/.test(l))).toBe(true);
  });

  it("a store that keeps copies for less than the session (no holds): index lines still fold, the fold says until when and what may be lost", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR, holds: false });
    const options = open(log, clock, { limits: { maxLengthMs: 24 * HOUR, compaction: "immediate" } });
    const win = new ContextWindow<Kind>(options);
    const index: number[] = [];
    for (let i = 1; i <= 400; i++) {
      await win.append({ kind: "toolResult", text: output(i, 40) });
      if (i > 4) await win.applyDirective({ op: "prune", span_id: `span_${i - 4}`, mode: "drop" });
      if (i % 100 === 0) index.push(win.entries().filter((e) => e.state !== "live").length);
      clock.advance(60_000);
    }
    // Bounded: at most a fold and a run shorter than a fold's minimum, however long the session.
    for (const n of index) expect(n).toBeLessThan(2 * 16);
    const first = win.render().split("\n")[0]!;
    expect(first).toMatch(/^span_1-span_\d+: \d+ pruned \(\d+ toolResult\) until \d\d:\d\dZ, \d+ copies may be lost; recall /);
    expect(parseRuntimeLine(first, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "fold" });
    // A resumed window folds them as the live one does.
    const resumed = await ContextWindow.resume<Kind>(options);
    expect(resumed.entries().length).toBeLessThanOrEqual(win.entries().length);
    expect(resumed.tokens()).toBeLessThanOrEqual(win.tokens());
  });

  it("past the session's horizon and the copies' retention, a resumed window is folded as the live one", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock, retentionMs: HOUR });
    const options = open(log, clock, { limits: { maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 1_000_000, atTokens: null } } });
    const win = new ContextWindow<Kind>(options);
    for (let i = 1; i <= 21; i++) await win.append({ kind: "toolResult", text: output(i, 100) });
    for (let i = 1; i <= 20; i++) await win.applyDirective({ op: "prune", span_id: `span_${i}`, mode: "drop" });
    await win.compact();
    clock.advance(9 * HOUR);
    await win.compact();
    const resumed = await ContextWindow.resume<Kind>(options);
    expect(resumed.render().split("\n")[0]).toBe(win.render().split("\n")[0]);
    expect(resumed.entries()).toHaveLength(win.entries().length);
    expect(resumed.tokens()).toBeLessThanOrEqual(win.tokens());
  });

  it("after end() a fold line says until when its members are kept, then that their copies may be lost", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock, retentionMs: 2 * HOUR });
    const win = new ContextWindow<Kind>(open(log, clock, { limits: { compaction: { minFreedTokens: 1_000_000, atTokens: null } } }));
    for (let i = 1; i <= 20; i++) await win.append({ kind: "toolResult", text: output(i, 100) });
    await win.append({ kind: "toolResult", text: "tail" });
    for (let i = 1; i <= 20; i++) await win.applyDirective({ op: "prune", span_id: `span_${i}`, mode: "drop" });
    await win.compact();
    clock.advance(HOUR);
    await win.end(); // the holds are released: each copy is kept by its retention alone, until 11:00Z
    expect(win.render().split("\n")[0]).toBe("span_1-span_20: 20 pruned (20 toolResult) until 11:00Z; recall span_1-span_20 to list them");
    expect(parseRuntimeLine(win.render().split("\n")[0]!, { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "fold", pruned: 20, until: "11:00Z" });
    clock.advance(HOUR + 60_000);
    await log.rotate();
    expect(win.render().split("\n")[0]).toBe("span_1-span_20: 20 copies may be lost; recall span_1-span_20 to list them");
    const listed = await win.recall("span_1-span_20");
    expect(listed.status === "expanded" && listed.text.split("\n")[0]).toBe("span_1-span_16: 16 copies may be lost; recall span_1-span_16 to list them");
  });

  it("a fold key shown before a restart still lists its lines after it, never 'never in this session'", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const log = new MemoryStore({ name: "log", clock });
    const win = new ContextWindow<Kind>(open(log, clock, { limits: { maxLengthMs: 8 * HOUR, compaction: { minFreedTokens: 1_024, atTokens: null } } }));
    for (let i = 1; i <= 60; i++) {
      await win.append({ kind: "toolResult", text: output(i, 100) });
      if (i > 4) await win.applyDirective({ op: "prune", span_id: `span_${i - 4}`, mode: "drop" });
      win.render();
    }
    const keys = win.entries().filter((e) => e.state === "fold").map((e) => e.spanId);
    expect(keys.length).toBeGreaterThan(0);
    const resumed = await ContextWindow.resume<Kind>(open(log, clock));
    for (const key of keys) expect(await resumed.applyDirective({ op: "recall", span_id: key })).toMatchObject({ status: "expanded", spanId: key });
    expect(await resumed.applyDirective({ op: "recall", span_id: "span_70-span_80" })).toMatchObject({ status: "unknown" });
    // A run name no fold has (here over live spans that exist) is no fold, never "never in this session".
    const none = await resumed.applyDirective({ op: "recall", span_id: "span_57-span_60" });
    expect(none).toMatchObject({ status: "unknown", line: "span_57-span_60: no folded run by that name now; recall each span by its own id (span_57, …)" });
    expect(parseRuntimeLine(none.op === "recall" && none.status === "unknown" ? none.line : "", { tombstone: DEFAULT_TOMBSTONE })).not.toBeNull();
  });

  it("token counts near 10k print as the grammar reads them; a recalled query never starts a line with whitespace", async () => {
    const { tokensShort, adviceLine } = await import("../../src/window/compaction.js");
    for (const n of [9_949, 9_950, 9_960, 9_999, 10_000, 10_499]) {
      expect(parseRuntimeLine(adviceLine(n, 36_000), { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "advice" });
      expect(parseRuntimeLine(adviceLine(1_000, n), { tombstone: DEFAULT_TOMBSTONE })).toMatchObject({ line: "advice" });
    }
    expect(tokensShort(9_960)).toBe("10k");
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 9, 0));
    const win = new ContextWindow<Kind>(open(new MemoryStore({ name: "log", clock }), clock));
    const answer = await win.recall("  span_1 pruned, recall #1");
    if (answer.status !== "unknown") throw new Error(`expected unknown, got ${answer.status}`);
    expect(answer.line).toMatch(/^\\u0020\\u0020span_1/);
    expect(parseRuntimeLine(answer.line, { tombstone: DEFAULT_TOMBSTONE })).not.toBeNull();
  });
});
