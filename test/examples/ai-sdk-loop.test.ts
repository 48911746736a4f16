import { describe, expect, it } from "vitest";
import { aiSDKLoop } from "../../examples/ai-sdk-loop.js";

describe("a multi-step AI SDK 7 agent through the ready tools (generateText, mock model)", () => {
  it("prunes, is refused, commits a loss, is answered invalid, recalls three ways, and every step reads the pruned window", async () => {
    const prompts: unknown[] = [];
    const { lines, win, result } = await aiSDKLoop(() => undefined, prompts);
    expect(lines).toEqual([
      "step 1 prune → reversible: span_5 summary, recall #3",
      "step 1 prune → rejected: span_2 kept: prune rejected (no backing store); accept_lossy to force",
      "step 1 prune → lossy: span_2 pruned, unrecoverable, contents unknown",
      "step 1 prune → invalid: directive ignored: accept_lossy must be the JSON value true or false",
      "step 1 prune → invalid: directive ignored: arguments are not valid JSON",
      "step 1 compact → compacted: 3 decisions applied, ~615 tokens freed, ~683 rewritten",
      "step 2 recall → found: span_5 recalled (#3):",
      "step 2 recall → pruned-unrecoverable: span_2 pruned, unrecoverable, contents unknown",
      "step 2 recall → unknown: span_99: never in this session",
      "answer: Deploy 8812 failed on an upstream 502; request id req_7f3a9c2e41.",
      "audit: prune:reversible, prune:reversible, prune:rejected, prune:lossy, prune:invalid",
      "       prune:invalid, compact:compacted, recall:found, recall:pruned-unrecoverable, recall:unknown",
    ]);
    // The summarize took the tool call with it (a group), and both invalid calls reached the audit log.
    const audit = await win.auditLog();
    expect(audit.filter((r) => r.op === "prune" && r.status === "reversible").map((r) => r.spanId)).toEqual(["span_4", "span_5"]);
    expect(audit.filter((r) => r.status === "invalid").map((r) => r.directive)).toEqual([
      '{"span_id":"span_1","mode":"drop","accept_lossy":"true","op":"prune"}',
      "{span_id: span_1",
    ]);
    // The model's invalid calls were answered with the window's own line, as tool errors.
    const outputs = result.steps[1]!.content.filter((p) => p.type === "tool-result");
    expect(outputs).toHaveLength(6);
    // Step 3 was sent the window after the prunes: the log's body is gone, its digest and handle are there,
    // and the recalled bytes came back through the recall tool's result.
    const third = JSON.stringify(prompts[2]);
    expect(third).toContain("span_5 summary, recall #3");
    expect(third).not.toContain("health check 17 ok");
    expect(third).toContain("error-text");
    const fourth = JSON.stringify(prompts[3]);
    expect(fourth).toContain("health check 17 ok");
    // System text is sent as instructions only, once, first.
    for (const p of prompts as Array<Array<{ role: string }>>) expect(p.filter((m) => m.role === "system").length).toBeLessThanOrEqual(1);
    // Every call and result of the run is in the window, paired.
    const roles = win.entries().map((e) => (e.state === "live" ? e.span.message?.role : e.message?.role));
    expect(roles.filter((r) => r === "tool-call")).toHaveLength(10);
    expect(roles.filter((r) => r === "tool-result")).toHaveLength(10);
  });

  it("prints the same every run", async () => {
    const a = await aiSDKLoop(() => undefined);
    const b = await aiSDKLoop(() => undefined);
    expect(b.lines).toEqual(a.lines);
  });
});
