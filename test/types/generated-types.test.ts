// Type-level tests of the generated modules, under both compilers users have: TS 7's native `tsc` (the
// dev dependency) and TS 6 (the compiler API ts-morph bundles). Fixtures in `fixtures/` mark each error
// they must produce with `// @expect TSnnnn` on the line above; a fixture with no marker must compile
// cleanly. Each run must report exactly the marked codes at exactly the marked lines, and nothing else
// anywhere in the program (a generated module that stops compiling fails here too).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { Project, ts } from "ts-morph";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(".");
const FIXTURES = path.join(ROOT, "test/types/fixtures");
const TSC = path.join(ROOT, "node_modules/.bin/tsc");

/** `file:line TSnnnn`, file relative to the repository. */
type Finding = string;

/**
 * The marked errors for one compiler. `// @expect TS2741 ts6:TS2345` pins a code that differs between
 * the two: for a missing required property TS 7 elaborates into the object literal (TS2741) where TS 6
 * reports the argument as a whole (TS2345); both are on the marked line, and both messages name the
 * missing `acceptLossy` and the request interface.
 */
function expected(compiler: "ts7" | "ts6"): Finding[] {
  const out: Finding[] = [];
  for (const name of readdirSync(FIXTURES).filter((f) => f.endsWith(".ts")).sort()) {
    const lines = readFileSync(path.join(FIXTURES, name), "utf8").split("\n");
    lines.forEach((line, i) => {
      const m = /^\s*\/\/ @expect (TS\d+)(?: ts6:(TS\d+))?\s*$/.exec(line);
      if (m) out.push(`test/types/fixtures/${name}:${i + 2} ${compiler === "ts6" && m[2] ? m[2] : m[1]}`);
    });
  }
  return out.sort();
}

function tsc7(extra: readonly string[] = []): { findings: Finding[]; version: string; output: string } {
  const version = spawnSync(TSC, ["--version"], { encoding: "utf8" }).stdout.trim();
  const r = spawnSync(TSC, ["-p", FIXTURES, "--pretty", "false", ...extra], { cwd: ROOT, encoding: "utf8" });
  const findings = [...r.stdout.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+):/gm)].map((m) => `${toRepo(m[1]!)}:${m[2]} ${m[3]}`);
  return { findings: findings.sort(), version, output: r.stdout };
}

function tsc6(): { findings: Finding[]; version: string; messages: string[] } {
  // ts-morph supplies the lib files from its bundle; a bare `ts.sys` host would look for them on disk.
  const project = new Project({ tsConfigFilePath: path.join(FIXTURES, "tsconfig.json") });
  const diagnostics = project.getPreEmitDiagnostics();
  const findings = diagnostics.map((d) => {
    const file = d.getSourceFile();
    return `${file ? `${toRepo(file.getFilePath())}:${d.getLineNumber()}` : "<global>"} TS${d.getCode()}`;
  });
  const messages = diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.compilerObject.messageText, "\n"));
  return { findings: findings.sort(), version: ts.version, messages };
}

function toRepo(file: string): string {
  return path.relative(ROOT, path.resolve(ROOT, file)).split(path.sep).join("/");
}

describe("generated types reject unchecked prunes at compile time", () => {
  it("the fixtures mark the seven required errors (and more)", () => {
    expect(expected("ts7").length).toBeGreaterThanOrEqual(7);
  });

  it("TS 7 (native tsc) reports exactly the marked errors", () => {
    const { findings, version, output } = tsc7();
    expect(version).toMatch(/^Version 7\./);
    expect(findings).toEqual(expected("ts7"));
    // The forbidden kind's error reads as a sentence (the KyselyTypeError idea).
    expect(output).toContain("PruneguardTypeError<\"kind complianceNotice of policy org has no store and forbids lossy commitment: it cannot be pruned\">");
    expect(output).toContain("required in type 'LossyOnlyDrop<\"systemHint\", \"org\">'");
  });

  it("every refused prune names the kind, the policy and the rule (or says the kind is not known statically)", () => {
    const { output } = tsc7();
    // One message per finding: the first line of each error, with the line it is on in the fixture.
    const refusals = [...output.matchAll(/^test\/types\/fixtures\/window-refs\.ts\((\d+),\d+\): error (TS\d+): (.*)$/gm)];
    expect(refusals.length).toBeGreaterThanOrEqual(14);
    for (const [, line, code, message] of refusals) {
      const where = `window-refs.ts:${line} ${code}: ${message}`;
      if (/of type 'SpanRef<|to type 'SpanRef</.test(message!)) {
        // A ref of another policy or an unknown kind: both sides are in the types the message prints.
        expect(message, where).toMatch(/SpanRef<"\w+", "(org|team-payments)"|SpanRef<SpanKind, "org"/);
        continue;
      }
      expect(message, where).toMatch(
        /kind \w+ of policy (org|team-payments) (forbids lossy commitment|has no store|keeps no copy)|(LossyOnly\w+)<"\w+", "(org|team-payments)">|no one request satisfies every kind this ref may be of under policy (org|team-payments)/,
      );
    }
  });

  it("TS 7 without exactOptionalPropertyTypes reports the same errors: the flag changes nothing a prune may carry", () => {
    const { findings } = tsc7(["--exactOptionalPropertyTypes", "false"]);
    expect(findings).toEqual(expected("ts7"));
  });

  it("TS 6 (ts-morph's compiler API) reports exactly the marked errors", () => {
    const { findings, version, messages } = tsc6();
    expect(version).toMatch(/^6\./);
    expect(findings).toEqual(expected("ts6"));
    // The same sentences as under TS 7: the kind, the policy and the rule.
    const all = messages.join("\n");
    expect(all).toContain("kind userTurn of policy org forbids lossy commitment: remove acceptLossy");
    expect(all).toContain("kind auditNote of policy team-payments forbids lossy commitment");
    expect(all).toContain("kind systemHint of policy org keeps no copy a store can verify");
    expect(all).toContain("no one request satisfies every kind this ref may be of under policy org");
  });
});
