// `pruneguard diff` in process (helpers.ts `runCli`): each change is marked by the overlay rule — a
// retention cut and forbid → with-flag loosen (exit 1), a lengthened retention tightens (exit 0) — with
// what it does to each kind's fate; text, JSON and a markdown table; --base reads the old side from git.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { hours } from "../../compiler/testing.js";
import { diffPolicySets } from "../../compiler/diff/index.js";
import { MAX_POLICY_BYTES } from "../../compiler/frontend/host.js";
import { compile, HEADER, runCli as run } from "./helpers.js";

/** An org policy with its tool log's retention, its user turns' lossy rule and the session length as given. */
function org(o: { retention?: string; lossy?: string; session?: string; extra?: string } = {}): string {
  return `${HEADER}export default definePolicy({
  name: "org",
  stores: {
    toolLog: store.sqlite({ retention: ${o.retention ?? "hours(8)"} }),
    transcript: store.postgres({ retention: days(30) }),
  },
  kinds: {
    toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", pins: [pins.requestId] },
    userTurn: { store: "transcript", modes: ["summarize"], lossy: "${o.lossy ?? "forbid"}" },${o.extra ?? ""}
  },
  session: { maxLength: ${o.session ?? "hours(8)"}, lossyBudget: 3 },
});
`;
}

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-diff-"));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  return dir;
}

type Json = {
  loosens: boolean;
  policies: Array<{
    name: string;
    status: string;
    changes: Array<{ scope: string; name: string | null; setting: string; old: string; new: string; direction: string; rules: Array<{ code: string; message: string }> }>;
    fates: Array<{ kind: string; fromMs: number; toMs: number | null; old: string; new: string; direction: string }>;
  }>;
};

describe("pruneguard diff", () => {
  it("a retention cut and forbid → with-flag are loosening, with the overlay rule's reason: exit 1", async () => {
    const dir = project({ "old/org.policy.ts": org(), "new/org.policy.ts": org({ retention: "hours(2)", lossy: "with-flag" }) });
    const r = await run(["diff", "old/org.policy.ts", "new/org.policy.ts"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toContain("policy org (old/org.policy.ts → new/org.policy.ts): loosens");
    expect(r.stdout).toContain("store toolLog retention: 8h → 2h (loosening)");
    expect(r.stdout).toContain("refused by the overlay rule: store `toolLog` retains for 2h where old retains for 8h: a span pruned 2h after its");
    expect(r.stdout).toContain("kind userTurn lossy: forbid → with-flag (loosening)");
    // What the cut does to the tool results' fate over the session.
    expect(r.stdout).toContain("kind toolResult fate 2h–8h after append: reversible → lossy only with flag (loosening)");
    expect(r.stdout).toMatch(/^loosens: 2 loosening, 0 tightening, 0 neutral, 1 fate range changed$/m);
    expect(Math.max(...r.stdout.split("\n").map((l) => l.length))).toBeLessThanOrEqual(120);

    const json = JSON.parse((await run(["diff", "old/org.policy.ts", "new/org.policy.ts", "--format", "json"], dir)).stdout) as Json;
    expect(json.loosens).toBe(true);
    const p = json.policies[0]!;
    expect(p.changes.map((c) => [c.scope, c.name, c.setting, c.old, c.new, c.direction, c.rules.map((x) => x.code)])).toEqual([
      ["store", "toolLog", "retention", "8h", "2h", "loosening", ["PG2102"]],
      ["kind", "userTurn", "lossy", "forbid", "with-flag", "loosening", ["PG2101"]],
    ]);
    expect(p.fates).toEqual([{ kind: "toolResult", fromMs: hours(2), toMs: hours(8), old: "reversible", new: "lossy-with-flag", direction: "loosening", pastSessionOf: null }]);
  });

  it("a fate that stops prunes altogether says so: nothing can be lost, but the spans stay in the window", async () => {
    // userTurn forbids lossy: past its copy's retention, a prune of it is refused (its fate is `never`).
    const dir = project({ "old/org.policy.ts": org(), "new/org.policy.ts": org().replace("retention: days(30)", "retention: hours(4)") });
    const r = await run(["diff", "old/org.policy.ts", "new/org.policy.ts"], dir);
    expect(r.stdout.replace(/\n +/g, " ")).toContain("kind userTurn fate 4h–8h after append: reversible → never (neutral: nothing can be lost, but such spans can no longer be pruned)");
    const md = await run(["diff", "old/org.policy.ts", "new/org.policy.ts", "--format", "markdown"], dir);
    expect(md.stdout).toContain("| reversible | never | neutral: nothing can be lost, but such spans can no longer be pruned |");
  });

  it("a lengthened retention is tightening: exit 0, and still reported", async () => {
    const dir = project({ "old/org.policy.ts": org({ retention: "hours(2)" }), "new/org.policy.ts": org({ retention: "hours(24)" }) });
    const r = await run(["diff", "old/org.policy.ts", "new/org.policy.ts"], dir);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain("store toolLog retention: 2h → 1d (tightening)");
    expect(r.stdout).toContain("going back would be refused: store `toolLog` retains for 2h where new retains for 1d");
    expect(r.stdout).toContain("kind toolResult fate 2h–8h after append: lossy only with flag → reversible (tightening)");
    expect(r.stdout).toMatch(/^nothing loosens: 0 loosening, 1 tightening, 0 neutral, 1 fate range changed$/m);
  });

  it("settings that bound cost are neutral; nothing changed says so", async () => {
    const a = org();
    const b = a.replace("lossyBudget: 3 }", 'lossyBudget: 3, searchTokens: 800, compaction: "immediate" }');
    const dir = project({ "a/org.policy.ts": a, "b/org.policy.ts": b });
    const r = await run(["diff", "a", "b", "--format", "json"], dir);
    expect(r.code, r.all).toBe(0);
    const json = JSON.parse(r.stdout) as Json;
    expect(json.policies[0]!.changes.map((c) => [c.setting, c.direction])).toEqual([
      ["searchTokens", "neutral"],
      ["compaction", "neutral"],
    ]);
    const same = await run(["diff", "a", "a"], dir);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("policy org: unchanged");
    expect(same.stdout).toMatch(/^no policy changed$/m);
  });

  it("renders a markdown table fit for a pull-request comment", async () => {
    const dir = project({ "old/org.policy.ts": org(), "new/org.policy.ts": org({ retention: "hours(2)", lossy: "with-flag" }), "longer/org.policy.ts": org({ retention: "hours(24)" }) });
    const loose = await run(["diff", "old/org.policy.ts", "new/org.policy.ts", "--format", "markdown"], dir);
    expect(loose.code).toBe(1);
    const lines = loose.stdout.split("\n");
    expect(lines[0]).toBe("### pruneguard diff: `old` → `new`");
    expect(lines[2]).toMatch(/^\*\*Loosens\*\*: 2 loosening, 0 tightening, 0 neutral, 1 fate range changed\. /);
    expect(lines).toContain("| policy | subject | setting | old | new | effect | why |");
    expect(lines).toContain("| --- | --- | --- | --- | --- | --- | --- |");
    expect(lines).toContain(
      "| `org` | store toolLog | retention | 8h | 2h | **loosening** | store `toolLog` retains for 2h where old retains for 8h: a span pruned 2h after its append finds its copy under old (kept 8h) and none under new (PG2102) |",
    );
    expect(lines.some((l) => l.startsWith("| `org` | kind userTurn | lossy | forbid | with-flag | **loosening** | it allows lossy commitment for kind `userTurn`"))).toBe(true);
    expect(lines).toContain("| `org` | kind toolResult | fate 2h–8h after append | reversible | lossy only with flag | **loosening** |   |");
    // Every row has the header's seven cells: no text from a policy breaks the table.
    for (const l of lines.filter((x) => x.startsWith("| `org`"))) expect(l.replace(/\\\|/g, "").split("|").length - 2, l).toBe(7);
    const tight = await run(["diff", "old/org.policy.ts", "longer/org.policy.ts", "--format", "markdown"], dir);
    expect(tight.code).toBe(0);
    expect(tight.stdout).toContain("**Nothing loosens**: 0 loosening, 1 tightening, 0 neutral.");
    expect(tight.stdout).toContain("| `org` | store toolLog | retention | 8h | 1d | tightening | going back would be refused: ");
  });

  it("a policy added or removed is a change; a kind added is listed with its fate", async () => {
    const team = `${HEADER}export default definePolicy({ name: "team", stores: {}, kinds: { note: { store: null, modes: ["drop"], lossy: "with-flag" } } });\n`;
    const dir = project({
      "old/org.policy.ts": org(),
      // Nothing pairs gone with team (no kind or store in common), and gone's kind permitted what team's does.
      "old/gone.policy.ts": team.replace('"team"', '"gone"').replace("note:", "memo:"),
      "new/org.policy.ts": org({ extra: '\n    scratch: { store: null, modes: ["drop"], lossy: "with-flag" },' }),
      "new/team.policy.ts": team,
    });
    const r = await run(["diff", "old", "new"], dir);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain("policy gone: removed (was old/gone.policy.ts)");
    expect(r.stdout).toContain("policy team: added (new/team.policy.ts)");
    expect(r.stdout).toContain("kind note added: store none; drop; lossy with-flag; lossy only with flag");
    expect(r.stdout).toContain("kind scratch added: store none; drop; lossy with-flag; lossy only with flag");
    expect(r.stdout).toMatch(/^nothing loosens: 0 loosening, 0 tightening, 0 neutral, 1 policy added, 1 policy removed$/m);
    const md = await run(["diff", "old", "new", "--format", "markdown"], dir);
    expect(md.stdout).toContain("| `gone` | policy | removed | old/gone.policy.ts | — | removed |   |");
    expect(md.stdout).toContain("| `team` | policy | added | — | new/team.policy.ts | added |   |");
  });

  it("a session lengthened past a store's retention loosens by the fate rule (PG2107), past the old side's sessions", () => {
    const a = compile({ "org.policy.ts": org({ retention: "hours(8)" }) }).policies;
    const b = compile({ "org.policy.ts": org({ retention: "hours(8)", session: "hours(12)" }) }).policies;
    const d = diffPolicySets(a, b);
    expect(d.loosens).toBe(true);
    const p = d.policies[0]!;
    expect(p.changes.map((c) => [c.setting, c.direction, c.rules.map((x) => x.code)])).toEqual([["maxLength", "loosening", ["PG2107"]]]);
    expect(p.changes[0]!.rules[0]!.message).toContain("a `drop` of `toolResult` 8h after its append is reversible under old");
    expect(p.fates).toEqual([{ kind: "toolResult", fromMs: hours(8), toMs: hours(12), old: "reversible", new: "lossy-with-flag", direction: "loosening", pastSessionOf: "old" }]);
  });

  it("--base reads the old side from git without checking it out", async () => {
    const dir = project({ "package.json": '{ "name": "x", "pruneguard": { "policies": ["policies"] } }', "policies/org.policy.ts": org() });
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args], { cwd: dir, encoding: "utf8" });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "org");
    writeFileSync(path.join(dir, "policies/org.policy.ts"), org({ lossy: "with-flag" }));
    const status = git("status", "--porcelain");
    const r = await run(["diff", "--base", "HEAD"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toContain("pruneguard diff: HEAD → the working tree");
    expect(r.stdout).toContain("kind userTurn lossy: forbid → with-flag (loosening)");
    expect(r.stdout).toContain("would be allowed by the working tree but is forbidden by HEAD");
    // Nothing was checked out: the working tree and the index are as they were.
    expect(git("status", "--porcelain")).toBe(status);
    expect(readFileSync(path.join(dir, "policies/org.policy.ts"), "utf8")).toContain('lossy: "with-flag"');
    // The same paths, named; a policy the revision lacks is added.
    writeFileSync(path.join(dir, "policies/team.policy.ts"), `${HEADER}export default definePolicy({ name: "team", stores: {}, kinds: { note: { store: null, modes: ["drop"], lossy: "with-flag" } } });\n`);
    const named = await run(["diff", "--base", "HEAD", "policies", "--format", "markdown"], dir);
    expect(named.code).toBe(1);
    expect(named.stdout).toContain("### pruneguard diff: `HEAD` → the working tree");
    expect(named.stdout).toContain("| `team` | policy | added |");
    // Back to what HEAD has: nothing loosens.
    writeFileSync(path.join(dir, "policies/org.policy.ts"), org());
    expect((await run(["diff", "--base", "HEAD", "policies/org.policy.ts"], dir)).code).toBe(0);
    const bad = await run(["diff", "--base", "no-such-rev"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--base no-such-rev is not a commit in this repository");
  });

  it("--base: a policy file in the revision larger than the compiler reads is PG1024 at it, never loaded; a large package.json is refused", async () => {
    const big = `${org()}//${"x".repeat(MAX_POLICY_BYTES)}`;
    const dir = project({ "package.json": '{ "name": "x", "pruneguard": { "policies": ["policies"] } }', "policies/org.policy.ts": org(), "policies/big.policy.ts": big.replace('name: "org"', 'name: "big"') });
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args], { cwd: dir, encoding: "utf8" });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "big");
    rmSync(path.join(dir, "policies/big.policy.ts"));
    const r = await run(["diff", "--base", "HEAD"], dir);
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toContain(`policies/big.policy.ts:1:1 - error PG1024: this policy file is too large (${Buffer.byteLength(big).toLocaleString("en-US")} bytes; the limit is 4,194,304 bytes, 4 MiB)`);
    expect(r.stderr).toContain("the old side (HEAD) does not compile");
    expect(r.all).not.toContain("internal error");
    // Only the files a compilation reads are read: compared alone, org is unchanged.
    expect((await run(["diff", "--base", "HEAD", "policies/org.policy.ts"], dir)).code).toBe(0);
    // package.json is a configuration file: at most 1 MiB of it is read, at the revision as on disk.
    const large = `{ "name": "x", "pad": "${"p".repeat(1024 * 1024)}" }`;
    writeFileSync(path.join(dir, "package.json"), large);
    git("commit", "-q", "-am", "large package.json");
    // On disk it is refused before anything else (compiler/cli/config.ts); at the revision, by the diff.
    expect((await run(["diff", "--base", "HEAD"], dir)).stderr).toContain("package.json is larger than 1 MiB: it is not read");
    writeFileSync(path.join(dir, "package.json"), '{ "name": "x", "pruneguard": { "policies": ["policies"] } }');
    const pkg = await run(["diff", "--base", "HEAD"], dir);
    expect(pkg.code, pkg.all).toBe(2);
    expect(pkg.stderr).toContain(`package.json at HEAD is ${Buffer.byteLength(large).toLocaleString("en-US")} bytes, more than the 1 MiB the compiler reads of a configuration file`);
  });

  it("usage errors and a side that does not compile exit 2", async () => {
    const dir = project({ "a/org.policy.ts": org(), "bad/org.policy.ts": org().replace('store: "toolLog"', 'store: "toolLgo"') });
    for (const args of [["diff"], ["diff", "a"], ["diff", "a", "b", "c"], ["diff", "a", "nowhere"], ["diff", "a", "a", "--format", "html"]]) {
      const r = await run(args, dir);
      expect(r.code, args.join(" ")).toBe(2);
    }
    const r = await run(["diff", "a", "bad", "--format", "json"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error PG2001");
    expect(JSON.parse(r.stdout).error.message).toContain("the new side (new) does not compile, so there is nothing to compare");
    const outside = await run(["diff", "--base", "HEAD"], project({ "policies/org.policy.ts": org() }));
    expect(outside.code).toBe(2);
  });
});
