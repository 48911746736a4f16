/**
 * The index-line hint finds a file path by trying `PATH` only where a path can start (`firstPath`); it
 * must find exactly what the plain search finds, on any text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstPath, PATH } from "../../src/hint.js";

/** Text dense in what paths are made of: directory characters, slashes, dots, extensions, and noise. */
const pathy = fc
  .array(
    fc.oneof(
      fc.constantFrom("/", "/", ".", "~", "-", "_", " ", "\n", '"', ":", "\u00e9", "\ud83d\ude00", "src", "a.ts", ".tar.gz", "HTTP/1.1", "../", "x".repeat(70)),
      fc.stringMatching(/^[A-Za-z0-9_.~-]{1,8}$/),
      fc.string({ maxLength: 3 }),
    ),
    { maxLength: 120 },
  )
  .map((parts) => parts.join(""));

describe("firstPath", () => {
  it("finds what PATH.exec finds, on any text", () => {
    fc.assert(
      fc.property(pathy, (text) => {
        expect(firstPath(text), JSON.stringify(text)).toBe(PATH.exec(text)?.[0]);
      }),
      { numRuns: 5000 },
    );
  });

  it("finds paths after long runs and near the 64-character segment bound", () => {
    for (const text of [
      `${"a".repeat(63)}/b.ts`, `${"a".repeat(64)}/b.ts`, `${"a".repeat(65)}/b.ts`, `see ${"d/".repeat(13)}f.md here`,
      'GET /api/v1 HTTP/1.1 {"file":"src/window/window.ts"}', "no slash at all", "trailing/", "/root/only.c",
    ]) {
      expect(firstPath(text), text).toBe(PATH.exec(text)?.[0]);
    }
  });
});
