// The documented policies compile clean: every ```ts block in docs/*.md and README.md that imports
// `pruneguard/dsl` and has a default export is a policy module (fragments, such as the diagnostics
// catalogue's deliberately wrong examples, are not), compiled with its document's other examples (an overlay imports the
// org example as `./org.policy.js`), and must produce no diagnostic at all, so an example cannot rot.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compilePolicies } from "../../compiler/index.js";

const DOCS = ["README.md", ...readdirSync("docs").filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The policy examples of a document, each under the file name it says (`// policies/org.policy.ts`) or its policy's name. */
export function policyExamples(markdown: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const m of markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    const code = m[1]!;
    if (!/from "pruneguard\/dsl"/.test(code) || !/^export default /m.test(code)) continue;
    const named = /^\/\/ (?:\S+\/)?([\w-]+\.policy\.ts)\s*$/m.exec(code)?.[1] ?? `${/name: "([\w-]+)"/.exec(code)?.[1] ?? "example"}.policy.ts`;
    expect(files[named], `two examples named ${named}`).toBeUndefined();
    files[named] = code;
  }
  return files;
}

describe("documented policy examples", () => {
  const withExamples = DOCS.filter((d) => Object.keys(policyExamples(readFileSync(d, "utf8"))).length > 0);

  it("are found (the docs that teach the language have them)", () => {
    expect(withExamples).toEqual(expect.arrayContaining(["README.md", "docs/policy-language.md"]));
  });

  it.each(withExamples)("%s compiles with no diagnostic", (doc) => {
    const files = policyExamples(readFileSync(doc, "utf8"));
    const r = compilePolicies({ files });
    expect(r.diagnostics.map((d) => `${d.location?.file}:${d.location?.line} ${d.code} ${d.message}`)).toEqual([]);
    expect(r.policies.length).toBe(Object.keys(files).length);
  });
});
