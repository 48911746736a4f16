/**
 * A generated guard's window in a provider loop: its `directiveTools` (narrowed to the policy's modes),
 * `handleToolCall` on the typed window, and a `Transcript` over it — the same path as a plain window.
 */
import type { ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { createWindow, directiveModes, directiveTools, openStores } from "../../generated/team-payments.guard.js";
import { ManualClock, openAIChatTools, toOpenAI, Transcript } from "../../src/index.js";

describe("generated guards in a provider loop", () => {
  it("tools narrowed to the policy, calls handled by the typed window, transcript appends", async () => {
    const clock = new ManualClock(0);
    const win = createWindow({ session: "s", clock, stores: await openStores({ memory: true, clock }) });
    const mode = directiveTools[0]!.inputSchema.properties["mode"] as { enum: string[] };
    expect(mode.enum).toEqual([...directiveModes]);
    const tools: ChatCompletionFunctionTool[] = openAIChatTools(directiveTools, { strict: true });
    expect(tools.map((t) => t.function.name)).toEqual(["prune", "recall", "map", "search", "summarize_range", "compact"]);

    const t = new Transcript(win, { user: "userTurn", assistant: "userTurn", toolCall: "toolCall", toolResult: "toolResult" });
    await t.user("Why did deploy 8812 fail?");
    await t.toolCall({ id: "c1", name: "getDeploy", arguments: '{"id":8812}' });
    await t.toolResult({ id: "c1", name: "getDeploy", text: "HTTP 502 X-Request-Id: req_7f3a9c2e41", isError: false });
    const [r] = await t.handleToolCalls([{ id: "c2", name: "prune", arguments: '{"span_id":"span_3","mode":"drop","digest":null,"accept_lossy":null}' }]);
    expect(r).toMatchObject({ name: "prune", isError: false, directive: { outcome: { status: "reversible", groupPruned: ["span_2"] } } });
    expect(toOpenAI(win).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"]);
  });
});
