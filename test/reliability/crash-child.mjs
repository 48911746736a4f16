// A stream of prunes on a SQLite store, to be killed at a random point by crash.test.ts.
// Usage: node crash-child.mjs <db-path> <session> <spans>
// Prints "ready", then one JSON line per directive whose outcome came back.
import { ContextWindow, SqliteStore } from "../../dist/src/index.js";

const [path, session, spansArg] = process.argv.slice(2);
const spans = Number(spansArg ?? "200");
const KINDS = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag", repersist: true },
  scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
};
export const textFor = (session, n) => `output ${n} of ${session}: ${"x".repeat(n % 97)} req_${n.toString(16).padStart(8, "0")}`;

const store = new SqliteStore({ name: "log", path, retentionMs: 60_000, busyTimeoutMs: 2000 });
const win = new ContextWindow({ session, stores: { log: store }, kinds: KINDS, limits: { lossyBudget: 1_000_000 } });
process.stdout.write("ready\n");
for (let i = 1; i <= spans; i++) {
  const id = await win.append({ kind: i % 4 === 0 ? "scratch" : "tool", text: textFor(session, i) });
  const directive = i % 4 === 0
    ? { op: "prune", span_id: id, mode: "drop", accept_lossy: true }
    : i % 4 === 1
      ? { op: "prune", span_id: id, mode: "summarize", digest: `digest ${i}` }
      : { op: "prune", span_id: id, mode: "drop" };
  const out = await win.applyDirective(directive);
  process.stdout.write(`${JSON.stringify({ id, status: out.status })}\n`);
  if (i % 5 === 0) {
    const r = await win.applyDirective({ op: "recall", span_id: `span_${i - 2}` });
    process.stdout.write(`${JSON.stringify({ id: `recall span_${i - 2}`, status: r.status })}\n`);
  }
}
await store.close();
process.stdout.write("done\n");
