/**
 * A lost COMMIT acknowledgement on PostgreSQL: a loopback proxy in front of the real server forwards the
 * message that carries COMMIT and drops both connections before the reply can come back. The server
 * commits; the client sees "connection terminated". The store must find out what committed before the
 * window answers — one decision, one record, the window matching the store — and a retry must never
 * commit a second record.
 *
 * Seen to fail when broken on purpose: with `commitPrune` rethrowing instead of reading back (the old
 * behaviour), the first test fails with `expected 'rejected' to be 'reversible'` (the window says nothing
 * was committed while the store holds the record) and the second gets `store-error` where it expects
 * `outcome-unknown` — the answer that invited the retry committing a second record.
 */
import net from "node:net";
import { afterAll, expect } from "vitest";
import { verifyAuditChain } from "../../src/audit.js";
import { createPool, PostgresStore } from "../../src/postgres.js";
import { ManualClock } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { describeWithServer, dropSchemas, freshSchema, itWithServer, PG_URL, testPool } from "../stores/pg-helpers.js";

/** A TCP proxy to the server that can drop a connection right after forwarding COMMIT, and refuse new ones. */
class CommitDropper {
  readonly server: net.Server;
  dropNextCommit = false;
  refuse = false;
  drops = 0;
  readonly #target: { host: string; port: number };
  readonly #open = new Set<net.Socket>();

  constructor(target: { host: string; port: number }) {
    this.#target = target;
    this.server = net.createServer((client) => {
      if (this.refuse) return void client.destroy();
      const upstream = net.connect(this.#target);
      this.#open.add(client).add(upstream);
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.#open.delete(client);
        this.#open.delete(upstream);
      };
      client.on("error", close).on("close", close);
      upstream.on("error", close).on("close", close);
      upstream.pipe(client);
      client.on("data", (chunk: Buffer) => {
        upstream.write(chunk);
        if (this.dropNextCommit && chunk.includes("COMMIT")) {
          this.dropNextCommit = false;
          this.drops++;
          // The server has the whole message; nothing it answers reaches the client.
          upstream.unpipe(client);
          client.destroy();
          upstream.end();
        }
      });
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    return (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.#open) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

const kinds = {
  tool: { store: "log", modes: ["drop"], lossy: "with-flag" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

describeWithServer("a lost COMMIT acknowledgement on PostgreSQL", () => {
  const schemas: string[] = [];
  const direct = testPool(2);
  afterAll(async () => {
    await dropSchemas(direct, schemas);
    await direct.end();
  });

  async function setUp() {
    const url = new URL(PG_URL);
    const proxy = new CommitDropper({ host: url.hostname, port: Number(url.port || 5432) });
    const port = await proxy.listen();
    const schema = await freshSchema(direct, "lostack", schemas);
    const viaProxy = new URL(PG_URL);
    viaProxy.port = String(port);
    const pool = createPool({ url: viaProxy.toString(), max: 2, connectionTimeoutMs: 2000 });
    const clock = new ManualClock(1_000_000);
    const store = new PostgresStore({ name: "log", pool, schema, clock });
    const truth = new PostgresStore({ name: "log", pool: direct, schema, clock });
    const win = new ContextWindow({ session: "s", clock, stores: { log: store }, kinds, limits: { lossyBudget: 1 } });
    return { proxy, pool, store, truth, win };
  }

  const recordsOf = async (truth: PostgresStore, spanId: string) =>
    (await truth.auditLog("s")).filter((r) => r.op === "prune" && r.spanId === spanId && r.status !== "rejected");

  itWithServer("the store reads back that it committed: the window answers reversible, one record, window and store agree", async () => {
    const { proxy, pool, store, truth, win } = await setUp();
    try {
      const id = await win.append({ kind: "tool", text: "the copy" });
      proxy.dropNextCommit = true;
      const out = await win.applyDirective({ op: "prune", span_id: id, mode: "drop" });
      expect(proxy.drops).toBe(1);
      expect(out.status).toBe("reversible");
      expect(win.entries()[0]).toMatchObject({ state: "pruned", spanId: id });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      expect(await truth.lookup("s", { spanId: id })).toMatchObject({ status: "found", text: "the copy" });
      // A retry is refused as already pruned: it commits nothing.
      expect(await win.applyDirective({ op: "prune", span_id: id, mode: "drop" })).toMatchObject({ status: "rejected", reason: "already-pruned" });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    } finally {
      await store.close();
      await pool.end();
      await proxy.close();
    }
  }, 30_000);

  itWithServer("the read-back fails too: the span is in doubt, retries commit nothing, and the next directive after recovery settles it", async () => {
    const { proxy, pool, store, truth, win } = await setUp();
    try {
      const id = await win.append({ kind: "note", text: "an unbacked note" });
      proxy.dropNextCommit = true;
      proxy.refuse = true; // the read-back cannot reach the server either
      const out = await win.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true });
      expect(out).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
      expect(win.entries()[0]).toMatchObject({ state: "live" });
      // The server did commit (it may still be finishing when the client gives up): one lossy record.
      await expect.poll(async () => (await recordsOf(truth, id)).length, { timeout: 5000 }).toBe(1);
      // The model retries while the store is still unreachable: refused, nothing committed twice.
      expect(await win.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      proxy.refuse = false;
      // The next directive for the span first reads back, applies the committed prune, then answers.
      expect(await win.applyDirective({ op: "prune", span_id: id, mode: "drop", accept_lossy: true })).toMatchObject({ status: "rejected", reason: "already-pruned" });
      expect(win.entries()[0]).toMatchObject({ state: "tombstone", spanId: id });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      expect(await truth.countLossy("s")).toBe(1);
      expect(await win.recall(id)).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    } finally {
      await store.close();
      await pool.end();
      await proxy.close();
    }
  }, 30_000);
});
