// Property: `pruneguard diff` fails (exit 1) exactly when the new side permits a lossy commitment the old
// side refused, whatever the same change renames, moves or repoints. Random policies get random edits —
// policies and kinds renamed (the rename stated with --rename or not), removed, added, files moved to
// another folder with package.json repointed, lossy rules flipped, modes removed, modes added where lossy is
// allowed — and a reference oracle that knows which old kind each new one truly replaces says whether some
// (kind, mode) now permits a lossy commitment its stated predecessor refused, or, for any other kind, that
// some old kind whose fate the change leaves unsaid refused (fail closed: a rename nobody stated is a guess,
// whether or not what it backs finds it). Exact both ways, so the rule neither misses nor invents a loosening.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffPolicySets, parseRename } from "../../compiler/diff/index.js";
import { compile, HEADER, runCli as run } from "./helpers.js";

const MODES = ["drop", "summarize", "compress"] as const;
type Mode = (typeof MODES)[number];
type Lossy = "forbid" | "with-flag";
type StoreRef = "log" | "doc" | null;

interface KindM {
  readonly name: string;
  readonly store: StoreRef;
  readonly modes: readonly Mode[];
  readonly lossy: Lossy;
}
interface PolicyM {
  /** Names its stores (`p0log`), so a policy renamed keeps what it backs. */
  readonly idx: number;
  readonly name: string;
  readonly dir: "policies" | "rules";
  readonly kinds: readonly KindM[];
}

const kindShape = fc.record({
  store: fc.constantFrom<StoreRef>("log", "doc", null),
  modes: fc.subarray([...MODES], { minLength: 1 }),
  lossy: fc.constantFrom<Lossy>("forbid", "with-flag"),
});

const kindEdit = fc.record({
  fate: fc.constantFrom("keep", "keep", "rename", "rename", "remove"),
  stated: fc.boolean(),
  flip: fc.boolean(),
  modes: fc.constantFrom("same", "same", "remove", "add"),
});
const policyEdit = fc.record({
  fate: fc.constantFrom("keep", "rename", "rename", "remove"),
  stated: fc.boolean(),
  move: fc.boolean(),
  added: fc.array(kindShape, { maxLength: 1 }),
});

/** One or two policies, each with one to three kinds; two kinds may back the same store in the same modes, so a backing can match twice. */
const oldSide = fc
  .array(fc.array(kindShape, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 2 })
  .map((policies): PolicyM[] =>
    policies.map((kinds, idx) => ({ idx, name: ["org", "team"][idx]!, dir: "policies", kinds: kinds.map((k, j) => ({ name: `p${idx}k${j}`, ...k })) })),
  );

interface Scenario {
  readonly old: readonly PolicyM[];
  readonly neu: readonly PolicyM[];
  readonly renames: readonly string[];
  /** New `policy.kind` → the old kind it truly replaces, when the change says so (its name kept, or the rename stated). */
  readonly certain: ReadonlyMap<string, KindM>;
  /** Old kinds the change does not say the fate of: removed, or renamed without saying so. */
  readonly uncertain: readonly KindM[];
}

const scenario = oldSide.chain((old) =>
  fc
    .record({
      policies: fc.array(policyEdit, { minLength: old.length, maxLength: old.length }),
      kinds: fc.array(fc.array(kindEdit, { minLength: 3, maxLength: 3 }), { minLength: old.length, maxLength: old.length }),
      fresh: fc.array(kindShape, { maxLength: 1 }),
    })
    .map(({ policies, kinds, fresh }): Scenario => {
      const neu: PolicyM[] = [];
      const renames: string[] = [];
      const certain = new Map<string, KindM>();
      const uncertain: KindM[] = [];
      old.forEach((p, i) => {
        const pe = policies[i]!;
        if (pe.fate === "remove") return void uncertain.push(...p.kinds);
        const name = pe.fate === "rename" ? ["acme", "crew"][i]! : p.name;
        if (pe.fate === "rename" && pe.stated) renames.push(`${p.name}=${name}`);
        const newKinds: KindM[] = [];
        p.kinds.forEach((k, j) => {
          const edit = kinds[i]![j]!;
          if (edit.fate === "remove") return void uncertain.push(k);
          const lossy: Lossy = edit.flip ? (k.lossy === "forbid" ? "with-flag" : "forbid") : k.lossy;
          const spare = MODES.filter((m) => !k.modes.includes(m));
          const modes: Mode[] =
            edit.modes === "remove" && k.modes.length > 1
              ? k.modes.slice(1)
              : edit.modes === "add" && lossy === "with-flag" && spare.length > 0
                ? [...k.modes, spare[0]!]
                : [...k.modes];
          const nk: KindM = { name: edit.fate === "rename" ? `${k.name}r` : k.name, store: k.store, modes, lossy };
          newKinds.push(nk);
          if (edit.fate === "rename" && !edit.stated) return void uncertain.push(k);
          certain.set(`${name}.${nk.name}`, k);
          if (edit.fate === "rename") renames.push(`${p.name}.${k.name}=${name}.${nk.name}`);
        });
        pe.added.forEach((a, j) => {
          const nk: KindM = { name: `p${p.idx}n${j}`, ...a };
          newKinds.push(nk);
        });
        if (newKinds.length > 0) neu.push({ idx: p.idx, name, dir: pe.move ? "rules" : "policies", kinds: newKinds });
        else if (pe.fate === "rename" && pe.stated) renames.pop(); // a policy with no kinds left is not compiled; nothing to rename
      });
      if (fresh.length > 0) neu.push({ idx: 9, name: "fresh", dir: "policies", kinds: fresh.map((k, j) => ({ name: `freshk${j}`, ...k })) });
      return { old, neu, renames, certain, uncertain };
    }),
);

const permits = (k: KindM, m: Mode): boolean => k.modes.includes(m) && k.lossy === "with-flag";

/**
 * The oracle: some new (kind, mode) permits a lossy commitment that the kind it is known to replace refused,
 * or — for a kind whose predecessor the change does not state (added, or renamed unsaid) — that some old
 * kind whose fate the change does not state refused (fail closed).
 */
function oracle(s: Scenario): boolean {
  return s.neu.some((p) =>
    p.kinds.some((k) => {
      const was = s.certain.get(`${p.name}.${k.name}`);
      return MODES.some((m) => permits(k, m) && (was ? !permits(was, m) : s.uncertain.some((o) => !permits(o, m))));
    }),
  );
}

function policyText(p: PolicyM): string {
  const kinds = p.kinds
    .map((k) => `    ${k.name}: { store: ${k.store === null ? "null" : `"p${p.idx}${k.store}"`}, modes: [${k.modes.map((m) => `"${m}"`).join(", ")}], lossy: "${k.lossy}" },`)
    .join("\n");
  return `${HEADER}export default definePolicy({
  name: "${p.name}",
  stores: {
    p${p.idx}log: store.sqlite({ retention: days(30) }),
    p${p.idx}doc: store.postgres({ retention: days(30) }),
  },
  kinds: {
${kinds}
  },
  session: { maxLength: hours(8), lossyBudget: 3 },
});
`;
}

const files = (ps: readonly PolicyM[]): Record<string, string> => Object.fromEntries(ps.map((p) => [`${p.dir}/${p.name}.policy.ts`, policyText(p)]));

function check(s: Scenario, loosens: boolean, what: string): void {
  expect(loosens, `${what}\nrenames: ${s.renames.join(" ")}\nold: ${JSON.stringify(s.old)}\nnew: ${JSON.stringify(s.neu)}`).toBe(oracle(s));
}

describe("diff pairs renamed policies and kinds, and fails whenever the new side permits a lossy commitment the old side refused", () => {
  it("property: in process, on compiled policies, with renames stated or not and files moved", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        fc.pre(s.neu.length > 0);
        const a = compile(files(s.old));
        const b = compile(files(s.neu));
        expect(a.hasErrors || b.hasErrors, JSON.stringify([...a.diagnostics, ...b.diagnostics].filter((d) => d.category === "error"))).toBe(false);
        const d = diffPolicySets(a.policies, b.policies, undefined, { renames: s.renames.map(parseRename) });
        check(s, d.loosens, JSON.stringify({ unpaired: d.unpaired.map((u) => u.message), policies: d.policies.map((p) => [p.name, p.oldName, p.changes.map((c) => `${c.name} ${c.setting} ${c.direction}`)]) }));
      }),
      { numRuns: Number(process.env["PRUNEGUARD_FUZZ_RUNS"] ?? 150) },
    );
  });

  it("property: through the CLI against git, with files moved and package.json repointed in the same change", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        fc.pre(s.neu.length > 0);
        const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-diff-prop-"));
        try {
          const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args], { cwd: dir, encoding: "utf8" });
          const write = (fs: Record<string, string>) => {
            for (const [p, text] of Object.entries(fs)) {
              mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
              writeFileSync(path.join(dir, p), text);
            }
          };
          write({ "package.json": JSON.stringify({ name: "x", pruneguard: { policies: ["policies"] } }), ...files(s.old) });
          git("init", "-q");
          git("add", "-A");
          git("commit", "-q", "-m", "old");
          rmSync(path.join(dir, "policies"), { recursive: true });
          const dirs = [...new Set(s.neu.map((p) => p.dir))].sort();
          write({ "package.json": JSON.stringify({ name: "x", pruneguard: { policies: dirs } }), ...files(s.neu) });
          const r = await run(["diff", "--base", "HEAD", ...s.renames.flatMap((x) => ["--rename", x])], dir);
          expect([0, 1], r.all).toContain(r.code);
          check(s, r.code === 1, r.all);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: Number(process.env["PRUNEGUARD_FUZZ_RUNS"] ?? 15) },
    );
  });
});
