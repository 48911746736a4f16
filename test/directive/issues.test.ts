/**
 * An invalid directive's outcome says what is wrong in a bounded number of bounded issues, whatever the
 * model sent: an object with a hundred thousand unknown keys (as an AI SDK tool call's parsed arguments
 * can be) once came back as one issue message of megabytes, zod listing every key.
 */
import { describe, expect, it } from "vitest";
import { MAX_ISSUE_CHARS, parseDirective } from "../../src/directive.js";

describe("invalid directive issues", () => {
  it("are at most five, each path and message at most MAX_ISSUE_CHARS, still naming the problem", () => {
    const keys = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`unknown_key_${i}`, i]));
    const r = parseDirective({ op: "prune", span_id: "span_1", mode: "drop", ...keys });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.op).toBe("prune");
    expect(r.issues.length).toBeGreaterThan(0);
    expect(r.issues.length).toBeLessThanOrEqual(5);
    for (const i of r.issues) {
      expect(i.message.length).toBeLessThanOrEqual(MAX_ISSUE_CHARS);
      expect(i.path.length).toBeLessThanOrEqual(MAX_ISSUE_CHARS);
      expect(i.message.isWellFormed()).toBe(true);
    }
    expect(r.issues.map((i) => i.message).join(" ")).toMatch(/unknown_key_0/);
    expect(r.issues[0]!.message.endsWith("…")).toBe(true);
  });

  it("a short message is kept whole", () => {
    const r = parseDirective({ op: "prune", span_id: "span_1", mode: "shred" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.some((i) => !i.message.endsWith("…") && i.message.length > 0)).toBe(true);
  });
});
