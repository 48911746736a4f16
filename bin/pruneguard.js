#!/usr/bin/env node
// The CLI is written in TypeScript and built to dist/ by `npm install` (the `prepare` script).
import("../dist/compiler/cli/main.js").then((m) => m.main(process.argv.slice(2))).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(`pruneguard: ${err instanceof Error ? err.message : String(err)}`); process.exitCode = 2; },
);
