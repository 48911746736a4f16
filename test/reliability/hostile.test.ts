/**
 * Hostile input: the model is an untrusted party (prompt injection can make it ask to destroy its own
 * record), so every directive is adversarial until parsed. Generated and hand-written directives go
 * through `applyDirective`; for each one:
 * - it never throws;
 * - the window's spans never change;
 * - exactly one audit record is appended, with a reason code, and the raw directive is stored bounded.
 *
 * The hand-written cases in `test/window/window.test.ts` stay there; this file adds the generated corpus
 * (mutations of a directive that *would* succeed, so a parser that accepted any of them would free a
 * span and fail the test), megabyte values, deep nesting, look-alike ids and inputs that change between
 * reads.
 *
 * Seen to fail when broken on purpose: `PRUNEGUARD_SABOTAGE=lax-parse` mocks `parseDirective` with one
 * that coerces `accept_lossy` to a boolean (as a lenient parser would); the mutation property then fails
 * at once: counterexample `{ ..., accept_lossy: "true" }`, "expected [ 'invalid' ] to include 'lossy'".
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { DirectiveOutcome } from "../../src/outcome.js";
import { MemoryStore } from "../../src/stores/memory.js";
import { ManualClock } from "../../src/types.js";
import { fuzzRuns, HOUR, RETENTION_MS, timeoutFor } from "./helpers.js";
import { makeWindow } from "./model.js";

vi.mock("../../src/directive.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/directive.js")>();
  if (process.env["PRUNEGUARD_SABOTAGE"] !== "lax-parse") return real;
  const lax = (input: unknown): unknown => {
    let v = input;
    try {
      if (typeof v === "string") v = JSON.parse(v);
    } catch {
      return input;
    }
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, "accept_lossy")) return v;
    return { ...(v as object), accept_lossy: Boolean((v as { accept_lossy: unknown }).accept_lossy) };
  };
  return { ...real, parseDirective: (input: unknown, limits?: Parameters<typeof real.parseDirective>[1]) => real.parseDirective(lax(input), limits) };
});

/** A window whose scratch span_1 *would* be freed by the valid base directive below. */
async function target() {
  const clock = new ManualClock(10 * HOUR);
  const store = new MemoryStore({ name: "log", retentionMs: RETENTION_MS, clock });
  const win = makeWindow("victim", store, clock);
  await win.append({ kind: "scratch", text: "the only copy of the deploy notes" });
  await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
  await win.append({ kind: "sealed", text: "approval: alice" });
  return { win, store };
}

const BASE = { op: "prune", span_id: "span_1", mode: "drop", accept_lossy: true } as const;

async function expectRefused(input: unknown, allowed: ReadonlyArray<DirectiveOutcome["status"]> = ["invalid"]) {
  const { win, store } = await target();
  const before = structuredClone(win.entries());
  let out: DirectiveOutcome | undefined;
  let thrown: unknown = null;
  try {
    out = await win.applyDirective(input);
  } catch (err) {
    thrown = err;
  }
  expect(thrown, "applyDirective threw").toBeNull();
  expect(allowed, JSON.stringify(out).slice(0, 300)).toContain(out!.status);
  expect(win.entries()).toEqual(before);
  const log = await store.auditLog("victim");
  expect(log).toHaveLength(1);
  expect(log[0]!.status).toBe(out!.status);
  if (out!.status !== "unknown") expect(log[0]!.reason, "audited without a reason").not.toBeNull();
  expect(log[0]!.directive?.length ?? 0, "raw directive stored unbounded").toBeLessThanOrEqual(1100);
  return { out: out!, record: log[0]! };
}

// ---------------------------------------------------------------------------------------------------
// Generators

/**
 * Values for `accept_lossy` that look like consent and are not the JSON value `true`. `null` is not
 * here: OpenAI's strict mode sends every optional property, as `null` when absent, so `null` reads as
 * absent (a test below pins that it is never consent).
 */
const fakeTrue = fc.constantFrom<unknown>("true", "True", "TRUE", 1, "1", "yes", "y", "on", [true], { value: true }, "accept", -1, Infinity, "false", 0);

/** Span ids that look like `span_1` and are not. */
const lookAlike = fc.constantFrom<unknown>(
  "spаn_1", "ѕpan_1", "span＿1", "span_１", "span_١", "span_𝟏", "span_1\n", " span_1", "span_1 ", "span_1\u200b", "\u200bspan_1",
  "span_01", "span_0", "SPAN_1", "Span_1", "span-1", "span_1e0", "span_+1", "span_1/../2", "span_1\u0000", "span_1\u202e", "span_1#1",
  1, ["span_1"], { toString: () => "span_1" }, null,
);

const fakeMode = fc.constantFrom<unknown>("DROP", "Drop", "drop ", " drop", "shred", "delete", "drop\u0000", ["drop"], null, 0, "summarise");
const fakeOp = fc.constantFrom<unknown>("Prune", "PRUNE", "prune ", "delete", "forget", "rewrite", "", null, ["prune"]);
const extraKey = fc.constantFrom(
  "__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "session", "store", "handle",
  "acceptLossy", "ACCEPT_LOSSY", "accept_lossy ", "accept-lossy", "force", "confidence", "reversible", "digest_hash",
);

/** One mutation of the valid base directive, each of which must make it invalid. */
const mutation: fc.Arbitrary<{ what: string; input: unknown }> = fc.oneof(
  fakeTrue.map((v) => ({ what: "accept_lossy", input: { ...BASE, accept_lossy: v } })),
  lookAlike.map((v) => ({ what: "span_id", input: { ...BASE, span_id: v } })),
  fakeMode.map((v) => ({ what: "mode", input: { ...BASE, mode: v } })),
  fakeOp.map((v) => ({ what: "op", input: { ...BASE, op: v } })),
  fc.tuple(extraKey, fc.jsonValue({ maxDepth: 2 })).map(([k, v]) => {
    // An own property, as JSON.parse makes one (a literal `__proto__:` would set the prototype instead).
    const input: Record<string, unknown> = { ...BASE };
    Object.defineProperty(input, k, { value: v, enumerable: true, configurable: true, writable: true });
    return { what: `extra key ${k}`, input };
  }),
  fc.tuple(extraKey, fc.jsonValue({ maxDepth: 2 })).map(([k, v]) => ({ what: `extra key ${k} (JSON text)`, input: `${JSON.stringify(BASE).slice(0, -1)},${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}}` })),
  fc.constantFrom("accept_lossy", "mode", "op", "span_id").map((k) => {
    const input: Record<string, unknown> = { ...BASE };
    delete input[k];
    return { what: `without ${k}, but with accept_lossy consent elsewhere`, input: k === "accept_lossy" ? { ...input, acceptLossy: true } : input };
  }),
  fc.string({ maxLength: 30 }).map((d) => ({ what: "digest on drop", input: { ...BASE, digest: `x${d}` } })),
);

describe("hostile directives: generated mutations of a directive that would free a span", () => {
  it(`every mutation is invalid, changes nothing, and is audited (${fuzzRuns(400)} runs)`, { timeout: timeoutFor(400, 2) }, async () => {
    await fc.assert(
      fc.asyncProperty(mutation, async ({ input }) => {
        const { record } = await expectRefused(input);
        expect(record.reason).toBe("parse");
      }),
      { numRuns: fuzzRuns(400) },
    );
  });

  it("accept_lossy: null reads as absent: the lossy prune is refused, never consented to", async () => {
    const { win, store } = await target();
    const out = await win.applyDirective({ ...BASE, accept_lossy: null });
    expect(out.status).toBe("rejected");
    expect(win.entries()[0]?.state).toBe("live");
    const log = await store.auditLog("victim");
    expect(log.map((r) => r.status)).toEqual(["rejected"]);
  });

  it("the unmutated base directive does free the span (so the property above is not vacuous)", async () => {
    const { win } = await target();
    expect((await win.applyDirective(BASE)).status).toBe("lossy");
  });

  it(`arbitrary values never throw and never free anything unless they parse (${fuzzRuns(300)} runs)`, { timeout: timeoutFor(300, 2) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.anything({ withNullPrototype: true, withObjectString: true, withSparseArray: true, withBigInt: true, withMap: true, withSet: true }), fc.json(), fc.string()), async (input) => {
        await expectRefused(input);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

describe("hostile directives: size, depth and reads that lie", () => {
  const MB = "x".repeat(1 << 20);
  const deep = (n: number) => {
    let v: unknown = "bottom";
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };
  const cyclic: Record<string, unknown> = { ...BASE };
  cyclic["self"] = cyclic;

  const cases: Array<[string, unknown]> = [
    ["a megabyte digest", { op: "prune", span_id: "span_2", mode: "summarize", digest: MB }],
    ["a megabyte span id", { ...BASE, span_id: `span_1${MB}` }],
    ["a megabyte key", { ...BASE, [MB]: true }],
    ["a megabyte JSON text", JSON.stringify({ ...BASE, pad: MB })],
    ["a megabyte of whitespace around a valid directive", `${" ".repeat(1 << 20)}${JSON.stringify(BASE)}`],
    ["an object nested 100 000 deep", { ...BASE, extra: deep(100_000) }],
    ["nesting 100 000 deep as the directive", deep(100_000)],
    ["JSON nested 30 000 deep within the size limit", `${"[".repeat(30_000)}${"]".repeat(30_000)}`],
    ["a cyclic object", cyclic],
    ["a BigInt accept_lossy", { ...BASE, accept_lossy: 1n }],
    ["a Boolean object for accept_lossy", { ...BASE, accept_lossy: new Boolean(true) }],
    ["a Map with the right entries", new Map(Object.entries(BASE))],
    ["an array of two directives", [BASE, BASE]],
    ["a directive whose toJSON throws", { ...BASE, toJSON() { throw new Error("no"); } }],
    ["a proxy whose traps throw", new Proxy({}, { ownKeys() { throw new Error("trap"); }, get() { throw new Error("trap"); }, getOwnPropertyDescriptor() { throw new Error("trap"); } })],
    ["a revoked proxy", (() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; })()],
    ["a function", () => BASE],
    ["a symbol", Symbol("prune")],
    ["duplicate JSON keys ending in a string", '{"op":"prune","span_id":"span_1","mode":"drop","accept_lossy":true,"accept_lossy":"true"}'],
    ["a JSON text with a BOM", `\ufeff${JSON.stringify(BASE).replace("true", '"true"')}`],
  ];

  it.each(cases)("%s: invalid, nothing changes, audited with a bounded copy", async (_name, input) => {
    await expectRefused(input);
  });

  it("an input that reads differently the second time is audited as the value that was executed", async () => {
    // A getter (or proxy) could show the audit serialiser one value and the parser another. Seen to fail
    // before applyDirective took one snapshot of its input: the log recorded `"accept_lossy":"no"` while
    // the runtime executed a lossy commitment on `true`.
    const { win, store } = await target();
    let reads = 0;
    const input = {
      op: "prune", span_id: "span_1", mode: "drop",
      get accept_lossy() {
        return reads++ === 0 ? "no" : true;
      },
    };
    const out = await win.applyDirective(input);
    const rec = (await store.auditLog("victim"))[0]!;
    if (out.status === "lossy") {
      // Freed under a consent the audit log does not show.
      expect(JSON.parse(rec.directive!)).toMatchObject({ accept_lossy: true });
    } else {
      expect(out.status).toBe("invalid");
    }
  });
});
