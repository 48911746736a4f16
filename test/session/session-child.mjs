// An agent process on a shared session, for the session tests (built code only: run `npm run build` first).
//
//   node session-child.mjs '{"role":"work"|"resume"|"lossy", "engine":"sqlite"|"postgres", "path", "url", "schema", "session", ...}'
//
// work:   appends spans (backed `tool`, unbacked `note`) and prunes some of them, printing one JSON line per
//         finished step, until killed.
// resume: resumes the session, recalls every id it is given, appends and prunes, prints one JSON line.
// lossy:  appends `tries` unbacked spans and prunes each with accept_lossy, printing how many went lossy.
import { ContextWindow, SqliteStore, refSpanId } from "../../dist/src/index.js";

const args = JSON.parse(process.argv[2] ?? "{}");
const kinds = {
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
};
export const textFor = (n) => `output ${n}: ${"x".repeat(n % 53)} req_${n.toString(16).padStart(8, "0")}`;

async function openStore() {
  if (args.engine === "sqlite") return new SqliteStore({ name: "log", path: args.path, busyTimeoutMs: 10_000 });
  const { PostgresStore } = await import("../../dist/src/postgres.js");
  return PostgresStore.connect({ name: "log", url: args.url, schema: args.schema, statementTimeoutMs: 20_000 });
}

const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const store = await openStore();
const options = { session: args.session, stores: { log: store }, kinds, limits: { lossyBudget: args.budget ?? null } };

if (args.role === "work") {
  const win = new ContextWindow(options);
  out({ ready: true });
  for (let i = 1; ; i++) {
    const kind = i % 3 === 0 ? "note" : "tool";
    // The text is written before the span exists anywhere, so the parent can check byte identity later.
    // Ids, not refs, go to the parent: they name the session's spans in any window, which is what it checks.
    const ref = await win.append({ kind, text: textFor(i) });
    const id = refSpanId(ref);
    out({ appended: id, kind, n: i });
    if (i % 4 === 1) out({ pruned: id, status: (await win.applyDirective({ op: "prune", span_id: id, mode: "drop" })).status });
    else if (i % 4 === 2) out({ pruned: id, status: (await win.applyDirective({ op: "prune", span_id: id, mode: "summarize", digest: `digest ${i}` })).status });
    else if (kind === "note" && i % 2 === 0) out({ pruned: id, status: (await win.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true })).status });
    // An agent waits for its model between steps; without a pause the kill would land hundreds of steps late.
    await new Promise((r) => setTimeout(r, 3));
  }
} else if (args.role === "resume") {
  const win = await ContextWindow.resume(options);
  const recalls = {};
  for (const id of args.ids) {
    const r = await win.recall(id);
    recalls[id] = { status: r.status, text: r.status === "found" ? r.text : null, source: r.status === "found" ? r.source : null };
  }
  const states = win.entries().map((e) => e.state);
  const appended = await win.append({ kind: "tool", text: "after the restart" });
  const pruned = await win.applyDirective({ op: "prune", span_id: appended, mode: "drop" });
  const live = win.entries().find((e) => e.state === "live" && e.span.id !== refSpanId(appended));
  const prunedOld = live ? (await win.applyDirective({ op: "prune", span_id: live.span.id, mode: "drop" })).status : null;
  const back = await win.recall(appended);
  out({ recalls, states, appended: refSpanId(appended), pruned: pruned.status, prunedOld, back: back.status === "found" ? back.text : back.status });
  await store.close();
} else if (args.role === "lossy") {
  const win = new ContextWindow(options);
  out({ ready: true });
  // Wait for the parent's go, so the processes race.
  await new Promise((r) => process.stdin.once("data", r));
  process.stdin.destroy();
  let lossy = 0;
  let budget = 0;
  for (let i = 0; i < args.tries; i++) {
    const id = await win.append({ kind: i % 2 === 0 ? "note" : "tool", text: `lossy ${args.tag} ${i}` });
    // A tool span's copy is fine, so force the lossy path on notes only; tool spans keep the chain busy.
    const o = await win.applyDirective({ op: "prune", span_id: id, mode: "drop", ...(i % 2 === 0 ? { accept_lossy: true } : {}) });
    if (o.status === "lossy") lossy++;
    if (o.status === "rejected" && o.reason === "lossy-budget") budget++;
  }
  out({ lossy, budget });
  await store.close();
}
