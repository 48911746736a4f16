// Policy files, and the tsconfig.json and links beside them, written to hurt the compiler (a red team's
// findings): a few hundred bytes that evaluate to gigabytes, a tsconfig nested past any parser's stack, an
// import that asks whether a file outside the root exists. Each is a located diagnostic in bounded time,
// never a crash, and nothing answers differently for a file outside the root being there or not.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compilePolicies, createSourceHost, type CompileResult } from "../../compiler/index.js";
import { diagnostic, MAX_PARAM_LENGTH } from "../../compiler/diagnostics/diagnostic.js";
import { MAX_HELD_POLICY_BYTES, MAX_POLICY_BYTES } from "../../compiler/frontend/host.js";
import { createResolutionCache, MAX_CONFIG_FILES } from "../../compiler/frontend/resolution.js";
import { codes, compile, expectDiagnostic, HEADER, ORG, runCli } from "./helpers.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
function temp(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `pruneguard-hostile-${prefix}-`));
  temps.push(dir);
  return dir;
}
function write(dir: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
}

/** `const x0 = first;`, then `const x1 = <x0 twice>;` and so on; after HEADER, `xk` is on line k + 2. */
function doubling(name: string, first: string, levels: number, twice: (prev: string) => string): string {
  const lines = [`const ${name}0 = ${first};`];
  for (let i = 1; i <= levels; i++) lines.push(`const ${name}${i} = ${twice(`${name}${i - 1}`)};`);
  return `${lines.join("\n")}\n`;
}

/** A policy whose one kind has `kind` added to it, and `top` to the policy (each `, field: value`). */
const policy = (kind: string, top = "") =>
  `export default definePolicy({\n  name: "p",\n  stores: { toolLog: store.sqlite({ retention: hours(2), holds: true }) },\n  kinds: { toolResult: { store: "toolLog", modes: ["drop"], lossy: "with-flag"${kind} } }${top},\n});\n`;

/** Compiles one file, and says how long it took: every case here used to take seconds to minutes, or crash. */
function timed(files: Record<string, string>): { r: CompileResult; ms: number } {
  const start = performance.now();
  const r = compile(files);
  return { r, ms: performance.now() - start };
}

const WORDING = `"{span} ${"x".repeat(58)}"`; // 65 characters: 2^10 of them pass 64 Ki

describe("PG1023: a value a small file makes large is stopped where it grows past a limit", () => {
  it("strings doubled with `+`: 24 levels (852 bytes) used to throw `Invalid string length`, 22 took 30 s and 3 GB", () => {
    const { r, ms } = timed({ "p.policy.ts": HEADER + doubling("a", WORDING, 24, (x) => `${x} + ${x}`) + policy("", ", tombstone: a24") });
    // a10 is the first past 65,536 characters; every const after it is quietly invalid.
    const d = expectDiagnostic(r, "PG1023", 12, 13);
    expect(d.message).toBe(
      "this string holds more than 65,536 characters; the compiler stops evaluating it here rather than spend time and memory out of proportion to the file. No policy needs a value this large: write the one the policy means (a tombstone of a few words, each pin once)",
    );
    expect(codes(r)).toEqual(["PG1023"]);
    expect(ms).toBeLessThan(5000);
  });

  it("strings doubled in a template, and a string literal that long in the file", () => {
    const tpl = compile({ "p.policy.ts": HEADER + doubling("a", WORDING, 20, (x) => `\`\${${x}}\${${x}}\``) + policy("", ", tombstone: a20") });
    expectDiagnostic(tpl, "PG1023", 12, 13);
    expect(codes(tpl)).toEqual(["PG1023"]);
    const literal = compile({ "p.policy.ts": `${HEADER}const big = "${"y".repeat(70_000)}";\n${policy("", ", tombstone: big")}` });
    expect(expectDiagnostic(literal, "PG1023", 2, 13).message).toContain("this string holds more than 65,536 characters");
  });

  it("arrays doubled with spreads: 17 levels used to overflow the stack in `push(...spread.items)`, 16 wrote a 28.7 MB IR", () => {
    const { r, ms } = timed({ "p.policy.ts": HEADER + doubling("b", "[pins.uuid, pins.uuid]", 17, (x) => `[...${x}, ...${x}]`) + policy(", pins: b17") });
    // b13 (16,384 items) is the first past 10,000; the arrays spreading it hold it as an invalid item, so
    // `pins` is neither reported again nor read as shorter than written.
    expect(expectDiagnostic(r, "PG1023", 15, 13).message).toMatch(/^this array holds more than 10,000 items;/);
    expect(codes(r)).toEqual(["PG1023"]);
    expect(ms).toBeLessThan(5000);
  });

  it("below the limits such a policy compiles: 8,192 pins", () => {
    const r = compile({ "p.policy.ts": HEADER + doubling("b", "[pins.uuid, pins.uuid]", 12, (x) => `[...${x}, ...${x}]`) + policy(", pins: b12") });
    expect(codes(r)).toEqual([]);
    expect(r.policies[0]?.kinds[0]?.pins).toHaveLength(8192);
  });

  it("items each within the limits that add up past 1 MiB: sixteen pins of a 64 Ki-character pattern", () => {
    const s = doubling("s", `"ab"`, 15, (x) => `${x} + ${x}`); // s15: 65,536 characters, just within
    const b = doubling("b", "[p, p]", 3, (x) => `[...${x}, ...${x}]`); // b3: 16 pins
    const r = compile({ "p.policy.ts": `${HEADER + s}const p = pin("p", s15);\n${b}${policy(", pins: b3")}` });
    const d = expectDiagnostic(r, "PG1023", 22, 12);
    expect(d.message).toMatch(/^this array, with everything in it, holds more than 1,048,576 characters and items \(a const counted each time it is used\);/);
    expect(codes(r)).toEqual(["PG1023"]);
  });

  it("an object with more than 10,000 properties", () => {
    const keys = Array.from({ length: 10_001 }, (_, i) => `k${i}: 1`).join(", ");
    const r = compile({ "p.policy.ts": `${HEADER}const o = { ${keys} };\n${policy("")}` });
    expect(expectDiagnostic(r, "PG1023", 2, 11).message).toMatch(/^this object holds more than 10,000 properties;/);
  });

  it("a chain of `extendPolicy` calls, each overlay within the limit, whose policy is not", () => {
    // Each kind's pins are ~65,000 characters; fifteen of them are within 1 MiB, thirty are not.
    const pins = `const ps = [${Array.from({ length: 13 }, () => "pins.uuid").join(", ")}, pin("p", "${"z".repeat(64_000)}")];\n`;
    const kind = (i: number) => `kinds: { k${i}: { store: "toolLog", modes: ["drop"], lossy: "with-flag", pins: ps } }`;
    const chain = Array.from({ length: 30 }, (_, i) => `const p${i + 1} = extendPolicy(p${i}, { name: "p${i + 1}", ${kind(i + 1)} });`).join("\n");
    const r = compile({ "p.policy.ts": `${HEADER}${pins}const p0 = definePolicy({ name: "p0", stores: { toolLog: store.sqlite({ retention: hours(2) }) }, kinds: {} });\n${chain}\nexport default p30;\n` });
    const d = r.diagnostics.find((x) => x.code === "PG1023");
    expect(d?.message).toMatch(/^the value of this call, with everything in it, holds more than 1,048,576 characters/);
    expect(d?.location?.line).toBeGreaterThan(4);
    expect(d?.location?.line).toBeLessThan(34);
  });

  it("on the command line: exit 1 with the diagnostic, not `internal error` (exit 2)", async () => {
    const dir = temp("cli");
    write(dir, { "package.json": `{"type":"module"}`, "policies/dbl.policy.ts": HEADER + doubling("a", WORDING, 24, (x) => `${x} + ${x}`) + policy("", ", tombstone: a24") });
    const r = await runCli(["check", "policies"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stderr).toContain("policies/dbl.policy.ts:12:13 - error PG1023");
    expect(r.all).not.toContain("internal error");
  });
});

describe("diagnostic messages stay short whatever a policy's values hold", () => {
  it("PG2008 quotes the start of a long tombstone, not all of it", () => {
    const r = compile({ "p.policy.ts": `${HEADER}const t = "{span} ${"word ".repeat(8000)}";\n${policy("", ", tombstone: t")}` });
    const d = expectDiagnostic(r, "PG2008", 2, 11);
    expect(d.message).toMatch(/^the tombstone is \d+ tokens once filled \("span_99999 word word [a-z ]*…", o200k_base\); at most 13 are allowed$/);
    expect(d.message.length).toBeLessThan(200);
  });

  it("a misspelt choice is quoted cut short (PG1011)", () => {
    const r = compile({ "p.policy.ts": `${HEADER}const l = "${"f".repeat(60_000)}";\n${policy("").replace('lossy: "with-flag"', "lossy: l")}` });
    const d = expectDiagnostic(r, "PG1011", 2, 11);
    expect(d.message).toBe(`kinds.toolResult.lossy: must be "forbid" or "with-flag", got "${"f".repeat(79)}…"`);
  });

  it("every parameter of every diagnostic is cut to MAX_PARAM_LENGTH characters, on a code point", () => {
    const d = diagnostic("PG1003", null, { text: "😀".repeat(60_000) });
    const quoted = /^`(.*)` is not a static expression/su.exec(d.message)?.[1] ?? "";
    expect(quoted.length).toBeLessThanOrEqual(MAX_PARAM_LENGTH);
    expect(quoted.endsWith("…")).toBe(true);
    expect(quoted.isWellFormed()).toBe(true);
  });
});

describe("a tsconfig.json nested deeper than TypeScript's reader can recurse", () => {
  const deep = (n: number) => `{ "compilerOptions": { "module": "esnext", "moduleResolution": "bundler", "x": ${"[".repeat(n)}${"]".repeat(n)} } }\n`;
  const team = `${HEADER}import org from "./org.policy";\nexport default extendPolicy(org, { name: "team" });\n`;

  // Column 178 is the 101st bracket: the two braces, then the 99th `[`.
  it("is not read: the strict reading, and PG1021 says where it nests too deeply (300,000 `[` used to crash `check`)", () => {
    const r = compile({ "tsconfig.json": deep(300_000), "org.policy.ts": ORG, "team.policy.ts": team });
    const d = expectDiagnostic(r, "PG1021", 2, 17, "team.policy.ts");
    expect(d.message).toContain("under NodeNext module resolution (`tsconfig.json` could not be read: it nests more than 100 levels deep at line 1, column 178, so the compiler assumes the strictest)");
    expect(codes(r)).toEqual(["PG1021"]);
  });

  it("nor through `extends`", () => {
    const r = compile({ "tsconfig.json": `{ "extends": "./tsconfig.base.json" }`, "tsconfig.base.json": deep(300_000), "org.policy.ts": ORG, "team.policy.ts": team });
    expect(expectDiagnostic(r, "PG1021", 2, 17, "team.policy.ts").message).toContain(
      "`tsconfig.json` extends `tsconfig.base.json`, which the compiler does not read (outside the project root, too large, nested too deeply, or a link out of it) (`tsconfig.base.json` nests more than 100 levels deep at line 1, column 178)",
    );
  });

  it("a shallow one is read as before", () => {
    expect(codes(compile({ "tsconfig.json": deep(50), "org.policy.ts": ORG, "team.policy.ts": team }))).toEqual([]);
  });

  it("`check` and `init` on disk: located, exit 1 and 0, no `internal error`", async () => {
    const dir = temp("tsconfig");
    write(dir, { "package.json": `{"name":"p","type":"module"}`, "tsconfig.json": deep(300_000), "policies/org.policy.ts": ORG, "policies/team.policy.ts": team });
    const check = await runCli(["check", "policies", "--no-drift"], dir);
    expect(check.code, check.all).toBe(1);
    expect(check.stderr).toContain("policies/team.policy.ts:2:17 - error PG1021");
    expect(check.stderr).toContain("`tsconfig.json` could not be read: it nests more than 100 levels deep");
    const init = await runCli(["init"], dir);
    expect(init.code, init.all).toBe(0);
    expect(init.stdout).toContain("kept    tsconfig.json (exists): it is not JSON init can read");
    expect(init.stdout).toMatch(/tsconfig\.json was not read: it nests more than 100 levels deep \(line 1, column 178\),\s+deeper than init reads/);
    expect(init.all).not.toContain("internal error");
  });
});

describe("PG1024: a policy file too large to read is not read", () => {
  // A valid policy padded with a comment to exactly `bytes` bytes: what it costs to parse is no concern here.
  const padded = (bytes: number, name = "p") => {
    const text = `${HEADER}${policy("").replace('name: "p"', `name: "${name}"`)}//`;
    return text + "x".repeat(bytes - Buffer.byteLength(text));
  };
  const TOO_LARGE = "this policy file is too large (4,194,305 bytes; the limit is 4,194,304 bytes, 4 MiB); the compiler does not read it rather than spend time and memory out of proportion to any policy, which is a few kilobytes";

  it("one byte past 4 MiB is PG1024 at its first line, and nothing of it is read (a 100 MB file ran out of heap after 94 s)", () => {
    const dir = temp("large");
    write(dir, { "policies/big.policy.ts": padded(MAX_POLICY_BYTES + 1) });
    const r = compilePolicies(["policies/big.policy.ts"], { cwd: dir });
    expect(expectDiagnostic(r, "PG1024", 1, 1, "policies/big.policy.ts").message).toBe(TOO_LARGE);
    expect(codes(r)).toEqual(["PG1024"]);
    expect(r.sources.get("policies/big.policy.ts")).toBe("");
    // In memory alike.
    expect(expectDiagnostic(compile({ "p.policy.ts": padded(MAX_POLICY_BYTES + 1) }), "PG1024", 1, 1).message).toBe(TOO_LARGE);
  });

  it("at exactly the limit the policy compiles", () => {
    const dir = temp("at-limit");
    write(dir, { "p.policy.ts": padded(MAX_POLICY_BYTES) });
    const r = compilePolicies(["p.policy.ts"], { cwd: dir });
    expect(codes(r)).toEqual([]);
    expect(r.policies).toHaveLength(1);
  });

  it("an imported base too large is PG1024 at the base", () => {
    const r = compile({ "org.policy.ts": padded(MAX_POLICY_BYTES + 1, "org"), "team.policy.ts": `${HEADER}import org from "./org.policy.js";\nexport default extendPolicy(org, { name: "team" });\n` }, ["team.policy.ts"]);
    expect(expectDiagnostic(r, "PG1024", 1, 1, "org.policy.ts").message).toBe(TOO_LARGE);
  });

  it("files each within the limit that add up past 16 MiB read at once: the one past it is PG1024 too", () => {
    // Four of 4 MiB are 16 MiB exactly; a fifth would take them past it.
    const files = Object.fromEntries(["a", "b", "c", "d", "e"].map((n) => [`${n}.policy.ts`, padded(MAX_POLICY_BYTES, n)]));
    const r = compile(files);
    expect(expectDiagnostic(r, "PG1024", 1, 1, "e.policy.ts").message).toBe(
      `with this file, the policy files this compilation reads are too large together (${(5 * MAX_POLICY_BYTES).toLocaleString("en-US")} bytes; the limit is 16,777,216 bytes, 16 MiB); the compiler does not read it rather than spend time and memory out of proportion to any policy, which is a few kilobytes`,
    );
    expect(codes(r)).toEqual(["PG1024"]);
    expect(r.policies.map((p) => p.name)).toEqual(["a", "b", "c", "d"]);
    expect(MAX_HELD_POLICY_BYTES).toBe(4 * MAX_POLICY_BYTES);
  });

  it("a file read on demand (a git object) larger than the limit is never read", () => {
    let reads = 0;
    const lazy = (text: string, size = Buffer.byteLength(text)) => ({ size, read: () => (reads++, text) });
    const host = createSourceHost({ lazyFiles: { "big.policy.ts": lazy("", MAX_POLICY_BYTES + 1), "ok.policy.ts": lazy(HEADER + policy("")) } });
    const r = compilePolicies({ files: {}, entries: ["big.policy.ts", "ok.policy.ts"] }, { host });
    expect(expectDiagnostic(r, "PG1024", 1, 1, "big.policy.ts").message).toBe(TOO_LARGE);
    expect(codes(r)).toEqual(["PG1024"]);
    expect(reads).toBe(1);
  });

  it("on the command line: exit 1 with the located diagnostic, quickly, not `internal error`", async () => {
    const dir = temp("large-cli");
    write(dir, { "package.json": `{"type":"module"}`, "policies/big.policy.ts": padded(MAX_POLICY_BYTES + 1) });
    const r = await runCli(["check", "policies", "--no-drift"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stderr).toContain("policies/big.policy.ts:1:1 - error PG1024: this policy file is too large (4,194,305 bytes;");
    expect(r.all).not.toContain("internal error");
  });
});

describe("a tsconfig.json `extends` chain is read once per file, and only so far", () => {
  /** `tsconfig.json` extends `l1.json` twice, `l{i}` extends `l{i+1}` twice, `l{n}` sets bundler resolution. */
  const chain = (n: number, pad = "") => {
    const files: Record<string, string> = { "tsconfig.json": `{"extends":["./l1.json","./l1.json"]}` };
    for (let i = 1; i < n; i++) files[`l${i}.json`] = `{"extends":["./l${i + 1}.json","./l${i + 1}.json"]${pad}}`;
    files[`l${n}.json`] = `{"compilerOptions":{"module":"esnext","moduleResolution":"bundler"}${pad}}`;
    return files;
  };
  const team = `${HEADER}import org from "./org.policy";\nexport default extendPolicy(org, { name: "team" });\n`;
  /** The resolution of `/` over `files`, how many times a file was read, and how many times one was looked up. */
  const resolve = (files: Record<string, string>) => {
    let reads = 0;
    let lookups = 0;
    const abs = new Map(Object.entries(files).map(([p, text]) => [`/${p}`, text]));
    const cache = createResolutionCache({
      root: "/",
      display: (p) => p.slice(1),
      fileExists: (p) => (lookups++, abs.has(p)),
      confined: () => true,
      readConfig: (p) => (reads++, abs.get(p)),
    });
    return { resolution: cache.of("/"), reads: () => reads, lookups: () => lookups };
  };

  it("24 levels, each extending the next twice: each file read once (2^24 reads before, 20 levels took 89 s)", () => {
    const files = chain(24);
    const { resolution, reads, lookups } = resolve(files);
    expect(resolution.extensionsRequired).toBe(false);
    expect(resolution.described).toBe("bundler module resolution (from `tsconfig.json`)");
    expect(reads()).toBe(25);
    // tsc looks each `extends` up (49 here); without its cache of extended files it followed every path to
    // each one again: 2^(n+1) - 1 lookups, 32,767 at 14 levels and 2 s, minutes at 20.
    expect(lookups()).toBeLessThan(4 * 25);
    expect(resolution.inputs.size).toBe(25);
    // And the policy's extensionless import resolves under it.
    expect(codes(compile({ ...files, "org.policy.ts": ORG, "team.policy.ts": team }))).toEqual([]);
  });

  it(`past ${MAX_CONFIG_FILES} files the rest is not read: the strict reading, which PG1021 explains`, () => {
    const files = chain(40);
    const { resolution, reads } = resolve(files);
    expect(resolution.extensionsRequired).toBe(true);
    expect(reads()).toBe(MAX_CONFIG_FILES);
    const r = compile({ ...files, "org.policy.ts": ORG, "team.policy.ts": team });
    expect(expectDiagnostic(r, "PG1021", 2, 17, "team.policy.ts").message).toContain(
      "under NodeNext module resolution (`tsconfig.json` extends more than the compiler reads (at most 32 files, 4 MiB together; it stopped at `l32.json`), so the compiler assumes the strictest)",
    );
  });

  it("nor past 4 MiB of them together, each within its own 1 MiB", () => {
    const files = chain(6, `,"x":"${"y".repeat(1000 * 1000)}"`);
    const { resolution, reads } = resolve(files);
    expect(resolution.extensionsRequired).toBe(true);
    // tsconfig.json and l1–l4 are 4,000,000 bytes and some; l5 takes them past 4 MiB.
    expect(resolution.described).toContain("it stopped at `l5.json`");
    expect(reads()).toBe(6);
  });
});

describe("a link out of the root: the same answer whether or not anything is there", () => {
  // root/policies/link -> outside; outside/secret.ts is there, outside/absent.ts is not. Names compared
  // are of one length, so that the diagnostics' columns agree too.
  const outside = temp("outside");
  const root = temp("root");
  write(outside, { "secret.ts": "export const secret = 1;\n", "org.policy.ts": ORG });
  write(root, { "package.json": `{"type":"module"}` });
  mkdirSync(path.join(root, "policies"));
  symlinkSync(outside, path.join(root, "policies/link"), "dir");
  const importing = (specifier: string) => `${HEADER}import s from "${specifier}";\nexport default extendPolicy(s, { name: "a" });\n`;
  const run = (files: Record<string, string>, entry = "policies/a.policy.ts") => {
    write(root, files);
    return compilePolicies([entry], { cwd: root });
  };
  /** The diagnostics with the file name they are about taken out, so two answers about two names compare. */
  const answer = (r: CompileResult, name: string) => r.diagnostics.map((d) => ({ ...d, message: d.message.replaceAll(name, "<name>") }));

  it("`./link/secret.js` and `./link/absent.js` are both PG1018 (they were PG1009, it exists, and PG1008, it does not)", () => {
    const there = run({ "policies/a.policy.ts": importing("./link/secret.js") });
    const notThere = run({ "policies/a.policy.ts": importing("./link/absent.js") });
    const d = expectDiagnostic(there, "PG1018", 2, 15, "policies/a.policy.ts");
    expect(d.message).toContain("`policies/link/secret.ts` is, or is inside, a symbolic link that leads outside the project root");
    expect(codes(there)).toEqual(["PG1018"]);
    expect(answer(notThere, "absent")).toEqual(answer(there, "secret"));
  });

  it("a policy behind the link, and under bundler resolution a folder's index.ts behind it, likewise", () => {
    expect(codes(run({ "policies/a.policy.ts": importing("./link/org.policy.js") }))).toEqual(["PG1018"]);
    const bundler = { "tsconfig.json": JSON.stringify({ compilerOptions: { module: "esnext", moduleResolution: "bundler" } }), "policies/a.policy.ts": importing("./link") };
    const without = run(bundler);
    expectDiagnostic(without, "PG1018", 2, 15, "policies/a.policy.ts");
    writeFileSync(path.join(outside, "index.ts"), "export default 1;\n");
    try {
      expect(run(bundler).diagnostics).toEqual(without.diagnostics);
    } finally {
      unlinkSync(path.join(root, "tsconfig.json"));
      unlinkSync(path.join(outside, "index.ts"));
    }
  });

  it("a link that points at nothing outside answers as one that points at a file", () => {
    symlinkSync(path.join(outside, "org.policy.ts"), path.join(root, "policies/present.policy.ts"));
    symlinkSync(path.join(outside, "gone.policy.ts"), path.join(root, "policies/missing.policy.ts"));
    const toFile = run({ "policies/a.policy.ts": importing("./present.policy.js") });
    const dangling = run({ "policies/a.policy.ts": importing("./missing.policy.js") });
    expect(codes(toFile)).toEqual(["PG1018"]);
    expect(answer(dangling, "missing")).toEqual(answer(toFile, "present"));
  });

  it("a tsconfig.json that extends a file behind the link: the same PG1021 whether that file exists", () => {
    const files = { "tsconfig.json": `{ "extends": "./policies/link/base.json" }`, "policies/a.policy.ts": `${HEADER}import o from "./org.policy";\nexport default extendPolicy(o, { name: "a" });\n`, "policies/org.policy.ts": ORG };
    const absent = run(files);
    expect(expectDiagnostic(absent, "PG1021", 2, 15, "policies/a.policy.ts").message).toContain("`tsconfig.json` extends `policies/link/base.json`, which the compiler does not read");
    writeFileSync(path.join(outside, "base.json"), JSON.stringify({ compilerOptions: { module: "esnext", moduleResolution: "bundler" } }));
    try {
      expect(run(files).diagnostics).toEqual(absent.diagnostics);
    } finally {
      unlinkSync(path.join(root, "tsconfig.json"));
    }
  });

  it("a loop of links is a file that is not there (it used to throw ELOOP)", () => {
    symlinkSync("loop.ts", path.join(root, "policies/loop.ts"));
    const r = run({ "policies/a.policy.ts": importing("./loop.js") });
    expectDiagnostic(r, "PG1008", 2, 15, "policies/a.policy.ts");
  });
});

describe("a policy name too long for a file name", () => {
  it("is a located diagnostic, not a write that fails with ENAMETOOLONG", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-long-name-"));
    try {
      mkdirSync(path.join(dir, "policies"));
      writeFileSync(path.join(dir, "policies/long.policy.ts"), `import { definePolicy, store, hours } from "pruneguard/dsl";
export default definePolicy({ name: "${"a".repeat(300)}", stores: { log: store.sqlite({ retention: hours(2) }) }, kinds: { tool: { store: "log", modes: ["drop"], lossy: "forbid" } } });
`);
      const r = await runCli(["compile"], dir);
      expect(r.code, r.all).toBe(1);
      expect(r.all).toMatch(/policies\/long\.policy\.ts:2:\d+ - error PG1011: .*must be at most 64 characters: it names the generated files/);
      expect(r.all).not.toMatch(/ENAMETOOLONG/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
