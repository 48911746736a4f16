// Barrels: a policy module that re-exports another's names (`export { … } from`, `export * from`) is read
// statically like an import, so a policy importing through one compiles to the IR of a direct import; a
// re-export cycle is a located diagnostic, and the project root confines re-exports as it does imports.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compilePolicies } from "../../compiler/index.js";
import { codes, col, compile, expectClean, expectDiagnostic, HEADER, ORG } from "./helpers.js";

/** An overlay of ORG that uses its default export and its named `ticket`, importing both with `importLine` (line 2). */
const team = (importLine: string) => `${HEADER}${importLine}
export default extendPolicy(org, {
  name: "team",
  kinds: { toolResult: { modes: ["drop"], lossy: "forbid", pins: [pins.requestId, ticket] } },
});
`;
const DIRECT = { "org.policy.ts": ORG, "team.policy.ts": team(`import org, { ticket } from "./org.policy.js";`) };
const teamIR = (files: Record<string, string>) => {
  const r = compile(files);
  expectClean(r);
  return { team: r.policies.find((p) => p.file === "team.policy.ts"), files: r.policies.map((p) => p.file) };
};

describe("barrel re-exports compile to the IR of a direct import", () => {
  const direct = teamIR(DIRECT);
  it.each([
    ["named and default", `export { ticket } from "./org.policy.js";\nexport { default } from "./org.policy.js";\n`, `import org, { ticket } from "./index.policy.js";`],
    ["default as a name", `export { default as org, ticket } from "./org.policy.js";\n`, `import { org, ticket } from "./index.policy.js";`],
    ["a name as the default", `export { ticket, default as default } from "./org.policy.js";\n`, `import org, { ticket } from "./index.policy.js";`],
    ["export * with the default", `export * from "./org.policy.js";\nexport { default } from "./org.policy.js";\n`, `import org, { ticket } from "./index.policy.js";`],
    ["a barrel of a barrel", `export * from "./inner.policy.js";\nexport { default } from "./inner.policy.js";\n`, `import org, { ticket } from "./index.policy.js";`],
    ["a local re-export of an import", `import base, { ticket } from "./org.policy.js";\nexport { base as default, ticket };\n`, `import org, { ticket } from "./index.policy.js";`],
  ])("%s", (_name, barrel, importLine) => {
    const inner = { "inner.policy.ts": `export { default, ticket } from "./org.policy.js";\n` };
    const viaBarrel = teamIR({ "org.policy.ts": ORG, "index.policy.ts": barrel, ...inner, "team.policy.ts": team(importLine) });
    expect(viaBarrel.team).toEqual(direct.team);
    // The barrel declares no policy: org is compiled once, from its own file.
    expect(viaBarrel.files).toEqual(["org.policy.ts", "team.policy.ts"]);
  });

  it("a barrel compiled on its own is clean and emits its base's policy once", () => {
    const r = compile({ "org.policy.ts": ORG, "index.policy.ts": `export { default, ticket } from "./org.policy.js";\n` }, ["index.policy.ts"]);
    expect(codes(r)).toEqual([]);
    expect(r.policies.map((p) => p.name)).toEqual(["org"]);
  });

  it("re-exports DSL builders, and skips type-only re-exports without reading them", () => {
    const dsl = `export { hours, store as storage } from "pruneguard/dsl";\nexport type { Nothing } from "./types.js";\n`;
    const p = `import { definePolicy } from "pruneguard/dsl";\nimport { hours, storage } from "./dsl.policy.js";\nexport default definePolicy({ name: "p", stores: { s: storage.sqlite({ retention: hours(2) }) }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid" } } });\n`;
    expectClean(compile({ "dsl.policy.ts": dsl, "p.policy.ts": p }));
  });
});

describe("re-export mistakes are located diagnostics", () => {
  it("PG2004: a re-export cycle, at the re-export that closes it, never a hang", () => {
    const a = `${HEADER}export { x } from "./b.policy.js";\nexport default definePolicy({ name: "a", stores: {}, kinds: {} });\n`;
    const bLine = `export { x } from "./a.policy.js";`;
    const r = compile({ "a.policy.ts": a, "b.policy.ts": `${bLine}\n` }, ["a.policy.ts"]);
    const d = expectDiagnostic(r, "PG2004", 1, col(bLine, `"./a.policy.js"`), "b.policy.ts");
    expect(d.message).toBe("policy modules import or re-export each other in a cycle: a.policy.ts → b.policy.ts → a.policy.ts");
  });
  it("PG2004: export * rings and a module re-exporting itself", () => {
    const ring = compile({
      "a.policy.ts": `export * from "./b.policy.js";\n`,
      "b.policy.ts": `export * from "./c.policy.js";\n`,
      "c.policy.ts": `export * from "./a.policy.js";\n`,
    }, ["a.policy.ts"]);
    expect(expectDiagnostic(ring, "PG2004", 1, 15, "c.policy.ts").message).toContain("a.policy.ts → b.policy.ts → c.policy.ts → a.policy.ts");
    expectDiagnostic(compile({ "a.policy.ts": `export * from "./a.policy.js";\n` }), "PG2004", 1, 15, "a.policy.ts");
  });
  it("PG1009: a name the module does not export, at the name", () => {
    const line = `export { default, tickets } from "./org.policy.js";`;
    const d = expectDiagnostic(compile({ "org.policy.ts": ORG, "index.policy.ts": `${line}\n` }), "PG1009", 1, col(line, "tickets"), "index.policy.ts");
    expect(d.message).toBe("policy module `org.policy.ts` does not export `tickets`");
  });
  it("PG1009: the default of a barrel that has none, at the import", () => {
    const r = compile({ "org.policy.ts": ORG, "pins.policy.ts": `export { ticket } from "./org.policy.js";\n`, "team.policy.ts": team(`import org, { ticket } from "./pins.policy.js";`) });
    expect(expectDiagnostic(r, "PG1009", 3, 29, "team.policy.ts").message).toContain("`pins.policy.ts` has no default export: it only re-exports");
  });
  it("PG1009: a namespace re-export of a policy", () => {
    expectDiagnostic(compile({ "org.policy.ts": ORG, "index.policy.ts": `export * as org from "./org.policy.js";\n` }), "PG1009", 1, 8, "index.policy.ts");
  });
  it("PG2002: the same name exported twice, and two export * that disagree", () => {
    const twice = compile({ "org.policy.ts": ORG, "index.policy.ts": `${HEADER}export { default } from "./org.policy.js";\nexport default definePolicy({ name: "i", stores: {}, kinds: {} });\n` });
    expect(expectDiagnostic(twice, "PG2002", 3, 1, "index.policy.ts").message).toBe("export `default` is declared more than once");
    const other = `${HEADER}export const ticket = pin("other", "O-\\\\d+");\nexport default definePolicy({ name: "other", stores: {}, kinds: {} });\n`;
    const stars = compile({ "org.policy.ts": ORG, "other.policy.ts": other, "index.policy.ts": `export * from "./org.policy.js";\nexport * from "./other.policy.js";\n` }, ["index.policy.ts"]);
    expect(expectDiagnostic(stars, "PG2002", 2, 1, "index.policy.ts").message).toBe("export `ticket` is declared more than once");
  });
  it("PG1018: a re-export that climbs out of the root", () => {
    const r = compilePolicies({ files: { "org.policy.ts": ORG, "policies/index.policy.ts": `export { default } from "../org.policy.js";\n` }, entries: ["policies/index.policy.ts"] }, { root: "policies" });
    expectDiagnostic(r, "PG1018", 1, 25, "policies/index.policy.ts");
    expect(r.sources.has("org.policy.ts")).toBe(false);
  });
});

describe("on disk: a re-export through a link out of the root is not read", () => {
  const outside = mkdtempSync(path.join(tmpdir(), "pruneguard-barrel-outside-"));
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-barrel-root-"));
  afterAll(() => {
    rmSync(outside, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(path.join(outside, "org.policy.ts"), ORG);
  mkdirSync(path.join(dir, "policies"));
  symlinkSync(path.join(outside, "org.policy.ts"), path.join(dir, "policies/linked.policy.ts"));
  writeFileSync(path.join(dir, "policies/index.policy.ts"), `export { default } from "./linked.policy.js";\n`);
  it("PG1018 at the specifier", () => {
    const r = compilePolicies(["policies/index.policy.ts"], { cwd: dir });
    const d = expectDiagnostic(r, "PG1018", 1, 25, "policies/index.policy.ts");
    expect(d.message).toContain("symbolic link that leads outside the project root");
    expect(r.sources.has("policies/linked.policy.ts")).toBe(false);
  });
});
