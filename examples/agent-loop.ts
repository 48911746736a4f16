/**
 * An agent-side program written against a generated guard (`generated/org.guard.ts`): the compile-time
 * and run-time halves of the two-party protocol side by side.
 *
 * Compile time: the window's refs carry the prune request their kind accepts, so the lines marked
 * `@ts-expect-error` below do not compile (remove a marker and `npm run build` fails). Run time: what the
 * types cannot know — whether the copy is still in the store *now* — the guard checks at execution,
 * and model output, which no type can constrain, is parsed by the policy's directive schema and
 * disposed of by the same check.
 *
 * Run: `npm start` (after the replay), or `node dist/examples/agent-loop.js`. Output is deterministic.
 */
import { pathToFileURL } from "node:url";
import { IrreversiblePruneError, ManualClock, MemoryStore } from "../src/index.js";
import { createWindow, directiveSchema, directiveTools, irHash, storeDeclarations, type Ref } from "../generated/org.guard.js";

/** A memory store that can be told to fail its next write, standing in for an unreachable server. */
class FlakyStore extends MemoryStore {
  #fail = false;
  failNextPersist(): void {
    this.#fail = true;
  }
  override persist(input: Parameters<MemoryStore["persist"]>[0]): ReturnType<MemoryStore["persist"]> {
    if (!this.#fail) return super.persist(input);
    this.#fail = false;
    return Promise.reject(new Error("connection refused"));
  }
}

/** The policy's stores, in memory (a real agent opens SQLite or PostgreSQL from the same declarations). */
function openStores(clock: ManualClock) {
  const options = (name: keyof typeof storeDeclarations, handlePrefix: string) => {
    const d = storeDeclarations[name];
    return { name, clock, handlePrefix, retentionMs: d.retentionMs, holds: d.holds, distinguishesAbsent: d.distinguishesAbsent, writable: d.writable };
  };
  return {
    toolLog: new MemoryStore(options("toolLog", "")),
    transcript: new FlakyStore(options("transcript", "t")),
    notes: new MemoryStore(options("notes", "n")),
    archive: new MemoryStore(options("archive", "a")),
  };
}

/** Summarizes a tool result; typed so only a `toolResult` ref can reach it. */
async function summarizeToolResult(win: ReturnType<typeof createWindow>, ref: Ref<"toolResult">, digest: string): Promise<string> {
  const outcome = await win.prune(ref, { mode: "summarize", digest });
  return outcome.status === "reversible" ? `reversible, handle ${outcome.handle}` : `lossy: ${outcome.tombstone}`;
}

export async function agentLoop(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<string[]> {
  const lines: string[] = [];
  const say = (l: string) => (lines.push(l), write(l));
  const clock = new ManualClock(Date.UTC(2026, 10, 13, 9, 0, 0));
  const stores = openStores(clock);
  const win = createWindow({ session: "agent-loop", stores, clock });
  say(`agent loop under policy org (IR ${irHash.slice(0, 12)}…)`);

  const hint = await win.append({ kind: "systemHint", text: "You are the deploy assistant. Be terse." });
  const notice = await win.append({ kind: "complianceNotice", text: "This conversation is recorded for compliance." });
  const result = await win.append({ kind: "toolResult", text: "HTTP/1.1 502 Bad Gateway\nX-Request-Id: req_7f3a9c2e41\n{\"code\":\"E1042\"}" });
  const scratch = await win.append({ kind: "scratch", text: "plan: read the deploy log, then the DB metrics" });

  // ---- compile time: each of these is a type error, and the build proves it stays one ----
  // @ts-expect-error systemHint has no store: the loss must be accepted as the literal `acceptLossy: true`.
  void (() => win.prune(hint, { mode: "drop" }));
  // @ts-expect-error complianceNotice has no store and forbids lossy commitment: it cannot be pruned.
  void (() => win.prune(notice, { mode: "drop" }));
  // @ts-expect-error a string is not a span ref: only `append` mints them.
  void (() => win.prune("span_3", { mode: "drop" }));
  // @ts-expect-error scratch's store is read-only, so a scratch prune is always lossy and must say so.
  void (() => win.prune(scratch, { mode: "drop" }));
  // @ts-expect-error a scratch ref where a toolResult ref is expected.
  void (() => summarizeToolResult(win, scratch, "planned"));

  // ---- run time: the same guard checks what only the store knows ----
  say(`prune toolResult (summarize): ${await summarizeToolResult(win, result, "The deploy API returned 502 (upstream timeout).")}`);
  const lossy = await win.prune(hint, { mode: "drop", acceptLossy: true });
  say(`prune systemHint (drop, acceptLossy: true): ${lossy.status}, "${lossy.status === "lossy" ? lossy.tombstone : ""}"`);

  // userTurn is backed by `transcript` for 30 days, so the types allow this prune. But the transcript
  // server was unreachable when the turn was appended: no copy exists, and the guard refuses to free it.
  stores.transcript.failNextPersist();
  const turn = await win.append({ kind: "userTurn", text: "Why did deploy 8812 fail? Ticket OPS-4411." });
  try {
    await win.prune(turn, { mode: "compress" });
    say("prune userTurn (compress): executed");
  } catch (err) {
    if (!(err instanceof IrreversiblePruneError)) throw err;
    say("prune userTurn (compress), its store was down at append:");
    say(`  IrreversiblePruneError (${err.outcome.status}: ${err.outcome.line})`);
  }

  // ---- model output: untrusted, parsed by the policy's own schema, then the same check ----
  for (const raw of ['{"op":"prune","span_id":"span_2","mode":"drop","accept_lossy":"true"}', '{"op":"recall","span_id":"span_3"}']) {
    const parsed = directiveSchema.safeParse(JSON.parse(raw));
    const outcome = await win.applyDirective(raw);
    say(`model ${raw} → schema ${parsed.success ? "ok" : "refuses"}; window: ${outcome.status}`);
  }
  say("directive tools for the model:");
  for (const t of directiveTools) say(`  ${t.name}(${Object.keys(t.inputSchema.properties).join(", ")})`);
  // The prunes were decided at once; the window the model reads changes at a compaction point.
  const c = await win.compact();
  say(`win.compact() → ${c.line}`);
  say("");
  say(win.render().split("\n").slice(0, 6).map((l) => `  | ${l}`).join("\n"));
  await win.end();
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  agentLoop().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
