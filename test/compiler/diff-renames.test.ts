// Issue 35: a rename must not walk a loosening past `pruneguard diff`. A policy renamed, its file moved and
// package.json repointed, or a kind renamed, in the same change as `forbid` → `with-flag`, exits 1 and says
// which old policy or kind the new one was paired with and why; a rename that changes nothing passes and is
// reported as one; an added kind nothing pairs, that permits a lossy commitment a removed kind refused,
// fails closed; `--rename old=new` states a rename, and one naming what is not there is a usage error.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { diffPolicySets, parseRename, RenameError } from "../../compiler/diff/index.js";
import { compile, HEADER, runCli as run } from "./helpers.js";

/** The org policy of diff.test.ts, with its name, its user turns' kind name and lossy rule, and extra kinds as given. */
function org(o: { name?: string; turn?: string; lossy?: string; extra?: string; budget?: number } = {}): string {
  return `${HEADER}export default definePolicy({
  name: "${o.name ?? "org"}",
  stores: {
    toolLog: store.sqlite({ retention: hours(8) }),
    transcript: store.postgres({ retention: days(30) }),
  },
  kinds: {
    toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "with-flag", pins: [pins.requestId] },
    ${o.turn ?? "userTurn"}: { store: "transcript", modes: ["summarize"], lossy: "${o.lossy ?? "forbid"}" },${o.extra ?? ""}
  },
  session: { maxLength: hours(8), lossyBudget: ${o.budget ?? 3} },
});
`;
}

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-diff-rename-"));
  write(dir, files);
  return dir;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
}

/** Output as one line per paragraph: the text renderer wraps long lines at 120 columns. */
const flat = (text: string): string => text.replace(/\n {4,}/g, " ");

const gitIn = (dir: string) => (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args], { cwd: dir, encoding: "utf8" });

describe("pruneguard diff: renames", () => {
  it("the issue: policy renamed, file moved, package.json repointed and forbid → with-flag in one change exits 1, naming the pairing", async () => {
    const dir = project({ "package.json": JSON.stringify({ name: "x", pruneguard: { policies: ["policies"] } }), "policies/org.policy.ts": org() });
    const git = gitIn(dir);
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "org");
    rmSync(path.join(dir, "policies"), { recursive: true });
    write(dir, { "package.json": JSON.stringify({ name: "x", pruneguard: { policies: ["rules"] } }), "rules/acme.policy.ts": org({ name: "acme", lossy: "with-flag" }) });

    const r = await run(["diff", "--base", "HEAD"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toContain("policy acme (renamed from org, paired by what they back: both declare store toolLog, store transcript, kind toolResult");
    expect(r.stdout).toContain("policies/org.policy.ts → rules/acme.policy.ts): loosens");
    expect(r.stdout).toContain("policy name: org → acme (neutral)");
    expect(r.stdout).toContain("kind userTurn lossy: forbid → with-flag (loosening)");
    expect(r.stdout).toMatch(/^loosens: 1 loosening, 0 tightening, 0 neutral, 1 renamed$/m);
    expect(r.stdout).not.toContain("added");
    expect(Math.max(...r.stdout.split("\n").map((l) => l.length))).toBeLessThanOrEqual(120);

    // The same rename without the loosening passes, reported as a rename.
    write(dir, { "rules/acme.policy.ts": org({ name: "acme" }) });
    const same = await run(["diff", "--base", "HEAD"], dir);
    expect(same.code, same.all).toBe(0);
    expect(same.stdout).toContain("changes no fate");
    expect(same.stdout).toMatch(/^nothing loosens: 0 loosening, 0 tightening, 0 neutral, 1 renamed$/m);
  });

  it("a kind renamed and loosened is paired by what it backs, and exits 1 naming the old kind", async () => {
    const dir = project({ "old/org.policy.ts": org(), "new/org.policy.ts": org({ turn: "userMessage", lossy: "with-flag" }) });
    const r = await run(["diff", "old", "new"], dir);
    expect(r.code, r.all).toBe(1);
    expect(flat(r.stdout)).toContain("kind userMessage: renamed from userTurn, paired by what they back: the same store and modes (postgres, retention 30d; summarize)");
    expect(r.stdout).toContain("kind userMessage (was userTurn) lossy: forbid → with-flag (loosening)");
    expect(r.stdout).toContain("it allows lossy commitment for kind `userMessage`");
    expect(r.stdout).toMatch(/^loosens: 1 loosening, 0 tightening, 0 neutral, 1 renamed$/m);

    const json = JSON.parse((await run(["diff", "old", "new", "--format", "json"], dir)).stdout) as { loosens: boolean; policies: Array<{ renames: unknown[] }> };
    expect(json.loosens).toBe(true);
    expect(json.policies[0]!.renames).toEqual([{ old: "userTurn", new: "userMessage", by: "backing", because: "what they back: the same store and modes (postgres, retention 30d; summarize)" }]);

    const md = await run(["diff", "old", "new", "--format", "markdown"], dir);
    expect(md.code).toBe(1);
    expect(md.stdout).toContain("| `org` | kind userMessage | renamed | userTurn | userMessage | renamed | paired by what they back: the same store and modes (postgres, retention 30d; summarize) |");
    expect(md.stdout).toContain("| `org` | kind userMessage (was userTurn) | lossy | forbid | with-flag | **loosening** |");
    for (const l of md.stdout.split("\n").filter((x) => x.startsWith("| `org`"))) expect(l.replace(/\\\|/g, "").split("|").length - 2, l).toBe(7);
  });

  it("a kind renamed without a loosening passes and is reported as a rename", async () => {
    const dir = project({ "old/org.policy.ts": org(), "new/org.policy.ts": org({ turn: "userMessage" }) });
    const r = await run(["diff", "old", "new"], dir);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toContain("kind userMessage: renamed from userTurn");
    expect(r.stdout).toMatch(/^nothing loosens: 0 loosening, 0 tightening, 0 neutral, 1 renamed$/m);
  });

  it("an added kind nothing pairs that permits what a removed kind refused fails closed, and --rename settles which replaced which", async () => {
    // Two user-turn kinds back the same store in the same modes: what they back pairs neither rename.
    const old = org({ extra: '\n    systemTurn: { store: "transcript", modes: ["summarize"], lossy: "with-flag" },' });
    const neu = org({ turn: "turnA", extra: '\n    turnB: { store: "transcript", modes: ["summarize"], lossy: "with-flag" },' });
    const dir = project({ "old/org.policy.ts": old, "new/org.policy.ts": neu });
    const r = await run(["diff", "old", "new"], dir);
    expect(r.code, r.all).toBe(1);
    expect(flat(r.stdout)).toContain("added kinds that may replace a removed one (nothing pairs them; state a rename with --rename old=new):");
    expect(flat(r.stdout)).toContain(
      "added kind `org.turnB` permits a lossy commitment (summarize with accept_lossy) that removed kind `org.userTurn` (lossy forbid) refused; no stated rename or name pairs",
    );
    expect(flat(r.stdout)).toContain("so it may replace one and counts as loosening (fail closed)\n");
    expect(r.stdout).toMatch(/^loosens: 1 loosening, 0 tightening, 0 neutral$/m);

    // Stated: userTurn is turnA (still forbid), systemTurn is turnB (still with-flag): nothing loosens.
    const stated = await run(["diff", "old", "new", "--rename", "org.userTurn=turnA", "--rename", "org.systemTurn=org.turnB"], dir);
    expect(stated.code, stated.all).toBe(0);
    expect(stated.stdout).toContain("kind turnA: renamed from userTurn, paired by --rename org.userTurn=turnA");
    expect(stated.stdout).toContain("kind turnB: renamed from systemTurn, paired by --rename org.systemTurn=org.turnB");
    expect(stated.stdout).toMatch(/^nothing loosens: 0 loosening, 0 tightening, 0 neutral, 2 renamed$/m);
    // Stated the other way round, userTurn's successor permits what it refused.
    const swapped = await run(["diff", "old", "new", "--rename", "org.userTurn=turnB", "--rename", "org.systemTurn=turnA"], dir);
    expect(swapped.code).toBe(1);
    expect(swapped.stdout).toContain("kind turnB (was userTurn) lossy: forbid → with-flag (loosening)");
  });

  it("a kind paired only by what it backs is still held against the other removed kinds", () => {
    // userTurn (forbid) and scratch are removed, notes added: notes backs what scratch backed, so the backing
    // pairs them — a guess, since notes may as well be userTurn's successor, and it permits what userTurn refused.
    const extraOld = '\n    scratch: { store: null, modes: ["drop"], lossy: "with-flag" },';
    const a = compile({ "org.policy.ts": org({ extra: extraOld }) }).policies;
    const b = compile({ "org.policy.ts": org({ turn: "gone", extra: '\n    notes: { store: null, modes: ["drop"], lossy: "with-flag" },' }).replace(/\n {4}gone: [^\n]*/, "") }).policies;
    const d = diffPolicySets(a, b);
    expect(d.policies[0]!.renames).toEqual([{ old: "scratch", new: "notes", by: "backing", because: "what they back: the same store and modes (no store; drop)" }]);
    expect(d.loosens).toBe(true);
    expect(d.unpaired.map((u) => [u.kind, u.pairedWith, u.refusedBy.map((r) => `${r.kind}: ${r.why}`)])).toEqual([["notes", { policy: "org", kind: "scratch" }, ["userTurn: it has no drop"]]]);
    // Stating the rename takes it as given: nothing else was refused what notes permits.
    expect(diffPolicySets(a, b, undefined, { renames: [parseRename("org.scratch=notes")] }).loosens).toBe(false);
  });

  it("a kind moved to another policy is judged by the overlay rule, named with both policies", async () => {
    const team = (extra: string) => `${HEADER}export default definePolicy({ name: "team", stores: { transcript: store.postgres({ retention: days(30) }) }, kinds: { note: { store: null, modes: ["drop"], lossy: "with-flag" },${extra} }, session: { maxLength: hours(8), lossyBudget: 3 } });\n`;
    const dir = project({
      "old/org.policy.ts": org(),
      "old/team.policy.ts": team(""),
      "new/org.policy.ts": org().replace(/\n {4}userTurn: [^\n]*/, ""),
      "new/team.policy.ts": team(' userTurn: { store: "transcript", modes: ["summarize"], lossy: "with-flag" }'),
    });
    const r = await run(["diff", "old", "new"], dir);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toContain("kinds moved between policies:");
    expect(r.stdout).toContain("kind team.userTurn (was org.userTurn, paired by its name, in another policy): loosens");
    expect(flat(r.stdout)).toContain("refused by the overlay rule: it allows lossy commitment for kind `userTurn`");
  });

  it("an added kind that permits nothing a removed kind refused, or permits no lossy commitment at all, passes", () => {
    const a = compile({ "org.policy.ts": org() }).policies;
    // userTurn removed; a new kind that forbids lossy permits no lossy commitment.
    const forbids = compile({ "org.policy.ts": org({ turn: "audit", extra: "" }).replace('"summarize"], lossy: "forbid"', '"drop"], lossy: "forbid"') }).policies;
    expect(diffPolicySets(a, forbids).loosens).toBe(false);
    // With a lossy budget of 0 no kind can commit a loss, whatever its rule says.
    const budget0 = compile({ "org.policy.ts": org({ turn: "memo", lossy: "with-flag", budget: 0 }).replace('store: "transcript", modes: ["summarize"], lossy: "with-flag"', 'store: null, modes: ["drop"], lossy: "with-flag"') }).policies;
    expect(diffPolicySets(a, budget0).loosens).toBe(false);
  });

  it("--rename is checked: malformed, naming what is not there, or a name still on both sides is a usage error (exit 2)", async () => {
    const dir = project({ "old/org.policy.ts": org(), "new/org.policy.ts": org({ turn: "userMessage" }) });
    const cases: Array<[string, string]> = [
      ["a=b=c", "--rename: expected old=new"],
      ["Org=acme", "--rename: expected old=new"],
      ["nope=org", "the old side has no policy \"nope\""],
      ["org.userTurn=org.nothing", "policy org on the new side has no kind \"nothing\""],
      ["org.toolResult=userMessage", "policy org on the new side still has kind toolResult, so it is not renamed"],
      ["org=org2", "the new side has no policy \"org2\""],
    ];
    for (const [arg, message] of cases) {
      const r = await run(["diff", "old", "new", "--rename", arg], dir);
      expect(r.code, arg).toBe(2);
      expect(r.stderr, arg).toContain(message);
    }
    expect(() => parseRename(`${"X".repeat(500)}=y`)).toThrow(RenameError);
    expect(() => parseRename(`${"X".repeat(500)}=y`)).toThrow(/…"/);
  });

  it("parseRename reads policies, kinds, and a kind that stays in its policy's counterpart", () => {
    expect(parseRename("org=acme")).toEqual({ old: { policy: "org", kind: null }, new: { policy: "acme", kind: null } });
    expect(parseRename("org.userTurn=acme.turn")).toEqual({ old: { policy: "org", kind: "userTurn" }, new: { policy: "acme", kind: "turn" } });
    expect(parseRename("org.userTurn=turn")).toEqual({ old: { policy: "org", kind: "userTurn" }, new: { policy: null, kind: "turn" } });
  });
});
