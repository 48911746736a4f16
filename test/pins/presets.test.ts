import { describe, expect, it } from "vitest";
import { pin, pins, presetPins, type PresetPinName } from "../../dsl/pins.js";
import { RE2JS } from "re2js";
import { compilePinPattern } from "../../src/policy/pins.js";
import { findPins } from "../../src/pin-carry.js";

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
      ["upstream failed: E_UPSTREAM_503", "E_UPSTREAM_503"],
      ["errcode SQLITE_CONSTRAINT: UNIQUE", "SQLITE_CONSTRAINT"],
      ["json.decoder.JSONDecodeError: Expecting value", "JSONDecodeError"],
      ['Exception in thread "main" java.lang.NullPointerException', "NullPointerException"],
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
      "Error: boom",
      "an Exception was thrown",
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
  fileName: {
    positives: [
      ["could not parse cfg.ini: bad section", "cfg.ini"],
      ["error: failed to parse manifest at Cargo.toml", "Cargo.toml"],
      ["\tat Ledger.main(Ledger.java:2)", "Ledger.java"],
      ["delete package-lock.json and retry", "package-lock.json"],
    ],
    negatives: [
      "console.log was called",
      "process.env is empty",
      "Node.js v24.11.1",
      "json.decoder.JSONDecodeError",
      "see /app/src/index.ts",
      "res.json() failed",
      "example.com",
    ],
  },
  sourcePosition: {
    positives: [
      ["src/handler.ts(4,3): error TS2322", "src/handler.ts(4,3)"],
      ['  File "/usr/lib/python3.12/json/decoder.py", line 355, in raw_decode', 'File "/usr/lib/python3.12/json/decoder.py", line 355'],
      ["\tat Ledger.main(Ledger.java:2)", "Ledger.java:2"],
      ["main.c:3:5: error: expected ';'", "main.c:3:5"],
      [" --> src/main.rs:2:5", "src/main.rs:2:5"],
      ["./main.go:5:2: undefined: x", "./main.go:5:2"],
      ["test_calc.py:12: AssertionError", "test_calc.py:12"],
      ["at file:///tmp/app/x.mjs:3:9", "/tmp/app/x.mjs:3:9"],
    ],
    negatives: ["main.c is fine", "line 355", "at 12:30:00", "https://host/a.js:80", "ratio 3:4"],
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
      ["errorCode", "fileName", "filePath", "gitSha", "httpStatus", "requestId", "sourcePosition", "ticket", "traceId", "uuid"],
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
      it("compiles on the linear-time engine", () => {
        expect(compilePinPattern(presetPins[name].pattern).ok).toBe(true);
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

  it("rejects bad names, empty patterns and sources that do not parse", () => {
    expect(() => pin("", "a")).toThrow(/name/);
    expect(() => pin("has space", "a")).toThrow(/name/);
    expect(() => pin("x", "")).toThrow(/empty/);
    expect(() => pin("x", "(")).toThrow(/does not parse/);
    // What the engine cannot run is the compiler's to report, with advice.
    expect(() => pin("x", "a(?=b)")).not.toThrow();
  });

  it("translates i into an inline flag the engine honours", () => {
    const p = pin("build", /build-[a-f0-9]{4}\d/i);
    expect(p.pattern.startsWith("(?i)")).toBe(true);
    expect(findPins("BUILD-AB129 Build-aB129 build-ag129", [p])).toEqual(["BUILD-AB129", "Build-aB129"]);
  });

  it("translates JavaScript-only escapes and named groups to RE2 syntax", () => {
    const p = pin("named", /(?<tag>v)\d{2,3}\p{Lu}\u{41}[^x]/u);
    expect(p.pattern).toContain("\\x{41}");
    expect(compilePinPattern(p.pattern).ok).toBe(true);
    // The named group is a capture group, so it is what gets pinned.
    expect(findPins("v12ÉAy", [p])).toEqual(["v"]);
  });
});

describe("compilePinPattern", () => {
  it.each([
    ["ord_\\d+(?=\\s)", "(?=", /lookahead/],
    ["\\b(?!SHA)[A-Z]+\\d+", "(?!", /uncaptured alternative/],
    ["(a)\\1", "\\1", /backreferences/],
    ["\\u0041", "\\u", /\\x\{41\}/],
  ])("refuses %s, naming %s and what to write instead", (source, construct, instead) => {
    const result = compilePinPattern(source);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.reason).toBe("unsupported");
    expect(result.problem.construct).toBe(construct);
    expect(result.problem.instead).toMatch(instead);
  });

  it("refuses patterns that match the empty string, and syntax errors", () => {
    for (const source of ["\\d*", "\\b", "(?:)", "x?"]) {
      expect(compilePinPattern(source), source).toMatchObject({ ok: false, problem: { reason: "empty-match" } });
    }
    expect(compilePinPattern("[A-Z+")).toMatchObject({ ok: false, problem: { reason: "invalid" } });
  });

  it("accepts the patterns a backtracking engine hangs on, which RE2 runs in linear time", () => {
    for (const source of ["(?:(?:\\w|\\d)\\.?)+@corp\\.example", "(?:(?:a|a)b?)+c", "(a|a){1,100}c", "(?:a{1,30}){1,30}c", "(\\w+)+-\\d"]) {
      expect(compilePinPattern(source).ok, source).toBe(true);
    }
    expect(RE2JS.compile("(a|a){1,100}c").test("a".repeat(10_000))).toBe(false);
  });
});
