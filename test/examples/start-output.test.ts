// What `npm start` prints (dist/examples/start.js, after the build `npm test` runs first), spawned as a
// user runs it with a 120-column width asked for through `COLUMNS`: every line of stdout and stderr fits
// 120 columns — the compile step's warnings (321–443 characters on one line) wrap, and so does the
// incident replay's model-facing text — and what a newcomer reads is said once and explained: no
// `compacted: compacted:`, and what "freed" and "rewritten" mean.
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";

describe("npm start's output", () => {
  it("fits 120 columns and says what its numbers mean", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, COLUMNS: "120", NO_COLOR: "1" };
    // The guarded sides on SQLite, as a newcomer without a database runs it.
    for (const key of ["FORCE_COLOR", "PRUNEGUARD_PG_URL"]) delete env[key];
    const r = spawnSync(process.execPath, [path.resolve("dist/examples/start.js")], { env, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const lines = `${r.stdout}\n${r.stderr}`.split(/\r?\n/).map(stripVTControlCharacters);
    expect(lines.filter((l) => [...l].length > 120).map((l) => `${[...l].length}: ${l}`)).toEqual([]);
    const text = r.stdout;
    for (const step of ["1/4", "2/4", "3/4", "4/4"]) expect(text).toContain(`━━ ${step} `);
    // The compile step's warnings were wrapped, not left on one line of 443 characters.
    expect(r.stderr).toMatch(/warning PG3001: store `toolLog` retains copies for\s*\n {2}\S/);
    expect(text).not.toContain("compacted: compacted:");
    expect(text).toMatch(/compacted: \d+ decisions? applied, ~\d+ tokens freed, ~\d+ rewritten/);
    expect(text.replace(/\n» /g, " ")).toContain("\"rewritten\" counts its tokens from the first changed line to the end — the next request re-sends them without the prompt cache");
  });
});
