/**
 * Provider-side compaction under pruneguard's guarantees, with the real Anthropic and OpenAI SDKs against a
 * local server that compacts as the documented APIs do and checks every request body
 * (`compaction-server.ts`): the request is built only after the window's plan (policy off → refused before
 * anything is sent; `clear_tool_uses` refused; no pause with kept spans refused); the block that comes back is
 * recorded — every span before it pruned through the checks, a kind with no copy that forbids lossy never
 * freed (said again after the block), a lossy one a tombstone — and sent back byte for byte; the model, which
 * reads only what follows the block, finds the line whose id recalls what was compacted and gets the bytes; a
 * restart resumes the same window from the SQLite file, block and all, and the audit chain verifies. OpenAI's
 * automatic compaction and `responses.compact` are held to the same, and a failed item is never sent back.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  anthropicCompaction, anthropicTools, ContextWindow, directiveTools, ManualClock, openAICompaction, openAICompactRequest, openAIResponsesTools,
  ProviderCompactionError, refSpanId, SqliteStore, toAnthropic, toAnthropicBeta, toOpenAIResponses, Transcript, verifyAuditChain,
  type ContextWindowOptions, type ModelToolCall,
} from "../../src/index.js";
import { startCompactionServer, type CompactionServer } from "./compaction-server.js";
import type { ModelTurn } from "./fake-server.js";

const dir = mkdtempSync(join(tmpdir(), "pruneguard-provider-compaction-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KINDS = {
  system: { store: "log", modes: ["drop"], lossy: "forbid" },
  turn: { store: "log", modes: ["drop", "summarize"], lossy: "forbid" },
  toolCall: { store: "log", modes: ["drop"], lossy: "forbid" },
  toolResult: { store: "log", modes: ["drop", "summarize"], lossy: "forbid" },
  /** No copy, lossy forbidden: a provider's compaction must never free it. */
  secret: { store: null, modes: ["drop"], lossy: "forbid" },
  /** No copy, lossy allowed: a provider's compaction leaves a tombstone. */
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;
type Kind = keyof typeof KINDS;

const LOG = (deploy: number) => [
  `2026-11-13T09:02:11Z deploy ${deploy} started`,
  ...Array.from({ length: 12 }, (_, i) => `2026-11-13T09:02:${String(12 + i).padStart(2, "0")}Z health check ${i} ok`),
  `2026-11-13T09:02:44Z upstream answered 502, X-Request-Id: req_${deploy}_7f3a9c2e41`,
].join("\n");

let n = 0;
function options(path: string, session: string, providerCompaction: "allow" | "forbid" = "allow"): ContextWindowOptions<Kind> {
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  return {
    session, clock, kinds: KINDS, stores: { log: new SqliteStore({ name: "log", path, clock }) },
    limits: { compaction: "immediate", lossyBudget: 3, providerCompaction },
  };
}

async function setup(providerCompaction: "allow" | "forbid" = "allow") {
  const path = join(dir, `s${++n}.db`);
  const session = `pc-${n}`;
  const win = new ContextWindow(options(path, session, providerCompaction));
  const t = new Transcript(win, { system: "system", user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
  await t.system("You are the deploy assistant.");
  const secret = await win.append({ kind: "secret", text: "on-call rota: alice until 12:00, then bob", message: { role: "user" } });
  const scratch = await win.append({ kind: "scratch", text: "scratch: maybe the cache?", message: { role: "assistant" } });
  await t.user("Why did deploys 8812 and 8813 fail? I need both request ids.");
  return { path, session, win, t, secret: refSpanId(secret), scratch: refSpanId(scratch) };
}

/**
 * `setup` without the secret or system text: a window OpenAI's automatic compaction may cover whole (its builder
 * refuses while the policy keeps any span, as it keeps the secret, and while the window holds system text, which
 * the Responses input carries as messages the compaction covers; such a session passes it as `instructions`).
 */
async function setupFreeable() {
  const path = join(dir, `s${++n}.db`);
  const session = `pc-${n}`;
  const win = new ContextWindow(options(path, session));
  const t = new Transcript(win, { system: "system", user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
  const scratch = await win.append({ kind: "scratch", text: "scratch: maybe the cache?", message: { role: "assistant" } });
  await t.user("Why did deploys 8812 and 8813 fail? I need both request ids.");
  return { path, session, win, t, scratch: refSpanId(scratch) };
}

/** Every live span's bytes now, by id: what a compaction that comes next replaces. */
function liveTexts(win: ContextWindow<Kind>): Map<string, string> {
  return new Map(win.refs().map((r) => [refSpanId(r), win.span(r)!.text]));
}

/**
 * A window with no spans yet, on a fresh file, whose policy also has `memo` (summarize only: a provider's
 * compaction, which drops, keeps it); `opts` makes the same window's options again, for a resume.
 */
function bare() {
  const path = join(dir, `s${++n}.db`);
  const session = `pc-${n}`;
  const opts = () => ({ ...options(path, session), kinds: { ...KINDS, memo: { store: "log", modes: ["summarize"], lossy: "forbid" } } as const });
  const win = new ContextWindow(opts());
  const t = new Transcript(win, { system: "system", user: "turn", assistant: "turn", toolCall: "toolCall", toolResult: "toolResult" });
  return { path, opts, win, t };
}

const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });

/**
 * The model: reads two logs, then (after the compaction, reading only what follows the block) recalls what
 * the compaction covered, recalls the first log by the handle it lists, and answers with both request ids.
 */
function model(visible: string, turn: number): ModelTurn {
  if (turn <= 1) return { calls: [call("readDeployLog", { deploy: 8812 + turn })] };
  const ids = [...new Set([...visible.matchAll(/req_\d+_[a-z0-9]+/g)].map((m) => m[0]))].sort();
  if (ids.length >= 2) return { calls: [], text: `request ids: ${ids.join(", ")}` };
  // A summary (the provider's, or one inside it) not expanded yet: recall it to list what it covered.
  const summaries = [...visible.matchAll(/(span_\d+) summary of span_\d+–span_\d+ \(\d+\), recall \1/g)].map((m) => m[1]!);
  const expanded = new Set([...visible.matchAll(/(span_\d+) expanded:/g)].map((m) => m[1]!));
  const next = summaries.find((s) => !expanded.has(s));
  if (next !== undefined) return { calls: [call("recall", { span_id: next })] };
  // The logs' index lines (a tool result's hint is its tool's name): recall each by its handle.
  const recalled = new Set([...visible.matchAll(/span_\d+ recalled \((#\d+)\)/g)].map((m) => m[1]!));
  const handle = [...visible.matchAll(/span_\d+ pruned, recall (#\d+): readDeployLog(?=\\n|")/g)].map((m) => m[1]!).find((h) => !recalled.has(h));
  if (handle !== undefined) return { calls: [call("recall", { span_id: handle })] };
  return { calls: [], text: summaries.length === 0 ? "I cannot find the logs." : "nothing left to recall" };
}

const runOwnTool = (c: ModelToolCall) => (c.name === "readDeployLog" ? LOG(Number((c.arguments as { deploy: number }).deploy ?? JSON.parse(String(c.arguments)).deploy)) : { text: "no such tool", isError: true });
const readLogSchema = { type: "object" as const, properties: { deploy: { type: "number" } }, required: ["deploy"], additionalProperties: false as const };
const openAITools = openAIResponsesTools(directiveTools(), { strict: true, agentTools: [{ type: "function" as const, name: "readDeployLog", description: "Reads a deploy's log.", parameters: readLogSchema, strict: true }] });
/** OpenAI's automatic compaction threshold (characters stand in for tokens): passed once both logs are read. */
const THRESHOLD = 1_500;

describe("provider-side compaction, decided by pruneguard", () => {
  let server: CompactionServer;
  afterEach(async () => {
    await server?.close();
  });

  it("Anthropic compact_20260112: checked, recorded, sent back byte for byte, recalled, and the same after a restart", async () => {
    server = await startCompactionServer(model);
    const { path, session, win, t, secret, scratch } = await setup();
    const client = new Anthropic({ apiKey: "test", baseURL: server.url, maxRetries: 0 });
    const tools = anthropicTools(directiveTools(), { strict: true, agentTools: [{ name: "readDeployLog", description: "Reads a deploy's log.", input_schema: readLogSchema }] });
    let answer: string | undefined;
    const stops: string[] = [];
    for (let turn = 0; turn < 12 && answer === undefined; turn++) {
      // Low until the first compaction, so the test sees one; then the API's default.
      const cm = await anthropicCompaction(win, { triggerTokens: stops.includes("compaction") ? 150_000 : 2_000 });
      const message = await client.beta.messages.create({ model: "claude-test", max_tokens: 1024, ...toAnthropicBeta(win), ...cm, tools });
      stops.push(String(message.stop_reason));
      const calls = await t.appendAnthropic(message);
      if (message.stop_reason === "compaction") continue;
      if (calls.length === 0) answer = message.content.find((b) => b.type === "text")?.text;
      else await t.handleToolCalls(calls, runOwnTool);
    }
    expect(server.problems).toEqual([]);
    expect(stops).toContain("compaction");
    expect(answer).toBe("request ids: req_8812_7f3a9c2e41, req_8813_7f3a9c2e41");

    // What the compaction did: both logs and their calls pruned with copies held, the scratch note lost as
    // allowed, the secret never freed (said again after the block).
    const outcome = t.compactions[0]!;
    expect(outcome.status).toBe("compacted");
    expect(outcome.lossy).toEqual([scratch]);
    expect(outcome.kept.map((k) => k.spanId)).toEqual([secret]);
    expect(outcome.pruned.length).toBeGreaterThanOrEqual(5);
    expect(win.span(secret)?.text).toBe("on-call rota: alice until 12:00, then bob");
    // Every request after the compaction carried the block exactly as issued, with the secret after it.
    const afterBlock = server.raw.slice(stops.indexOf("compaction") + 1);
    expect(afterBlock.length).toBeGreaterThan(0);
    for (const body of afterBlock) {
      expect(body).toContain(server.issued[0]!);
      expect(body.indexOf("on-call rota")).toBeGreaterThan(body.indexOf(server.issued[0]!));
    }
    // Every pruned span recalls from its store, both logs among them byte for byte.
    const texts = new Map<string, string>();
    for (const id of outcome.pruned) {
      const r = await win.recall(id);
      expect(r, id).toMatchObject({ status: "found", source: "store" });
      if (r.status === "found") texts.set(id, r.text);
    }
    expect([...texts.values()]).toEqual(expect.arrayContaining([LOG(8812), LOG(8813)]));
    expect((await win.recall(scratch)).status).toBe("pruned-unrecoverable");
    const before = toAnthropicBeta(win);
    await win.end();

    // A restart: the same window from the SQLite file, the block and its line sent back exactly as before (the
    // secret, whose bytes only the first process had, is now a lost line after them: never silence).
    const again = await ContextWindow.resume(options(path, session));
    const after = toAnthropicBeta(again);
    expect(JSON.stringify(after.messages.slice(0, 2))).toBe(JSON.stringify(before.messages.slice(0, 2)));
    expect(JSON.stringify(after.messages[1]!.content[0])).toBe(server.issued[0]);
    expect(JSON.stringify(after)).toMatch(/span_2 lost in a restart, contents unknown/);
    for (const id of outcome.pruned) {
      const r = await again.recall(id);
      expect(r, id).toMatchObject({ status: "found", source: "store", text: texts.get(id) });
    }
    expect((await again.recall(scratch)).status).toBe("pruned-unrecoverable");
    const log = (await again.search("req_8812_7f3a9c2e41"));
    expect(log.op === "search" && log.status).toBe("match");
    const store = new SqliteStore({ name: "log", path });
    expect(verifyAuditChain(await store.auditLog(session))).toBeNull();
    await store.close();
    await again.end();
  });

  it("the GA renderer sends the compaction's line and summary as text, never the block", async () => {
    server = await startCompactionServer(model);
    const { win, t } = await setup();
    await t.appendAnthropic({ content: [{ type: "compaction", content: "summary: two logs read", encrypted_content: "e", signature: "s" } as never, { type: "text", text: "ok" }] });
    const ga = JSON.stringify(toAnthropic(win));
    expect(ga).not.toContain("\"type\":\"compaction\"");
    expect(ga).toMatch(/span_\d+ summary of span_\d+–span_\d+ \(\d+\), recall span_\d+\\n│ summary: two logs read/);
    await win.end();
  });

  it("a second compaction covers the first: only the latest block is sent, the first stays recallable, also after a restart", async () => {
    server = await startCompactionServer(model);
    const { path, session, win, t } = await setup();
    const block = (k: number) => ({ type: "compaction", content: `summary ${k}`, encrypted_content: `enc${k}`, signature: `sig${k}`, tool_changes: [] });
    await t.appendAnthropic({ content: [block(1) as never, { type: "text", text: "first answer" }] });
    const first = t.compactions[0]!;
    await t.user("and now?");
    await t.appendAnthropic({ content: [block(2) as never, { type: "text", text: "second answer" }] });
    const second = t.compactions[1]!;
    expect(second.members).toContain(first.spanId);
    const sent = JSON.stringify(toAnthropicBeta(win));
    expect(sent).toContain(JSON.stringify(block(2)));
    expect(sent).not.toContain("enc1");
    const expanded = await win.recall(second.spanId!);
    expect(expanded.status === "expanded" && expanded.text).toContain(`${first.spanId} summary of`);
    await win.end();
    const again = await ContextWindow.resume(options(path, session));
    expect(JSON.stringify(toAnthropicBeta(again).messages.slice(0, 2))).toBe(JSON.stringify(JSON.parse(sent).messages.slice(0, 2)));
    for (const id of [...first.pruned, ...second.pruned]) expect((await again.recall(id)).status, id).toBe("found");
    await again.end();
  });

  it("a span the compaction kept and the model pruned after it stays after the block when the session resumes", async () => {
    server = await startCompactionServer(model);
    // A kind the compaction cannot drop (summarize only): kept, said again after the block, prunable later.
    const { opts, win, t } = bare();
    await t.system("You are the deploy assistant.");
    const memo = refSpanId(await win.append({ kind: "memo", text: "memo: deploy 8812 owned by the payments team", message: { role: "user" } }));
    await t.user("Why did deploy 8812 fail?");
    await t.appendAnthropic({ content: [{ type: "compaction", content: "summary 1", encrypted_content: "enc1", signature: "sig1" } as never, { type: "text", text: "ok" }] });
    const outcome = t.compactions[0]!;
    expect(outcome.kept.map((k) => k.spanId)).toEqual([memo]);
    const members = outcome.members.length;
    expect((await win.applyDirective({ op: "prune", span_id: memo, mode: "summarize", digest: "memo: payments owns 8812" })).status).toBe("reversible");
    await t.user("and now?");
    const before = JSON.stringify(toAnthropicBeta(win));
    expect(before).toMatch(new RegExp(`summary of span_\\d+–span_\\d+ \\(${members}\\)`));
    await win.end();
    const again = await ContextWindow.resume(opts());
    // Drawn as the window drew it: the compaction's members unchanged, the memo's line after the block.
    expect(JSON.stringify(toAnthropicBeta(again))).toBe(before);
    expect((await again.recall(memo)).status).toBe("found");
    await again.end();
  });

  it("a compaction that covers no span pruneguard may free is refused whole: no crash, nothing sent back, the window and a resume work", async () => {
    server = await startCompactionServer(model);
    const block = { type: "compaction", content: "s", encrypted_content: "e", signature: "s" };
    // 1. Known before anything is recorded: the only span is one the policy keeps (summarize only).
    {
      const { opts, win, t } = bare();
      await win.append({ kind: "memo", text: "memo", message: { role: "user" } });
      await t.appendAnthropic({ content: [block as never] });
      expect(t.compactions[0]).toMatchObject({ status: "refused", spanId: null });
      expect(t.compactions[0]!.message).toMatch(/covers no span pruneguard may free/);
      expect(JSON.stringify(toAnthropicBeta(win))).not.toContain('"type":"compaction"');
      expect(JSON.stringify(toAnthropicBeta(win))).toContain("memo");
      expect((await win.auditLog()).at(-1)).toMatchObject({ op: "compact", status: "unchanged" });
      await win.compact();
      await win.end();
      const again = await ContextWindow.resume(opts());
      expect(JSON.stringify(toAnthropicBeta(again))).not.toContain('"type":"compaction"');
      await again.end();
    }
    // 2. Known only after the checks: the one span it covers has lost its copy behind the runtime's back.
    {
      const { path, opts, win, t } = bare();
      await t.user("Why did deploy 8812 fail?");
      const db = new DatabaseSync(path);
      db.exec("DELETE FROM pruneguard_records");
      db.close();
      await t.appendAnthropic({ content: [block as never] });
      const outcome = t.compactions[0]!;
      expect(outcome.status).toBe("refused");
      expect(outcome.kept.length).toBeGreaterThan(0);
      expect(JSON.stringify(toAnthropicBeta(win))).not.toContain('"type":"compaction"');
      await win.compact();
      await win.end();
      const again = await ContextWindow.resume(opts());
      expect(JSON.stringify(toAnthropicBeta(again))).not.toContain('"type":"compaction"');
      await again.end();
    }
  });

  it("a compaction refused after the checks is not drawn by a resume, also once a span before it was pruned later", async () => {
    server = await startCompactionServer(model);
    const { path, opts, win, t } = bare();
    const memo = refSpanId(await win.append({ kind: "memo", text: "memo: deploy 8812 owned by payments", message: { role: "user" } }));
    await t.user("Why did deploy 8812 fail?");
    const db = new DatabaseSync(path);
    db.exec("DELETE FROM pruneguard_records WHERE span_id <> 'span_1'"); // the turn's copy lost: its prune is refused
    db.close();
    await t.appendAnthropic({ content: [{ type: "compaction", content: "s", encrypted_content: "e", signature: "s" } as never] });
    expect(t.compactions[0]).toMatchObject({ status: "refused" });
    expect((await win.applyDirective({ op: "prune", span_id: memo, mode: "summarize", digest: "payments owns 8812" })).status).toBe("reversible");
    await t.user("and now?");
    const before = JSON.stringify(toAnthropicBeta(win));
    expect(before).not.toContain('"type":"compaction"');
    await win.end();
    const again = await ContextWindow.resume(opts());
    // No block and no summary of it; the memo's line as it was (span_2, whose copy was deleted, is now lost).
    const after = JSON.stringify(toAnthropicBeta(again));
    expect(after).not.toContain('"type":"compaction"');
    expect(after).not.toMatch(/summary of span_/);
    expect(after).toContain("span_1 summary, recall #1");
    await again.end();
  });

  it("a compaction the policy forbids, built around pruneguard's builders, is not recorded: nothing pruned, no tombstone, nothing sent back", async () => {
    server = await startCompactionServer(model);
    const { win, t, scratch } = await setup("forbid");
    await t.appendAnthropic({ content: [{ type: "compaction", content: "s", encrypted_content: "e", signature: "s" } as never, { type: "text", text: "ok" }] });
    const outcome = t.compactions[0]!;
    expect(outcome).toMatchObject({ status: "refused", spanId: null, pruned: [], lossy: [] });
    expect(outcome.message).toMatch(/the policy forbids provider compaction/);
    // The scratch note (no copy, lossy with-flag) would have been a tombstone: it is live, and nothing was audited as lost.
    expect(win.span(scratch)?.text).toBe("scratch: maybe the cache?");
    expect((await win.auditLog()).some((r) => r.status === "lossy")).toBe(false);
    expect((await win.auditLog()).at(-1)).toMatchObject({ op: "compact", status: "unchanged" });
    expect((await win.auditLog()).at(-1)?.directive).toContain('"forbidden":true');
    expect(JSON.stringify(toAnthropicBeta(win))).not.toContain('"type":"compaction"');
    expect((await win.auditLog()).some((r) => r.op === "prune" && r.status === "reversible")).toBe(false);
    await win.end();
  });

  it("a failed compaction (content null) changes nothing and is not sent back", async () => {
    server = await startCompactionServer(model, { failFirst: true });
    const { win, t } = await setup();
    const before = JSON.stringify(toAnthropicBeta(win));
    await t.appendAnthropic({ content: [{ type: "compaction", content: null, encrypted_content: null } as never] });
    expect(t.compactions[0]!.status).toBe("failed");
    expect(JSON.stringify(toAnthropicBeta(win))).toBe(before);
    const audit = await win.auditLog();
    expect(audit.at(-1)).toMatchObject({ op: "compact", status: "unchanged" });
    await win.end();
  });

  it("a compaction block whose content is neither text nor null (123, {}, []), or that carries cache_control, is no compaction: failed, audited, nothing pruned, not sent back", async () => {
    // The SDK's BetaCompactionBlockParam.content is `string | null`: such a block was recorded as compacted
    // (every earlier span pruned) and sent back, for the API to refuse.
    server = await startCompactionServer(model);
    const given = [123, { text: "x" }, ["s"], true].map((content) => ({ type: "compaction", content }));
    // A response's block never carries cache_control: sent back, it would be one breakpoint too many.
    given.push({ type: "compaction", content: "a summary", cache_control: { type: "ephemeral" } } as never);
    for (const block of given) {
      const { win, t } = await setup();
      const entries = JSON.stringify(win.entries());
      const audited = (await win.auditLog()).length;
      await t.appendAnthropic({ content: [block as never, { type: "text", text: "answer" }] });
      expect(t.compactions.map((c) => c.status)).toEqual(["failed"]);
      expect(JSON.stringify(win.entries().slice(0, -1))).toBe(entries);
      expect(win.entries().map((e) => e.state)).not.toContain("pruned");
      const blocks = toAnthropicBeta(win).messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content)).filter((b) => b.type === "compaction");
      expect(blocks).toEqual([]);
      const records = (await win.auditLog()).slice(audited);
      expect(records[0]).toMatchObject({ op: "compact", status: "unchanged" });
      expect(records[0]!.directive).toContain('"failed":true');
      await win.end();
    }
  });

  it("refused before anything is sent: a policy that forbids it, clear_tool_uses, no pause with kept spans", async () => {
    server = await startCompactionServer(model);
    const off = await setup("forbid");
    await expect(anthropicCompaction(off.win)).rejects.toThrow(/policy does not allow it/);
    await expect(openAICompaction(off.win)).rejects.toBeInstanceOf(ProviderCompactionError);
    await off.win.end();
    const { win } = await setup();
    await expect(anthropicCompaction(win, { edits: [{ type: "clear_tool_uses_20250919" }] })).rejects.toThrow(/no handle/);
    // A compaction edit of the caller's own would bypass the pause check: the builder adds the only one.
    await expect(anthropicCompaction(win, { edits: [{ type: "compact_20260112", pause_after_compaction: false }] })).rejects.toThrow(/builder adds the compaction edit itself/);
    // An edit with no type (from a caller without the types) is refused the same way, never a raw TypeError.
    for (const edits of [[{}], [null], "clear_tool_uses_20250919"]) {
      await expect(anthropicCompaction(win, { edits: edits as never })).rejects.toBeInstanceOf(ProviderCompactionError);
    }
    await expect(anthropicCompaction(win, { pauseAfterCompaction: false })).rejects.toThrow(/keeps 1 span: span_\d+ \(kind secret has no copy/);
    await expect(openAICompaction(win)).rejects.toThrow(/automatic compaction is refused: the policy keeps 1 span/);
    const plan = await win.providerCompactionPlan();
    expect(plan.kept.map((k) => k.reason)).toEqual(["lossy-forbidden"]);
    expect(plan.lossy).toHaveLength(1);
    expect(server.requests).toHaveLength(0);
    await win.end();
  });

  it("a clearing done outside the checks is audited and said to the model", async () => {
    server = await startCompactionServer(model);
    const { win, t } = await setup();
    await t.appendAnthropic({ content: [{ type: "text", text: "ok" }], context_management: { applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 3, cleared_input_tokens: 900 }] } });
    expect(win.notices().join("\n")).toMatch(/the provider cleared 3 tool uses outside pruneguard's checks/);
    expect((await win.auditLog()).at(-1)?.directive).toContain("provider_clearing");
    // A later version of the edit is a clearing too: audited under the type the provider gave.
    await t.appendAnthropic({ content: [{ type: "text", text: "ok" }], context_management: { applied_edits: [{ type: "clear_tool_uses_20260301", cleared_tool_uses: 2, cleared_input_tokens: 400 }] } });
    expect(win.notices().join("\n")).toMatch(/the provider cleared 2 tool uses outside pruneguard's checks/);
    expect((await win.auditLog()).at(-1)?.directive).toContain("clear_tool_uses_20260301");
    await win.end();
  });

  it("OpenAI Responses: responses.compact between turns, the item sent back byte for byte, kept spans after it, and the same after a restart", async () => {
    server = await startCompactionServer(model);
    const { path, session, win, t, secret, scratch } = await setup();
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    for (let turn = 0; turn < 2; turn++) {
      const response = await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(win), tools: openAITools });
      await t.handleToolCalls(await t.appendOpenAIResponse(response), runOwnTool);
    }
    const texts = liveTexts(win);
    const compacted = await client.responses.compact({ model: "gpt-test", ...(await openAICompactRequest(win)) });
    const outcome = await t.appendOpenAICompaction(compacted);
    expect(outcome?.status).toBe("compacted");
    expect(outcome?.kept.map((k) => k.spanId)).toEqual([secret]);
    let answer: string | undefined;
    for (let turn = 2; turn < 12 && answer === undefined; turn++) {
      const response = await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(win), tools: openAITools });
      const calls = await t.appendOpenAIResponse(response);
      if (calls.length === 0) answer = response.output_text;
      else await t.handleToolCalls(calls, runOwnTool);
    }
    expect(server.problems).toEqual([]);
    expect(answer).toBe("request ids: req_8812_7f3a9c2e41, req_8813_7f3a9c2e41");
    const item = server.issued.at(-1)!;
    const input = JSON.stringify(toOpenAIResponses(win));
    expect(input).toContain(item);
    expect(input.indexOf("on-call rota")).toBeGreaterThan(input.indexOf(item));
    // Every span it pruned recalls from its store byte for byte, both logs among them.
    expect(outcome!.lossy).toEqual([scratch]);
    for (const id of outcome!.pruned) expect(await win.recall(id), id).toMatchObject({ status: "found", source: "store", text: texts.get(id) });
    expect(outcome!.pruned.map((id) => texts.get(id))).toEqual(expect.arrayContaining([LOG(8812), LOG(8813)]));
    const before = toOpenAIResponses(win);
    const upToLine = before.findIndex((i) => i.type === "compaction") + 2;
    await win.end();

    // A restart: the same window from the SQLite file, the item and its line sent back exactly as before (the
    // secret, whose bytes only the first process had, is now a lost line after them: never silence); every
    // compacted span recalls byte for byte, the lost one stays lost, and the audit chain verifies.
    const again = await ContextWindow.resume(options(path, session));
    const after = toOpenAIResponses(again);
    expect(JSON.stringify(after.slice(0, upToLine))).toBe(JSON.stringify(before.slice(0, upToLine)));
    expect(JSON.stringify(after.find((i) => i.type === "compaction"))).toBe(item);
    expect(JSON.stringify(after)).toMatch(new RegExp(`${secret} lost in a restart, contents unknown`));
    for (const id of outcome!.pruned) expect(await again.recall(id), id).toMatchObject({ status: "found", source: "store", text: texts.get(id) });
    expect((await again.recall(scratch)).status).toBe("pruned-unrecoverable");
    const store = new SqliteStore({ name: "log", path });
    expect(verifyAuditChain(await store.auditLog(session))).toBeNull();
    await store.close();
    // The resumed window's next request is one the API accepts: the item as issued, nothing else altered.
    const next = await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(again), tools: openAITools });
    expect(next.status).toBe("completed");
    expect(server.problems).toEqual([]);
    await again.end();
  });

  it("OpenAI automatic compaction (context_management): built after the plan, recorded through the prune path, the item sent back verbatim beside its line, every span recalled, also after a restart", async () => {
    // The model reads only what follows the item, nothing yet (the item is encrypted): it says so, and the
    // agent asks it to go on; then it finds the line and recalls what was compacted.
    server = await startCompactionServer((visible, turn) => (visible === "[]" ? { calls: [], text: "Compacted." } : model(visible, turn)));
    const { path, session, win, t, scratch } = await setupFreeable();
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    let texts = new Map<string, string>();
    let compactedAt = -1;
    let answer: string | undefined;
    for (let turn = 0; turn < 12 && answer === undefined; turn++) {
      // A low threshold until the first compaction, so it fires once both logs are read; then the API's default.
      const cm = await openAICompaction(win, compactedAt < 0 ? { compactThreshold: THRESHOLD } : {});
      if (compactedAt < 0) texts = liveTexts(win);
      const response = await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(win), tools: openAITools, ...cm });
      const calls = await t.appendOpenAIResponse(response);
      if (response.output.some((i) => i.type === "compaction")) {
        compactedAt = turn;
        await t.user("Go on: I need both request ids.");
        continue;
      }
      if (calls.length === 0) answer = response.output_text;
      else await t.handleToolCalls(calls, runOwnTool);
    }
    expect(server.problems).toEqual([]);
    expect(compactedAt).toBe(2);
    expect(answer).toBe("request ids: req_8812_7f3a9c2e41, req_8813_7f3a9c2e41");
    // The request that compacted carried the builder's context_management, as the API types it.
    expect(server.requests[compactedAt]!["context_management"]).toEqual([{ type: "compaction", compact_threshold: THRESHOLD }]);

    // It covered every span before the item: the backed ones pruned with copies held, the scratch note lost as
    // allowed, each through the prune pipeline (one audit record each, naming the summary).
    expect(t.compactions).toHaveLength(1);
    const outcome = t.compactions[0]!;
    expect(outcome).toMatchObject({ status: "compacted", lossy: [scratch], kept: [] });
    expect(new Set([...outcome.pruned, ...outcome.lossy])).toEqual(new Set(texts.keys()));
    expect(outcome.pruned.map((id) => texts.get(id))).toEqual(expect.arrayContaining([LOG(8812), LOG(8813)]));
    const audit = await win.auditLog();
    for (const id of [...outcome.pruned, ...outcome.lossy]) {
      const records = audit.filter((r) => r.op === "prune" && r.spanId === id);
      expect(records, id).toHaveLength(1);
      expect(records[0]!.status, id).toBe(id === scratch ? "lossy" : "reversible");
      // A tool result is pruned with its call's group: only the group's lead record carries the directive.
      if (records[0]!.kind !== "toolResult") expect(records[0]!.directive, id).toContain(`"by":"provider_compaction","summary":"${outcome.spanId}"`);
    }

    // Every request after it carried the item exactly as issued, with the runtime line right after it and none
    // of the bytes it replaced beside it (the first one: nothing recalled yet).
    const item = server.issued[0]!;
    const after = server.requests.slice(compactedAt + 1);
    expect(after.length).toBeGreaterThan(1);
    for (const [i, body] of after.entries()) {
      const input = body["input"] as Array<Record<string, unknown>>;
      const at = input.findIndex((x) => x["type"] === "compaction");
      expect(server.raw[compactedAt + 1 + i]).toContain(item);
      expect(input[at + 1]).toEqual({ type: "message", role: "assistant", content: outcome.line });
    }
    expect(outcome.line).toBe(`${outcome.spanId} summary of ${outcome.members[0]}–${outcome.members.at(-1)} (${outcome.members.length}), recall ${outcome.spanId}`);
    for (const gone of ["scratch: maybe the cache?", "req_8812_7f3a9c2e41", "req_8813_7f3a9c2e41"]) expect(server.raw[compactedAt + 1]).not.toContain(gone);

    // Every span it pruned recalls from its store byte for byte; the scratch note is gone, as the policy allowed.
    for (const id of outcome.pruned) expect(await win.recall(id), id).toMatchObject({ status: "found", source: "store", text: texts.get(id) });
    expect((await win.recall(scratch)).status).toBe("pruned-unrecoverable");
    const before = toOpenAIResponses(win);
    const upToLine = before.findIndex((i) => i.type === "compaction") + 2;
    await win.end();

    // A restart: the item and its line drawn again from the SQLite file, byte for byte; the same recalls; the
    // audit chain verifies.
    const again = await ContextWindow.resume(options(path, session));
    expect(JSON.stringify(toOpenAIResponses(again).slice(0, upToLine))).toBe(JSON.stringify(before.slice(0, upToLine)));
    for (const id of outcome.pruned) expect(await again.recall(id), id).toMatchObject({ status: "found", source: "store", text: texts.get(id) });
    const store = new SqliteStore({ name: "log", path });
    expect(verifyAuditChain(await store.auditLog(session))).toBeNull();
    await store.close();
    await again.end();
  });

  it("OpenAI automatic compaction over a span the policy keeps: the builder refuses; one that comes back anyway never frees it", async () => {
    server = await startCompactionServer((visible, turn) => (visible === "[]" ? { calls: [], text: "Compacted." } : model(visible, turn)));
    const { win, t, secret, scratch } = await setup();
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    await expect(openAICompaction(win, { compactThreshold: 100 })).rejects.toThrow(/keeps 1 span/);
    expect(server.requests).toHaveLength(0);
    // Built by hand, around the builder: the API compacts everything before its item.
    const response = await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(win), context_management: [{ type: "compaction", compact_threshold: 100 }] });
    await t.appendOpenAIResponse(response);
    const outcome = t.compactions[0]!;
    expect(outcome).toMatchObject({ status: "compacted", lossy: [scratch] });
    expect(outcome.kept.map((k) => k.spanId)).toEqual([secret]);
    // The secret is live, with its bytes, and no prune of it committed.
    expect(win.span(secret)?.text).toBe("on-call rota: alice until 12:00, then bob");
    expect((await win.auditLog()).some((r) => r.spanId === secret && (r.status === "reversible" || r.status === "lossy"))).toBe(false);
    // The next request says it again after the item, which the API accepts.
    await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(win) });
    expect(server.problems).toEqual([]);
    const body = server.raw.at(-1)!;
    expect(body).toContain(server.issued[0]!);
    expect(body.indexOf("on-call rota")).toBeGreaterThan(body.indexOf(server.issued[0]!));
    await win.end();
  });

  it("OpenAI: a failed compaction item (no encrypted_content) changes nothing and is not sent back", async () => {
    server = await startCompactionServer(model, { failFirst: true });
    const { win, t } = await setupFreeable();
    const client = new OpenAI({ apiKey: "test", baseURL: `${server.url}/v1`, maxRetries: 0 });
    const before = toOpenAIResponses(win);
    // The threshold is passed at once: the server fails that compaction, and the model answers from everything.
    const response = await client.responses.create({ model: "gpt-test", input: before, tools: openAITools, ...(await openAICompaction(win, { compactThreshold: 10 })) });
    expect(response.output[0]).toMatchObject({ type: "compaction", encrypted_content: null });
    const calls = await t.appendOpenAIResponse(response);
    expect(t.compactions[0]!.status).toBe("failed");
    expect((await win.auditLog()).find((r) => r.directive?.includes('"failed":true'))).toMatchObject({ op: "compact", status: "unchanged" });
    // Nothing pruned: what the model read before is still there, item for item, and no compaction item follows it.
    const input = toOpenAIResponses(win);
    expect(JSON.stringify(input.slice(0, before.length))).toBe(JSON.stringify(before));
    expect(input.some((i) => i.type === "compaction")).toBe(false);
    // The next request is one the API accepts (it refuses an item without encrypted_content).
    await t.handleToolCalls(calls, runOwnTool);
    await client.responses.create({ model: "gpt-test", input: toOpenAIResponses(win), tools: openAITools });
    expect(server.problems).toEqual([]);
    // An item with no encrypted_content at all is read the same way.
    await t.appendOpenAIResponse({ output: [{ type: "compaction", id: "cmp_x" } as never] });
    expect(t.compactions[1]!.status).toBe("failed");
    expect(toOpenAIResponses(win).some((i) => i.type === "compaction")).toBe(false);
    await win.end();
  });
});
