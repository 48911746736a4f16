/**
 * A provider's compaction block the window cannot send back is refused, and every refusal is audited: one that
 * will not serialise (100,000 levels deep), one over `MAX_BLOCK_CHARS`, one that is not an object, and one
 * holding text that is not well-formed outside its summary (OpenAI's `encrypted_content` with a lone surrogate:
 * the API could not read it back) — as the "forbidden" and "covers nothing" refusals always were. A summary
 * with a lone surrogate is the provider's prose: the window shows and renders it well-formed, and sends the
 * block back byte for byte.
 *
 * Seen failing (red team p11, p12): the first three refusals left the audit log unchanged; the OpenAI item was
 * recorded and sent back with its lone surrogate; the summary reached every renderer and `render()` as it came.
 */
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, toAISDK, toAnthropic, toAnthropicBeta, toOpenAI, toOpenAIResponses, Transcript } from "../../src/index.js";
import { MAX_BLOCK_CHARS } from "../../src/window/provider-compaction.js";
import { wellFormedProblems } from "../providers/rules.js";

function setup(log = new MemoryStore({ name: "log", clock: new ManualClock(0) })) {
  const options = {
    session: "s", clock: new ManualClock(0), stores: { log },
    kinds: {
      turn: { store: "log", modes: ["drop", "summarize"], lossy: "forbid" },
      call: { store: "log", modes: ["drop"], lossy: "with-flag" },
      result: { store: "log", modes: ["drop", "summarize", "compress"], lossy: "with-flag" },
    },
    limits: { compaction: "immediate", providerCompaction: "allow" },
  } as const;
  const win = new ContextWindow(options);
  const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "call", toolResult: "result" });
  return { win, t, log, options };
}

const deep = (n: number) => {
  let o: Record<string, unknown> = { type: "compaction", content: "s" };
  for (let i = 0; i < n; i++) o = { type: "compaction", content: "s", nested: o };
  return o;
};

describe("a compaction block that cannot be sent back", () => {
  const cases: Array<[string, "anthropic" | "openai-responses", unknown, string]> = [
    ["100,000 levels deep", "anthropic", deep(100_000), "not JSON"],
    ["over MAX_BLOCK_CHARS", "anthropic", { type: "compaction", content: "x".repeat(MAX_BLOCK_CHARS + 1) }, "too large"],
    ["not an object", "anthropic", "a compaction", "not an object"],
    ["an OpenAI item whose encrypted_content has a lone surrogate", "openai-responses", { type: "compaction", id: "cmp_1", encrypted_content: "gA\udc00AA" }, "not well-formed"],
    ["a key with a lone surrogate", "anthropic", { type: "compaction", content: "s", ["x\ud800"]: 1 }, "not well-formed"],
  ];
  for (const [label, provider, block, refused] of cases) {
    it(`is refused and audited, the window unchanged: ${label}`, async () => {
      const { win, t } = setup();
      await t.user("first question");
      await t.assistant("an answer");
      const before = JSON.stringify(win.entries());
      const audit = (await win.auditLog()).length;
      const summary = provider === "anthropic" && typeof block === "object" && block !== null && typeof (block as { content?: unknown }).content === "string" ? (block as { content: string }).content : null;
      const out = await win.providerCompacted({ provider, block, summary, failed: false });
      expect(out).toMatchObject({ status: "refused", spanId: null, pruned: [] });
      const records = (await win.auditLog()).slice(audit);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ op: "compact", status: "unchanged" });
      expect(JSON.parse(records[0]!.directive!)).toEqual({ op: "provider_compaction", provider, refused });
      expect(JSON.stringify(win.entries())).toBe(before);
      // Said to the model, and nothing of it is sent back.
      expect(win.notices().at(-1)).toMatch(/^provider compaction not recorded: the compaction block /);
      expect(JSON.stringify(toAnthropicBeta(win))).not.toContain('"type":"compaction"');
      expect(JSON.stringify(toOpenAIResponses(win))).not.toContain('"type":"compaction"');
    });
  }

  it("a failed compaction is still failed (audited once) whatever its block holds besides", async () => {
    const { win, t } = setup();
    await t.user("first question");
    const audit = (await win.auditLog()).length;
    const out = await win.providerCompacted({ provider: "openai-responses", block: { type: "compaction", x: "\ud800" }, summary: null, failed: true });
    expect(out.status).toBe("failed");
    expect((await win.auditLog()).slice(audit).map((r) => JSON.parse(r.directive!))).toEqual([{ op: "provider_compaction", provider: "openai-responses", failed: true }]);
  });
});

describe("a compaction summary with a lone surrogate", () => {
  it("is shown and rendered well-formed everywhere but in its block, which is sent back byte for byte, also after a resume", async () => {
    const { win, t, log, options } = setup();
    await t.user("first question");
    await t.assistant("an answer");
    const block = { type: "compaction", content: "summary \ud800 here", encrypted_content: "e" };
    await t.appendAnthropic({ content: [block] } as never);
    expect(t.compactions.at(-1)).toMatchObject({ status: "compacted" });
    for (const w of [win, await ContextWindow.resume({ ...options, stores: { log } })]) {
      const renderings = { toAnthropic, toOpenAI, toOpenAIResponses, toAISDK, render: (x: ContextWindow) => x.render() };
      for (const [name, render] of Object.entries(renderings)) expect(wellFormedProblems(render(w), name)).toEqual([]);
      expect(w.render()).toContain("│ summary \ufffd here");
      const sent = toAnthropicBeta(w).messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => (b as { type?: unknown }).type === "compaction");
      expect(sent.map((b) => JSON.stringify(b))).toEqual([JSON.stringify(block)]);
    }
  });
});

describe("a range summary and a provider's compaction", () => {
  it("a range summary never covers a provider's compaction (by a span under it or by its id): refused, and the block still goes back", async () => {
    const { win, t } = setup();
    await t.user("first question");
    await t.assistant("an answer");
    const compacted = await win.providerCompacted({ provider: "anthropic", block: { type: "compaction", content: "s" }, summary: "s", failed: false });
    expect(compacted).toMatchObject({ status: "compacted" });
    await t.user("second question");
    await t.assistant("answer 2");
    const summaryId = compacted.spanId!;
    const out = await win.applyDirective({ op: "summarize_range", from: "span_1", to: "span_4", digest: "d" });
    expect(out).toMatchObject({ status: "rejected", reason: "unknown-span", message: `span_1 is under ${summaryId}, a provider's compaction, not a position of its own` });
    expect(JSON.stringify(toAnthropicBeta(win))).toContain('"type":"compaction"');
    // Named by its own id, it is a position, but not one a range summary may cover: its block would stop going back.
    const byId = await win.applyDirective({ op: "summarize_range", from: summaryId, to: "span_4", digest: "d" });
    expect(byId).toMatchObject({ status: "rejected", reason: "range", message: `${summaryId} is a provider's compaction; a range summary over it would stop sending its block back` });
    expect(JSON.stringify(toAnthropicBeta(win))).toContain('"type":"compaction"');
  });
});
