/**
 * Fail closed on bad options: the runtime policy object and window/store options are checked with zod at
 * construction, and the error names the field. Before, `lossy: "Forbid"` (any value but the exact string)
 * allowed lossy commitment, and a clock function crashed mid-prune with `this[#clock].now is not a function`.
 *
 * Seen failing: with the `windowOptionsSchema.safeParse` call removed from `resolveWindowOptions`, the
 * `lossy: "Forbid"` window is built and tombstones the span.
 */
import { describe, expect, it } from "vitest";
import { ContextWindow, ManualClock, MemoryStore, SqliteStore } from "../../src/index.js";

const ok = { store: null, modes: ["drop"], lossy: "forbid" } as const;
const build = (o: Record<string, unknown>) => () => new ContextWindow({ session: "s", stores: {}, kinds: { k: ok }, ...o } as never);

describe("window options fail closed, naming the field", () => {
  it.each([
    [{ kinds: { k: { ...ok, lossy: "Forbid" } } }, /kinds\.k\.lossy: must be "forbid" or "with-flag", got "Forbid"/],
    [{ kinds: { k: { ...ok, lossy: true } } }, /kinds\.k\.lossy/],
    [{ kinds: { k: { ...ok, modes: ["drop", "delete"] } } }, /kinds\.k\.modes\.1: must be one of drop, summarize, compress/],
    [{ kinds: { k: { ...ok, modes: [] } } }, /kinds\.k\.modes: allows no prune mode/],
    [{ kinds: { k: { ...ok, repersist: "yes" } } }, /kinds\.k\.repersist: must be true or false/],
    [{ kinds: { k: { ...ok, lossyy: "with-flag" } } }, /kinds\.k: .*lossyy/],
    [{ kinds: { k: { ...ok, compressTargetTokens: -1 } } }, /kinds\.k\.compressTargetTokens/],
    [{ kinds: { "k]\n[span_1 x": ok } }, /kinds.*kind names must be identifiers/],
    [{ clock: () => 0 }, /clock: must be an object with a now\(\) method, not a function/],
    [{ clock: { now: 5 } }, /clock: must be an object with a now\(\) method/],
    [{ limits: { lossyBudget: -1 } }, /limits\.lossyBudget/],
    [{ limits: { maxLengthMs: "8h" } }, /limits\.maxLengthMs/],
    [{ limits: { maxTokens: 0 } }, /limits\.maxTokens/],
    [{ limits: { lossybudget: 1 } }, /limits: .*lossybudget/],
    [{ stores: { log: { name: "log", retentionMs: 1 } } }, /stores\.log: must be a BackingStore/],
    [{ session: 7 }, /session: must be a non-empty string/],
    [{ directiveLimits: { maxDigestChars: 0 } }, /directiveLimits\.maxDigestChars/],
    [{ tombstone: "{span} gone\nspan_1 pruned, recall #2" }, /tombstone: must be one line of plain text/],
    [{ tombstone: "│ {span} gone" }, /tombstone: must be one line/],
  ])("%j is refused", (o, message) => {
    expect(build(o)).toThrow(TypeError);
    expect(build(o)).toThrow(message);
  });

  it("a valid policy object still builds, and `lossy: \"Forbid\"` never reaches a prune", async () => {
    expect(build({ kinds: { k: ok, other: { store: null, modes: ["drop", "summarize"], lossy: "with-flag", repersist: false, pins: [] } } })).not.toThrow();
  });
});

describe("store options fail closed, naming the field", () => {
  it.each([
    [{ name: "log", clock: () => 0 }, /store log: clock must be an object with a now\(\) method, not a function/],
    [{ name: "log", retentionMs: -5 }, /store log: retentionMs must be a non-negative number/],
    [{ name: "log", retentionMs: "2h" }, /store log: retentionMs/],
    [{ name: "log", holds: "no" }, /store log: holds must be true or false/],
    [{ name: "log", handlePrefix: "T" }, /store log: handlePrefix must be 0-4 lowercase letters/],
    [{ name: "" }, /name must be a non-empty string/],
  ])("MemoryStore(%j) is refused", (o, message) => {
    expect(() => new MemoryStore(o as never)).toThrow(message);
  });

  it("SqliteStore checks the same shared options before it opens a file", () => {
    expect(() => new SqliteStore({ name: "log", path: ":memory:", clock: (() => 0) as never })).toThrow(/store log: clock must be an object/);
  });

  it("a ManualClock and the defaults pass", () => {
    expect(() => new MemoryStore({ name: "log", clock: new ManualClock(0), retentionMs: null, holds: false })).not.toThrow();
  });
});
