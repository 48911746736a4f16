// One failing fixture (code + location) and one passing fixture per check. Locations are 1-based; the
// fixtures put the offending token at a known line so a moved location is a failing test.
import { describe, expect, it } from "vitest";
import { describeFate, fateOf } from "../../compiler/analysis/fate.js";
import { DEFAULT_COMPACTION } from "../../src/policy/kinds.js";
import { codes, col, compile, compileOne, compileOverlay, expectClean, expectDiagnostic, HEADER, ORG } from "./helpers.js";

const policy = (kinds: string, extra = "", stores = `toolLog: store.sqlite({ retention: hours(2), holds: true })`) =>
  `export default definePolicy({
  name: "p",
  stores: { ${stores} },
  kinds: {
${kinds}
  },
${extra}
});
`;

describe("PG2001 unknown store", () => {
  it("fails on a store name that is not declared", () => {
    const r = compileOne(policy(`    toolResult: { store: "toolLg", modes: ["drop"], lossy: "forbid" },`));
    const d = expectDiagnostic(r, "PG2001", 6, 26);
    expect(d.message).toContain("`toolLg`");
    expect(d.category).toBe("error");
  });
  it("passes when every store is declared", () => {
    expectClean(compileOne(policy(`    toolResult: { store: "toolLog", modes: ["drop"], lossy: "forbid" },`)));
  });
  it("suggests the declared store a misspelt name is nearest, and does not also call that store unused", () => {
    const kind = `    toolResult: { store: "toolLgo", modes: ["drop"], lossy: "forbid" },`;
    const r = compileOne(policy(kind));
    const d = expectDiagnostic(r, "PG2001", 6, col(kind, `"toolLgo"`));
    expect(d.message).toBe("kind `toolResult` names store `toolLgo`, which this policy does not declare; did you mean `toolLog`? (declared: `toolLog`)");
    expect(d.related).toEqual([{ message: "store `toolLog` is declared here", location: expect.objectContaining({ file: "p.policy.ts", line: 4, column: 13 }) }]);
    // One mistake, one diagnostic: `toolLog` is the store the kind meant, so no PG3004 for it.
    expect(codes(r)).toEqual(["PG2001"]);
  });
  it("suggests nothing for a name close to no store, and then the unused store is still reported", () => {
    const r = compileOne(policy(`    toolResult: { store: "archive", modes: ["drop"], lossy: "forbid" },`));
    expect(expectDiagnostic(r, "PG2001", 6, 26).message).toBe("kind `toolResult` names store `archive`, which this policy does not declare (declared: `toolLog`)");
    expectDiagnostic(r, "PG3004", 4, 13);
  });
  it("in an overlay, a kind moved to a misspelling of its base store is one PG2001, not also PG3004 for that store", () => {
    const line = `  kinds: { userTurn: { store: "transcrpt" } },`;
    const r = compileOverlay(line);
    const d = expectDiagnostic(r, "PG2001", 5, col(line, `"transcrpt"`), "team.policy.ts");
    expect(d.message).toContain("did you mean `transcript`?");
    expect(d.related[0]?.location).toMatchObject({ file: "org.policy.ts", line: 7, column: 5 });
    expect(codes(r)).toEqual(["PG2001"]);
  });
});

describe("PG2002 duplicate declarations", () => {
  it("fails on a kind declared twice", () => {
    const r = compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },\n    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },`));
    const d = expectDiagnostic(r, "PG2002", 7, 5);
    // The first declaration is named, as tsc names the other declaration of a duplicate identifier.
    expect(d.related).toEqual([{ message: "`a` is first declared here; the later one wins", location: expect.objectContaining({ line: 6, column: 5 }) }]);
  });
  it("names where each repeated key was first written, also for a property", () => {
    const r = compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid", lossy: "with-flag" },`));
    const d = expectDiagnostic(r, "PG2002", 6, 62);
    expect(d.message).toBe("property `lossy` is declared more than once");
    expect(d.related[0]).toMatchObject({ location: { line: 6, column: 45 } });
  });
  it("passes with distinct kinds", () => {
    expectClean(compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },\n    b: { store: "toolLog", modes: ["drop"], lossy: "forbid" },`)));
  });
});

describe("PG2003 empty mode list", () => {
  it("fails on modes: []", () => {
    expectDiagnostic(compileOne(policy(`    a: { store: "toolLog", modes: [], lossy: "forbid" },`)), "PG2003", 6, 35);
  });
});

describe("PG2004 cycles between policy modules", () => {
  it("fails when two overlays import each other", () => {
    const r = compile({
      "a.policy.ts": `${HEADER}import b from "./b.policy.js";\nexport default extendPolicy(b, { name: "a" });\n`,
      "b.policy.ts": `${HEADER}import a from "./a.policy.js";\nexport default extendPolicy(a, { name: "b" });\n`,
    });
    const d = expectDiagnostic(r, "PG2004", 2, 15, "b.policy.ts");
    expect(d.message).toContain("a.policy.ts → b.policy.ts → a.policy.ts");
  });
  it("passes for a base and an overlay", () => {
    expectClean(compileOverlay(""));
  });
});

describe("PG2005 duplicate policy names", () => {
  it("fails when two files use the same name", () => {
    const body = policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },`);
    const r = compile({ "x.policy.ts": HEADER + body, "y.policy.ts": HEADER + body });
    expectDiagnostic(r, "PG2005", 3, 9, "y.policy.ts");
  });
});

describe("PG2006 / PG3002 stores that cannot distinguish absent", () => {
  const stores = `cache: store.memory({ retention: forever, distinguishesAbsent: false })`;
  it("is an error where the kind forbids lossy", () => {
    const r = compileOne(policy(`    doc: { store: "cache", modes: ["drop"], lossy: "forbid" },`, "", stores));
    expectDiagnostic(r, "PG2006", 6, 19);
    expect(r.hasErrors).toBe(true);
  });
  it("is a warning where the kind allows lossy with the flag", () => {
    const r = compileOne(policy(`    doc: { store: "cache", modes: ["drop"], lossy: "with-flag" },`, "", stores));
    expectDiagnostic(r, "PG3002", 6, 19);
    expect(r.hasErrors).toBe(false);
  });
});

describe("PG2007 / PG2008 tombstone wording", () => {
  const kinds = `    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },`;
  it("fails without {span}", () => {
    expectDiagnostic(compileOne(policy(kinds, `  tombstone: "pruned, unrecoverable",`)), "PG2007", 8, 14);
  });
  it("fails over 13 tokens once filled with span_99999", () => {
    const d = expectDiagnostic(compileOne(policy(kinds, `  tombstone: "{span} was pruned by the runtime and can never be recovered from any store",`)), "PG2008", 8, 14);
    expect(d.message).toContain("span_99999 was pruned");
  });
  it("counts wording that spells a special token as plain text, as the runtime does, instead of throwing", () => {
    const d = expectDiagnostic(compileOne(policy(kinds, `  tombstone: "{span} <|endoftext|> <|endoftext|> <|endoftext|>",`)), "PG2008", 8, 14);
    expect(d.message).toContain("span_99999 <|endoftext|>");
  });
  it("passes for the reference wording", () => {
    expectClean(compileOne(policy(kinds, `  tombstone: "{span} pruned, unrecoverable, contents unknown",`)));
  });
});

describe("PG2009 / PG2011 / PG2012 pin patterns", () => {
  const withPin = (p: string) => compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid", pins: [${p}] },`));
  it("fails on a pattern that does not compile", () => {
    expectDiagnostic(withPin(`pin("t", "[A-Z+")`), "PG2009", 6, 78);
  });
  it("fails on a lookahead the linear-time engine cannot run, saying what to write instead", () => {
    const d = expectDiagnostic(withPin(`pin("ids", /ord_\\d+(?=\\s)/)`), "PG2012", 6, 69);
    expect(d.message).toContain("cannot run `(?=`");
    expect(d.message).toContain("capture group");
  });
  it("fails on a pattern that matches the empty string", () => {
    expectDiagnostic(withPin(`pin("maybe", "\\\\d*")`), "PG2011", 6, 69);
  });
  it("passes for every preset and a linear custom pin", () => {
    expectClean(withPin(`pins.requestId, pins.uuid, pins.gitSha, pins.errorCode, pins.filePath, pins.httpStatus, pins.traceId, pins.ticket, pins.fileName, pins.sourcePosition, pin("t", /T-\\d{1,6}(?:-\\d{1,3})?/), pin("ids", /(\\w+)+-\\d/)`));
  });
});

describe("PG2013 / PG2014 compaction thresholds", () => {
  const kinds = `    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },`;
  const withCompaction = (value: string) => `  session: { compaction: ${value} },`;
  it("PG2013: a minFreedTokens below the minimum, at its value", () => {
    const line = withCompaction(`{ minFreedTokens: 512 }`);
    const d = expectDiagnostic(compileOne(policy(kinds, line)), "PG2013", 8, col(line, "512"));
    expect(d.message).toContain("at least 1024");
    expect(d.message).toContain("got 512");
  });
  it("PG2013: a minFreedTokens that is not a whole number of tokens", () => {
    const line = withCompaction(`{ minFreedTokens: 20_000.5 }`);
    expect(expectDiagnostic(compileOne(policy(kinds, line)), "PG2013", 8, col(line, "20_000.5")).message).toContain("got 20000.5");
  });
  it("PG2014: an atTokens not above minFreedTokens, at the atTokens value", () => {
    const line = withCompaction(`{ minFreedTokens: 20_000, atTokens: 20_000 }`);
    const d = expectDiagnostic(compileOne(policy(kinds, line)), "PG2014", 8, col(line, "20_000 }"));
    expect(d.message).toContain("above `minFreedTokens` (20000)");
  });
  it("PG2014: compared with the default threshold when minFreedTokens is not written, and saying so", () => {
    const line = withCompaction(`{ atTokens: ${DEFAULT_COMPACTION.minFreedTokens} }`);
    const d = expectDiagnostic(compileOne(policy(kinds, line)), "PG2014", 8, col(line, `${DEFAULT_COMPACTION.minFreedTokens} }`));
    expect(d.message).toContain(`(${DEFAULT_COMPACTION.minFreedTokens}, the default)`);
  });
  it("PG2014: an atTokens that is not a whole number of tokens", () => {
    const line = withCompaction(`{ atTokens: 120_000.5 }`);
    expectDiagnostic(compileOne(policy(kinds, line)), "PG2014", 8, col(line, "120_000.5"));
  });
  it("passes for both fields at their bounds, an empty object and \"immediate\"", () => {
    for (const value of [`{ minFreedTokens: 1_024, atTokens: 1_025 }`, `{ minFreedTokens: 20_000, atTokens: 120_000 }`, `{}`, `"immediate"`]) {
      expectClean(compileOne(policy(kinds, withCompaction(value))));
    }
  });
});

describe("PG21xx overlays may only tighten", () => {
  it("PG2101: lossy where the base forbids it, with a counterexample", () => {
    const d = expectDiagnostic(compileOverlay(`  kinds: { userTurn: { lossy: "with-flag" } },`), "PG2101", 5, 31, "team.policy.ts");
    expect(d.message).toContain("a `summarize` of `userTurn` with accept_lossy would be allowed by team but is forbidden by org");
  });
  it("PG2101 is not raised where a lossy budget of 0 means no prune can ever be lossy", () => {
    expect(codes(compileOverlay(`  kinds: { userTurn: { lossy: "with-flag" } },\n  session: { lossyBudget: 0 },`))).not.toContain("PG2101");
  });
  it("PG2102: shorter retention, with the prune that finds its copy under the base and none under the overlay", () => {
    const d = expectDiagnostic(compileOverlay(`  stores: { toolLog: store.sqlite({ retention: minutes(30), holds: true }) },`), "PG2102", 5, 48, "team.policy.ts");
    expect(d.message).toContain("30m where org retains for 2h");
    expect(d.message).toContain("a span pruned 30m after its append finds its copy under org (kept 2h) and none under team");
  });
  it("PG2103: extra modes", () => {
    const d = expectDiagnostic(compileOverlay(`  kinds: { userTurn: { modes: ["summarize", "drop"] } },`), "PG2103", 5, 31, "team.policy.ts");
    expect(d.message).toContain("a `drop` of `userTurn` would be allowed by team but is rejected by org");
  });
  it("PG2104: a dropped pin", () => {
    expectDiagnostic(compileOverlay(`  kinds: { toolResult: { pins: [pins.requestId] } },`), "PG2104", 5, 32, "team.policy.ts");
  });
  it("PG2105: a store that can no longer hold copies", () => {
    const line = `  stores: { toolLog: store.sqlite({ retention: hours(2), holds: false }) },`;
    const d = expectDiagnostic(compileOverlay(line), "PG2105", 5, col(line, "false"), "team.policy.ts");
    expect(d.message).toContain("cannot place holds");
  });
  it("PG2106: a larger lossy budget", () => {
    expectDiagnostic(compileOverlay(`  session: { lossyBudget: 10 },`), "PG2106", 5, 27, "team.policy.ts");
  });
  it("PG2108: allowing provider compaction the base does not; forbidding what the base allows is a tightening", () => {
    const d = expectDiagnostic(compileOverlay(`  session: { providerCompaction: "allow" },`), "PG2108", 5, 34, "team.policy.ts");
    expect(d.message).toContain("allows provider-side compaction");
    const allowing = ORG.replace("lossyBudget: 3 }", `lossyBudget: 3, providerCompaction: "allow" }`);
    expectClean(overlayOfOrg(allowing, `  session: { providerCompaction: "forbid" },`));
    expectClean(overlayOfOrg(allowing, `  session: { providerCompaction: "allow" },`));
    const r = overlayOfOrg(allowing, `  session: { lossyBudget: 2 },`);
    expect(r.policies.map((p) => p.session.providerCompaction)).toEqual(["allow", "allow"]);
  });
  it("session.providerCompaction takes only forbid or allow, with a suggestion", () => {
    const r = compileOverlay(`  session: { providerCompaction: "alow" },`);
    expect(r.diagnostics.map((d) => `${d.code} ${d.message}`).join("\n")).toMatch(/providerCompaction/);
  });
  /** An overlay of `base` (ORG with another session) whose second argument is `body`, from line 5. */
  const overlayOfOrg = (base: string, body: string) => compile({ "org.policy.ts": base, "team.policy.ts": `${HEADER}import org from "./org.policy.js";\nexport default extendPolicy(org, {\n  name: "team",\n${body}\n});\n` });
  const withCompaction = (value: string) => ORG.replace("lossyBudget: 3 }", `lossyBudget: 3, compaction: ${value} }`);
  it("compaction changes what a prune costs, never a kind's fate: an overlay may set it either way", () => {
    const fates = (r: ReturnType<typeof compile>) => r.policies.map((p) => p.kinds.map((k) => `${p.name}.${k.name}: ${describeFate(fateOf(k, p))}`));
    const immediate = withCompaction(`"immediate"`);
    const deferred = withCompaction("{ minFreedTokens: 20_000, atTokens: 120_000 }");
    for (const [base, body] of [
      [immediate, `  session: { compaction: { minFreedTokens: 64_000, atTokens: 200_000 } },`],
      [deferred, `  session: { compaction: "immediate" },`],
      [deferred, `  session: { compaction: { minFreedTokens: 1_024 } },`],
      [ORG, `  session: { compaction: "immediate" },`],
    ] as const) {
      const r = overlayOfOrg(base, body);
      expectClean(r);
      const [org, team] = fates(r);
      expect(team!.map((f) => f.replace(/^team/, "org"))).toEqual(org);
    }
  });
  it("an overlay's compaction replaces its base's whole: a field it leaves out takes the default, not the base's", () => {
    const overlay = (body: string) => overlayOfOrg(withCompaction("{ minFreedTokens: 40_000, atTokens: 120_000 }"), body);
    const team = (body: string) => overlay(body).policies.find((p) => p.name === "team")!.session.compaction;
    const byDefault = DEFAULT_COMPACTION.minFreedTokens;
    expect(team(`  session: { lossyBudget: 1 },`)).toEqual({ minFreedTokens: 40_000, atTokens: 120_000 });
    expect(team(`  session: { compaction: { minFreedTokens: 30_000 } },`)).toEqual({ minFreedTokens: 30_000, atTokens: null });
    // An atTokens under the base's threshold but above the default is valid: the base's threshold is gone.
    expect(team(`  session: { compaction: { atTokens: ${byDefault + 1} } },`)).toEqual({ minFreedTokens: byDefault, atTokens: byDefault + 1 });
    const line = `  session: { compaction: { atTokens: ${byDefault} } },`;
    expect(expectDiagnostic(overlay(line), "PG2014", 5, col(line, `${byDefault} }`), "team.policy.ts").message).toContain(`(${byDefault}, the default)`);
  });
  it("passes for a real tightening", () => {
    expectClean(
      compileOverlay(`  kinds: {
    toolResult: { modes: ["drop"], lossy: "forbid", pins: [pins.requestId, ticket, pins.errorCode] },
    searchHit: { store: "transcript", modes: ["drop"], lossy: "forbid" },
  },
  session: { maxLength: hours(4), lossyBudget: 1 },`),
    );
  });
});

describe("PG3001 retention shorter than a session", () => {
  it("warns with the numbers", () => {
    const r = compileOne(policy(`    a: { store: "log", modes: ["drop"], lossy: "with-flag" },`, `  session: { maxLength: hours(8) },`, `log: store.sqlite({ retention: hours(2), holds: false })`));
    const d = expectDiagnostic(r, "PG3001", 4, 44);
    expect(d.message).toContain("2h and cannot hold them, but sessions last up to 8h");
    expect(d.message).toContain("loses its copy 6h before");
    expect(r.hasErrors).toBe(false);
  });
  it("warns when the store holds too: holds are placed at prune time, so a live span's copy still rotates out", () => {
    const r = compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },`, `  session: { maxLength: hours(8) },`));
    const d = expectDiagnostic(r, "PG3001", 4, 48);
    expect(d.message).toContain("its holds start only when a span is pruned");
    expect(d.message).toContain("pruning it after that is rejected");
  });
  it("points at the overlay's field when an overlay turns re-persist off on an inherited store", () => {
    const r = compileOverlay(`  kinds: { toolResult: { repersist: false } },`);
    const d = expectDiagnostic(r, "PG3001", 5, 37, "team.policy.ts");
    expect(d.message).toContain("`toolResult`");
  });
  it("points into the overlay when the overlay lengthens the session (a forbid kind: tighter, so a warning only)", () => {
    const r = compile({ "base.policy.ts": SHORT_BASE, "team.policy.ts": overlayOf("base", `  session: { maxLength: hours(12) },`) });
    const d = r.diagnostics.find((x) => x.code === "PG3001" && x.message.includes("`doc`"));
    expect(d?.location).toMatchObject({ file: "team.policy.ts", line: 5, column: col(`  session: { maxLength: hours(12) },`, "hours(12)") });
    expect(r.diagnostics.filter((x) => x.code === "PG3001" && x.location?.file === "base.policy.ts")).toEqual([]);
  });
  it("does not warn when the kind re-persists into a writable store, or retention outlasts the session", () => {
    expectClean(compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "with-flag", repersist: true },`, `  session: { maxLength: hours(8) },`)));
    expectClean(compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "with-flag" },`, `  session: { maxLength: hours(2) },`)));
  });
});

describe("PG3005 read-only store", () => {
  const stores = `notes: store.sqlite({ retention: hours(6), writable: false })`;
  it("warns that every prune is lossy (with-flag) or rejected (forbid)", () => {
    const r = compileOne(policy(`    scratch: { store: "notes", modes: ["drop"], lossy: "with-flag" },`, "", stores));
    expect(expectDiagnostic(r, "PG3005", 6, 23).message).toContain("a lossy commitment that needs accept_lossy");
    const f = compileOne(policy(`    scratch: { store: "notes", modes: ["drop"], lossy: "forbid" },`, "", stores));
    expect(expectDiagnostic(f, "PG3005", 6, 23).message).toContain("the kind can never be pruned");
  });
  it("is quiet for a writable store", () => {
    expectClean(compileOne(policy(`    scratch: { store: "notes", modes: ["drop"], lossy: "with-flag" },`, "", `notes: store.sqlite({ retention: hours(6) })`)));
  });
});

describe("PG3003 / PG3004", () => {
  it("PG3003: repersist without a store", () => {
    expectDiagnostic(compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },\n    b: { store: null, modes: ["drop"], lossy: "with-flag", repersist: true },`)), "PG3003", 7, 71);
  });
  it("PG3004: an unused store", () => {
    expectDiagnostic(compileOne(policy(`    a: { store: null, modes: ["drop"], lossy: "with-flag" },`)), "PG3004", 4, 13);
  });
});

describe("the base and its overlay together", () => {
  it("reports a base problem once, where it is written", () => {
    const r = compile({
      "org.policy.ts": ORG.replace(`modes: ["summarize"]`, `modes: []`),
      "team.policy.ts": `${HEADER}import org from "./org.policy.js";\nexport default extendPolicy(org, { name: "team" });\n`,
    });
    expect(codes(r).filter((c) => c === "PG2003")).toHaveLength(1);
    expect(r.diagnostics[0]?.location?.file).toBe("org.policy.ts");
  });
});

describe("PG3006 pruned copies expire mid-session without holds", () => {
  const noHolds = `log: store.sqlite({ retention: hours(2), holds: false })`;
  it("warns at the holds field, with the numbers and what the runtime will do", () => {
    const r = compileOne(policy(`    a: { store: "log", modes: ["drop"], lossy: "with-flag" },`, `  session: { maxLength: hours(8) },`, noHolds));
    const d = expectDiagnostic(r, "PG3006", 4, 61);
    expect(d.category).toBe("warning");
    expect(d.message).toContain("retains them for 2h, but sessions last up to 8h");
    expect(d.message).toContain("reversible only until then, and the index line says when");
    const f = compileOne(policy(`    a: { store: "log", modes: ["drop"], lossy: "forbid", repersist: true },`, `  session: { maxLength: hours(8) },`, noHolds));
    expect(expectDiagnostic(f, "PG3006", 4, 61).message).toContain("refused, because the kind forbids lossy commitment");
  });
  it("warns when sessions have no maximum length", () => {
    const r = compileOne(policy(`    a: { store: "log", modes: ["drop"], lossy: "with-flag", repersist: true },`, "", noHolds));
    expect(expectDiagnostic(r, "PG3006", 4, 61).message).toContain("but sessions have no maximum length");
  });
  it("is quiet with holds, with retention as long as the session, and for read-only stores (PG3005 says it)", () => {
    expect(codes(compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "with-flag", repersist: true },`, `  session: { maxLength: hours(8) },`)))).not.toContain("PG3006");
    expect(codes(compileOne(policy(`    a: { store: "log", modes: ["drop"], lossy: "with-flag" },`, `  session: { maxLength: hours(2) },`, noHolds)))).not.toContain("PG3006");
    expect(codes(compileOne(policy(`    a: { store: "log", modes: ["drop"], lossy: "with-flag" },`, "", `log: store.sqlite({ retention: hours(2), holds: false, writable: false })`)))).not.toContain("PG3006");
  });
});

describe("PG3007 a kind that can never be pruned", () => {
  const notice = `    notice: { store: null, modes: ["drop"], lossy: "forbid" },`;
  it("warns at the kind's name, saying what would make it prunable, and explain still says never prunable", () => {
    const r = compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },\n${notice}`));
    const d = expectDiagnostic(r, "PG3007", 7, col(notice, "notice"));
    expect(d.category).toBe("warning");
    expect(r.hasErrors).toBe(false);
    expect(d.message).toContain("kind `notice` has no store and forbids lossy commitment");
    expect(d.message).toContain("give it a store");
    expect(d.message).toContain('set `lossy: "with-flag"`');
    const p = r.policies[0]!;
    expect(describeFate(fateOf(p.kinds[1]!, p))).toBe("never prunable");
  });
  it("is quiet for a kind with no store that allows lossy with the flag, and for a forbid kind with a store", () => {
    expect(codes(compileOne(policy(`    a: { store: "toolLog", modes: ["drop"], lossy: "forbid" },\n    b: { store: null, modes: ["drop"], lossy: "with-flag" },`)))).not.toContain("PG3007");
  });
  it("points into an overlay that moves a forbid kind to no store, at its `store: null`", () => {
    const line = `  kinds: { userTurn: { store: null } },`;
    const r = compileOverlay(line);
    expectDiagnostic(r, "PG3007", 5, col(line, "null"), "team.policy.ts");
    // Tighter than the base (its prunes were reversible, now rejected), so no error.
    expect(r.hasErrors).toBe(false);
    expect(r.diagnostics.filter((x) => x.code === "PG3007" && x.location?.file === "org.policy.ts")).toEqual([]);
  });
  it("points into an overlay that forbids lossy for a kind with no store, at its `lossy`", () => {
    const base = `${HEADER}export default definePolicy({
  name: "base",
  stores: { log: store.sqlite({ retention: days(1) }) },
  kinds: { a: { store: "log", modes: ["drop"], lossy: "with-flag" }, hint: { store: null, modes: ["drop"], lossy: "with-flag" } },
});
`;
    const line = `  kinds: { hint: { lossy: "forbid" } },`;
    const r = compile({ "base.policy.ts": base, "team.policy.ts": overlayOf("base", line) });
    expectDiagnostic(r, "PG3007", 5, col(line, '"forbid"'), "team.policy.ts");
    expect(r.diagnostics.filter((x) => x.code === "PG3007")).toHaveLength(1);
  });
  it("reports a base's unprunable kind once, in the base, when an overlay inherits or overrides it", () => {
    const base = `${HEADER}export default definePolicy({
  name: "base",
  stores: { log: store.sqlite({ retention: days(1) }) },
  kinds: { a: { store: "log", modes: ["drop"], lossy: "with-flag" }, ${notice.trim()} },
});
`;
    for (const body of ["", `  kinds: { notice: { modes: ["drop"] } },`]) {
      const r = compile({ "base.policy.ts": base, "team.policy.ts": overlayOf("base", body) });
      const found = r.diagnostics.filter((x) => x.code === "PG3007");
      expect(found.map((x) => `${x.location?.file}:${x.location?.line}:${x.location?.column}`), body).toEqual([`base.policy.ts:5:${col(`  kinds: { a: { store: "log", modes: ["drop"], lossy: "with-flag" }, ${notice.trim()} },`, "notice")}`]);
    }
  });
});

describe("the generated docs describe a store without holds truthfully", () => {
  it("a kind on it is reversible only while its copy lasts, or refused when it forbids lossy", async () => {
    const { describeKind } = await import("../../compiler/emit/describe.js");
    const r = compileOne(policy(
      `    a: { store: "log", modes: ["drop"], lossy: "with-flag", repersist: true },\n    b: { store: "log", modes: ["drop"], lossy: "forbid" },`,
      `  session: { maxLength: hours(8) },`, `log: store.sqlite({ retention: hours(2), holds: false })`,
    ));
    const p = r.policies[0]!;
    expect(describeKind(p.kinds[0]!, p)).toContain("reversible only while its copy lasts, 2h after it is written (the index line says until when)");
    expect(describeKind(p.kinds[1]!, p)).toContain("reversible only when its copy outlasts the session (a copy lasts 2h after it is written), else refused");
    // Not "always reversible … expired copies are re-persisted": without holds the re-persisted copy expires too.
    expect(describeKind(p.kinds[0]!, p)).not.toContain("always reversible");
  });
});

/** A base whose stores outlast its 8h session without re-persist: `a` (with-flag) and `doc` (forbid) are always reversible. */
const SHORT_BASE = `${HEADER}export default definePolicy({
  name: "base",
  stores: { log: store.sqlite({ retention: hours(8) }), notes: store.sqlite({ retention: days(30) }) },
  kinds: {
    a: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
    doc: { store: "log", modes: ["drop"], lossy: "forbid" },
    memo: { store: "notes", modes: ["drop"], lossy: "forbid" },
  },
  session: { maxLength: hours(8) },
});
`;
/** An overlay of `base.policy.ts` (default export named `base`) whose object literal's inside is `body`, from line 5. */
const overlayOf = (base: string, body: string, name = "team") =>
  `${HEADER}import ${base} from "./${base}.policy.js";\nexport default extendPolicy(${base}, {\n  name: "${name}",\n${body}\n});\n`;

describe("PG2107 tighten-only, decided by each kind's fate", () => {
  it("refuses a read-only store replacing a writable one, at the overlay's `writable` property, with a computed counterexample", () => {
    const line = `  stores: { toolLog: store.sqlite({ retention: hours(2), holds: true, writable: false }) },`;
    const r = compileOverlay(line);
    const d = expectDiagnostic(r, "PG2107", 5, col(line, "false"), "team.policy.ts");
    expect(d.message).toContain("a `drop` of `toolResult` right after its append is reversible under org");
    expect(d.message).toContain("lossy under team");
    expect(d.message).toContain("read-only");
    // The warnings the read-only store causes point into the overlay too.
    for (const code of ["PG3005", "PG3003"]) expect(r.diagnostics.find((x) => x.code === code)?.location?.file, code).toBe("team.policy.ts");
  });
  it("refuses a session lengthened past a store's retention, at the overlay's `maxLength`, naming the age of the prune", () => {
    const line = `  session: { maxLength: hours(12) },`;
    const r = compile({ "base.policy.ts": SHORT_BASE, "team.policy.ts": overlayOf("base", line) });
    const d = expectDiagnostic(r, "PG2107", 5, col(line, "hours(12)"), "team.policy.ts");
    expect(d.message).toContain("a `drop` of `a` 8h after its append is reversible under base");
    expect(d.message).toContain("lossy under team");
    // `doc` forbids lossy: past 8h its prunes are rejected, which is tighter — no error for it.
    expect(r.diagnostics.filter((x) => x.code === "PG2107" && x.message.includes("`doc`"))).toEqual([]);
  });
  it("refuses turning re-persist off where that makes a prune lossy, at the `repersist` property", () => {
    const line = `  kinds: { toolResult: { repersist: false } },`;
    const d = expectDiagnostic(compileOverlay(line), "PG2107", 5, col(line, "false"), "team.policy.ts");
    expect(d.message).toContain("a `drop` of `toolResult` 2h after its append is reversible under org");
  });
  it("refuses a kind that loses its store where it may be lossy, at the kind's `store:` line", () => {
    const line = `  kinds: { toolResult: { store: null } },`;
    const d = expectDiagnostic(compileOverlay(line), "PG2107", 5, col(line, "null"), "team.policy.ts");
    expect(d.message).toContain("kind `toolResult` has no store");
    expect(d.message).toContain("lossy under team");
  });
  it("accepts a change that would make a prune lossy where a lossy budget of 0 makes it unprunable instead", () => {
    const r = compileOverlay(`  kinds: { toolResult: { store: null } },\n  session: { lossyBudget: 0 },`);
    expect(codes(r)).not.toContain("PG2107");
  });
  it("accepts moving a lossy-forbidden kind to no store: it becomes unprunable, which is tighter", () => {
    const r = compileOverlay(`  kinds: { userTurn: { store: null } },`);
    expect(r.diagnostics.filter((d) => d.category === "error").map((d) => `${d.code} ${d.message}`)).toEqual([]);
  });
  it("reports moves at the kind's `store:` line whatever the new store lacks", () => {
    const absent = `  stores: { cache: store.memory({ retention: forever, distinguishesAbsent: false }) },\n  kinds: { toolResult: { store: "cache" } },`;
    const short = `  stores: { brief: store.sqlite({ retention: minutes(30) }) },\n  kinds: { toolResult: { store: "brief" } },`;
    const kindLine = (s: string) => s.split("\n")[1]!;
    expectDiagnostic(compileOverlay(absent), "PG2107", 6, col(kindLine(absent), `"cache"`), "team.policy.ts");
    const r = compileOverlay(short);
    expectDiagnostic(r, "PG2102", 6, col(kindLine(short), `"brief"`), "team.policy.ts");
    expect(codes(r), "a shorter retention is PG2102's alone").not.toContain("PG2107");
  });
  it("reports each change that loosens on its own at its own property", () => {
    const store = `  stores: { log: store.sqlite({ retention: hours(8), writable: false }) },`;
    const session = `  session: { maxLength: hours(12) },`;
    const r = compile({ "base.policy.ts": SHORT_BASE, "team.policy.ts": overlayOf("base", `${store}\n${session}`) });
    const forA = r.diagnostics.filter((d) => d.code === "PG2107" && d.message.includes("of `a`"));
    expect(forA.map((d) => [d.location?.line, d.location?.column])).toEqual([
      [5, col(store, "false")],
      [6, col(session, "hours(12)")],
    ]);
  });
  it("points into the file that made the change in a three-level overlay", () => {
    const r = compile({
      "base.policy.ts": SHORT_BASE,
      "team.policy.ts": overlayOf("base", `  session: { lossyBudget: 2 },`),
      "sub.policy.ts": overlayOf("team", `  stores: { log: store.sqlite({ retention: hours(8), writable: false }) },`, "sub"),
    });
    const d = r.diagnostics.find((x) => x.code === "PG2107");
    expect(d?.location?.file).toBe("sub.policy.ts");
    expect(d?.message).toContain("may only tighten `team`");
  });
  it("a base store the overlay leaves unused is reported at the `store:` line that moved away from it", () => {
    // Moving `userTurn` off `transcript` leaves that base store unused: PG3004, caused by the overlay.
    const line = `  kinds: { userTurn: { store: "vault" } },`;
    const r = compileOverlay(`  stores: { vault: store.postgres({ retention: days(60) }) },\n${line}`);
    const d = r.diagnostics.filter((x) => x.code === "PG3004");
    expect(d.map((x) => x.location)).toMatchObject([{ file: "team.policy.ts", line: 6, column: col(line, `"vault"`) }]);
    expect(d[0]?.message).toContain("store `transcript`");
  });
  it("passes an overlay that tightens every kind's fate", () => {
    expectClean(compile({ "base.policy.ts": SHORT_BASE, "team.policy.ts": overlayOf("base", `  session: { maxLength: hours(4) },\n  kinds: { a: { lossy: "forbid" } },`) }));
  });
});
