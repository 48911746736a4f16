// A separate OS process acting on a shared PostgresStore, for the concurrency tests. Built code only:
// the tests run after `npm run build`.
//
//   node pg-worker.mjs '{"role":"pruner"|"rotator"|"hang", "url", "schema", "session", "id", ...}'
//
// Prints one JSON line at the end (what it did), or "locked" when a `hang` worker holds its locks.
import { contentHash } from "../../../dist/src/hash.js";
import { PostgresStore } from "../../../dist/src/stores/postgres/postgres-store.js";

const args = JSON.parse(process.argv[2] ?? "{}");
const store = new PostgresStore({
  name: "toolLog", url: args.url, schema: args.schema, retentionMs: args.retentionMs ?? 150, statementTimeoutMs: 20_000,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function draft(status, spanId, extra = {}) {
  return {
    op: "prune", status, spanId, kind: "toolResult", mode: "drop", conditions: null, handle: null, repersisted: false,
    acceptLossy: false, reason: null, pinsCarried: 0, directive: null, ...extra,
  };
}

// The guard's rule in small: reversible when the copy checks out, re-persist when it expired, else reject.
function decide(items) {
  return (checks) => checks.map((c, i) => {
    const id = items[i].spanId;
    if (c.conditions.existence && c.conditions.addressability && c.conditions.provenance) {
      return { status: "reversible", repersist: false, hold: true, audit: draft("reversible", id, { conditions: c.conditions }) };
    }
    if (c.conditions.provenance && (c.copy === "expired" || c.copy === "no-handle" || c.copy === "absent")) {
      return { status: "reversible", repersist: true, hold: true, audit: draft("reversible", id, { conditions: c.conditions, repersisted: true }) };
    }
    return { status: "rejected", audit: draft("rejected", id, { conditions: c.conditions, reason: c.copy }) };
  });
}

async function pruner() {
  const done = { prunes: [], recalls: 0, errors: [] };
  const shared = args.shared ?? [];
  for (let i = 1; i <= args.count; i++) {
    const spanId = `${args.id}_${i}`;
    const text = `worker ${args.id} span ${i}: request req_${args.id}${i} failed E${1000 + i}`;
    const p = await store.persist({ session: args.session, spanId, kind: "toolResult", text, hash: contentHash(text) });
    await sleep(Math.random() * 40);
    // Some prunes wait long enough for the rotator to expire the copy first, so re-persist races rotation.
    if (i % 4 === 0) await sleep(200);
    const items = [{ spanId, kind: "toolResult", backed: true, handle: p.handle, hash: contentHash(text), text }];
    // Every third prune also contends for a span the other pruner prunes too.
    const s = shared[i % Math.max(1, shared.length)];
    if (s && i % 3 === 0) items.push({ spanId: s.spanId, kind: "toolResult", backed: true, handle: s.handle, hash: contentHash(s.text), text: s.text });
    try {
      const commit = await store.commitPrune({ session: args.session, items, holdUntil: null, decide: decide(items) });
      for (const [k, c] of commit.items.entries()) {
        done.prunes.push({ spanId: items[k].spanId, status: c.decision.status, repersisted: c.decision.status === "reversible" && c.decision.repersist, handle: c.handle, seq: c.audit.seq, hash: items[k].hash });
      }
    } catch (err) {
      done.errors.push(String(err?.message ?? err));
    }
    if (i % 2 === 0) {
      const r = await store.lookup(args.session, { handle: p.handle });
      await store.appendAudit(args.session, draft(r.status === "found" ? "found" : "pruned-unrecoverable", spanId, { op: "recall", mode: null }));
      done.recalls++;
    }
  }
  done.retries = store.stats.retries;
  return done;
}

async function rotator() {
  const until = Date.now() + args.durationMs;
  let rotated = 0;
  let keptByHold = 0;
  let runs = 0;
  while (Date.now() < until) {
    const r = await store.rotate();
    rotated += r.rotated;
    keptByHold += r.keptByHold;
    runs++;
    await sleep(15);
  }
  return { rotated, keptByHold, runs };
}

async function hang() {
  const items = [{ spanId: args.spanId, kind: "toolResult", backed: true, handle: args.handle, hash: contentHash(args.text), text: args.text }];
  await store.commitPrune({
    session: args.session, items, holdUntil: null,
    decide: (checks) => {
      // Between the two round trips: the rows and the chain head are locked. Say so, then never return.
      process.stdout.write("locked\n");
      for (;;) {}
    },
  });
}

const run = { pruner, rotator, hang }[args.role];
const out = await run();
await store.close();
process.stdout.write(JSON.stringify(out) + "\n");
