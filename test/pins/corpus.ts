import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { presetPins } from "../../dsl/pins.js";
import type { PinPattern } from "../../src/types.js";

/** Every preset: the corpus is checked against the strictest policy, one that pins them all. */
export const ALL_PRESETS: readonly PinPattern[] = Object.values(presetPins);

const DIR = fileURLToPath(new URL("../fixtures/tool-outputs/", import.meta.url));

/**
 * The hand-written tool outputs, sorted by file name so reports are stable. Tools present on the
 * machine are run for real in `tool-outputs.test.ts`; the Go samples stand in for a toolchain that is
 * not installed there.
 */
export function loadCorpus(): Array<{ readonly name: string; readonly text: string }> {
  return readdirSync(DIR)
    .sort()
    .map((name) => ({ name, text: readFileSync(DIR + name, "utf8") }));
}

/**
 * Identifiers each fixture must yield under the presets: written by hand, so a preset that stops
 * matching one fails here rather than silently pinning less.
 */
export const EXPECTED_PINS: Readonly<Record<string, readonly string[]>> = {
  "github-actions-ci.log": ["a41c09e", "HTTP 502", "test/webhooks/stripe.test.ts:77:31", "5b0e6f2a-8c1d-4e3f-9a7b-6c5d4e3f2a1b", "PAY-1187"],
  "go-build.txt": ["cmd/settle/main.go:27:9", "cmd/settle/main.go:41:15", "./retry.go:12:2"],
  "go-panic.txt": ["7c2d4f1e-93ab-4c55-8e0f-2b6a1d9e44c0", "/home/ci/src/ledger/batch.go:58", "/home/ci/src/ledger/cmd/settle/main.go:33"],
  "json-api-error.json": ["ERR_PAYMENT_INTENT_STATE", "req_Q7xk39LmZp2w", "1-67a9b2c4-9f8e7d6c5b4a39281706f5e4", "src/checkout/service.ts:142:9"],
  "kubectl-describe.txt": ["2c7e91fa04b3", "OPS-2207", "/etc/checkout/config.yaml", "statuscode: 503", "ECONNREFUSED", "req_c0ffee42"],
  "nginx-502.html": ["HTTP/1.1 502", "9c1f7a3e5b2d4086", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "/var/log/nginx/error.log"],
  "node-stack-trace.txt": ["req_8f3a2c91", "ECONNREFUSED", "/app/src/checkout/service.ts:142:9", "HTTP 503", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "ERR_UNHANDLED_REJECTION"],
  "psql-error.txt": ["migrations/20261113_add_ledger_index.sql:14", "23505"],
  "python-traceback.txt": ["7c2d4f1e-93ab-4c55-8e0f-2b6a1d9e44c0", "/srv/ingest/ingest/load.py", "E2107", "23505", "DATA-4412"],
};

/** The reference incident's digest: the gist, none of the identifiers. */
export const LOSSY_DIGEST = "the deploy failed with a database error";
