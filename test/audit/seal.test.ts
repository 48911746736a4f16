/**
 * Sealing an audit record: the hash is SHA-256 over the record's canonical JSON, and the stored form an
 * adapter writes is built from that same text, so the two must agree with what readers recompute.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EMPTY_CHAIN, sealAudit, sealChain, sealChainJson, verifyAuditChain, type AuditDraft } from "../../src/audit.js";
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

  it("sealAudit links the record to the head it is given", () => {
    const rec = sealAudit({ op: null, status: "invalid", spanId: null, kind: null, mode: null, conditions: null, handle: null, repersisted: false, acceptLossy: false, reason: "parse", pinsCarried: 0, directive: "{" }, { seq: 4, at: 1, session: "s", store: "m", prevHash: "f".repeat(64) });
    expect(rec).toMatchObject({ seq: 4, prevHash: "f".repeat(64), spanHash: null });
  });
});
