#!/usr/bin/env node
// The CLI is written in TypeScript and built to dist/ (`npm run build`; the published package ships dist/).
//
// Node's module compile cache (Node >= 22.1) keeps the V8 code of the modules the CLI loads (ts-morph's
// TypeScript alone is ~10 MB of JavaScript), so every start after the first skips most of the parse and
// compile work. It lives outside the user's source tree: in PRUNEGUARD_COMPILE_CACHE when that is set to a
// folder, otherwise in the OS temp folder. PRUNEGUARD_COMPILE_CACHE=off (or Node's own
// NODE_DISABLE_COMPILE_CACHE=1) turns it off.
import module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
// Side-effect free and dependency free: it can run on any Node, before anything that needs a newer one.
import { unsupportedNode } from "../dist/src/node-version.js";

// On a Node below the supported version, run on the Node the project pins (the `node` package in its
// node_modules, as this repository's devDependency does) when there is one, saying so; otherwise say
// what is needed and stop (exit 2, as for any usage error), rather than fail later with
// `No such built-in module: node:sqlite`. PRUNEGUARD_REEXEC=off stops at the message.
const unsupported = unsupportedNode();
/**
 * `text` as the CLI prints a message on stderr: wrapped as diagnostics are (at most 100 columns, or as
 * `COLUMNS` asks; `COLUMNS=0` not at all), by the formatter, which loads on any Node; as it is where it does not.
 */
const fit = async (text) => {
  try {
    const { terminalWidth, wrapHanging } = await import("../dist/compiler/diagnostics/format.js");
    return wrapHanging(text, terminalWidth(process.stderr), { indent: "  ", codeSpans: true });
  } catch {
    return text;
  }
};
if (unsupported !== null && process.env.PRUNEGUARD_REEXEC !== "off") {
  const { spawnSync } = await import("node:child_process");
  const { existsSync } = await import("node:fs");
  const { dirname, resolve } = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const here = dirname(fileURLToPath(import.meta.url));
  const exe = process.platform === "win32" ? "node.exe" : "bin/node";
  const pinned = [resolve(here, "../node_modules/node", exe), resolve(here, "../../node", exe), resolve(process.cwd(), "node_modules/node", exe)]
    .find((p) => existsSync(p) && unsupportedNode(spawnSync(p, ["--version"], { encoding: "utf8" }).stdout?.trim().replace(/^v/, "")) === null);
  if (pinned !== undefined) {
    console.error(await fit(`pruneguard: Node.js ${process.versions.node} is too old; running on the project's Node.js (${pinned})`));
    const r = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit", env: { ...process.env, PRUNEGUARD_REEXEC: "off" } });
    process.exit(r.status ?? 2);
  }
}
if (unsupported !== null) {
  const argv = process.argv.slice(2);
  try {
    const { errorJson, wantsJson } = await import("../dist/compiler/cli/report.js");
    if (wantsJson(argv)) process.stdout.write(errorJson(unsupported));
  } catch {
    // The JSON form needs the CLI's own modules; on a Node too old for them the message on stderr stands.
  }
  console.error(await fit(`pruneguard: ${unsupported}`));
  process.exit(2);
}

// Node 22 warns once per process that `node:sqlite` is experimental (Node 24 does not). A library's caller
// decides about its own warnings; the CLI is the process, and this one says nothing its user can act on
// (the store's behaviour is tested on Node 22 too). Every other warning is printed as Node prints it.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const type = typeof rest[0] === "string" ? rest[0] : rest[0]?.type;
  const text = typeof warning === "string" ? warning : warning?.message;
  if (type === "ExperimentalWarning" && typeof text === "string" && text.startsWith("SQLite is an experimental feature")) return;
  return emitWarning.call(this, warning, ...rest);
};

const setting = process.env.PRUNEGUARD_COMPILE_CACHE;
if (typeof module.enableCompileCache === "function" && setting !== "off" && setting !== "0") {
  try {
    module.enableCompileCache(setting !== undefined && setting !== "" ? setting : join(tmpdir(), "pruneguard-compile-cache"));
  } catch {
    // A cache that cannot be created (read-only temp folder) only costs start-up time.
  }
}

import("../dist/compiler/cli/main.js").then((m) => m.main(process.argv.slice(2))).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(`pruneguard: ${err instanceof Error ? err.message : String(err)}`); process.exitCode = 2; },
);
