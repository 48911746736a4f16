import { describe, expect, it } from "vitest";
import { isCatastrophicPattern } from "../../dsl/pin-analysis.js";
import { presetPins } from "../../dsl/pins.js";

describe("isCatastrophicPattern", () => {
  it.each([
    ["(a+)+", "nested-quantifier"],
    ["(a*)*b", "nested-quantifier"],
    ["(a|aa)+", "nested-quantifier"],
    ["(?:\\d+\\.)+x", "nested-quantifier"],
    ["(?:a?)+b", "nested-quantifier"], // a repetition that can loop on nothing
    ["(?:x|\\w)+y", "nested-quantifier"], // branches overlap through a class
    ["^$", "empty-match"],
    ["a*", "empty-match"],
    ["\\b", "empty-match"],
    ["(?=abc)", "empty-match"],
    ["x|", "empty-match"],
    ["(x)\\1", "backreference"],
    ["(?<q>['\"]).+?\\k<q>", "backreference"],
    ["(", "invalid"],
    ["\\-", "invalid"], // a sloppy escape is a syntax error under the u flag
  ] as const)("flags %j as %s", (source, reason) => {
    const result = isCatastrophicPattern(source);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe(reason);
      expect(result.detail.length).toBeGreaterThan(0);
    }
  });

  it.each([
    "req_[0-9a-f]{6}",
    "(a|b)+c",
    "(?:ab){1,3}",
    "v(?:x\\d{1,6})?(?::\\d{1,6})?",
    "[^\\]a-z]+x",
    "\\bfoo\\b",
    "(?<=id=)\\w{4,}",
    "\\p{Lu}{2,}-\\d+",
  ])("passes %j", (source) => {
    expect(isCatastrophicPattern(source)).toEqual({ ok: true });
  });

  it("passes every preset", () => {
    for (const preset of Object.values(presetPins)) {
      expect(isCatastrophicPattern(preset.pattern), preset.name).toEqual({ ok: true });
    }
  });

  it("says where the risky repetition is", () => {
    const result = isCatastrophicPattern("id-(\\w+)+$");
    expect(result).toMatchObject({ ok: false, reason: "nested-quantifier" });
    if (!result.ok) expect(result.detail).toContain("offset 3");
  });
});
