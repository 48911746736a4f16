/**
 * What `npm start` runs after the build: the whole pipeline, each step under a heading — the example
 * policies compiled into `generated/` (rebuilt when that changed anything), then the incident replay, the
 * agent loop and the AI SDK loop. Each step runs as its own process, as a user would run it.
 *
 * Every line it prints itself fits 120 columns (fewer on a narrower terminal, or with a narrower `COLUMNS`);
 * the steps are told the terminal's width through `COLUMNS` when their output is captured, so the CLI lays
 * it out as it would on the terminal (test/examples/start-output.test.ts runs it with `COLUMNS=120`).
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { wrapLines } from "../compiler/diagnostics/format.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The widest line this script prints: `COLUMNS`, else the terminal's width, at most 120. */
const asked = Number(process.env["COLUMNS"]);
const columns = Number.isInteger(asked) && asked > 0 ? asked : process.stdout.isTTY ? process.stdout.columns : undefined;
const WIDTH = Math.max(40, Math.min(columns ?? 120, 120));

/** Paragraphs of prose, each wrapped at `WIDTH`. */
const prose = (...paragraphs: string[]): string => paragraphs.map((p) => wrapLines(p, WIDTH).join("\n")).join("\n");

function heading(n: number, title: string, what: string): void {
  process.stdout.write(`\n━━ ${n}/4 ${title}\n${what}\n\n`);
}

/** A note under a step's output, saying how to read it. */
function note(text: string): void {
  process.stdout.write(`\n${wrapLines(text, WIDTH - 2).map((l) => `» ${l}`).join("\n")}\n`);
}

/** Runs a step; a step that fails ends `npm start` with its exit code. */
function run(command: string, args: readonly string[], options: { readonly capture?: boolean } = {}): string {
  // A captured stdout is a pipe to the step: it is told the terminal's width, which it cannot see itself.
  const env = columns !== undefined && process.env["COLUMNS"] === undefined ? { ...process.env, COLUMNS: String(columns) } : process.env;
  const r = spawnSync(command, args, { cwd: root, env, stdio: options.capture ? ["ignore", "pipe", "inherit"] : "inherit", encoding: "utf8" });
  if (r.status !== 0) process.exit(r.status ?? 1);
  if (options.capture) process.stdout.write(r.stdout);
  return r.stdout ?? "";
}

heading(1, "Compile the example policies: policy → compiler → generated/", prose(
  "`pruneguard compile` reads examples/policies/*.policy.ts and writes each policy's IR, types and guard to generated/. " +
    "The examples carry five warnings on purpose — a read-only store (PG3005, in both policies), a kind that can never " +
    "be pruned (PG3007, in both) and a retention shorter than the session (PG3001) — to show checks the compiler makes. " +
    "Warnings do not stop the compile.",
));
const compiled = run(process.execPath, ["bin/pruneguard.js", "compile"], { capture: true });
// generated/ changed: rebuild, so what runs next is what was just compiled.
if (!/Nothing to write/.test(compiled)) run(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build"]);

heading(2, "The incident replay: one model, three executors", prose(
  "A 40-call tool block (~9k tokens) is pruned two hours after its raw log rotated out; five turns later the model " +
    "needs a request id that only the block held. Columns: an executor that frees whatever the model names, then " +
    "pruneguard under the org policy (expired copies are re-persisted) and the payments policy (they are not).",
));
run(process.execPath, ["dist/examples/incident-replay.js"]);

heading(3, "The agent loop: the compile-time and run-time halves together", prose(
  "A loop through the guard generated from the org policy (generated/org.guard.ts): what the types forbid does not " +
    "compile, and what only the store knows (a copy that was never written) is refused at run time.",
));
run(process.execPath, ["dist/examples/agent-loop.js"]);
note(
  "Reading `compacted: … tokens freed, … rewritten`: a prune is decided at once, but the prompt changes only at a " +
    "compaction point, because a " +
    "provider caches the prompt's unchanged beginning. \"Freed\" is how many tokens shorter the prompt got; " +
    "\"rewritten\" counts its tokens from the first changed line to the end — the next request re-sends them " +
    "without the prompt cache. The spans here are a few dozen tokens each and their tombstones and digests about as " +
    "long, so next to nothing is freed: pruning pays on large spans, which is why prunes wait for a compaction point.",
);

heading(4, "A multi-step agent on the AI SDK (mock model) through the ready tools", prose(
  "generateText with a scripted mock model that calls the agent's own tool and the directive tools (prune, recall, " +
    "compact, …); a Transcript appends each step's calls and results to the window. Each line: step, tool → outcome.",
));
run(process.execPath, ["dist/examples/ai-sdk-loop.js"]);
note("Here step 1's compaction frees most of what it rewrites: the summarized deploy log was long and its digest is short.");
