// The catalogue is the single source of diagnostic codes: the docs are rendered from it, and every code
// has a test that produces it.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { catalogue } from "../../compiler/index.js";
import { renderDiagnosticsDoc } from "../../compiler/diagnostics/docs.js";
import { POLICY_EXPORTS } from "../../compiler/frontend/dsl-table.js";
import * as dsl from "../../dsl/index.js";

describe("diagnostic catalogue", () => {
  it("codes are grouped by range: PG1 syntax, PG2 semantics (errors), PG3 analysis (warnings)", () => {
    for (const [code, entry] of Object.entries(catalogue)) {
      expect(code).toMatch(/^PG[123]\d{3}$/);
      if (code.startsWith("PG3")) expect(entry.category).toBe("warning");
      else expect(entry.category).toBe("error");
    }
  });

  it("docs/diagnostics.md is rendered from the catalogue", () => {
    const rendered = renderDiagnosticsDoc();
    if (process.env["UPDATE_DOCS"]) writeFileSync("docs/diagnostics.md", rendered);
    expect(readFileSync("docs/diagnostics.md", "utf8")).toBe(rendered);
  });

  it("every code is produced by some test", () => {
    const tests = readdirSync("test/compiler").filter((f) => f.endsWith(".test.ts") && f !== "catalogue.test.ts");
    const text = tests.map((f) => readFileSync(`test/compiler/${f}`, "utf8")).join("\n");
    const untested = Object.keys(catalogue).filter((c) => !text.includes(`"${c}"`));
    expect(untested).toEqual([]);
  });

  it("the compiler knows exactly the DSL's exports: every one, and none it does not have", () => {
    expect([...POLICY_EXPORTS].sort()).toEqual(Object.keys(dsl).sort());
  });
});
