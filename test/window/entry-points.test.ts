/**
 * The public entry points list what their audience uses and nothing else, and importing the agent entry
 * stays cheap: no PostgreSQL driver, no SQLite warning until a SQLite store is opened.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import * as adapters from "../../src/adapters.js";
import * as agent from "../../src/index.js";
import * as postgres from "../../src/postgres.js";

describe("entry points", () => {
  // Pinned so that exporting an internal is a visible decision: each name here is something its
  // audience calls.
  it("the agent entry exports the window, its stores without extra drivers, directives, outcomes and clocks", () => {
    expect(Object.keys(agent).sort()).toEqual([
      "ContextWindow",
      "DEFAULT_LIMITS",
      "DEFAULT_COMPACTION",
      "DEFAULT_SEARCH_TOKENS",
      "DEFAULT_TOMBSTONE",
      "HANDLE",
      "IrreversiblePruneError",
      "ManualClock",
      "MemoryStore",
      "MissingPeerError",
      "PRUNE_MODES",
      "RefError",
      "SPAN_ID",
      "SqliteStore",
      "StoreError",
      "Transcript",
      "aiSDKTools",
      "anthropicTools",
      "checkStoreDeclarations",
      "contentHash",
      "countTokens",
      "directiveSchema",
      "directiveTools",
      "openAIChatTools",
      "openAIPromptCacheKey",
      "openAIResponsesTools",
      "pruneguardRepairToolCall",
      "toolResultText",
      "defineGuard",
      "guardWindow",
      "openStores",
      "parseDirective",
      "refSpanId",
      "storeMismatches",
      "systemClock",
      "toAISDK",
      "toAnthropic",
      "toOpenAI",
      "toOpenAIResponses",
      "verifyAuditChain",
      // Provider-side compaction, checked first (docs/provider-compaction.md).
      "ANTHROPIC_COMPACTION_BETA",
      "ProviderCompactionError",
      "anthropicCompaction",
      "openAICompaction",
      "openAICompactRequest",
      "toAnthropicBeta",
    ].sort());
  });

  it("the agent entry does not export internals", () => {
    for (const internal of ["sealAudit", "sealChain", "GENESIS_HASH", "indexLine", "tombstoneLine", "canonicalJson", "computeCheck", "decideSpan", "PostgresStore"]) {
      expect(Object.keys(agent), internal).not.toContain(internal);
    }
  });

  it("the PostgreSQL entry exports the store, its pool and its migration", () => {
    expect(Object.keys(postgres).sort()).toEqual(["DEFAULT_SCHEMA", "PG_URL_ENV", "PostgresStore", "SCHEMA_VERSION", "createPool", "migrate"]);
  });

  it("the adapter entry exports the shared commit step and what it reads and writes", () => {
    expect(Object.keys(adapters).sort()).toEqual([
      "EMPTY_CHAIN",
      "OutcomeUnknownError",
      "StoreBase",
      "StoreError",
      "commitResult",
      "computeCheck",
      "lookupAnswer",
      "planCommit",
      "readOnly",
      "recordState",
      "registeredSpan",
      "sealChain",
      "sealChainJson",
      "spanTaken",
      "unbackedCheck",
    ]);
  });
});

describe("importing the agent entry", () => {
  // Node 22 prints an ExperimentalWarning the first time node:sqlite loads; Node 24 does not, so the
  // check runs on the Node 22 binary the project also supports. The built output (`npm test` builds
  // first) is what users import.
  const node22 = "node_modules/node22/bin/node";
  const built = "dist/src/index.js";
  beforeAll(() => {
    expect(existsSync(built), `${built} is missing: run npm run build first`).toBe(true);
  });

  it("loads neither pg nor node:sqlite until a store needs them", () => {
    const script = `
      const before = new Set(process.moduleLoadList);
      const m = await import("./${built}");
      const loaded = process.moduleLoadList.filter((x) => !before.has(x));
      console.log(JSON.stringify({ sqlite: loaded.some((x) => x.includes("sqlite")) }));
      new m.SqliteStore({ name: "a", path: ":memory:" });
      console.log(JSON.stringify({ sqlite: process.moduleLoadList.some((x) => x.includes("sqlite")) }));
    `;
    const r = spawnSync(node22, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n").map((l) => JSON.parse(l))).toEqual([{ sqlite: false }, { sqlite: true }]);
    // The warning comes once, from opening the store, never from the import.
    expect(r.stderr.match(/ExperimentalWarning: SQLite/g) ?? []).toHaveLength(1);
  });

  it("does not load the PostgreSQL driver", () => {
    const script = `
      const { createRequire } = await import("node:module");
      await import("./${built}");
      const require = createRequire(import.meta.url);
      console.log(Object.keys(require.cache).some((k) => k.includes("/node_modules/pg/")));
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("false");
  });
});
