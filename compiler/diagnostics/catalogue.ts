/**
 * The diagnostic catalogue: every code the compiler can report, as data.
 *
 * Ranges: PG1xxx syntax and extraction (the file could not be read as a static policy), PG2xxx semantics
 * (the policy is readable but wrong), PG3xxx analysis (the policy is valid but has a consequence a reviewer
 * should see). Codes are stable: never renumber, only add. `docs/diagnostics.md` is rendered from this table.
 */

export type Category = "error" | "warning";

export interface CatalogueEntry {
  readonly category: Category;
  /** A short name for the rule, used as the heading in the docs. */
  readonly title: string;
  /** The message, with `{param}` placeholders. */
  readonly template: string;
  /** A policy fragment that triggers the diagnostic, for the docs. */
  readonly example: string;
}

export const catalogue = {
  // ---- PG1xxx: syntax and extraction ----
  PG1001: {
    category: "error",
    title: "Syntax error",
    template: "{message}",
    example: `export default definePolicy({ name: "org", `,
  },
  PG1002: {
    category: "error",
    title: "Statement not allowed in a policy file",
    template: "{what} is not allowed in a policy file; a policy module may only contain imports, consts, types and its default export, and is never executed",
    example: `require("fs").writeFileSync("/tmp/x", "y");`,
  },
  PG1003: {
    category: "error",
    title: "Not a static expression",
    template: "`{text}` is not a static expression; a policy may only use literals, DSL calls and references to consts and policy modules",
    example: `tombstone: process.env.TOMBSTONE,`,
  },
  PG1004: {
    category: "error",
    title: "Computed property key",
    template: "computed property keys are not allowed in a policy (`[{text}]`); write the key literally",
    example: `kinds: { [kindName]: { store: null, modes: ["drop"], lossy: "with-flag" } },`,
  },
  PG1005: {
    category: "error",
    title: "Spread of a non-static value",
    template: "cannot spread `{text}`: only arrays and objects written in policy files can be spread",
    example: `pins: [...loadPins()],`,
  },
  PG1006: {
    category: "error",
    title: "Call to a function that is not part of the DSL",
    template: "`{callee}(...)` is not a DSL call: a policy is read, never run, so it may only call `pruneguard/dsl` builders; {suggestion}",
    example: `const toolKind = () => ({ store: "toolLog", modes: ["drop"], lossy: "forbid" } as const);\nkinds: { toolResult: toolKind() },`,
  },
  PG1007: {
    category: "error",
    title: "Default export is not a policy",
    template: "{message}",
    example: `export default { name: "org" };`,
  },
  PG1008: {
    category: "error",
    title: "Cannot resolve import",
    template: "cannot find policy module `{specifier}` (looked for {candidates})",
    example: `import org from "./orgg.policy.js";`,
  },
  PG1009: {
    category: "error",
    title: "Import of a module that is not a policy",
    template: "{message}",
    example: `import { readFileSync } from "node:fs";`,
  },
  PG1010: {
    category: "error",
    title: "Unknown DSL export",
    template: "`pruneguard/dsl` has no export `{name}`{hint}",
    example: `import { defineTeamPolicy } from "pruneguard/dsl";`,
  },
  PG1011: {
    category: "error",
    title: "Invalid value",
    template: "{message}",
    example: `modes: ["drop", "delete"],`,
  },
  PG1012: {
    category: "error",
    title: "Unknown property",
    template: "unknown property `{name}` in {where}{hint}",
    example: `toolLog: store.sqlite({ retension: hours(2) }),`,
  },
  PG1013: {
    category: "error",
    title: "Missing property",
    template: "{where} is missing the required property `{name}`",
    example: `scratch: { store: null, lossy: "with-flag" },`,
  },
  PG1014: {
    category: "error",
    title: "DSL export used without importing it",
    template: "`{name}` is a `pruneguard/dsl` export, but this file does not import it; add it to the import: `{importLine}`",
    example: `stores: { toolLog: store.sqlite({ retention: hours(4) }) },   // hours is not imported`,
  },
  PG1015: {
    category: "error",
    title: "Overlay names a kind its base does not have",
    template: "no kind `{name}` in the base `{base}`; did you mean `{suggestion}`? (a kind the overlay adds must declare store, modes and lossy)",
    example: `extendPolicy(org, { name: "team", kinds: { toolReslt: { modes: ["drop"] } } })`,
  },
  PG1016: {
    category: "error",
    title: "Arithmetic on durations",
    template: "`{text}` does arithmetic on durations, which TypeScript types as a plain number, so the editor rejects it where a duration is expected; write the total as one builder: `{total}`",
    example: `retention: hours(1) + minutes(30),`,
  },
  PG1017: {
    category: "error",
    title: "Nested too deeply",
    template: "{what} nests more than {max} levels deep; the compiler stops reading here rather than risk exhausting its stack (no policy needs this depth)",
    example: `pins: [[[[[[[[[[[[[[[[ /* … 100 levels … */ ]]]]]]]]]]]]]]]],`,
  },
  PG1018: {
    category: "error",
    title: "Read outside the project root",
    template: "`{file}` {how}; the compiler reads only files inside the project root `{root}` (choose another with --root)",
    example: `import org from "../../../elsewhere/org.policy.js";`,
  },
  PG1019: {
    category: "error",
    title: "Link to a file that is not a policy",
    template: "`{file}` is a symbolic link to `{target}`, which is not a policy module (`*.policy.ts`); the compiler does not read it",
    example: `// policies/notes.policy.ts → ../notes.txt`,
  },
  PG1020: {
    category: "error",
    title: "Not a policy module",
    template: "`{file}` is not a policy module (policy modules are named `*.policy.ts`); the compiler reads nothing else, so its contents are never parsed or shown",
    example: `pruneguard check notes.txt`,
  },
  PG1021: {
    category: "error",
    title: "Relative import without a file extension",
    template: "`{specifier}` has no file extension: under {resolution} TypeScript (like Node) finds a relative import of an ES module only by its file's name, so the editor cannot resolve it either; write `{fix}`{found}",
    example: `import org from "./org.policy";`,
  },
  PG1022: {
    category: "error",
    title: "Not a member of a const object",
    template: "`{member}` is not a member of `{object}`{suggestion} (members: {members})",
    example: `const Lossy = { Forbid: "forbid", WithFlag: "with-flag" } as const;\nkinds: { toolResult: { store: "toolLog", modes: ["drop"], lossy: Lossy.Forbidd } },`,
  },
  PG1023: {
    category: "error",
    title: "Value too large",
    template: "{what} holds more than {max}; the compiler stops evaluating it here rather than spend time and memory out of proportion to the file. No policy needs a value this large: write the one the policy means (a tombstone of a few words, each pin once)",
    example: `const a1 = a0 + a0;\nconst a2 = a1 + a1;\n// … each const doubling the one before: 64 MiB from a 1 KB file\ntombstone: a20,`,
  },
  PG1024: {
    category: "error",
    title: "Policy file too large",
    template: "{what} ({bytes} bytes; the limit is {max}); the compiler does not read it rather than spend time and memory out of proportion to any policy, which is a few kilobytes",
    example: `// policies/org.policy.ts: 5,000,000 bytes (a table pasted in, or a file planted to exhaust CI)`,
  },

  // ---- PG2xxx: semantics ----
  PG2001: {
    category: "error",
    title: "Unknown store",
    template: "kind `{kind}` names store `{store}`, which this policy does not declare{suggestion} (declared: {declared})",
    example: `toolResult: { store: "toolLg", modes: ["drop"], lossy: "forbid" },`,
  },
  PG2002: {
    category: "error",
    title: "Duplicate declaration",
    template: "{what} `{name}` is declared more than once",
    example: `kinds: { scratch: { ... }, scratch: { ... } },`,
  },
  PG2003: {
    category: "error",
    title: "Empty mode list",
    template: "kind `{kind}` allows no prune modes; list at least one of drop, summarize, compress (a kind that must never be pruned still needs a mode to be rejected in)",
    example: `scratch: { store: null, modes: [], lossy: "forbid" },`,
  },
  PG2004: {
    category: "error",
    title: "Cycle between policy modules",
    template: "policy modules import or re-export each other in a cycle: {cycle}",
    example: `// a.policy.ts imports b.policy.ts, which imports a.policy.ts`,
  },
  PG2005: {
    category: "error",
    title: "Duplicate policy name",
    template: "policy name `{name}` is also used by {other}; names must be unique because they name the output files",
    example: `// two files both say definePolicy({ name: "org", ... })`,
  },
  PG2006: {
    category: "error",
    title: "Store cannot distinguish absent, kind forbids lossy",
    template: "store `{store}` cannot tell \"pruned\" from \"never existed\", so every prune of kind `{kind}` to it is lossy, and `{kind}` forbids lossy commitment: the kind could never be pruned; use a store that distinguishes absent, or set lossy: \"with-flag\"",
    example: `stores: { cache: store.memory({ retention: forever, distinguishesAbsent: false }) },\nkinds: { doc: { store: "cache", modes: ["drop"], lossy: "forbid" } },`,
  },
  PG2007: {
    category: "error",
    title: "Tombstone without `{span}`",
    template: "the tombstone wording must contain `{placeholder}` so the model can tell which span was pruned",
    example: `tombstone: "pruned, unrecoverable",`,
  },
  PG2008: {
    category: "error",
    title: "Tombstone too long",
    template: "the tombstone is {tokens} tokens once filled (\"{filled}\", o200k_base); at most {max} are allowed",
    example: `tombstone: "{span} was pruned by the runtime and cannot be recovered from any store",`,
  },
  PG2009: {
    category: "error",
    title: "Invalid pin pattern",
    template: "pin `{pin}`: {message}",
    example: `pins: [pin("ticket", "[A-Z+")],`,
  },
  PG2011: {
    category: "error",
    title: "Pin pattern matches the empty string",
    template: "pin `{pin}`: the pattern `{pattern}` matches the empty string, so it would pin nothing useful at every position",
    example: `pins: [pin("maybe", "\\\\d*")],`,
  },
  PG2012: {
    category: "error",
    title: "Pin pattern the linear-time engine cannot run",
    template: "pin `{pin}`: pins run on an RE2 engine, which cannot run `{construct}`; {instead}",
    example: `pins: [pin("ord", "ord_\\\\d+(?=\\\\s)")],`,
  },
  PG2013: {
    category: "error",
    title: "Compaction threshold too small",
    template: "`compaction.minFreedTokens` must be a whole number of tokens of at least {min}, so that a compaction frees at least enough to pay for re-caching one block of the prompt; got {value}",
    example: `session: { compaction: { minFreedTokens: 500 } },`,
  },
  PG2014: {
    category: "error",
    title: "Compaction limit not above the threshold",
    template: "`compaction.atTokens` must be a whole number of tokens above `minFreedTokens` ({minFreed}{defaulted}): pending prunes never free more than the window renders, so a limit at or below the threshold is always reached first and `minFreedTokens` would decide no compaction; got {value}",
    example: `session: { compaction: { minFreedTokens: 20_000, atTokens: 16_000 } },`,
  },
  PG2101: {
    category: "error",
    title: "Overlay allows lossy where its base forbids it",
    template: "overlay `{overlay}` may only tighten `{base}`, but it allows lossy commitment for kind `{kind}`: a `{mode}` of `{kind}` with accept_lossy would be allowed by {overlay} but is forbidden by {base}",
    example: `extendPolicy(org, { name: "team", kinds: { transcript: { lossy: "with-flag" } } })`,
  },
  PG2102: {
    category: "error",
    title: "Overlay shortens retention",
    template: "overlay `{overlay}` may only tighten `{base}`, but {subject} retains for {overlayRetention} where {base} retains for {baseRetention}: a span pruned {overlayRetention} after its append finds its copy under {base} (kept {baseRetention}) and none under {overlay}",
    example: `extendPolicy(org, { name: "team", stores: { toolLog: store.sqlite({ retention: minutes(30), holds: true }) } })`,
  },
  PG2103: {
    category: "error",
    title: "Overlay adds prune modes",
    template: "overlay `{overlay}` may only tighten `{base}`, but it allows mode `{mode}` for kind `{kind}`: a `{mode}` of `{kind}` would be allowed by {overlay} but is rejected by {base} (which allows {baseModes})",
    example: `extendPolicy(org, { name: "team", kinds: { transcript: { modes: ["drop", "compress"] } } })`,
  },
  PG2104: {
    category: "error",
    title: "Overlay drops a pin",
    template: "overlay `{overlay}` may only tighten `{base}`, but it drops pin `{pin}` from {subject}: an identifier matched by `{pin}` would be kept in a digest under {base} and lost under {overlay}",
    example: `extendPolicy(org, { name: "team", kinds: { toolResult: { pins: [] } } })`,
  },
  PG2105: {
    category: "error",
    title: "Overlay takes holds away from a store",
    template: "overlay `{overlay}` may only tighten `{base}`, but {subject} cannot place holds: the copy of a reversibly pruned span can rotate out before the session ends, so recall finds it lost, which {base} prevents",
    example: `extendPolicy(org, { name: "team", stores: { toolLog: store.sqlite({ retention: hours(2), holds: false }) } })`,
  },
  PG2106: {
    category: "error",
    title: "Overlay raises the lossy budget",
    template: "overlay `{overlay}` may only tighten `{base}`, but it allows {overlayBudget} lossy commitments per session where {base} allows {baseBudget}",
    example: `extendPolicy(org, { name: "team", session: { lossyBudget: 10 } })`,
  },

  PG2107: {
    category: "error",
    title: "Overlay makes a reversible prune lossy",
    template: "overlay `{overlay}` may only tighten `{base}`, but {cause}: {counterexample}",
    example: `extendPolicy(org, { name: "team", stores: { toolLog: store.sqlite({ retention: hours(2), writable: false }) } })`,
  },

  PG2108: {
    category: "error",
    title: "Overlay allows provider compaction its base forbids",
    template: "overlay `{overlay}` may only tighten `{base}`, but it allows provider-side compaction, which `{base}` does not: a session could let the provider compact spans the organisation kept on its own side; remove `providerCompaction: \"allow\"` here, or allow it in `{base}`",
    example: `extendPolicy(org, { name: "team", session: { providerCompaction: "allow" } })`,
  },

  // ---- PG3xxx: analysis warnings ----
  PG3001: {
    category: "warning",
    title: "Retention shorter than a session",
    template: "store `{store}` retains copies for {retention}{holds}, but sessions last up to {session}: a `{kind}` span appended at the start of a session loses its copy {gap} before the session can end, and pruning it after that is {after} (set `repersist: true` on the kind, with a writable store, to keep it reversible)",
    example: `stores: { toolLog: store.sqlite({ retention: hours(2) }) },\nsession: { maxLength: hours(8) },`,
  },
  PG3002: {
    category: "warning",
    title: "Every prune to this store is lossy",
    template: "store `{store}` cannot tell \"pruned\" from \"never existed\", so every prune of kind `{kind}` is a lossy commitment and needs accept_lossy",
    example: `stores: { cache: store.memory({ retention: forever, distinguishesAbsent: false }) },`,
  },
  PG3003: {
    category: "warning",
    title: "Re-persist has no effect",
    template: "kind `{kind}` sets repersist, but {reason}, so nothing can be written back",
    example: `scratch: { store: null, modes: ["drop"], lossy: "with-flag", repersist: true },`,
  },
  PG3004: {
    category: "warning",
    title: "Unused store",
    template: "store `{store}` is declared but no kind uses it",
    example: `stores: { archive: store.postgres({ retention: days(90) }) },`,
  },
  PG3005: {
    category: "warning",
    title: "Read-only store backs a kind",
    template: "store `{store}` is read-only, so the window never persists a `{kind}` span to it and no prune of `{kind}` can find a copy to verify: every prune is {after}; make the store writable, or declare the kind with `store: null` to say so",
    example: `stores: { notes: store.sqlite({ retention: hours(6), writable: false }) },\nkinds: { scratch: { store: "notes", modes: ["drop"], lossy: "with-flag" } },`,
  },
  PG3006: {
    category: "warning",
    title: "Pruned copies expire mid-session without holds",
    template: "store `{store}` cannot hold copies and retains them for {retention}, but {session}: a reversible prune of `{kind}` keeps its copy only until that retention ends, so the prune is {then} (declare the store with `holds: true`, or a retention at least as long as the session)",
    example: `stores: { toolLog: store.sqlite({ retention: hours(2), holds: false }) },\nsession: { maxLength: hours(8) },`,
  },
  PG3007: {
    category: "warning",
    title: "Kind can never be pruned",
    template: "kind `{kind}` has no store and forbids lossy commitment, so every prune of it is rejected: it can never be pruned. To make it prunable, give it a store (`store: \"…\"`, for reversible prunes) or set `lossy: \"with-flag\"` (for lossy prunes with accept_lossy); if it must stay in the window, this is what it does",
    example: `complianceNotice: { store: null, modes: ["drop"], lossy: "forbid" },`,
  },
} as const satisfies Record<string, CatalogueEntry>;

export type DiagnosticCode = keyof typeof catalogue;

type ParamsOf<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | ParamsOf<Rest> : never;

/** The placeholder names a code's template needs, as a record type: `Params<"PG2001">` is `{ kind, store, declared }`. */
export type Params<C extends DiagnosticCode> = { readonly [P in ParamsOf<(typeof catalogue)[C]["template"]>]: string | number };

/** Fills a template. Unknown placeholders are left as written, so `{span}` in prose survives. */
export function renderTemplate(template: string, params: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
