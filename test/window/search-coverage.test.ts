/**
 * Issue 35 (a) and (c): a search counts a pruned copy as searched only when its bytes hash to what the
 * window pruned — on every store, whatever the query's literal — and its answer fits `searchTokens`,
 * always.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ContextWindow } from "../../src/window/window.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import type { BackingStore } from "../../src/stores/store.js";
import { renderSearch } from "../../src/search/answer.js";
import { MIN_SEARCH_TOKENS } from "../../src/policy/kinds.js";
import { countTokens } from "../../src/tokens.js";
import { ManualClock, type KindPolicy } from "../../src/types.js";
import type { SearchHole, SearchOutcome } from "../../src/outcome.js";
import { sqliteFile } from "./sqlite-file.js";
import { dropSchemas, freshSchema, itWithServer, testPool } from "../stores/pg-helpers.js";

const KINDS: Record<string, KindPolicy> = { tool: { store: "log", modes: ["drop"], lossy: "with-flag" } };

/** Prunes three copies, then edits span_1's bytes in place under its old hash and deletes span_2's record. */
async function tampered(store: BackingStore, clock: ManualClock, tamper: () => Promise<void>): Promise<ContextWindow> {
  const win = new ContextWindow({ session: "s", clock, stores: { log: store }, kinds: KINDS });
  for (const text of ["alpha req_aaaaaa01", "beta req_bbbbbb02", "gamma req_cccccc03"]) await win.prune({ span: await win.append({ kind: "tool", text }), mode: "drop" });
  // Applied: a search that finds a pending prune's copy gone keeps its span live instead (test/window/lapse.test.ts).
  await win.compact();
  await tamper();
  return win;
}

async function expectNamed(win: ContextWindow): Promise<void> {
  const miss = (await win.search("absent-literal")) as SearchOutcome;
  expect(miss.coverage).toMatchObject({ live: 0, pruned: 1, holes: [{ spanId: "span_1", why: "copy-lost" }, { spanId: "span_2", why: "copy-lost" }] });
  expect(miss.text).toBe('search "absent-literal": no match\nno match in 0 live and 1 recoverable pruned span; span_1–span_2 are unrecoverable and may have held it');
  // A literal only the edited bytes hold is no match: those bytes are not what was pruned.
  const forged = (await win.search("forged")) as SearchOutcome;
  expect(forged.status).toBe("no-match");
  expect(forged.coverage.holes.map((h) => h.spanId)).toEqual(["span_1", "span_2"]);
  const found = (await win.search("req_cccccc03")) as SearchOutcome;
  expect(found.matches.map((m) => m.spanId)).toEqual(["span_3"]);
}

describe("Issue 35a: a copy edited under its old hash is a hole, never counted as searched", () => {
  it("MemoryStore (the record's bytes edited, its hash column kept)", async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryStore({ name: "log", clock });
    let edit = false;
    // MemoryStore keeps its records private: the edit is made where a store hands out the bytes.
    const store = new Proxy(inner, {
      get(target, p) {
        if (p === "searchCopies") {
          return async (session: string, request: Parameters<BackingStore["searchCopies"]>[1]) => {
            const r = await target.searchCopies(session, request);
            return { ...r, candidates: r.candidates.filter((c) => !(edit && c.spanId === "span_2")).map((c) => (edit && c.spanId === "span_1" ? { ...c, text: "forged" } : c)), gone: edit ? [...r.gone, "#2"] : r.gone };
          };
        }
        const v = Reflect.get(target, p, target) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    await expectNamed(await tampered(store, clock, async () => void (edit = true)));
  });

  it("SqliteStore (UPDATE text, DELETE a record, behind the runtime)", async () => {
    const clock = new ManualClock(0);
    const { log, sql } = sqliteFile(clock, "search-35a");
    await expectNamed(await tampered(log, clock, async () => {
      sql("UPDATE pruneguard_records SET text = 'forged' WHERE span_id = ?", "span_1");
      sql("DELETE FROM pruneguard_records WHERE span_id = ?", "span_2");
    }));
    await log.close();
  });

  const schemas: string[] = [];
  let pool: ReturnType<typeof testPool> | undefined;
  afterAll(async () => {
    if (pool !== undefined) {
      await dropSchemas(pool, schemas);
      await pool.end();
    }
  });
  itWithServer("PostgresStore (the real server)", { needs: "any" }, async () => {
    pool = testPool(2);
    const schema = await freshSchema(pool, "search35", schemas);
    const clock = new ManualClock(0);
    const store = new PostgresStore({ name: "log", pool, schema, clock });
    await expectNamed(await tampered(store, clock, async () => {
      await pool!.query(`UPDATE ${schema}.records SET text = 'forged' WHERE store = 'log' AND session = 's' AND span_id = 'span_1'`);
      await pool!.query(`DELETE FROM ${schema}.records WHERE store = 'log' AND session = 's' AND span_id = 'span_2'`);
    }));
  });

  it("a store that answers for some copies only leaves the others holes to retry, not searched spans", async () => {
    const clock = new ManualClock(0);
    const inner = new MemoryStore({ name: "log", clock });
    const store = new Proxy(inner, {
      get(target, p) {
        if (p === "searchCopies") {
          return async (session: string, request: Parameters<BackingStore["searchCopies"]>[1]) => {
            const r = await target.searchCopies(session, request);
            return { ...r, candidates: r.candidates.slice(0, 1), more: true };
          };
        }
        const v = Reflect.get(target, p, target) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const win = await tampered(store, clock, async () => undefined);
    const r = (await win.search("req_")) as SearchOutcome;
    expect(r.coverage).toMatchObject({ pruned: 1, holes: [{ spanId: "span_2", why: "unavailable" }, { spanId: "span_3", why: "unavailable" }] });
  });
});

describe("Issue 35c: a search answer fits its budget, whatever it has to say", () => {
  const holes = (n: number, why: SearchHole["why"], from: number): SearchHole[] => Array.from({ length: n }, (_, i) => ({ spanId: `span_${from + 2 * i}`, why }));
  const match = (i: number) => ({ spanId: `span_${i}`, handle: `#${i}`, kind: "tool", source: "copy" as const, snippet: "x ".repeat(60) });

  it("the reported shapes: every kind of hole, unread spans, and matches none of which fit", () => {
    for (const budget of [64, 96]) {
      for (const matches of [[], [match(1), match(2), match(3)]]) {
        const r = renderSearch({
          query: "some query", regex: false, matches, candidateLimit: 256, budgetTokens: budget,
          coverage: { live: 5, pruned: 12, holes: [...holes(3, "copy-lost", 100), ...holes(3, "unavailable", 101), ...holes(3, "elsewhere", 200)], truncated: true, unread: 7 },
        });
        expect({ budget, tokens: r.tokens }).toEqual({ budget, tokens: countTokens(r.text) });
        expect(r.tokens).toBeLessThanOrEqual(budget);
        expect(r.text).not.toContain("nothing pruned is unrecoverable");
      }
    }
  });

  it("at the smallest budget a policy may set, with counts past any session, it still answers truthfully", () => {
    const r = renderSearch({
      query: "🦀".repeat(200), regex: true, matches: [match(1)], candidateLimit: 256, budgetTokens: MIN_SEARCH_TOKENS,
      coverage: { live: 999_999_999, pruned: 999_999_999, holes: [...holes(2, "copy-lost", 1), ...holes(2, "unavailable", 2), ...holes(2, "elsewhere", 3)], truncated: true, unread: 999_999_999 },
    });
    expect(r.tokens).toBeLessThanOrEqual(MIN_SEARCH_TOKENS);
    expect(r.text).toMatch(/not searched|unrecoverable/);
  });
});
