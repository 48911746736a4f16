/**
 * A compaction block or item is sent back with every later request, so one the API would not take back is
 * refused when it arrives — not recorded, not sent back, nothing pruned for it — instead of being accepted and
 * making every later request fail. What the API takes back is read off the SDKs' own types: the field lists
 * the readers check are held to `BetaCompactionBlockParam` and `ResponseCompactionItem` here, at compile time.
 */
import type {
  BetaCompactionBlockParam, BetaRequestToolAdditionBlock, BetaRequestToolRemovalBlock, BetaResponseToolAdditionBlock, BetaResponseToolRemovalBlock,
} from "@anthropic-ai/sdk/resources/beta/messages/messages";
import type { ResponseCompactionItem, ResponseCompactionItemParam, ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, toAnthropicBeta, toOpenAIResponses, Transcript } from "../../src/index.js";
import { COMPACTION_BLOCK_FIELDS, TOOL_CHANGE_FIELDS, TOOL_CHANGE_TYPES } from "../../src/providers/anthropic/anthropic-provider.js";
import { COMPACTION_ITEM_PARAM_FIELDS } from "../../src/providers/openai/openai-messages.js";
import { COMPACTION_ITEM_FIELDS } from "../../src/providers/openai/openai-provider.js";

function open() {
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  const win = new ContextWindow({
    session: "blocks", clock, stores: { log: new MemoryStore({ name: "log", clock }) },
    kinds: { turn: { store: "log", modes: ["drop"], lossy: "forbid" } },
    limits: { compaction: "immediate", providerCompaction: "allow" },
  });
  const t = new Transcript(win, { user: "turn", assistant: "turn", toolCall: "turn", toolResult: "turn" });
  return { win, t };
}

describe("the fields the readers check are the SDKs'", () => {
  it("Anthropic: BetaCompactionBlockParam's fields and tool change types", () => {
    const fields = { type: true, content: true, encrypted_content: true, signature: true, tool_changes: true, cache_control: true } satisfies Record<keyof BetaCompactionBlockParam, true>;
    expect([...COMPACTION_BLOCK_FIELDS].sort()).toEqual(Object.keys(fields).sort());
    const types = ["tool_addition", "tool_removal"] satisfies Array<NonNullable<BetaCompactionBlockParam["tool_changes"]>[number]["type"]>;
    expect([...TOOL_CHANGE_TYPES].sort()).toEqual([...types].sort());
    // A response's tool change has these fields, each one a request's tool change takes back.
    type ResponseField = keyof BetaResponseToolAdditionBlock | keyof BetaResponseToolRemovalBlock;
    const entry = { type: true, tool: true } satisfies Record<ResponseField, true> & Partial<Record<keyof BetaRequestToolAdditionBlock & keyof BetaRequestToolRemovalBlock, true>>;
    expect([...TOOL_CHANGE_FIELDS].sort()).toEqual(Object.keys(entry).sort());
  });

  it("OpenAI: ResponseCompactionItem's fields", () => {
    const fields = { id: true, encrypted_content: true, type: true, created_by: true } satisfies Record<keyof ResponseCompactionItem, true>;
    expect([...COMPACTION_ITEM_FIELDS].sort()).toEqual(Object.keys(fields).sort());
  });

  it("OpenAI: what is sent back is ResponseCompactionItemParam's fields, which do not include created_by", () => {
    const fields = { type: true, encrypted_content: true, id: true } satisfies Record<keyof ResponseCompactionItemParam, true>;
    expect([...COMPACTION_ITEM_PARAM_FIELDS].sort()).toEqual(Object.keys(fields).sort());
    expect(COMPACTION_ITEM_PARAM_FIELDS.has("created_by")).toBe(false);
  });
});

describe("an OpenAI item is sent back as the input takes it", () => {
  it("created_by (the output item's, not the param's) is left out; every other field as it came, in its order", async () => {
    const { win, t } = open();
    await t.user("the only statement of the requirement: ship on friday");
    const item = { id: "cmp_1", type: "compaction", created_by: "server", encrypted_content: "gAAAAENC" };
    await t.appendOpenAIResponse({ output: [item as never] });
    expect(t.compactions[0]).toMatchObject({ status: "compacted" });
    const input: ResponseInputItem[] = toOpenAIResponses(win);
    const sent = input.find((i) => i.type === "compaction")!;
    expect(JSON.stringify(sent)).toBe('{"id":"cmp_1","type":"compaction","encrypted_content":"gAAAAENC"}');
  });
});

describe("a block the API would not take back is refused, not sent back", () => {
  const good = { type: "compaction", content: "the summary", encrypted_content: "e", signature: "sig" };
  it.each([
    ["an empty summary", { ...good, content: "" }, /an empty summary/],
    ["encrypted_content of another type", { ...good, encrypted_content: 42 }, /encrypted_content is not a string/],
    ["a signature of another type", { ...good, signature: { x: 1 } }, /signature is not a string/],
    ["a field the type does not declare", { ...good, surprise: true }, /a field the API does not take: "surprise"/],
    ["tool_changes that are not tool changes", { ...good, tool_changes: [{ type: "tool_rename", tool: {} }] }, /not a tool addition or removal/],
    ["a tool change whose tool has no type", { ...good, tool_changes: [{ type: "tool_addition", tool: { tool_name: "grep" } }] }, /tool has no type/],
    ["a tool change with a field the type does not declare", { ...good, tool_changes: [{ type: "tool_removal", tool: { type: "tool_reference", tool_name: "grep" }, cache_control: { type: "ephemeral" } }] }, /a tool change with a field the API does not take: "cache_control"/],
  ])("Anthropic, %s", async (_, block, why) => {
    const { win, t } = open();
    await t.user("the only statement of the requirement: ship on friday");
    await t.appendAnthropic({ content: [block as never] });
    expect(t.compactions[0]).toMatchObject({ status: "refused", spanId: null });
    expect(t.compactions[0]!.message).toMatch(why);
    expect(JSON.stringify(toAnthropicBeta(win))).not.toContain('"type":"compaction"');
    expect(win.entries().every((e) => e.state === "live")).toBe(true);
    expect((await win.auditLog()).find((r) => r.op === "compact")).toMatchObject({ status: "unchanged" });
  });

  it("Anthropic: a well-formed block with its tool changes is recorded and sent back as it came", async () => {
    const { win, t } = open();
    await t.user("the only statement of the requirement: ship on friday");
    const block = { ...good, tool_changes: [{ type: "tool_addition", tool: { type: "tool_reference", tool_name: "grep" } }] };
    await t.appendAnthropic({ content: [block as never] });
    expect(t.compactions[0]).toMatchObject({ status: "compacted" });
    expect(JSON.stringify(toAnthropicBeta(win))).toContain(JSON.stringify(block));
  });

  it.each([
    ["an id of another type", { type: "compaction", id: 5, encrypted_content: "ENC" }, /id is not a string/],
    ["a field the item does not have", { type: "compaction", id: "cmp_1", encrypted_content: "ENC", summary: "x" }, /a field the API does not return: "summary"/],
  ])("OpenAI, %s", async (_, item, why) => {
    const { win, t } = open();
    await t.user("the only statement of the requirement: ship on friday");
    await t.appendOpenAIResponse({ output: [item as never] });
    expect(t.compactions[0]).toMatchObject({ status: "refused" });
    expect(t.compactions[0]!.message).toMatch(why);
    expect(JSON.stringify(toOpenAIResponses(win))).not.toContain('"type":"compaction"');
  });
});

describe("a response appended again is appended once (its id)", () => {
  it("Anthropic: the same Message twice records one compaction and its text once", async () => {
    const { win, t } = open();
    await t.user("the only statement of the requirement: ship on friday");
    const message = { id: "msg_01", content: [{ type: "compaction", content: "the summary", encrypted_content: "e", signature: "s" }, { type: "text", text: "noted" }] };
    await t.appendAnthropic(message as never);
    const before = win.render();
    await t.appendAnthropic(message as never);
    expect(t.compactions).toHaveLength(1);
    expect(win.render()).toBe(before);
    // Another message (another id) with the same content is a response of its own.
    await t.appendAnthropic({ ...message, id: "msg_02", content: [{ type: "text", text: "noted" }] } as never);
    expect(win.render().match(/noted/g)).toHaveLength(2);
  });

  it("OpenAI: the same Response twice records one compaction", async () => {
    const { win, t } = open();
    await t.user("the only statement of the requirement: ship on friday");
    const response = { id: "resp_01", output: [{ type: "compaction", id: "cmp_1", encrypted_content: "ENC" }] };
    await t.appendOpenAIResponse(response as never);
    await t.appendOpenAIResponse(response as never);
    expect(t.compactions).toHaveLength(1);
    expect(JSON.stringify(toOpenAIResponses(win)).match(/"type":"compaction"/g)).toHaveLength(1);
  });
});

describe("a response's compaction is recorded before the rest of the response", () => {
  it("a block after a tool_use of the same response: the call and its result stay live after the summary", async () => {
    const { win, t } = open();
    await t.user("the only statement of the requirement: ship on friday");
    const calls = await t.appendAnthropic({
      content: [{ type: "tool_use", id: "toolu_1", name: "readLog", input: {} }, { type: "compaction", content: "the summary", encrypted_content: "e" }],
    } as never);
    expect(t.compactions[0]).toMatchObject({ status: "compacted", members: ["span_1"] });
    await t.handleToolCalls(calls, () => "LOG BYTES");
    const text = win.render();
    expect(text).toContain("LOG BYTES");
    expect(win.entries().slice(1).map((e) => e.state)).toEqual(["live", "live"]);
  });
});
