/**
 * A session is written under a named policy: a window that names its policy (every generated guard's does)
 * records it in the home store's chain at its first append (`op: "start"`), and `resume` refuses a session
 * last written under a policy of another name unless `policyChange: "allow"`. (A window made with the
 * constructor on a session that exists is not checked: resume is where a session is taken up again.) Seen before: a session created by
 * team-search's guard and resumed with org's (a wrong import) took org's modes and lossy budget mid-session,
 * without a word.
 */
import { describe, expect, it } from "vitest";
import * as org from "../../generated/org.guard.js";
import * as teamSearch from "../../generated/team-search.guard.js";
import { ContextWindow, ManualClock, MemoryStore, verifyAuditChain } from "../../src/index.js";

const kinds = { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } } as const;

describe("a session's policy", () => {
  it("is recorded at a window's first append, and a resume under another policy's name is refused, saying which", async () => {
    const clock = new ManualClock(0);
    const log = new MemoryStore({ name: "log", clock });
    const options = (policyName?: string, policyChange?: "allow") => ({
      session: "s", clock, stores: { log }, kinds, ...(policyName === undefined ? {} : { policyName }), ...(policyChange === undefined ? {} : { policyChange }),
    });
    const first = new ContextWindow(options("alpha"));
    await first.append({ kind: "tool", text: "one" });
    await first.append({ kind: "tool", text: "two" });
    expect((await log.auditLog("s")).map((r) => [r.op, r.status, r.directive])).toEqual([["start", "started", '{"op":"start","policy":"alpha"}']]);

    await expect(ContextWindow.resume(options("beta"))).rejects.toThrow(
      /session "s" was written under policy alpha \(by the latest window to open it\), and this window's is beta: .* Resume it with alpha's guard, or pass policyChange: "allow"/,
    );
    // The same policy, and a window that names none (plain runtime use), resume as before.
    expect((await ContextWindow.resume(options("alpha"))).entries()).toHaveLength(2);
    expect((await ContextWindow.resume(options())).entries()).toHaveLength(2);
    // Allowed: the change is recorded, so the next resume compares with the new policy.
    await ContextWindow.resume(options("beta", "allow"));
    await expect(ContextWindow.resume(options("alpha"))).rejects.toThrow(/written under policy beta/);
    expect(verifyAuditChain(await log.auditLog("s"))).toBeNull();
  });

  it("generated guards name theirs: a session of team-search's guard is not resumed by org's", async () => {
    const stores = await teamSearch.openStores({ memory: true });
    const win = teamSearch.createWindow({ session: "t", stores });
    await win.append({ kind: "toolResult", text: "GET /search -> 200" });
    await expect(org.resumeWindow({ session: "t", stores })).rejects.toThrow(/written under policy team-search \(by the latest window to open it\), and this window's is org/);
    expect((await teamSearch.resumeWindow({ session: "t", stores })).entries()).toHaveLength(1);
    expect((await org.resumeWindow({ session: "t", stores, policyChange: "allow" })).entries()).toHaveLength(1);
  });
});
