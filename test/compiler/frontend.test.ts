// The front end reads policies without running them: every kind of bad input is a located diagnostic.
import { existsSync, rmSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lowerToRuntime } from "../../compiler/index.js";
import { DEFAULT_COMPACTION } from "../../src/policy/kinds.js";
import { KIND_NAME } from "../../src/window/window-options-schema.js";
import { codes, col, compile, compileOne, compileOverlay, expectClean, expectDiagnostic, HEADER, ORG } from "./helpers.js";

const ok = `export default definePolicy({ name: "p", stores: {}, kinds: { a: { store: null, modes: ["drop"], lossy: "with-flag" } } });\n`;

describe("PG1001 syntax errors", () => {
  it("reports the parser's error at its location", () => {
    const r = compileOne(`export default definePolicy({ name: "p", \n`);
    expectDiagnostic(r, "PG1001", 3, 1);
    expect(r.policies).toEqual([]);
  });
});

describe("PG1002 statements that would run code", () => {
  it("does not execute a top-level require(...).writeFileSync or process.exit", () => {
    const marker = `/tmp/pruneguard-side-effect-${process.pid}`;
    rmSync(marker, { force: true });
    const r = compileOne(`require("fs").writeFileSync(${JSON.stringify(marker)}, "ran");\nprocess.exit(3);\n${ok}`);
    expectDiagnostic(r, "PG1002", 2, 1);
    expect(r.diagnostics.filter((d) => d.code === "PG1002")).toHaveLength(2);
    expect(existsSync(marker)).toBe(false);
  });
  it("rejects let, functions and classes", () => {
    const r = compileOne(`let x = 1;\nfunction f() {}\nclass C {}\n${ok}`);
    expect(codes(r).filter((c) => c === "PG1002")).toHaveLength(3);
  });
  it("accepts types and consts", () => {
    expectClean(compileOne(`type T = string;\nconst kinds = { a: { store: null, modes: ["drop"], lossy: "with-flag" } } as const;\nexport default definePolicy({ name: "p", stores: {}, kinds });\n`));
  });
});

describe("PG1003 non-static expressions", () => {
  it("reports process.env as a whole", () => {
    const d = expectDiagnostic(compileOne(`export default definePolicy({ name: process.env.TEAM, stores: {}, kinds: {} });\n`), "PG1003", 2, 37);
    expect(d.message).toContain("`process.env.TEAM`");
  });
  it("accepts arithmetic on numbers inside a duration, and template strings", () => {
    expectClean(
      compileOne(
        `const team = "search";\nexport default definePolicy({ name: \`team-\${team}\`, stores: { s: store.memory({ retention: minutes(60 + 30) }) }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid" } }, session: { maxLength: hours(1.5) } });\n`,
      ),
    );
  });
});

describe("PG1004 / PG1005 / PG1006", () => {
  it("PG1004: computed keys", () => {
    expectDiagnostic(compileOne(`const k = "a";\nexport default definePolicy({ name: "p", stores: {}, kinds: { [k]: { store: null, modes: ["drop"], lossy: "with-flag" } } });\n`), "PG1004", 3, 63);
  });
  it("PG1005: spread of something unknown", () => {
    expectDiagnostic(compileOne(`export default definePolicy({ name: "p", stores: {}, kinds: { ...others } });\n`), "PG1005", 2, 63);
  });
  it("PG1005: spread of a const object is fine", () => {
    expectClean(compileOne(`const base = { a: { store: null, modes: ["drop"], lossy: "with-flag" } } as const;\nexport default definePolicy({ name: "p", stores: {}, kinds: { ...base } });\n`));
  });
  it("PG1006: a call that is not DSL", () => {
    const d = expectDiagnostic(compileOne(`export default definePolicy({ name: teamName(), stores: {}, kinds: {} });\n`), "PG1006", 2, 37);
    expect(d.message).toContain("`teamName(...)`");
    expect(d.message).toContain("write the value it would return here, as a literal or a const this file declares");
  });
});

describe("PG1006 a call to a function the policy declares", () => {
  const stores = `  stores: { toolLog: store.sqlite({ retention: hours(2), holds: true }) },`;
  const withKinds = (before: string, kinds: string) => `${before}export default definePolicy({\n  name: "p",\n${stores}\n${kinds}\n});\n`;

  it("is reported at the call, not at the helper, and suggests the const that replaces it", () => {
    const helper = `const toolKind = () => ({ store: "toolLog", modes: ["drop"], lossy: "forbid" } as const);\n`;
    const kinds = `  kinds: { toolResult: toolKind() },`;
    const r = compileOne(withKinds(helper, kinds));
    const d = expectDiagnostic(r, "PG1006", 6, col(kinds, "toolKind()"));
    expect(d.location).toMatchObject({ endLine: 6, endColumn: col(kinds, "toolKind()") + "toolKind()".length });
    expect(d.message).toBe(
      "`toolKind(...)` is not a DSL call: a policy is read, never run, so it may only call `pruneguard/dsl` builders; " +
        'make `toolKind` the value it returns, `const toolKind = { store: "toolLog", modes: ["drop"], lossy: "forbid" } as const;`, and write `toolKind` instead of `toolKind()`',
    );
    expect(d.related).toEqual([{ message: "`toolKind` is declared here", location: expect.objectContaining({ file: "p.policy.ts", line: 2, column: 7 }) }]);
    // One mistake, one diagnostic: not also PG1003 at the arrow function.
    expect(codes(r)).toEqual(["PG1006"]);
    // The suggestion is what the compiler reads.
    expectClean(compileOne(withKinds(`const toolKind = { store: "toolLog", modes: ["drop"], lossy: "forbid" } as const;\n`, `  kinds: { toolResult: toolKind },`)));
  });

  it("writes each call's arguments into what a helper with parameters returns", () => {
    const helper = `function kind(store: string, lossy = "forbid") {\n  return { store, modes: ["drop"], lossy };\n}\n`;
    const kinds = `  kinds: { toolResult: kind("toolLog"), audit: kind("toolLog", "with-flag") },`;
    const r = compileOne(withKinds(helper, kinds));
    expect(codes(r)).toEqual(["PG1006", "PG1006"]);
    const [first, second] = r.diagnostics;
    expect(first!.location).toMatchObject({ line: 8, column: col(kinds, `kind("toolLog")`) });
    expect(second!.location).toMatchObject({ line: 8, column: col(kinds, `kind("toolLog", "with-flag")`) });
    expect(first!.message).toContain('write what this call returns here, `{ store: "toolLog", modes: ["drop"], lossy: "forbid" }`');
    expect(second!.message).toContain('write what this call returns here, `{ store: "toolLog", modes: ["drop"], lossy: "with-flag" }`');
    expect(first!.message).toContain("a part several calls share can be a const spread into each (`{ ...shared, … }`)");
    expect(first!.related[0]).toMatchObject({ message: "`kind` is declared here", location: { line: 2, column: 10 } });
    // Not also PG1002 at the function declaration: the calls are where the policy has to change.
    expect(codes(r)).not.toContain("PG1002");
    const inlined = `  kinds: { toolResult: { store: "toolLog", modes: ["drop"], lossy: "forbid" }, audit: { store: "toolLog", modes: ["drop"], lossy: "with-flag" } },`;
    expectClean(compileOne(withKinds("", inlined)));
  });

  it("replaces a parameter where it is read, not where the same name is a property or a member", () => {
    // The parser sets no parent pointers: what the identifier stands under is passed down the walk (functions.ts).
    const helper = `function kind(store: string, lossy = "forbid") {\n  return { store: store, modes: ["drop"], lossy, note: { store: lossy }.store };\n}\n`;
    const kinds = `  kinds: { toolResult: kind("toolLog"), audit: kind("toolLog", "with-flag") },`;
    const [first, second] = compileOne(withKinds(helper, kinds)).diagnostics;
    expect(first!.message).toContain('write what this call returns here, `{ store: "toolLog", modes: ["drop"], lossy: "forbid", note: { store: "forbid" }.store }`');
    expect(second!.message).toContain('write what this call returns here, `{ store: "toolLog", modes: ["drop"], lossy: "with-flag", note: { store: "with-flag" }.store }`');
  });

  it("suggests no text computed from an argument, which would not be static either (`\"payments\".length`)", () => {
    for (const body of ["team.length", "(team).length", "(team as string).length", "typeof team", "`${team}Log`", "team + \"Log\"", "team ? \"toolLog\" : \"x\""]) {
      const helper = `const storeFor = (team: string) => ${body};\n`;
      const kinds = `  kinds: { toolResult: { store: storeFor("tool"), modes: ["drop"], lossy: "forbid" } },`;
      const d = expectDiagnostic(compileOne(withKinds(helper, kinds)), "PG1006", 6, col(kinds, "storeFor("));
      expect(d.message, body).toContain("write what `storeFor` returns here, as a literal or a const the compiler can read");
      expect(d.message, body).not.toContain('"tool"');
    }
  });

  it("says what to do without the text when the helper's body is more than one return", () => {
    const helper = `function kind(store: string) {\n  const modes = ["drop"];\n  return { store, modes, lossy: "forbid" };\n}\n`;
    const kinds = `  kinds: { toolResult: kind("toolLog") },`;
    const d = expectDiagnostic(compileOne(withKinds(helper, kinds)), "PG1006", 9, col(kinds, "kind("));
    expect(d.message).toContain("write what `kind` returns here, as a literal or a const the compiler can read");
  });

  it("is reported in the file that calls a helper another policy module exports", () => {
    const kinds = `  kinds: { toolResult: toolKind("toolLog") },`;
    const r = compile({
      "lib.policy.ts": `${HEADER}export const toolKind = (store: string) => ({ store, modes: ["drop"], lossy: "forbid" }) as const;\n${ok}`,
      "p.policy.ts": HEADER + withKinds(`import { toolKind } from "./lib.policy.js";\n`, kinds),
    });
    const d = expectDiagnostic(r, "PG1006", 6, col(kinds, "toolKind("));
    expect(d.related[0]).toMatchObject({ location: { file: "lib.policy.ts", line: 2, column: 14 } });
    expect(d.message).toContain('`{ store: "toolLog", modes: ["drop"], lossy: "forbid" }`');
  });

  it("says a value called as a function is a value", () => {
    const line = `export default definePolicy({ name: "p", stores: { s: store.memory({ retention: forever() }) }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid" } } });`;
    const d = expectDiagnostic(compileOne(`${line}\n`), "PG1006", 2, col(line, "forever()"));
    expect(d.message).toContain("; `forever` is a value, not a function: write `forever` without the call");
    expectClean(compileOne(`${line.replace("forever()", "forever")}\n`));
  });

  it("still reports a helper nothing calls where it is declared", () => {
    const r = compileOne(`const unused = () => 1;\nfunction alsoUnused() { return 2; }\n${ok}`);
    expectDiagnostic(r, "PG1003", 2, 16);
    expectDiagnostic(r, "PG1002", 3, 1);
  });
});

describe("PG1022 a misspelt member of a const object", () => {
  const lossy = `const Lossy = { Forbid: "forbid", WithFlag: "with-flag" } as const;\n`;
  const body = (kind: string) => `${lossy}export default definePolicy({\n  name: "p",\n  stores: {},\n${kind}\n});\n`;

  it("says which member is misspelt, suggests the nearest, and lists them all", () => {
    const kinds = `  kinds: { audit: { store: null, modes: ["drop"], lossy: Lossy.Forbidd } },`;
    const r = compileOne(body(kinds));
    const d = expectDiagnostic(r, "PG1022", 6, col(kinds, "Forbidd"));
    expect(d.location).toMatchObject({ endLine: 6, endColumn: col(kinds, "Forbidd") + "Forbidd".length });
    expect(d.message).toBe("`Forbidd` is not a member of `Lossy`; did you mean `Forbid`? (members: `Forbid`, `WithFlag`)");
    expect(d.related).toEqual([{ message: "the members of `Lossy` are written here", location: expect.objectContaining({ line: 2, column: 15 }) }]);
    expect(codes(r)).toEqual(["PG1022"]);
    expectClean(compileOne(body(kinds.replace("Lossy.Forbidd", "Lossy.WithFlag"))));
  });

  it("reads an element access the same way, and suggests nothing when no member is close", () => {
    const kinds = `  kinds: { audit: { store: null, modes: ["drop"], lossy: Lossy["Forbidd"] }, scratch: { store: null, modes: ["drop"], lossy: Lossy.Allow } },`;
    const r = compileOne(body(kinds));
    expect(r.diagnostics.map((d) => [d.code, d.location?.column, d.message])).toEqual([
      ["PG1022", col(kinds, `"Forbidd"`), "`Forbidd` is not a member of `Lossy`; did you mean `Forbid`? (members: `Forbid`, `WithFlag`)"],
      ["PG1022", col(kinds, "Allow"), "`Allow` is not a member of `Lossy` (members: `Forbid`, `WithFlag`)"],
    ]);
  });

  it("names the object as written when it is nested", () => {
    const r = compileOne(`const Rules = { lossy: { Forbid: "forbid" } } as const;\n${ok.replace(`lossy: "with-flag"`, "lossy: Rules.lossy.forbid")}`);
    expect(r.diagnostics.map((d) => d.message)).toEqual(["`forbid` is not a member of `Rules.lossy`; did you mean `Forbid`? (members: `Forbid`)"]);
  });

  it("a DSL namespace's member is suggested and listed the same way", () => {
    const line = `export default definePolicy({ name: "p", stores: {}, kinds: { a: { store: null, modes: ["drop"], lossy: "forbid", pins: [pins.requestid] } } });`;
    const d = expectDiagnostic(compileOne(`${line}\n`), "PG1010", 2, col(line, "pins.requestid"));
    expect(d.message).toMatch(/^`pruneguard\/dsl` has no export `pins\.requestid` \(did you mean `requestId`\? presets: requestId, uuid, .*, ticket\)$/);
    const ns = `export default pg.definePolicyy({ name: "p", stores: {}, kinds: {} });`;
    const e = expectDiagnostic(compile({ "p.policy.ts": `import * as pg from "pruneguard/dsl";\n${ns}\n` }), "PG1010", 2, col(ns, "pg.definePolicyy"));
    expect(e.message).toContain("has no export `definePolicyy` (did you mean `definePolicy`? exports: definePolicy, extendPolicy, store,");
  });
});

describe("PG1007 default export", () => {
  it("fails without a default export", () => {
    expectDiagnostic(compileOne(`const x = 1;\n`), "PG1007", 1, 1);
  });
  it("fails on a plain object", () => {
    expectDiagnostic(compileOne(`export default { name: "p" };\n`), "PG1007", 2, 16);
  });
});

describe("imports", () => {
  it("PG1008: a missing policy module", () => {
    const d = expectDiagnostic(compileOne(`import org from "./orgg.policy.js";\nexport default extendPolicy(org, { name: "t" });\n`), "PG1008", 2, 17);
    expect(d.message).toContain("orgg.policy.ts");
  });
  // tsc under NodeNext (the editor) cannot resolve an extensionless relative import of an ES module, so
  // the compiler refuses it too, with the import that both resolve (test/compiler/tsc-agreement.test.ts).
  it("PG1021: an extensionless import, at the specifier, with the fix", () => {
    const team = (spec: string) => ({ "org.policy.ts": ORG, "team.policy.ts": `${HEADER}import org from "${spec}";\nexport default extendPolicy(org, { name: "team" });\n` });
    const d = expectDiagnostic(compile(team("./org.policy")), "PG1021", 2, 17, "team.policy.ts");
    expect(d.message).toContain("write `./org.policy.js`, which resolves to `org.policy.ts`");
    expect(d.category).toBe("error");
    expect(expectDiagnostic(compile(team("./org")), "PG1021", 2, 17, "team.policy.ts").message).toContain("write `./org.policy.js`");
    expect(expectDiagnostic(compile(team("./orgg.policy")), "PG1021", 2, 17, "team.policy.ts").message).toContain("write `./orgg.policy.js`, though no `orgg.policy.ts` exists either");
    // What tsc resolves, the compiler resolves: the emitted name, and the source name (which tsc takes
    // under allowImportingTsExtensions or rewriteRelativeImportExtensions; docs/policy-language.md).
    for (const spec of ["./org.policy.js", "./org.policy.ts"]) expect(codes(compile(team(spec))), spec).toEqual([]);
  });
  it("PG1009: a module that is not a policy", () => {
    const r = compile({ "p.policy.ts": `${HEADER}import { readFileSync } from "node:fs";\nimport helper from "./helper.js";\n${ok}`, "helper.ts": "export default 1;\n" });
    expectDiagnostic(r, "PG1009", 2, 30);
    expect(r.diagnostics.filter((d) => d.code === "PG1009")).toHaveLength(2);
  });
  it("PG1010: an unknown DSL export, with a suggestion", () => {
    const r = compile({ "p.policy.ts": `import { definePolicyy } from "pruneguard/dsl";\n${ok}` });
    const d = expectDiagnostic(r, "PG1010", 1, 10);
    expect(d.message).toContain("did you mean `definePolicy`");
  });
  it("PG1010: an enum-like name another library would export says the values are strings", () => {
    const lossy = compile({ "p.policy.ts": `import { Lossy } from "pruneguard/dsl";\n${ok}` });
    expect(expectDiagnostic(lossy, "PG1010", 1, 10).message).toBe('`pruneguard/dsl` has no export `Lossy` (a lossy rule is a string: `lossy: "forbid"` or `lossy: "with-flag"`)');
    const modes = compile({ "p.policy.ts": `import * as dsl from "pruneguard/dsl";\nconst m = dsl.PruneMode;\n${ok}` });
    expect(expectDiagnostic(modes, "PG1010", 2, 11).message).toBe('`pruneguard/dsl` has no export `PruneMode` (modes are strings: `modes: ["drop", "summarize", "compress"]`)');
  });
  it("accepts a namespace import of the DSL", () => {
    expectClean(compile({ "p.policy.ts": `import * as pg from "pruneguard/dsl";\nexport default pg.definePolicy({ name: "p", stores: { s: pg.store.sqlite({ retention: pg.days(1) }) }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid", pins: [pg.pins.uuid] } } });\n` }));
  });
});

describe("PG1011 / PG1012 / PG1013 values", () => {
  // Worded as the runtime words the same mistake when a window is built (test/window/options.test.ts),
  // not as the validator's raw text with an index path (`invalid option … (at kinds.0.lossy)`).
  it("PG1011: an unknown mode, at the mode, worded as the runtime words it", () => {
    const line = `export default definePolicy({ name: "p", stores: {}, kinds: { a: { store: null, modes: ["drop", "delete"], lossy: "with-flag" } } });`;
    const d = expectDiagnostic(compileOne(`${line}\n`), "PG1011", 2, col(line, `"delete"`));
    expect(d.message).toBe('kinds.a.modes: must be "drop", "summarize" or "compress", got "delete"');
  });
  it("PG1011: a lossy rule that is not one, at the value, worded as the runtime words it, with a suggestion", () => {
    const kind = (lossy: string) => `export default definePolicy({ name: "p", stores: {}, kinds: { audit: { store: null, modes: ["drop"], lossy: ${lossy} } } });`;
    const allow = kind(`"allow"`);
    expect(expectDiagnostic(compileOne(`${allow}\n`), "PG1011", 2, col(allow, `"allow"`)).message).toBe('kinds.audit.lossy: must be "forbid" or "with-flag", got "allow"');
    const typo = kind(`"with_flag"`);
    expect(expectDiagnostic(compileOne(`${typo}\n`), "PG1011", 2, col(typo, `"with_flag"`)).message).toBe('kinds.audit.lossy: must be "forbid" or "with-flag", got "with_flag" (did you mean `with-flag`?)');
    const bool = kind("true");
    expect(expectDiagnostic(compileOne(`${bool}\n`), "PG1011", 2, col(bool, "true")).message).toBe('kinds.audit.lossy: must be "forbid" or "with-flag", got a boolean');
    // An overlay's override is named the same way.
    const overlay = `export default extendPolicy(org, { name: "team", kinds: { userTurn: { lossy: "Forbid" } } });`;
    const r = compile({ "org.policy.ts": ORG, "team.policy.ts": `${HEADER}import org from "./org.policy.js";\n${overlay}\n` });
    expect(expectDiagnostic(r, "PG1011", 3, col(overlay, `"Forbid"`), "team.policy.ts").message).toBe('kinds.userTurn.lossy: must be "forbid" or "with-flag", got "Forbid" (did you mean `forbid`?)');
  });
  it("PG1011 from the IR schema names the path as written, by names, not indexes", () => {
    const d = compileOne(`export default definePolicy({ name: "p", stores: {}, kinds: { "not-an-id": { store: null, modes: ["drop"], lossy: "with-flag" } } });\n`).diagnostics.find((x) => x.code === "PG1011");
    expect(d?.message).toMatch(/^kinds\.not-an-id\.name: must be an identifier/);
    expect(d?.message).not.toContain("(at ");
  });
  it("PG1011: a kind name longer than the runtime's 64 characters, at the name, in a policy or an overlay", () => {
    const long = "k".repeat(70);
    const line = `export default definePolicy({ name: "p", stores: {}, kinds: { ${long}: { store: null, modes: ["drop"], lossy: "with-flag" } } });`;
    const d = expectDiagnostic(compileOne(`${line}\n`), "PG1011", 2, 63);
    expect(col(line, long)).toBe(63);
    expect(d.message).toBe(`kinds.${long}.name: must be at most 64 characters`);
    const overlay = `  kinds: { ${long}: { store: "toolLog", modes: ["drop"], lossy: "forbid" } },`;
    expectDiagnostic(compileOverlay(overlay), "PG1011", 5, 12, "team.policy.ts");
    // The compiler's limit is the runtime's: what it accepts, createWindow takes.
    expectClean(compileOne(line.replace(long, "k".repeat(64)) + "\n"));
    expect([KIND_NAME.test("k".repeat(64)), KIND_NAME.test("k".repeat(65))]).toEqual([true, false]);
  });
  it("PG1011: a store name longer than 64 characters, at the name (one rule for both kinds of name)", () => {
    const long = "s".repeat(65);
    const line = `export default definePolicy({ name: "p", stores: { ${long}: store.sqlite({ retention: hours(2) }) }, kinds: {} });`;
    expect(expectDiagnostic(compileOne(`${line}\n`), "PG1011", 2, col(line, long)).message).toBe(`stores.${long}.name: must be at most 64 characters`);
  });
  it("PG1011: a bare number where a duration is expected", () => {
    expectDiagnostic(compileOne(`export default definePolicy({ name: "p", stores: { s: store.sqlite({ retention: 7200000 }) }, kinds: {} });\n`), "PG1011", 2, 81);
  });
  it("PG1011: a search budget too small for the coverage line, located at the value", () => {
    const d = expectDiagnostic(compileOne(`export default definePolicy({ name: "p", stores: {}, kinds: {}, session: { searchTokens: 20 } });\n`), "PG1011", 2, 90);
    expect(d.message).toContain("at least 64");
  });
  it("session.searchTokens reaches the runtime policy", () => {
    const r = compileOne(`export default definePolicy({ name: "p", stores: {}, kinds: {}, session: { searchTokens: 250 } });\n`);
    expectClean(r);
    expect(r.policies[0]!.session.searchTokens).toBe(250);
  });
  const withCompaction = (value: string) => `export default definePolicy({ name: "p", stores: {}, kinds: {}, session: { compaction: ${value} } });`;
  it("PG1011: a compaction that is neither \"immediate\" nor an object, located at the value, with a suggestion", () => {
    const line = withCompaction(`"immediatly"`);
    const d = expectDiagnostic(compileOne(`${line}\n`), "PG1011", 2, col(line, `"immediatly"`));
    expect(d.message).toBe('`compaction` must be "immediate" or an object { minFreedTokens?, atTokens? }, not "immediatly" (did you mean `immediate`?)');
    const number = withCompaction("20_000");
    expect(expectDiagnostic(compileOne(`${number}\n`), "PG1011", 2, col(number, "20_000")).message).toContain("not a number");
  });
  it("PG1012: an unknown compaction property, at its key, with a suggestion", () => {
    const line = withCompaction(`{ minFreedTokens: 20_000, atToken: 120_000 }`);
    const d = expectDiagnostic(compileOne(`${line}\n`), "PG1012", 2, col(line, "atToken"));
    expect(d.message).toBe("unknown property `atToken` in `session.compaction` (did you mean `atTokens`?)");
  });
  it("PG1011: a compaction threshold that is not a number, at the value", () => {
    const line = withCompaction(`{ minFreedTokens: "20k" }`);
    expectDiagnostic(compileOne(`${line}\n`), "PG1011", 2, col(line, `"20k"`));
  });
  it("session.compaction reaches the runtime policy: an object with its absent fields defaulted, or \"immediate\"", () => {
    const lowered = (value: string) => {
      const r = compileOne(`${withCompaction(value)}\n`);
      expectClean(r);
      return lowerToRuntime(r.policies[0]!).policy.session ?? {};
    };
    expect(lowered(`{ minFreedTokens: 20_000, atTokens: 120_000 }`).compaction).toEqual({ minFreedTokens: 20_000, atTokens: 120_000 });
    expect(lowered(`{ atTokens: 120_000 }`).compaction).toEqual({ minFreedTokens: DEFAULT_COMPACTION.minFreedTokens, atTokens: 120_000 });
    expect(lowered(`{}`).compaction).toEqual(DEFAULT_COMPACTION);
    expect(lowered(`"immediate"`).compaction).toBe("immediate");
    // Unset, it is left to the runtime's default: the lowered limits do not mention it.
    const unset = compileOne(ok);
    expect(lowerToRuntime(unset.policies[0]!).policy.session).not.toHaveProperty("compaction");
  });
  it("PG1012: a misspelt property, with a suggestion", () => {
    const d = expectDiagnostic(compileOne(`export default definePolicy({ name: "p", stores: { s: store.sqlite({ retension: hours(2) }) }, kinds: {} });\n`), "PG1012", 2, 70);
    expect(d.message).toContain("did you mean `retention`");
  });
  it("PG1013: a missing required property", () => {
    expectDiagnostic(compileOne(`export default definePolicy({ name: "p", stores: {}, kinds: { a: { store: null, lossy: "with-flag" } } });\n`), "PG1013", 2, 66);
  });
});

describe("diagnostics never throw", () => {
  it.each([
    ["empty file", ""],
    ["garbage", "}}}{{{ <<<>>>"],
    ["deep nonsense", `export default definePolicy(definePolicy(definePolicy()));`],
    ["a self-referencing const", `const a = a;\nexport default a;`],
    ["a string policy", `export default "org";`],
  ])("%s", (_name, text) => {
    const r = compile({ "p.policy.ts": text });
    expect(r.hasErrors).toBe(true);
    for (const d of r.diagnostics) expect(d.location).not.toBeNull();
  });
});

describe("PG1014 a DSL export used without importing it", () => {
  const only = `import { definePolicy, store } from "pruneguard/dsl";\n`;
  it("says the builder is not imported and how to import it", () => {
    const line = `export default definePolicy({ name: "p", stores: { s: store.sqlite({ retention: hours(4) }) }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid" } } });`;
    const r = compile({ "p.policy.ts": `${only}${line}\n` });
    const d = expectDiagnostic(r, "PG1014", 2, col(line, "hours(4)"));
    expect(d.message).toContain("`hours` is a `pruneguard/dsl` export, but this file does not import it");
    expect(d.message).toContain(`import { hours } from "pruneguard/dsl"`);
    expect(codes(r)).not.toContain("PG1006");
  });
  it("covers namespaces and values too: `pins.uuid`, `forever`", () => {
    const line = `export default definePolicy({ name: "p", stores: { s: store.sqlite({ retention: forever }) }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid", pins: [pins.uuid] } } });`;
    const r = compile({ "p.policy.ts": `${only}${line}\n` });
    expect(r.diagnostics.filter((d) => d.code === "PG1014").map((d) => [d.location?.column, d.message.slice(0, 9)])).toEqual([
      [col(line, "forever"), "`forever`"],
      [col(line, "pins.uuid"), "`pins` is"],
    ]);
  });
});

describe("PG1015 a misspelt kind in an overlay", () => {
  it("says the base has no such kind and suggests the closest", () => {
    const line = `  kinds: { toolReslt: { modes: ["drop"] } },`;
    const r = compileOverlay(line);
    const d = expectDiagnostic(r, "PG1015", 5, col(line, "toolReslt"), "team.policy.ts");
    expect(d.message).toContain("no kind `toolReslt` in the base `org`; did you mean `toolResult`?");
    expect(codes(r)).not.toContain("PG1013");
  });
  it("suggests nothing for a name far longer than any kind's", () => {
    const r = compileOverlay(`  kinds: { toolResult${"x".repeat(500)}: { modes: ["drop"] } },`);
    expect(codes(r)).toContain("PG1013");
    expect(codes(r)).not.toContain("PG1015");
  });
  it("leaves a new kind far from every base kind to PG1013", () => {
    expect(codes(compileOverlay(`  kinds: { searchHit: { modes: ["drop"] } },`))).toContain("PG1013");
  });
});

describe("PG1016 arithmetic on durations", () => {
  it("says the editor rejects it and computes the one-builder form", () => {
    const line = `export default definePolicy({ name: "p", stores: { s: store.memory({ retention: hours(1) + minutes(30) }) }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid" } } });`;
    const d = expectDiagnostic(compileOne(`${line}\n`), "PG1016", 2, col(line, "hours(1)"));
    expect(d.message).toContain("`minutes(90)`");
  });
});

describe("PG1017 nesting limits: a diagnostic with a location, never a stack overflow", () => {
  const policyWith = (pins: string) => `export default definePolicy({ name: "p", stores: {}, kinds: {}, pins: ${pins} });\n`;
  it("an 8 KB 1+1+…+1 expression", () => {
    const r = compileOne(policyWith(Array(4096).fill("1").join("+")));
    const d = expectDiagnostic(r, "PG1017", 2, 71);
    expect(d.message).toContain("100 levels");
  });
  it.each([
    ["arrays", (n: number) => "[".repeat(n) + "]".repeat(n)],
    ["parentheses", (n: number) => "(".repeat(n) + "1" + ")".repeat(n)],
    ["objects", (n: number) => "{a:".repeat(n) + "1" + "}".repeat(n)],
    ["template holes", (n: number) => "`${".repeat(n) + "1" + "}`".repeat(n)],
  ])("deeply nested %s, before the parser sees them", (_what, make) => {
    for (const n of [150, 20_000]) {
      const r = compileOne(policyWith(make(n)));
      const d = r.diagnostics.find((x) => x.code === "PG1017");
      expect(d?.location, `${n}`).toMatchObject({ file: "p.policy.ts", line: 2 });
    }
  });
  it("a deep chain of consts, each referring to the next one declared", () => {
    const consts = Array.from({ length: 5000 }, (_, i) => `const c${i} = c${i + 1};`).join("\n");
    const r = compileOne(`${consts}\nconst c5000 = [];\n${policyWith("c0")}`);
    expect(codes(r)).toContain("PG1017");
    for (const d of r.diagnostics) expect(d.location).not.toBeNull();
  });
  it("a chain of policy modules each importing the next", () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i++) files[`m${i}.policy.ts`] = `${HEADER}import b from "./m${i + 1}.policy.js";\nexport default extendPolicy(b, { name: "m${i}" });\n`;
    files["m150.policy.ts"] = `${HEADER}export default definePolicy({ name: "m150", stores: {}, kinds: {} });\n`;
    const r = compile(files, ["m0.policy.ts"]);
    const d = r.diagnostics.find((x) => x.code === "PG1017");
    expect(d?.message).toContain("this chain of imports");
    expect(d?.location?.line).toBe(2);
  });
  it("prefix operators the parser recurses on", () => {
    const r = compileOne(policyWith("-".repeat(20_000) + "1"));
    expect(r.hasErrors).toBe(true);
    for (const d of r.diagnostics) expect(d.location).not.toBeNull();
  });
});

describe("property: any token soup is diagnostics with locations, never a throw", () => {
  const TOKENS = [
    "export default ", "definePolicy(", "extendPolicy(", "store.sqlite(", "hours(", "pin(", "pins.uuid", "{", "}", "[", "]", "(", ")", ",", ":",
    "name: ", "\"p\"", "stores: ", "kinds: ", "a: ", "store: ", "modes: ", "lossy: ", "\"drop\"", "\"forbid\"", "retention: ", "2", "+", "-", "*",
    "null", "undefined", "...", "const x = ", "x", ";", "\n", "`${", "}`", "/a(/", "import org from \"./p.policy.js\";", "as const", "satisfies", "?", "=>",
  ];
  it("compiles without throwing, and every diagnostic has a location", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }), (tokens) => {
        const r = compileOne(tokens.join(""));
        for (const d of r.diagnostics) expect(d.location).not.toBeNull();
      }),
      { numRuns: Number(process.env["PRUNEGUARD_FUZZ_RUNS"] ?? 200) },
    );
  });
});
