/**
 * A local stand-in for the providers' server-side compaction (node:http on 127.0.0.1): Anthropic's beta
 * Messages API with the `compact_20260112` edit, and OpenAI's Responses API with automatic compaction
 * (`context_management`) and `responses.compact`. Real SDK clients send it real requests; it checks every body
 * against the provider's conversation rules (`rules.ts`) and the compaction rules the documented APIs state:
 *
 * - a compaction block or item sent back must be one this server issued, **byte for byte** (its JSON text is
 *   found verbatim in the raw request body), and an Anthropic one must sit in an assistant message;
 * - the API reads only what follows the last compaction block or item: the scripted model is shown exactly that;
 * - a compaction fires when what the model would read exceeds the trigger (characters stand in for tokens), and
 *   Anthropic's stops there (`stop_reason: "compaction"`) when `pause_after_compaction` is set;
 * - a failed compaction (Anthropic) comes back with `content: null`, which the API treats as a no-op;
 * - OpenAI's `context_management` is what `ResponseCreateParams` types (an array of `{ type: "compaction",
 *   compact_threshold? }`, a threshold a positive whole number), and a compaction item sent back is a
 *   `ResponseCompactionItemParam` (`type`, `encrypted_content` a string, optional `id`, nothing else).
 *
 * A request with problems is answered 400 with them, as the provider would.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ModelTurn } from "./fake-server.js";
import { anthropicProblems, openAIResponsesProblems } from "./rules.js";

type Json = { [key: string]: unknown };

/** The model: a function of what the API lets it read (after the last compaction), and of the request's index. */
export type CompactionModel = (visible: string, turn: number) => ModelTurn;

export interface CompactionServer {
  readonly url: string;
  readonly requests: Json[];
  /** The raw bodies, as sent. */
  readonly raw: string[];
  readonly problems: string[];
  /** Every block or item this server issued, as JSON text. */
  readonly issued: string[];
  /** The summaries it wrote: each lists what it covered (so a test can see the model would read nothing else). */
  readonly summaries: string[];
  close(): Promise<void>;
}

export interface CompactionServerOptions {
  /**
   * Fail the first compaction: Anthropic's `content: null`; OpenAI's item with `encrypted_content: null` (the SDK
   * types it a string, so such an item cannot be sent back: its input schema refuses it).
   */
  readonly failFirst?: boolean;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startCompactionServer(model: CompactionModel, options: CompactionServerOptions = {}): Promise<CompactionServer> {
  const requests: Json[] = [];
  const raw: string[] = [];
  const problems: string[] = [];
  const issued: string[] = [];
  const summaries: string[] = [];
  let failed = false;

  /** Problems with the compaction blocks a request sends back: unknown, or not byte for byte what was issued. */
  const sentBack = (text: string, blocks: readonly unknown[], where: string): string[] =>
    blocks.flatMap((b, i) => {
      const json = JSON.stringify(b);
      if (!issued.includes(json)) return [`${where}[${i}]: compaction block or item not issued by this server (or altered): ${json.slice(0, 120)}`];
      return text.includes(json) ? [] : [`${where}[${i}]: compaction block or item not sent back byte for byte`];
    });

  function anthropic(text: string, body: Json, beta: string, n: number): { problems: string[]; response: Json } {
    const out: string[] = [];
    const messages = (body["messages"] ?? []) as Json[];
    const blocks: unknown[] = [];
    let lastAt = -1;
    const stripped = messages.map((m, i) => {
      if (!Array.isArray(m["content"])) return m;
      const content = (m["content"] as Json[]).filter((b) => {
        if (b["type"] !== "compaction") return true;
        if (m["role"] !== "assistant") out.push(`messages[${i}]: a compaction block in a ${String(m["role"])} message`);
        if (!beta.split(",").includes("compact-2026-01-12")) out.push(`messages[${i}]: a compaction block without the compact-2026-01-12 beta`);
        blocks.push(b);
        if ((b as Json)["content"] !== null) lastAt = i;
        return false;
      });
      return { ...m, content: content.length > 0 ? content : [{ type: "text", text: "(compaction)" }] };
    });
    out.push(...anthropicProblems({ system: body["system"], messages: stripped as never[] }));
    out.push(...sentBack(text, blocks, "compaction blocks"));
    // What the model reads: the system prompt and what follows the last compaction (a failed one is a no-op).
    const visibleMessages = lastAt < 0 ? messages : messages.slice(lastAt);
    const visible = JSON.stringify({ system: body["system"] ?? null, messages: visibleMessages });
    const edit = ((body["context_management"] as Json | undefined)?.["edits"] as Json[] | undefined)?.find((e) => e["type"] === "compact_20260112");
    if (edit !== undefined && !beta.split(",").includes("compact-2026-01-12")) out.push("context_management: compact_20260112 needs the compact-2026-01-12 beta");
    const trigger = Number(((edit?.["trigger"] as Json | undefined)?.["value"]) ?? 150_000);
    const content: Json[] = [];
    let stop: string | null = null;
    if (edit !== undefined && JSON.stringify(visibleMessages).length > trigger) {
      const fail = options.failFirst === true && !failed;
      failed = true;
      const covered = [...JSON.stringify(visibleMessages).matchAll(/span_\d+/g)].map((m) => m[0]);
      const summary = `The conversation so far (${new Set(covered).size} spans): the user asked about deploy 8812; logs were read.`;
      const block = fail
        ? { type: "compaction", content: null, encrypted_content: null }
        : { type: "compaction", content: summary, encrypted_content: `enc_${n}_${"x".repeat(24)}`, signature: `sig_${n}`, tool_changes: [] };
      if (!fail) summaries.push(summary);
      issued.push(JSON.stringify(block));
      content.push(block);
      if (edit["pause_after_compaction"] === true && !fail) stop = "compaction";
    }
    if (stop === null) {
      const turn = model(visible, n);
      if (turn.text) content.push({ type: "text", text: turn.text });
      content.push(...turn.calls.map((c, i) => ({ type: "tool_use", id: `toolu_${n}_${i}`, name: c.name, input: JSON.parse(c.arguments) as unknown })));
      stop = turn.calls.length > 0 ? "tool_use" : "end_turn";
    }
    return {
      problems: out,
      response: {
        id: `msg_${n}`, type: "message", role: "assistant", model: String(body["model"]), content, stop_reason: stop, stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 }, context_management: { applied_edits: [] },
      },
    };
  }

  /** The Responses input with compaction items checked and taken out; what follows the last one is what the model reads. */
  function responsesInput(text: string, body: Json): { out: string[]; visible: Json[] } {
    const input = (body["input"] ?? []) as Json[];
    const out: string[] = [];
    const items = input.filter((i) => i["type"] === "compaction");
    for (const [i, item] of items.entries()) {
      // ResponseCompactionItemParam: what the API accepts back.
      if (typeof item["encrypted_content"] !== "string" || item["encrypted_content"] === "") out.push(`compaction items[${i}]: encrypted_content must be a non-empty string`);
      if (item["id"] !== undefined && item["id"] !== null && typeof item["id"] !== "string") out.push(`compaction items[${i}]: id must be a string`);
      const extra = Object.keys(item).filter((k) => !["type", "encrypted_content", "id"].includes(k));
      if (extra.length > 0) out.push(`compaction items[${i}]: unknown parameter ${extra.join(", ")}`);
    }
    out.push(...sentBack(text, items, "compaction items"));
    const rest = input.filter((i) => i["type"] !== "compaction");
    out.push(...openAIResponsesProblems(rest as never[]));
    const last = input.findLastIndex((i) => i["type"] === "compaction");
    return { out, visible: last < 0 ? input : input.slice(last + 1) };
  }

  /**
   * A `ResponseCompactionItem`, with the `created_by` the output item may carry; what must come back is the
   * `ResponseCompactionItemParam` of it (every field but `created_by`), byte for byte.
   */
  function compactionItem(n: number, fail = false): Json {
    const item = { id: `cmp_${n}`, type: "compaction", created_by: "server", encrypted_content: fail ? null : `gAAAA${n}${"y".repeat(24)}` };
    const { created_by: _, ...param } = item;
    issued.push(JSON.stringify(param));
    return item;
  }

  /** `context_management` as `ResponseCreateParams` types it: an array (or null) of `{ type: "compaction", compact_threshold? }`. */
  function contextManagementProblems(cm: unknown): string[] {
    if (cm === undefined || cm === null) return [];
    if (!Array.isArray(cm)) return ["context_management must be an array"];
    return (cm as unknown[]).flatMap((c, i) => {
      if (typeof c !== "object" || c === null) return [`context_management[${i}] must be an object`];
      const entry = c as Json;
      const out: string[] = [];
      if (entry["type"] !== "compaction") out.push(`context_management[${i}].type: only 'compaction' is supported`);
      const t = entry["compact_threshold"];
      if (t !== undefined && t !== null && !(Number.isInteger(t) && (t as number) > 0)) out.push(`context_management[${i}].compact_threshold must be a positive integer`);
      const extra = Object.keys(entry).filter((k) => k !== "type" && k !== "compact_threshold");
      if (extra.length > 0) out.push(`context_management[${i}]: unknown parameter ${extra.join(", ")}`);
      return out;
    });
  }

  function responses(text: string, body: Json, n: number): { problems: string[]; response: Json } {
    const { out, visible } = responsesInput(text, body);
    out.push(...contextManagementProblems(body["context_management"]));
    const cm = (Array.isArray(body["context_management"]) ? body["context_management"] : []) as Json[];
    const threshold = cm.find((c) => c["type"] === "compaction")?.["compact_threshold"];
    const output: Json[] = [];
    let compacted = false;
    if (threshold !== undefined && threshold !== null && JSON.stringify(visible).length > Number(threshold)) {
      const fail = options.failFirst === true && !failed;
      failed = true;
      output.push(compactionItem(n, fail));
      compacted = !fail;
    }
    // The model reads what follows the compaction item it stands on: nothing yet (a failed one changed nothing).
    const turn = model(JSON.stringify(compacted ? [] : visible), n);
    output.push(
      ...(turn.text ? [{ type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] }] : []),
      ...turn.calls.map((c, i) => ({ type: "function_call", id: `fc_${n}_${i}`, call_id: `call_${n}_${i}`, name: c.name, arguments: c.arguments, status: "completed" })),
    );
    return {
      problems: out,
      response: {
        id: `resp_${n}`, object: "response", created_at: 1_763_024_400, status: "completed", model: String(body["model"]), output,
        parallel_tool_calls: true, tool_choice: "auto", tools: body["tools"] ?? [], temperature: null, top_p: null, error: null,
        incomplete_details: null, instructions: null, metadata: {},
        usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
      },
    };
  }

  function compact(text: string, body: Json, n: number): { problems: string[]; response: Json } {
    const { out, visible } = responsesInput(text, body);
    if (typeof body["model"] !== "string") out.push("model: a string is required");
    const users = visible.filter((i) => i["type"] === "message" && i["role"] === "user");
    return {
      problems: out,
      response: {
        id: `cmpresp_${n}`, object: "response.compaction", created_at: 1_763_024_400, output: [...users, compactionItem(n)],
        usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
      },
    };
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const body = JSON.parse(text) as Json;
      const n = requests.length;
      requests.push(body);
      raw.push(text);
      const route = (req.url ?? "").split("?")[0]!;
      const beta = String(req.headers["anthropic-beta"] ?? "");
      const handled = route.endsWith("/messages") ? anthropic(text, body, beta, n)
        : route.endsWith("/responses/compact") ? compact(text, body, n)
          : route.endsWith("/responses") ? responses(text, body, n)
            : { problems: [`no route ${route}`], response: {} };
      res.setHeader("content-type", "application/json");
      if (handled.problems.length > 0) {
        problems.push(...handled.problems.map((p) => `request ${n}: ${p}`));
        res.statusCode = 400;
        res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: handled.problems.join("; ") } }));
        return;
      }
      res.end(JSON.stringify(handled.response));
    })().catch((err: unknown) => {
      problems.push(`server: ${String(err)}`);
      res.statusCode = 500;
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, requests, raw, problems, issued, summaries,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
