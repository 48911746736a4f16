// Generated code is a program other people run: everything in it that comes from outside the compiler (file
// names, tombstone wording, pin patterns) is escaped for the context it is written into. A file name is
// an attacker's first choice: a U+2028 or a CR in it once ended the `//` header comment of a guard, so
// importing the guard ran code that came from a file name. The property: any name, compiled, emitted and
// imported, loads the guard and runs nothing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { compilePolicies, emitAll, formatDiagnostic } from "../../compiler/index.js";

const PIECES = [
  "a", "Z", "9", " ", "\t", "\u2028", "\u2029", "\r", "\n", "\r\n", "\u0085", "*/", "/*", "//", "\"", "'", "`", "${", "}", "\\", "\\u2028",
  "<!--", "-->", "é", "\u001b[31m", "\u0007", "globalThis.__pgPwned = 1;", "\u2028globalThis.__pgPwned = 1;//",
];
const piece = fc.constantFrom(...PIECES);
const text = (max: number) => fc.array(piece, { minLength: 1, maxLength: max }).map((xs) => xs.join(""));
/** Tombstone wording: the short pieces, so the filled line stays within its 13-token budget. */
const words = fc.array(fc.constantFrom(...PIECES.filter((p) => p.length <= 3)), { minLength: 1, maxLength: 3 }).map((xs) => xs.join(""));

const root = mkdtempSync(path.join(path.resolve("test/compiler"), ".tmp-escape-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const POLICY = (tombstone: string, pinName: string) => `import { definePolicy, store, hours, pin } from "pruneguard/dsl";
export default definePolicy({
  name: "p",
  stores: { log: store.sqlite({ retention: hours(8) }) },
  kinds: { a: { store: "log", modes: ["drop"], lossy: "with-flag", pins: [pin(${JSON.stringify(pinName)}, ${JSON.stringify("x\u2028y")})] } },
  session: { maxLength: hours(8) },
  tombstone: ${JSON.stringify(tombstone)},
});
`;

async function compileAndImport(fileName: string, tombstone: string): Promise<{ tombstone: unknown; pattern: unknown }> {
  const r = compilePolicies({ files: { [`${fileName}.policy.ts`]: POLICY(tombstone, "p-1") } });
  expect(r.diagnostics.filter((d) => d.category === "error").map((d) => d.message)).toEqual([]);
  const dir = path.join(root, `g${n++}`);
  mkdirSync(dir);
  const runtime = path.relative(dir, path.resolve("src/index.js")).split(path.sep).join("/");
  for (const f of emitAll(r.policies, { runtimeImport: runtime })) writeFileSync(path.join(dir, f.path), f.contents);
  const m = (await import(path.join(dir, "p.guard.ts"))) as { policy: { tombstone?: string; kinds: { a: { pins: Array<{ pattern: string }> } } } };
  return { tombstone: m.policy.tombstone, pattern: m.policy.kinds.a.pins[0]?.pattern };
}

describe("generated code escapes what comes from outside", () => {
  it("a file name with a line separator cannot end the header comment", async () => {
    const got = await compileAndImport("org\u2028globalThis.__pgPwned = 1;//", "{span} gone");
    expect((globalThis as { __pgPwned?: unknown }).__pgPwned).toBeUndefined();
    expect(got).toEqual({ tombstone: "{span} gone", pattern: "x\u2028y" });
  });

  it("property: any file name and tombstone wording compiles, emits and imports, and runs nothing", async () => {
    await fc.assert(
      fc.asyncProperty(text(8), words, async (name, wording) => {
        fc.pre(!name.includes("/") && name.trim() !== "" && !name.includes("\u0000"));
        const tombstone = `{span} ${wording}`;
        const got = await compileAndImport(name, tombstone);
        expect((globalThis as { __pgPwned?: unknown }).__pgPwned).toBeUndefined();
        expect(got).toEqual({ tombstone, pattern: "x\u2028y" });
      }),
      { numRuns: Number(process.env["PRUNEGUARD_FUZZ_RUNS"] ?? 25) },
    );
  });

  it("kind and store names that are reserved words or Object.prototype members are keys, never bindings", async () => {
    const names = ["class", "default", "constructor", "toString", "hasOwnProperty", "valueOf"];
    const kinds = names.map((k) => `${k}: { store: "delete", modes: ["drop"], lossy: "with-flag" }`).join(", ");
    const r = compilePolicies({ files: { "p.policy.ts": `import { definePolicy, store, forever } from "pruneguard/dsl";\nexport default definePolicy({ name: "p", stores: { delete: store.sqlite({ retention: forever }) }, kinds: { ${kinds} } });\n` } });
    expect(r.diagnostics).toEqual([]);
    const dir = path.join(root, `g${n++}`);
    mkdirSync(dir);
    const runtime = path.relative(dir, path.resolve("src/index.js")).split(path.sep).join("/");
    for (const f of emitAll(r.policies, { runtimeImport: runtime })) writeFileSync(path.join(dir, f.path), f.contents);
    const m = (await import(path.join(dir, "p.guard.ts"))) as { policy: { kinds: Record<string, { store: string }> }; storeDeclarations: Record<string, unknown> };
    expect(Object.keys(m.policy.kinds)).toEqual(names);
    for (const k of names) expect(Object.hasOwn(m.policy.kinds, k) && m.policy.kinds[k]!.store).toBe("delete");
    expect(Object.keys(m.storeDeclarations)).toEqual(["delete"]);
  });

  it("pretty diagnostics print control characters from a file name escaped, not raw to the terminal", () => {
    const r = compilePolicies({ files: { "evil\u001b[2J\r.policy.ts": "export default 1;\n" } });
    const text = formatDiagnostic(r.diagnostics[0]!, { sources: r.sources });
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029]/);
    expect(text).toContain("evil\\u001b[2J\\u000d.policy.ts");
  });
});
