// Module resolution as the editor reads a policy file: from the nearest tsconfig.json inside the project
// root (and, under NodeNext, the nearest package.json). Under `bundler` an extensionless relative import
// resolves as tsc resolves it; under NodeNext in an ES module it is PG1021. tsc-agreement.test.ts runs the
// real tsc on the same projects.
import { describe, expect, it } from "vitest";
import { compilePolicies } from "../../compiler/index.js";
import { createSourceHost, readPolicies } from "../../compiler/frontend/index.js";
import { codes, compile, expectClean, expectDiagnostic, HEADER, ORG } from "./helpers.js";

const team = (specifier: string) => `${HEADER}import org from "${specifier}";\nexport default extendPolicy(org, { name: "team" });\n`;
const tsconfig = (compilerOptions: Record<string, unknown>) => JSON.stringify({ compilerOptions });
const ESM = JSON.stringify({ name: "policies", type: "module" });
const BUNDLER = tsconfig({ module: "esnext", moduleResolution: "bundler" });
const NODENEXT = tsconfig({ module: "NodeNext" });

describe("bundler resolution", () => {
  it("an extensionless import compiles, to the IR of the import that names its file", () => {
    const via = (specifier: string) => compile({ "tsconfig.json": BUNDLER, "package.json": ESM, "org.policy.ts": ORG, "team.policy.ts": team(specifier) });
    const extensionless = via("./org.policy");
    expectClean(extensionless);
    expect(extensionless.policies).toEqual(via("./org.policy.js").policies);
  });
  it("the same file under a NodeNext tsconfig is PG1021, naming the setting that decided it", () => {
    const r = compile({ "tsconfig.json": NODENEXT, "package.json": ESM, "org.policy.ts": ORG, "team.policy.ts": team("./org.policy") });
    const d = expectDiagnostic(r, "PG1021", 2, 17, "team.policy.ts");
    expect(d.message).toBe(
      "`./org.policy` has no file extension: under NodeNext module resolution (from `tsconfig.json`; `package.json` says `\"type\": \"module\"`) TypeScript (like Node) finds a relative import of an ES module only by its file's name, so the editor cannot resolve it either; write `./org.policy.js`, which resolves to `org.policy.ts`",
    );
  });
  it("without a tsconfig in the root, NodeNext is assumed and said so", () => {
    const d = expectDiagnostic(compile({ "org.policy.ts": ORG, "team.policy.ts": team("./org.policy") }), "PG1021", 2, 17, "team.policy.ts");
    expect(d.message).toContain("no tsconfig.json inside the project root covers this file");
  });
  it("a folder stands for its index.ts, which is not a policy; a missing file lists what was looked for", () => {
    const files = { "tsconfig.json": BUNDLER, "org.policy.ts": ORG, "base/index.ts": "export default 1;\n" };
    const folder = expectDiagnostic(compile({ ...files, "team.policy.ts": team("./base") }), "PG1009", 2, 17, "team.policy.ts");
    expect(folder.message).toContain("`./base` resolves to `base/index.ts`, which is not a policy module");
    const missing = expectDiagnostic(compile({ ...files, "team.policy.ts": team("./org") }), "PG1008", 2, 17, "team.policy.ts");
    expect(missing.message).toBe("cannot find policy module `./org` (looked for `org.ts` and `org/index.ts`, each also as .tsx and .d.ts; `org.policy.ts` is there: `./org.policy`)");
  });
});

describe("which tsconfig decides", () => {
  // What TypeScript 7's tsc does with each setting (node10 and classic are removed there: tsc reports the
  // setting and resolves without the ES module rule; a node module with a non-node resolution, or the
  // reverse, is a configuration error after which it does not apply the rule either).
  it.each([
    [{}, []],
    [{ module: "esnext" }, []],
    [{ module: "preserve" }, []],
    [{ module: "commonjs" }, []],
    [{ moduleResolution: "bundler" }, []],
    [{ module: "commonjs", moduleResolution: "node10" }, []],
    [{ moduleResolution: "node" }, []],
    [{ module: "nodenext", moduleResolution: "bundler" }, []],
    [{ moduleResolution: "nodenext" }, []],
    [{ module: "nodenext" }, ["PG1021"]],
    [{ module: "node16" }, ["PG1021"]],
    [{ module: "node20" }, ["PG1021"]],
    [{ module: "NodeNext", moduleResolution: "NodeNext" }, ["PG1021"]],
  ])("%j", (options, expected) => {
    expect(codes(compile({ "tsconfig.json": tsconfig(options), "package.json": ESM, "org.policy.ts": ORG, "team.policy.ts": team("./org.policy") }))).toEqual(expected);
  });
  it("the nearest one, walking up from the policy's folder", () => {
    const files = {
      "tsconfig.json": NODENEXT,
      "package.json": ESM,
      "org.policy.ts": ORG,
      "web/tsconfig.json": BUNDLER,
      "web/team.policy.ts": team("../org.policy"),
      "api/team.policy.ts": team("../org.policy").replace('"team"', '"api"'),
    };
    const r = compile(files);
    expect(r.diagnostics.map((d) => `${d.location?.file} ${d.code}`)).toEqual(["api/team.policy.ts PG1021"]);
  });
  it("follows `extends`, in JSON with comments, and reports what it read as inputs", () => {
    const files = {
      "tsconfig.base.json": `{\n  // shared\n  "compilerOptions": { "moduleResolution": "bundler", "module": "esnext", },\n}\n`,
      "tsconfig.json": `{ "extends": "./tsconfig.base.json" }`,
      "org.policy.ts": ORG,
      "team.policy.ts": team("./org.policy"),
    };
    expectClean(compile(files));
    const front = readPolicies(createSourceHost({ files }), ["/team.policy.ts"]);
    expect([...front.configs.keys()].sort()).toEqual(["tsconfig.base.json", "tsconfig.json"]);
    // A policy whose imports all name their files does not depend on any tsconfig.
    expect(readPolicies(createSourceHost({ files: { ...files, "team.policy.ts": team("./org.policy.js") } }), ["/team.policy.ts"]).configs.size).toBe(0);
  });
  it("never reads outside the root: an `extends` out of it, or a tsconfig above it, leaves NodeNext assumed", () => {
    const files = {
      "tsconfig.base.json": BUNDLER,
      "tsconfig.json": BUNDLER,
      "proj/tsconfig.json": `{ "extends": "../tsconfig.base.json" }`,
      "proj/org.policy.ts": ORG,
      "proj/team.policy.ts": team("./org.policy"),
    };
    const out = compilePolicies({ files, entries: ["proj/team.policy.ts"] }, { root: "proj" });
    expect(expectDiagnostic(out, "PG1021", 2, 17, "proj/team.policy.ts").message).toContain("`proj/tsconfig.json` extends `tsconfig.base.json`, which the compiler does not read");
    const { ["proj/tsconfig.json"]: _extending, ...above } = files;
    expect(codes(compilePolicies({ files: above, entries: ["proj/team.policy.ts"] }, { root: "proj" }))).toEqual(["PG1021"]);
  });
  it("a tsconfig larger than 1 MiB is not read", () => {
    const huge = `{ "compilerOptions": { "moduleResolution": "bundler", "module": "esnext" } }\n// ${"x".repeat(1024 * 1024)}\n`;
    const d = expectDiagnostic(compile({ "tsconfig.json": huge, "org.policy.ts": ORG, "team.policy.ts": team("./org.policy") }), "PG1021", 2, 17, "team.policy.ts");
    expect(d.message).toContain("`tsconfig.json` could not be read");
  });
  it("under NodeNext, a package that is not `\"type\": \"module\"` makes the policy CommonJS, where tsc resolves the extension", () => {
    expect(codes(compile({ "tsconfig.json": NODENEXT, "package.json": JSON.stringify({ name: "cjs" }), "org.policy.ts": ORG, "team.policy.ts": team("./org.policy") }))).toEqual([]);
  });
});
