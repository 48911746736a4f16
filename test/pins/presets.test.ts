import { describe, expect, it } from "vitest";
import { pin, pins, presetPins, type PresetPinName } from "../../dsl/pins.js";
import { isCatastrophicPattern } from "../../dsl/pin-analysis.js";
import { findPins } from "../../src/pins.js";

/** [text, the one identifier the preset must find in it]. */
type Positive = readonly [string, string];

const CASES: Record<PresetPinName, { positives: readonly Positive[]; negatives: readonly string[] }> = {
  requestId: {
    positives: [
      ["failed request req_8f3a2c", "req_8f3a2c"],
      ["id=req-01HZX3KQ9 retry", "req-01HZX3KQ9"],
      ["X-Request-Id: 7f9c0e3a91b2", "7f9c0e3a91b2"],
      ["x-request-id: a1b2c3d4e5f6", "a1b2c3d4e5f6"],
      ['{"requestId": "r-2026-11-13-0042"}', "r-2026-11-13-0042"],
      ["request_id=abc123def.", "abc123def"],
      ["x-amzn-RequestId: 4d5e6f70-1111", "4d5e6f70-1111"],
    ],
    negatives: [
      "the request failed twice",
      "request id: unknown",
      "req_body was empty",
      "a require() call",
      "X-Request-Id: pending",
      "prereq_1234 is a different thing",
    ],
  },
  uuid: {
    positives: [
      ["job 7c2d4f1e-93ab-4c55-8e0f-2b6a1d9e44c0 done", "7c2d4f1e-93ab-4c55-8e0f-2b6a1d9e44c0"],
      ["ID 550E8400-E29B-41D4-A716-446655440000", "550E8400-E29B-41D4-A716-446655440000"],
    ],
    negatives: ["7c2d4f1e-93ab-4c55-8e0f", "7c2d4f1e93ab4c558e0f2b6a1d9e44c0x", "2026-11-13-09-41-07"],
  },
  gitSha: {
    positives: [
      ["HEAD is now at a41c09e Merge", "a41c09e"],
      ["commit 9fceb02d0ae598e95dc970b74767f19372d61af8", "9fceb02d0ae598e95dc970b74767f19372d61af8"],
      ["image:2c7e91fa04b3", "2c7e91fa04b3"],
    ],
    negatives: [
      "deadbeef",
      "1234567",
      "decade",
      "accessed",
      "a41c09",
      "550e8400-e29b-41d4-a716-446655440000",
      "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "v1.2.3-a41c09e",
    ],
  },
  errorCode: {
    positives: [
      ["failed with E1042", "E1042"],
      ["Error [ERR_MODULE_NOT_FOUND]: Cannot find", "ERR_MODULE_NOT_FOUND"],
      ["connect ECONNREFUSED 10.0.0.1:5432", "ECONNREFUSED"],
      ["ENOENT: no such file", "ENOENT"],
      ["error PG2003: overlay loosens base", "PG2003"],
      ["error TS2322: Type", "TS2322"],
      ["ORA-00942: table or view does not exist", "ORA-00942"],
      ["(SQLSTATE 23505)", "23505"],
      ["SQLSTATE: 42P01", "42P01"],
    ],
    negatives: [
      "ERROR: something broke",
      "EOF reached",
      "use SHA256 and ISO8601",
      "an X509 certificate",
      "H264 video at 1080p",
      "ENV is prod",
      "E2E tests",
      "port 5432",
    ],
  },
  filePath: {
    positives: [
      ["at Pool.connect (/app/node_modules/pg-pool/index.js:45:11)", "/app/node_modules/pg-pool/index.js:45:11"],
      ["see src/x.ts:12:3 for details", "src/x.ts:12:3"],
      ['File "/srv/ingest/ingest/load.py", line 64', "/srv/ingest/ingest/load.py"],
      ["edit ./lib/config.yaml.", "./lib/config.yaml"],
      ["psql:migrations/a_b.sql:14: ERROR", "migrations/a_b.sql:14"],
      ["~/.config/app/settings.json", "~/.config/app/settings.json"],
      ["packages/@scope/pkg/dist/index.d.ts", "packages/@scope/pkg/dist/index.d.ts"],
    ],
    negatives: [
      "https://api.example.com/v1/orders.json",
      "file:///app/index.js",
      "and/or",
      "TCP/IP",
      "/v1/orders/123",
      "1/2.5 of the time",
      "index.ts:12:3",
      "C:\\Users\\me\\file.txt",
    ],
  },
  httpStatus: {
    positives: [
      ["responded HTTP 503 to POST", "HTTP 503"],
      ["HTTP/1.1 502 Bad Gateway", "HTTP/1.1 502"],
      ["HTTP/2 429", "HTTP/2 429"],
      ["got status 404", "status 404"],
      ["Status: 500", "Status: 500"],
      ["status_code=400", "status_code=400"],
      ["probe failed with statuscode: 503", "statuscode: 503"],
    ],
    negatives: ["HTTP 1.1 is old", "status quo", "returned 404 pages", "HTTP2 is faster", "status 999", "Status: OK"],
  },
  traceId: {
    positives: [
      ["traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
      ["trace_id=4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6a3ce929d0e0e4736"],
      ["X-Amzn-Trace-Id: Root=1-5759e988-bd862e3fe1be46a994272793", "1-5759e988-bd862e3fe1be46a994272793"],
    ],
    negatives: ["4bf92f3577b34da6a3ce929d0e0e473", "4BF92F3577B34DA6A3CE929D0E0E4736", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  },
  ticket: {
    positives: [
      ["tracked in PAY-1187.", "PAY-1187"],
      ["fixes ABC-1234", "ABC-1234"],
      ["branch feature/OPS-2207-retry", "OPS-2207"],
      ["CVE-2024-3094 in xz", "CVE-2024-3094"],
    ],
    negatives: ["UTF-8 text", "ISO-8859-1", "SHA-256 digest", "COVID-19", "ORA-00942", "a-1234", "X-1"],
  },
};

describe("preset pins", () => {
  it("has exactly the documented presets, frozen, each named after its key", () => {
    expect(Object.keys(presetPins).sort()).toEqual(
      ["errorCode", "filePath", "gitSha", "httpStatus", "requestId", "ticket", "traceId", "uuid"],
    );
    expect(Object.isFrozen(presetPins)).toBe(true);
    for (const [key, preset] of Object.entries(presetPins)) {
      expect(preset.name).toBe(key);
      expect(Object.isFrozen(preset)).toBe(true);
    }
    expect(pins.requestId).toBe(presetPins.requestId);
  });

  for (const [name, { positives, negatives }] of Object.entries(CASES) as Array<[PresetPinName, (typeof CASES)[PresetPinName]]>) {
    describe(name, () => {
      const preset = [presetPins[name]];
      it.each(positives)("finds the identifier in %j", (text, id) => {
        expect(findPins(text, preset)).toEqual([id]);
      });
      it.each(negatives)("finds nothing in %j", (text) => {
        expect(findPins(text, preset)).toEqual([]);
      });
      it("passes the static risk analysis", () => {
        expect(isCatastrophicPattern(presetPins[name].pattern)).toEqual({ ok: true });
      });
      it("stays fast on a long run of near-miss characters", () => {
        // Linear patterns scan 200 kB of adversarial filler in well under a second.
        const filler = ["a".repeat(200_000), "0a".repeat(100_000), "req_".repeat(50_000), "/a".repeat(100_000), "A-".repeat(100_000)];
        const started = performance.now();
        for (const text of filler) findPins(text, preset);
        expect(performance.now() - started).toBeLessThan(2_000);
      });
    });
  }
});

describe("pin()", () => {
  it("returns a frozen PinPattern from a string or a RegExp", () => {
    const p = pin("orderId", /ord_[0-9]{6}/u);
    expect(p).toEqual({ name: "orderId", pattern: "ord_[0-9]{6}" });
    expect(Object.isFrozen(p)).toBe(true);
    expect(pin("orderId", "ord_[0-9]{6}")).toEqual(p);
  });

  it("rejects flags other than g, u and i, naming them", () => {
    expect(() => pin("x", /a/m)).toThrow(/flag 'm' not supported/);
    expect(() => pin("x", /a/sy)).toThrow(/flags 's', 'y' not supported/);
    expect(() => pin("x", /a/gu)).not.toThrow();
  });

  it("rejects bad names, empty patterns and sources that do not compile with u", () => {
    expect(() => pin("", "a")).toThrow(/name/);
    expect(() => pin("has space", "a")).toThrow(/name/);
    expect(() => pin("x", "")).toThrow(/empty/);
    expect(() => pin("x", "(")).toThrow(/does not compile/);
    expect(() => pin("x", /\-/)).toThrow(/does not compile/); // sloppy escape, invalid with u
  });

  it("lowers i into the source so the gu-matched pattern behaves case-insensitively", () => {
    const p = pin("build", /build-[a-f0-9]{4}\d/i);
    const re = new RegExp(p.pattern, "gu");
    for (const text of ["build-ab12", "BUILD-AB12", "Build-aB12", "build-0000"]) {
      expect(`${text}9`.match(re)?.[0]).toBe(`${text}9`);
    }
    expect("build-ag129".match(re)).toBeNull();
  });

  it("keeps escapes, named groups, properties and quantifier braces intact when lowering i", () => {
    const p = pin("named", /(?<tag>v)\d{2,3}\p{Lu}\u{41}[^x]/iu);
    const re = new RegExp(p.pattern, "gu");
    expect(p.pattern).toContain("(?<tag>");
    expect(p.pattern).toContain("\\p{Lu}");
    expect(p.pattern).toContain("{2,3}");
    expect(re.exec("V12ÉAy")?.groups?.["tag"]).toBe("V");
    expect("V12ÉAX".match(re)).toBeNull(); // [^x] folds too: neither x nor X
    expect("V12Éay".match(re)).toBeNull(); // an escaped code point is taken literally, not folded
    expect(isCatastrophicPattern(p.pattern)).toEqual({ ok: true });
  });
});
