import { describe, expect, it } from "vitest";
import { agentLoop } from "../../examples/agent-loop.js";

describe("the agent loop example (generated guard, both halves)", () => {
  it("prunes what the runtime can back, commits the explicit loss, refuses the rest, and prints the same every run", async () => {
    const a = await agentLoop(() => undefined);
    expect(a).toContain("prune toolResult (summarize): reversible, handle #1");
    expect(a).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/systemHint .*lossy, "span_1 pruned, unrecoverable/),
        expect.stringMatching(/^prune userTurn .*its store was down at append:$/),
        expect.stringMatching(/^ {2}IrreversiblePruneError \(rejected/),
        expect.stringMatching(/"accept_lossy":"true".*schema refuses; window: invalid/),
      ]),
    );
    expect(await agentLoop(() => undefined)).toEqual(a);
  });
});
