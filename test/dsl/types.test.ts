// Type-level rules of the DSL. These lines are checked by `npm run typecheck`: each `@ts-expect-error`
// pins a mistake the editor must reject while the author types, before the compiler ever runs.
import { describe, expect, it } from "vitest";
import { definePolicy, extendPolicy, hours, minutes, store } from "../../dsl/index.js";

const org = definePolicy({
  name: "org",
  stores: { toolLog: store.sqlite({ retention: hours(2) }) },
  kinds: {
    toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "forbid" },
    // @ts-expect-error a misspelt store name is a type error (TS2820 "Did you mean 'toolLog'?")
    typo: { store: "toolLg", modes: ["drop"], lossy: "forbid" },
  },
});

const good = definePolicy({
  name: "org",
  stores: { toolLog: store.sqlite({ retention: hours(2) }) },
  kinds: { toolResult: { store: "toolLog", modes: ["drop", "summarize"], lossy: "forbid" } },
});

extendPolicy(good, {
  name: "team",
  kinds: {
    // @ts-expect-error an overlay cannot allow lossy where the base forbids it
    toolResult: { lossy: "with-flag" },
  },
});

extendPolicy(good, {
  name: "team",
  kinds: {
    // @ts-expect-error an overlay cannot add a mode the base does not allow
    toolResult: { modes: ["compress"] },
  },
});

extendPolicy(good, {
  name: "team",
  stores: { search: store.postgres({ retention: hours(24) }) },
  kinds: {
    toolResult: { modes: ["drop"] },
    hit: { store: "search", modes: ["drop"], lossy: "forbid" },
    // @ts-expect-error a new kind must name a store of the base or the overlay
    miss: { store: "nowhere", modes: ["drop"], lossy: "forbid" },
  },
});

definePolicy({ name: "org", stores: {}, kinds: {}, session: { compaction: { minFreedTokens: 20_000, atTokens: 120_000 } } });
definePolicy({ name: "org", stores: {}, kinds: {}, session: { compaction: {} } });
extendPolicy(good, { name: "team", session: { compaction: "immediate" } });

// @ts-expect-error a misspelt compaction property is an excess property (TS2561 "Did you mean to write 'atTokens'?")
definePolicy({ name: "org", stores: {}, kinds: {}, session: { compaction: { atToken: 120_000 } } });

// @ts-expect-error compaction is "immediate" or an object; no other word (the compiler says so: PG1011)
extendPolicy(good, { name: "team", session: { compaction: "never" } });

definePolicy({
  name: "org",
  stores: { toolLog: store.sqlite({ retention: hours(2) }) },
  kinds: {
    // @ts-expect-error a misspelt kind property is an error at the property, as the compiler's PG1012 is
    toolResult: { store: "toolLog", modes: ["drop"], lossy: "with-flag", repersists: true },
  },
});

extendPolicy(good, {
  name: "team",
  kinds: {
    // @ts-expect-error so is one in an overlay's override of a base kind
    toolResult: { modes: ["drop"], pinz: [] },
  },
});

// @ts-expect-error a tombstone that does not name its span (the compiler says so: PG2007)
definePolicy({ name: "org", stores: {}, kinds: {}, tombstone: "pruned, unrecoverable" });
definePolicy({ name: "org", stores: {}, kinds: {}, tombstone: "{span} pruned, unrecoverable" });

// @ts-expect-error retention takes a duration, not a bare number
store.sqlite({ retention: 7_200_000 });

// @ts-expect-error the sum of two durations is typed as a plain number; write minutes(90) (the compiler says so: PG1016)
store.sqlite({ retention: hours(1) + minutes(30) });
store.sqlite({ retention: minutes(90) });

describe("DSL types", () => {
  it("are checked by tsc (see the @ts-expect-error lines)", () => {
    expect(org.name).toBe("org");
  });
});
