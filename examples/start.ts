/**
 * What `npm start` runs after the build: the whole pipeline, each step under a heading — the example
 * policies compiled into `generated/` (rebuilt when that changed anything), then the incident replay, the
 * agent loop and the AI SDK loop. Each step runs as its own process, as a user would run it.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function heading(n: number, title: string, what: string): void {
  process.stdout.write(`\n━━ ${n}/4 ${title}\n${what}\n\n`);
}

/** Runs a step; a step that fails ends `npm start` with its exit code. */
function run(command: string, args: readonly string[], options: { readonly capture?: boolean } = {}): string {
  const r = spawnSync(command, args, { cwd: root, stdio: options.capture ? ["ignore", "pipe", "inherit"] : "inherit", encoding: "utf8" });
  if (r.status !== 0) process.exit(r.status ?? 1);
  if (options.capture) process.stdout.write(r.stdout);
  return r.stdout ?? "";
}

heading(1, "Compile the example policies: policy → compiler → generated/",
  "The examples carry five deliberate warnings: a read-only store (PG3005), a kind that can never be pruned\n" +
  "(PG3007) and a retention shorter than the session (PG3001) — each is a check the compiler makes.");
const compiled = run(process.execPath, ["bin/pruneguard.js", "compile"], { capture: true });
// generated/ changed: rebuild, so what runs next is what was just compiled.
if (!/Nothing to write/.test(compiled)) run(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build"]);

heading(2, "The incident replay (the reference document's turn N+5)",
  "A tool block is pruned two hours after its log rotated out; five turns later the model needs an id only it held.");
run(process.execPath, ["dist/examples/incident-replay.js"]);

heading(3, "The agent loop: the compile-time and run-time halves together", "Prunes through a generated guard's typed window.");
run(process.execPath, ["dist/examples/agent-loop.js"]);

heading(4, "A multi-step agent on the AI SDK (mock model) through the ready tools", "generateText with the directive tools and the Transcript.");
run(process.execPath, ["dist/examples/ai-sdk-loop.js"]);
