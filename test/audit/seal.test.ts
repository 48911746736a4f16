/**
 * Sealing an audit record: the hash is SHA-256 over the record's canonical JSON, and the stored form an
 * adapter writes is built from that same text, so the two must agree with what readers recompute.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EMPTY_CHAIN, sealAudit, sealChain, sealChainJson, storedAuditProblem, verifyAuditChain, type AuditDraft } from "../../src/audit.js";
import { canonicalJson, contentHash } from "../../src/hash.js";

/** Any string, including lone surrogates, quotes, backslashes, control and line-separator characters. */
const anyText = fc.oneof(fc.string({ unit: "binary", maxLength: 80 }), fc.constantFrom('"\\', "\u2028\u2029", "\ud800", "a\udc00b", "\u0000\u001f"));
const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });

const draft: fc.Arbitrary<AuditDraft> = fc.record({
  op: fc.constantFrom("prune", "recall", null),
  status: fc.constantFrom("reversible", "lossy", "rejected", "invalid", "found", "pruned-unrecoverable", "unknown", "unavailable"),
  spanId: nullable(anyText),
  kind: nullable(anyText),
  mode: fc.constantFrom("drop", "summarize", "compress", null),
  conditions: nullable(fc.record({ existence: fc.boolean(), addressability: fc.boolean(), provenance: fc.boolean() })),
  handle: nullable(anyText),
  repersisted: fc.boolean(),
  acceptLossy: fc.boolean(),
  reason: fc.constantFrom(null, "parse", "not-reversible:expired", "group:lead-refused"),
  pinsCarried: fc.nat(),
  spanHash: nullable(fc.stringMatching(/^[0-9a-f]{64}$/)),
  directive: nullable(anyText),
}, { requiredKeys: ["op", "status", "spanId", "kind", "mode", "conditions", "handle", "repersisted", "acceptLossy", "reason", "pinsCarried", "directive"] });

describe("sealing audit records", () => {
  it("contentHash is SHA-256 of the UTF-8 bytes, as the streaming hash computes it (lone surrogates included)", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(contentHash(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
      }),
      { numRuns: 500 },
    );
  });

  it("the stored JSON is JSON.stringify of the record, and the hash covers the canonical JSON of the rest", () => {
    fc.assert(
      fc.property(fc.array(draft, { minLength: 1, maxLength: 4 }), anyText, anyText, fc.nat(), (drafts, session, store, at) => {
        const sealed = sealChainJson(EMPTY_CHAIN, drafts, { at, session, store });
        for (const { record, json } of sealed) {
          expect(json).toBe(JSON.stringify(record));
          const { hash, ...body } = record;
          expect(hash).toBe(contentHash(`${record.prevHash}\n${canonicalJson(body)}`));
        }
        expect(sealed.map((s) => s.record)).toEqual(sealChain(EMPTY_CHAIN, drafts, { at, session, store }));
        // What a reader parses back from the stored form verifies as a chain.
        expect(verifyAuditChain(sealed.map((s) => JSON.parse(s.json)))).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  // Finding 25.11: `pruneguard audit --verify` refuses a stored text that is not the canonical serialisation
  // of what it parses to. Every text an adapter writes is canonical (any content, lone surrogates included);
  // one that names a key twice, or is spaced or numbered differently, is not, though it verifies.
  it("Finding 25.11: every stored record is canonical; a key written twice or other spacing is not, and says which", () => {
    fc.assert(
      fc.property(fc.array(draft, { minLength: 1, maxLength: 3 }), anyText, fc.nat(), (drafts, session, at) => {
        const sealed = sealChainJson(EMPTY_CHAIN, drafts, { at, session, store: "s" });
        const doubled = sealed.map(({ json }) => `{"status":"rejected",${json.slice(1)}`);
        for (const [i, { json }] of sealed.entries()) {
          expect(storedAuditProblem(json, JSON.parse(json))).toBeNull();
          expect(storedAuditProblem(doubled[i]!, JSON.parse(doubled[i]!))).toMatch(/names the key "status" twice/);
        }
        // The chain itself cannot tell: what JSON.parse reads back is the sealed record.
        expect(verifyAuditChain(doubled.map((t) => JSON.parse(t)))).toBeNull();
      }),
      { numRuns: 300 },
    );
    const { json } = sealChainJson(EMPTY_CHAIN, [{ op: "prune", status: "lossy", spanId: "span_1", kind: "k", mode: "drop", conditions: { existence: false, addressability: false, provenance: false }, handle: null, repersisted: false, acceptLossy: true, reason: null, pinsCarried: 0, directive: '{"a":1,"a":2}' }], { at: 1, session: "s", store: "m" })[0]!;
    // A key inside the directive string is text, not a key: no false alarm. One inside a nested object is.
    expect(storedAuditProblem(json, JSON.parse(json))).toBeNull();
    const nested = json.replace('"conditions":{', '"conditions":{"existence":true,');
    expect(storedAuditProblem(nested, JSON.parse(nested))).toMatch(/names the key "existence" twice/);
    const spaced = json.replace('"at":1', '"at": 1');
    expect(storedAuditProblem(spaced, JSON.parse(spaced))).toMatch(/not the canonical serialisation .* differ at character \d+/);
    const number = json.replace('"at":1', '"at":1.0');
    expect(storedAuditProblem(number, JSON.parse(number))).toMatch(/not the canonical serialisation/);
  });

  it("sealAudit links the record to the head it is given", () => {
    const rec = sealAudit({ op: null, status: "invalid", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false, acceptLossy: false, reason: "parse", pinsCarried: 0, directive: "{" }, { seq: 4, at: 1, session: "s", store: "m", prevHash: "f".repeat(64) });
    expect(rec).toMatchObject({ seq: 4, prevHash: "f".repeat(64), spanHash: null });
  });
});
