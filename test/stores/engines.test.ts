/**
 * The engine table (`STORE_ENGINES`, src/policy/stores.ts) is where a store engine is registered, once: the
 * DSL's `store.<engine>` builders, the IR's engine enum, the compiler's diagnostics and `openStores` all
 * follow it, so an engine cannot be known to one of them and unknown to another. The runtime's entry per
 * engine (`ENGINE_ADAPTERS`, src/stores/engine-adapters.ts: its opener, its place in `OpenStoresOptions`, its
 * audit source) is typed over the table.
 */
import { describe, expect, it } from "vitest";
import { EngineIR, StoreIR } from "../../compiler/ir/schema.js";
import { forever } from "../../dsl/durations.js";
import { store } from "../../dsl/store.js";
import { ENGINES, isEngine, STORE_DEFAULTS, STORE_ENGINES, type DurableEngine, type StoreDeclaration } from "../../src/policy/stores.js";
import { auditEngine, ENGINE_ADAPTERS, type AuditSource, type EnginePlaces, type PostgresPlace, type SqlitePlace } from "../../src/stores/engine-adapters.js";
import { OPENABLE_ENGINES, openStores } from "../../src/stores/open.js";
import { compileOne, expectClean, expectDiagnostic } from "../compiler/helpers.js";

const policy = (storeExpr: string) =>
  `export default definePolicy({ name: "p", stores: { s: ${storeExpr} }, kinds: { a: { store: "s", modes: ["drop"], lossy: "forbid" } } });\n`;

describe("the engine table", () => {
  it("names each engine once, in one order every consumer keeps", () => {
    expect(ENGINES).toEqual(Object.keys(STORE_ENGINES));
    expect(new Set(ENGINES).size).toBe(ENGINES.length);
    for (const e of ENGINES) expect(isEngine(e)).toBe(true);
    // Own keys only: a name every object inherits is not an engine.
    for (const name of ["redis", "toString", "constructor", "__proto__", ""]) expect(isEngine(name), name).toBe(false);
  });

  it("the DSL has a builder for every engine and no other", () => {
    expect(Object.keys(store)).toEqual(ENGINES);
    for (const e of ENGINES) expect(store[e]({ retention: forever })).toEqual({ engine: e, retentionMs: null, ...STORE_DEFAULTS });
    expect(Object.isFrozen(store)).toBe(true);
  });

  it("the IR's engine enum is the table's engines", () => {
    expect(EngineIR.options).toEqual(ENGINES);
    expect(EngineIR.safeParse("redis").success).toBe(false);
    const location = { file: "p.policy.ts", line: 1, column: 1, endLine: 1, endColumn: 2 };
    for (const engine of ENGINES) {
      const node = { name: "s", engine, retentionMs: null, holds: true, distinguishesAbsent: true, writable: true, location, fields: {} };
      expect(StoreIR.parse(node).engine).toBe(engine);
    }
  });

  it("openStores has an opener for every engine, and refuses a declaration on any other", async () => {
    expect([...OPENABLE_ENGINES].sort()).toEqual([...ENGINES].sort());
    const memory = await openStores({ s: store.memory({ retention: forever }) }, {});
    expect(memory.s.engine).toBe("memory");
    await memory.s.close();
    const bogus = { s: { engine: "redis", retentionMs: null, holds: true, distinguishesAbsent: true, writable: true } as unknown as StoreDeclaration };
    const refusal = (decl: Record<string, StoreDeclaration>) => openStores(decl, {}).then(() => "opened", (e: unknown) => (e instanceof TypeError ? e.message : String(e)));
    expect(await refusal(bogus)).toBe(`openStores: store s is declared on engine "redis", which is not one of ${ENGINES.join(", ")}`);
    // A misspelt engine is named with the one it is nearest to (`closest`, src/policy/suggest.ts, as the compiler's hints).
    const misspelt = { s: { ...bogus.s, engine: "sqlit" } as unknown as StoreDeclaration };
    expect(await refusal(misspelt)).toBe(`openStores: store s is declared on engine "sqlit", which is not one of ${ENGINES.join(", ")} (did you mean "sqlite"?)`);
  });

  it("the compiler reads every engine into the IR, and names the table's engines when one is misspelt", () => {
    for (const e of ENGINES) {
      const r = compileOne(policy(`store.${e}({ retention: hours(1) })`));
      expectClean(r);
      expect(r.policies[0]!.stores.map((s) => s.engine)).toEqual([e]);
    }
    const misspelt = expectDiagnostic(compileOne(policy(`store.sqlit({ retention: hours(1) })`)), "PG1010", 2, 55);
    expect(misspelt.message).toBe(`\`pruneguard/dsl\` has no export \`store.sqlit\` (did you mean \`sqlite\`? engines: ${ENGINES.join(", ")})`);
    const builders = ENGINES.map((e) => `store.${e}`);
    const notAStore = compileOne(policy("3")).diagnostics.find((d) => d.code === "PG1011");
    expect(notAStore?.message).toContain(`must be declared with ${builders.slice(0, -1).join(", ")} or ${builders.at(-1)}, not`);
  });

  it("every durable engine can be read by `pruneguard audit`, and only those; each way of naming a store by one engine", () => {
    // Typed over the table: a durable engine added to it does not type-check until its entry has an audit source.
    const sources: { readonly [E in DurableEngine]: AuditSource } = { sqlite: ENGINE_ADAPTERS.sqlite.audit, postgres: ENGINE_ADAPTERS.postgres.audit };
    expect(Object.keys(sources).sort()).toEqual(ENGINES.filter((e) => STORE_ENGINES[e].durable).sort());
    expect(ENGINES.filter((e) => ENGINE_ADAPTERS[e].audit !== null).sort()).toEqual(Object.keys(sources).sort());
    const by = ENGINES.flatMap((e) => { const a: AuditSource | null = ENGINE_ADAPTERS[e].audit; return a === null ? [] : [a.by]; });
    expect(new Set(by).size).toBe(by.length);
    expect(auditEngine("file")?.engine).toBe("sqlite");
    expect(auditEngine("url")?.engine).toBe("postgres");
  });

  it("OpenStoresOptions has a field per engine whose stores need a place, read from its entry", () => {
    // Compile-time: the fields are the public option names, each with its entry's place.
    const places: Required<EnginePlaces> = { sqlite: { path: "x.db" } satisfies SqlitePlace, postgres: { url: "postgres://h/db" } satisfies PostgresPlace };
    expect(Object.keys(places).sort()).toEqual(["postgres", "sqlite"]);
  });
});
