// The policy-test entry point, `pruneguard-cli/testing` (compiler/testing.ts): compiled policies answer
// what they decide from the compiler's own analysis, expectations fail with the reason and a
// counterexample, and scripted sessions run on the real runtime. The last block runs the complete example
// test of docs/adopting.md in a vitest of its own, against the policy `init` writes and a loosened one.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { starterPolicy } from "../../compiler/cli/init-template.js";
import { compilePolicy, hours, minutes, PolicyCompileError, PolicyExpectationError } from "../../compiler/testing.js";
import { HEADER, ORG } from "./helpers.js";

const org = compilePolicy("examples/policies/org.policy.ts");
const payments = compilePolicy("examples/policies/team-payments.policy.ts");
const search = compilePolicy("examples/policies/team-search.policy.ts");

/** The error an expectation throws (it must throw a `PolicyExpectationError`). */
function failure(f: () => void): PolicyExpectationError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyExpectationError);
    return err as PolicyExpectationError;
  }
  throw new Error("expected the expectation to fail");
}

async function failureOf(f: () => Promise<void>): Promise<PolicyExpectationError> {
  try {
    await f();
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyExpectationError);
    return err as PolicyExpectationError;
  }
  throw new Error("expected the expectation to fail");
}

describe("compilePolicy", () => {
  it("compiles a file as the CLI does, with its base, and keeps the warnings of its own file", () => {
    expect(org.name).toBe("org");
    expect(org.file).toBe("examples/policies/org.policy.ts");
    expect(org.kinds).toContain("toolResult");
    expect(search.base?.name).toBe("org");
    expect(org.warnings.map((w) => w.code)).toContain("PG3005");
  });

  it("compiles files in memory, and throws the compiler's diagnostics when the policy has errors", () => {
    const p = compilePolicy({ files: { "org.policy.ts": ORG }, entry: "org.policy.ts" });
    expect(p.kinds).toEqual(["toolResult", "userTurn"]);
    const bad = `${HEADER}export default definePolicy({ name: "bad", stores: {}, kinds: { k: { store: "nope", modes: ["drop"], lossy: "forbid" } } });\n`;
    let err: unknown;
    try {
      compilePolicy({ files: { "bad.policy.ts": bad }, entry: "bad.policy.ts" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PolicyCompileError);
    expect((err as PolicyCompileError).message).toMatch(/^bad\.policy\.ts does not compile:\n/);
    expect((err as PolicyCompileError).message).toContain("error PG2001");
    expect((err as PolicyCompileError).diagnostics.some((d) => d.code === "PG2001")).toBe(true);
  });

  it("names the kinds when asked about one the policy does not have", () => {
    expect(() => org.fateAt("toolResults", 0)).toThrow(/org has no kind "toolResults"; its kinds are toolResult, toolCall/);
  });
});

describe("what a policy decides", () => {
  it("each kind's fate at an age of its span, as explain says it", () => {
    expect(payments.fateAt("toolResult", hours(1))).toMatchObject({ phase: "reversible", fromMs: 0, toMs: hours(2) });
    expect(payments.fateAt("toolResult", hours(3))).toMatchObject({ phase: "lossy-with-flag", fromMs: hours(2), toMs: hours(8) });
    expect(payments.fateAt("toolResult", hours(3)).why).toContain("reversible for 2h after append, then lossy only with flag");
    expect(org.fateAt("toolResult", hours(3)).phase).toBe("reversible");
    expect(org.fateAt("complianceNotice", 0).phase).toBe("never");
    expect(payments.timeline("toolResult").segments.map((s) => [s.fromMs, s.toMs, s.phase])).toEqual([
      [0, hours(2), "reversible"],
      [hours(2), hours(8), "lossy-with-flag"],
    ]);
  });

  it("and at another session length: a 2h tool log outlasts a 1h session", () => {
    expect(payments.fate("toolResult", { sessionLength: hours(1) }).fate).toBe("always-reversible");
    expect(payments.fateAt("toolResult", minutes(50), { sessionLength: hours(1) }).phase).toBe("reversible");
    // No limit: the tool log's retention ends, and the last phase goes on.
    expect(payments.timeline("toolResult", { sessionLength: null }).segments.at(-1)).toMatchObject({ fromMs: hours(2), toMs: null, phase: "lossy-with-flag" });
  });

  it("what a prune request would be: reversible, lossy with the flag, or rejected and why", () => {
    expect(payments.prune({ kind: "toolResult", mode: "drop", age: hours(1) })).toMatchObject({ outcome: "reversible", keptFor: "session" });
    expect(payments.prune({ kind: "toolResult", mode: "drop", age: hours(3) })).toMatchObject({ outcome: "rejected", reason: "needs-accept-lossy" });
    expect(payments.prune({ kind: "toolResult", mode: "drop", age: hours(3), acceptLossy: true }).outcome).toBe("lossy");
    expect(org.prune({ kind: "userTurn", mode: "drop" })).toMatchObject({ outcome: "rejected", reason: "mode-not-allowed" });
    expect(org.prune({ kind: "complianceNotice", mode: "drop", acceptLossy: true })).toMatchObject({ outcome: "rejected", reason: "lossy-forbidden" });
    expect(org.requestShape("systemHint")).toMatchObject({ prunable: true, acceptLossy: "required" });
  });

  it("a store without holds is reversible only until the copy expires; a lossy budget of 0 rejects what would be lossy", () => {
    const body = `export default definePolicy({ name: "p", stores: { log: store.sqlite({ retention: hours(2), holds: false }) }, kinds: { k: { store: "log", modes: ["drop"], lossy: "with-flag" } }, session: { maxLength: hours(8), lossyBudget: 0 } });\n`;
    const p = compilePolicy({ files: { "p.policy.ts": HEADER + body }, entry: "p.policy.ts" });
    expect(p.prune({ kind: "k", mode: "drop", age: hours(1) })).toMatchObject({ outcome: "reversible", keptFor: "copy-retention" });
    expect(p.prune({ kind: "k", mode: "drop", age: hours(3), acceptLossy: true })).toMatchObject({ outcome: "rejected", reason: "no-lossy-budget" });
    expect(p.timeline("k").why).toContain("the session's lossy budget is 0");
  });
});

describe("expectations", () => {
  it("pass silently when the policy decides as expected", () => {
    org.expectReversible("toolResult");
    org.expectFateAt("scratch", hours(3), "lossy-with-flag");
    payments.expectReversible("toolResult", { within: hours(2) });
    payments.expectPrune({ kind: "toolResult", mode: "summarize", age: hours(3), acceptLossy: true }, "lossy");
    search.expectNoLooserThan(org);
  });

  it("a kind that is not reversible throughout fails with the overlay check's counterexample", () => {
    const e = failure(() => payments.expectReversible("toolResult"));
    expect(e.message).toBe(
      "team-payments: expected every prune of `toolResult` to be reversible within 8h of its append, but a `drop` of `toolResult` 2h after its append is lossy, " +
        "executed only with accept_lossy and leaving a tombstone (reversible for 2h after append, then lossy only with flag: toolLog rotates copies 2h after append; holds start only at prune, and the kind does not re-persist)",
    );
    expect(e.counterexample).toEqual({ kind: "toolResult", mode: "drop", ageMs: hours(2), expected: "reversible", actual: "lossy-with-flag" });
    expect(failure(() => org.expectReversible("complianceNotice")).message).toContain("is rejected: it can be neither reversible nor lossy");
  });

  it("a fate or a prune other than expected says what it is and why", () => {
    expect(failure(() => org.expectFateAt("scratch", 0, "reversible")).message).toBe(
      "org: expected a prune of `scratch` right after its append to be reversible, but it is lossy only with flag (0–8h after its append): scratch is lossy only with flag: store notes is read-only, so the window never persists a copy to it",
    );
    expect(failure(() => payments.expectPrune({ kind: "toolResult", mode: "drop", age: hours(3) }, "reversible")).message).toContain(
      "expected a `drop` of `toolResult` 3h after its append to be reversible, but it is rejected (needs-accept-lossy)",
    );
  });

  it("no looser than: fails by the overlay rule, with each finding and its counterexample", () => {
    const e = failure(() => payments.expectNoLooserThan(org));
    expect(e.message).toContain("team-payments: expected no looser than org, but it loosens it:");
    expect(e.message).toContain("kind toolResult repersist yes → no: it turns re-persist off for kind `toolResult`: a `drop` of `toolResult` 2h after its append is reversible under org");
    expect(e.message).toContain("(PG2107)");
    expect(e.message).toContain("toolResult 2h–8h after append: reversible → lossy only with flag");
    expect(e.findings.map((f) => f.code)).toEqual(["PG2107"]);
    expect(e.counterexample).toMatchObject({ kind: "toolResult", ageMs: hours(2), expected: "reversible", actual: "lossy-with-flag" });
  });
});

describe("scripted sessions", () => {
  it("a pruned tool result is recalled byte-identical after its log rotated, when the kind re-persists", async () => {
    const text = "GET /deploy -> 500 req_7f3a9c2e41";
    const run = await org.session([
      { append: "toolResult", text, as: "log" },
      { advance: hours(3) },
      { rotate: "toolLog" },
      { prune: "log", mode: "drop" },
      { recall: "log" },
    ]);
    expect(run.results.map((r) => r.op)).toEqual(["append", "advance", "rotate", "prune", "recall"]);
    expect(run.results[2]).toMatchObject({ op: "rotate", atMs: hours(3), reports: { toolLog: { rotated: 1 } } });
    expect(run.outcomes[0]).toMatchObject({ status: "reversible", spanId: "span_1", repersisted: true });
    expect(run.results[4]).toMatchObject({ op: "recall", outcome: { status: "found", text } });
    // What the window renders is taken at a compaction point, so it shows the prune.
    expect(run.rendered).toBe("span_1 pruned, recall #1: req_7f3a9c2e41");
    await run.expectRecoverable("log");
  });

  it("without re-persist the prune needs accept_lossy; the loss is recalled as such, and expectRecoverable says why", async () => {
    const run = await payments.session([
      { append: "toolResult", text: "tool output req_8f3a2c91", as: "log" },
      { append: "scratch", text: "a note", as: "note" },
      { advance: hours(3) },
      { rotate: true },
      { prune: "log", mode: "drop" },
      { directive: '{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":true}' },
      { render: true },
    ]);
    expect(run.outcomes.map((o) => o.status)).toEqual(["rejected", "lossy"]);
    expect(run.results.at(-1)).toMatchObject({ op: "render", text: expect.stringContaining("span_1 pruned, unrecoverable, contents unknown") }); // the policy's tombstone
    await run.expectUnrecoverable("log");
    const e = await failureOf(() => run.expectRecoverable("log", "note"));
    expect(e.message).toContain("team-payments: expected `log`, `note` recoverable at the end of the session, but");
    expect(e.message).toContain("`log` (span_1, toolResult): recall answers pruned-unrecoverable (lossy). It was pruned at step 5, 3h after its append: lossy");
    expect(e.message).toContain("The first prune the policy makes lossy: a `drop` of `toolResult` 2h after its append.");
    expect(e.message).not.toContain("- `note`"); // live: recoverable from the window
  });

  it("names a step that refers to no span or store", async () => {
    await expect(org.session([{ prune: "missing", mode: "drop" }])).rejects.toThrow(/session step 0: no span labelled "missing"/);
    await expect(org.session([{ rotate: "nope" }])).rejects.toThrow(/org has no store "nope"; its stores are toolLog, transcript, notes, archive/);
  });
});

describe("the example test in docs/adopting.md", () => {
  const ROOT = path.resolve(".");
  const doc = readFileSync("docs/adopting.md", "utf8");
  const example = [...doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).find((c) => c.includes('from "pruneguard-cli/testing"') && c.includes("describe("));
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A package with the policy `init` writes (`edit`ed) and the example as its test, run by a vitest of its own. */
  function runExample(edit: (policy: string) => string): Promise<{ code: number | null; output: string }> {
    const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-policy-test-"));
    dirs.push(dir);
    mkdirSync(path.join(dir, "policies"));
    mkdirSync(path.join(dir, "test"));
    writeFileSync(path.join(dir, "policies/org.policy.ts"), edit(starterPolicy("org")));
    writeFileSync(path.join(dir, "test/org.policy.test.ts"), example!);
    symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
    // The published package's entry point is this repository's compiler/testing.ts.
    writeFileSync(
      path.join(dir, "vitest.config.mjs"),
      `import { defineConfig } from "vitest/config";\nexport default defineConfig({ resolve: { alias: { "pruneguard-cli/testing": ${JSON.stringify(path.join(ROOT, "compiler/testing.ts"))} } }, test: { include: ["test/**/*.test.ts"] } });\n`,
    );
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", "vitest.config.mjs"], { cwd: dir, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } });
      let output = "";
      child.stdout.on("data", (d) => (output += String(d)));
      child.stderr.on("data", (d) => (output += String(d)));
      child.on("close", (code) => resolve({ code, output }));
    });
  }

  it("is a complete test file", () => {
    expect(example, "docs/adopting.md has a ts block importing pruneguard-cli/testing with describe(").toBeDefined();
  });

  it("passes on the policy init writes, and fails with a counterexample when the policy is loosened", async () => {
    // The platform team shortens the tool log to 2h and turns re-persist off for tool results.
    const loosen = (p: string) => p.replace("retention: hours(24)", "retention: hours(2)").replace("      repersist: true,\n", "");
    expect(loosen(starterPolicy("org"))).not.toBe(starterPolicy("org"));
    const [clean, loosened] = await Promise.all([runExample((p) => p), runExample(loosen)]);
    expect(clean.code, clean.output).toBe(0);
    expect(loosened.code, loosened.output).toBe(1);
    expect(loosened.output).toContain("PolicyExpectationError");
    expect(loosened.output).toContain("a `drop` of `toolResult` 2h after its append is lossy, executed only with accept_lossy and leaving a tombstone");
    // The failure the document shows (its lines joined) is the one the runner prints.
    const shown = /^```text\n(PolicyExpectationError: [\s\S]*?)^```$/m.exec(doc)?.[1];
    expect(shown).toBeDefined();
    expect(loosened.output).toContain(shown!.trim().split("\n").join(" "));
  });
});
