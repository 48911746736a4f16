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
 *
 * Finding 25.12: the same loss on every other write. A recall's audit record (a plain append) is read back
 * before anything is retried, so one decision keeps one record; a span registration (one message, one
 * implicit transaction) carries a token and is read back by it, so `append` succeeds with the span it
 * registered or says that nothing was registered; a persist (idempotent) is run again. Seen to fail with
 * the read-backs taken out (appendAudit and registerSpan rethrowing, persist not run again): the first
 * recall test got no audit seq (`expected null …`: the record was queued for a retry that appends it a
 * second time), the second counted 4 records for 3 decisions, the registration tests got `StoreError: …
 * register failed: Connection terminated` from `append` although the span was registered, and the persist
 * test found the span live without its handle. With the window's queue as it was (retrying every waiting
 * record by appending it again), the queue test got `expected 4 to be 3`: the record that had committed
 * was written twice.
 */
import net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { verifyAuditChain } from "../../src/audit.js";
import { OutcomeUnknownError, StoreError } from "../../src/errors.js";
import { createPool, PostgresStore } from "../../src/postgres.js";
import { MemoryStore } from "../../src/stores/memory.js";
import type { AuditRecord } from "../../src/audit.js";
import { ManualClock } from "../../src/types.js";
import { ContextWindow } from "../../src/window/window.js";
import { refSpanId } from "../../src/window/refs.js";
import { describeWithServer, dropSchemas, freshSchema, itWithServer, PG_URL, testPool } from "../stores/pg-helpers.js";
import { immediate } from "../window/immediate.js";

/**
 * A TCP proxy to the server that can drop a connection right after forwarding COMMIT (or, with `dropAfter`,
 * a message containing that text: a script is one implicit transaction with no COMMIT of its own), and
 * refuse new ones.
 */
class CommitDropper {
  readonly server: net.Server;
  dropNextCommit = false;
  dropAfter: string | null = null;
  /**
   * With a drop: the message reaches the server only this long after the client saw its connection break
   * (still in a buffer, or slow on the network), and the server's side stays open until then.
   */
  holdMs = 0;
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
        const marker = this.dropAfter ?? (this.dropNextCommit ? "COMMIT" : null);
        if (marker !== null && chunk.includes(marker) && this.holdMs > 0) {
          this.dropNextCommit = false;
          this.dropAfter = null;
          this.drops++;
          upstream.unpipe(client);
          client.removeAllListeners("close").removeAllListeners("error").on("error", () => undefined);
          client.destroy();
          this.#open.delete(client);
          setTimeout(() => {
            if (!upstream.destroyed) upstream.end(chunk);
          }, this.holdMs);
          return;
        }
        upstream.write(chunk);
        if (marker !== null && chunk.includes(marker)) {
          this.dropNextCommit = false;
          this.dropAfter = null;
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
  tool: { store: "log", modes: ["drop", "summarize"], lossy: "with-flag" },
  note: { store: null, modes: ["drop"], lossy: "with-flag" },
} as const;

describeWithServer("a lost COMMIT acknowledgement on PostgreSQL", { needs: "any" }, () => {
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
    // A generous wait for a connection: on a loaded machine a 2 s one most likely failed an append's persist,
    // and the prune was then (rightly) refused for want of a copy. Nothing here waits on the timeout to pass.
    const pool = createPool({ url: viaProxy.toString(), max: 2, connectionTimeoutMs: 15_000 });
    const clock = new ManualClock(1_000_000);
    const store = new PostgresStore({ name: "log", pool, schema, clock });
    const truth = new PostgresStore({ name: "log", pool: direct, schema, clock });
    const win = new ContextWindow(immediate({ session: "s", clock, stores: { log: store }, kinds, limits: { lossyBudget: 1 } }));
    return { proxy, pool, store, truth, win };
  }

  /** Runs `test` against a window whose store talks through the proxy, and closes all of it afterwards. */
  async function withProxy(test: (s: Awaited<ReturnType<typeof setUp>>) => Promise<void>): Promise<void> {
    const set = await setUp();
    try {
      await test(set);
    } finally {
      await set.store.close();
      await set.pool.end();
      await set.proxy.close();
    }
  }

  const recordsOf = async (truth: PostgresStore, spanId: string) =>
    (await truth.auditLog("s")).filter((r) => r.op === "prune" && r.spanId === refSpanId(spanId) && r.status !== "rejected");
  const recallsOf = async (truth: PostgresStore, spanId: string) => (await truth.auditLog("s")).filter((r) => r.op === "recall" && r.spanId === refSpanId(spanId));

  itWithServer("the store reads back that it committed: the window answers reversible, one record, window and store agree", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, pool, store, truth, win }) => {
      const id = await win.append({ kind: "tool", text: "the copy" });
      proxy.dropNextCommit = true;
      const out = await win.applyDirective({ op: "prune", span_id: id, mode: "drop" });
      expect(proxy.drops).toBe(1);
      expect(out.status).toBe("reversible");
      expect(win.entries()[0]).toMatchObject({ state: "pruned", spanId: refSpanId(id) });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      expect(await truth.lookup("s", { spanId: refSpanId(id) })).toMatchObject({ status: "found", text: "the copy" });
      // A retry is refused as already pruned: it commits nothing.
      expect(await win.applyDirective({ op: "prune", span_id: id, mode: "drop" })).toMatchObject({ status: "rejected", reason: "already-pruned" });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    });
  }, 30_000);

  itWithServer("the read-back fails too: the span is in doubt, retries commit nothing, and the next directive after recovery settles it", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, pool, store, truth, win }) => {
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
      expect(win.entries()[0]).toMatchObject({ state: "tombstone", spanId: refSpanId(id) });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      expect(await truth.countLossy("s")).toBe(1);
      expect(await win.recall(id)).toMatchObject({ status: "pruned-unrecoverable", reason: "lossy" });
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    });
  }, 30_000);

  itWithServer("a range summary whose COMMIT reply and read-back are lost is in doubt like a prune, never 'nothing was committed', and settles once", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, truth, win }) => {
      const a = await win.append({ kind: "tool", text: "step one" });
      const b = await win.append({ kind: "tool", text: "step two" });
      proxy.dropNextCommit = true;
      proxy.refuse = true;
      const out = await win.summarizeRange({ from: a, to: b, digest: "two steps" });
      expect(out).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
      expect(out.status === "rejected" && out.message).not.toMatch(/nothing was committed/);
      expect(win.entries().map((e) => e.state)).toEqual(["live", "live"]);
      // The server committed both members' records.
      await expect.poll(async () => (await recordsOf(truth, a)).length + (await recordsOf(truth, b)).length, { timeout: 5000 }).toBe(2);
      expect(await win.summarizeRange({ from: a, to: b, digest: "again" })).toMatchObject({ status: "rejected", reason: "outcome-unknown" });
      proxy.refuse = false;
      // The next directive over the run reads back, applies the summary, and commits nothing twice.
      expect(await win.applyDirective({ op: "prune", span_id: a, mode: "drop" })).toMatchObject({ status: "rejected" });
      expect(win.entries().map((e) => e.state)).toEqual(["summary"]);
      expect(await recordsOf(truth, a)).toHaveLength(1);
      expect(await recordsOf(truth, b)).toHaveLength(1);
      expect(await win.recall(b)).toMatchObject({ status: "found", text: "step two" });
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    });
  }, 30_000);

  itWithServer("Finding 25.12: a recall's audit record whose COMMIT reply was lost is read back: one record per decision", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, pool, store, truth, win }) => {
      const id = await win.append({ kind: "tool", text: "the copy" });
      proxy.dropNextCommit = true;
      const out = await win.recall(id);
      expect(proxy.drops).toBe(1);
      expect(out).toMatchObject({ status: "found", text: "the copy" });
      // The record committed and was read back: the answer has its seq, and nothing waits to be retried.
      expect(out.auditSeq).toBe((await recallsOf(truth, id))[0]?.seq);
      await win.recall(id);
      expect(await recallsOf(truth, id)).toHaveLength(2);
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    });
  }, 30_000);

  itWithServer("Finding 25.12: when the read-back fails too, the record waits with the store's resolve and is never appended twice", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, pool, store, truth, win }) => {
      const id = await win.append({ kind: "tool", text: "the copy" });
      proxy.dropNextCommit = true;
      proxy.refuse = true;
      expect(await win.recall(id)).toMatchObject({ status: "found", auditSeq: null });
      await expect.poll(async () => (await recallsOf(truth, id)).length, { timeout: 5000 }).toBe(1);
      // Still unreachable: the next decision waits behind the one in doubt.
      expect(await win.recall(id)).toMatchObject({ status: "found", auditSeq: null });
      expect(await recallsOf(truth, id)).toHaveLength(1);
      proxy.refuse = false;
      // Reachable again: the first is read back (committed, not written again), the second and third are written.
      expect((await win.recall(id)).auditSeq).not.toBeNull();
      const recalls = await recallsOf(truth, id);
      expect(recalls).toHaveLength(3);
      expect(new Set(recalls.map((r) => r.decided)).size).toBe(3);
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    });
  }, 30_000);

  itWithServer("Finding 25.12: a span registration whose reply was lost is read back by its token: append succeeds with the span it registered", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, pool, store, truth, win }) => {
      proxy.dropAfter = "RETURNING ordinal, span_id";
      const id = await win.append({ kind: "note", text: "an unbacked note" });
      expect(proxy.drops).toBe(1);
      expect(refSpanId(id)).toBe("span_1");
      expect((await truth.sessionSpans("s")).map((r) => r.spanId)).toEqual(["span_1"]);
      // The window holds it: recall answers from the window, never "lost in a restart".
      expect(await win.recall(id)).toMatchObject({ status: "found", source: "window", text: "an unbacked note" });
      expect(refSpanId(await win.append({ kind: "note", text: "the next one" }))).toBe("span_2");
      expect((await truth.sessionSpans("s")).map((r) => r.spanId)).toEqual(["span_1", "span_2"]);
    });
  }, 30_000);

  itWithServer("a registration that reaches the server only after its connection broke: the old session is ended before the read-back, so nothing registers behind it", { needs: "server", why: "PGlite serves every connection from one backend: there is no other session to end, so a message held back runs after the read-back" }, async () => {
    await withProxy(async ({ proxy, truth, win }) => {
      proxy.dropAfter = "RETURNING ordinal, span_id";
      proxy.holdMs = 400;
      const failed = await win.append({ kind: "note", text: "an unbacked note" }).then(() => null, (err: unknown) => err);
      expect(proxy.drops).toBe(1);
      // The read-back found nothing, and it is the truth: the session that had the message was ended first.
      expect(failed).toBeInstanceOf(StoreError);
      expect(failed).not.toBeInstanceOf(OutcomeUnknownError);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(await truth.sessionSpans("s")).toEqual([]);
      expect(refSpanId(await win.append({ kind: "note", text: "an unbacked note" }))).toBe("span_1");
      expect((await truth.sessionSpans("s")).map((r) => r.spanId)).toEqual(["span_1"]);
    });
  }, 30_000);

  itWithServer("a prune whose COMMIT reaches the server only after its connection broke: read back after the old session ended, nothing commits behind it", { needs: "server", why: "PGlite serves every connection from one backend: there is no other session to end, so a message held back runs after the read-back" }, async () => {
    await withProxy(async ({ proxy, truth, win }) => {
      const id = await win.append({ kind: "tool", text: "the copy" });
      proxy.dropNextCommit = true;
      proxy.holdMs = 400;
      const out = await win.applyDirective({ op: "prune", span_id: id, mode: "drop" });
      expect(proxy.drops).toBe(1);
      // Nothing committed, and nothing will: the window says the store failed, and the span stays live.
      expect(out).toMatchObject({ status: "rejected", reason: "store-error" });
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(await recordsOf(truth, id)).toHaveLength(0);
      expect(win.entries()[0]).toMatchObject({ state: "live" });
      expect(await win.applyDirective({ op: "prune", span_id: id, mode: "drop" })).toMatchObject({ status: "reversible" });
      expect(await recordsOf(truth, id)).toHaveLength(1);
      expect(verifyAuditChain(await truth.auditLog("s"))).toBeNull();
    });
  }, 30_000);

  itWithServer("Finding 25.12: a registration that cannot be read back makes append say so, and the next append takes the next id", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, pool, store, truth, win }) => {
      expect(refSpanId(await win.append({ kind: "note", text: "first" }))).toBe("span_1");
      proxy.dropAfter = "RETURNING ordinal, span_id";
      proxy.refuse = true;
      const failed = await win.append({ kind: "note", text: "an unbacked note" }).then(() => null, (err: unknown) => err);
      expect(failed).toBeInstanceOf(OutcomeUnknownError);
      expect(failed).toBeInstanceOf(StoreError);
      expect(String((failed as Error).message)).toMatch(/reading back whether it registered failed too .*registered span no window has/);
      expect(win.entries()).toHaveLength(1);
      proxy.refuse = false;
      // Its resolve reads back what happened: the server did register it.
      await expect.poll(async () => (await truth.sessionSpans("s")).length, { timeout: 5000 }).toBe(2);
      expect(await (failed as OutcomeUnknownError<{ spanId: string }>).resolve()).toMatchObject({ spanId: "span_2" });
      expect(refSpanId(await win.append({ kind: "note", text: "an unbacked note" }))).toBe("span_3");
    });
  }, 30_000);

  itWithServer("Finding 25.12: a persist whose reply was lost is run again (idempotent): the span keeps its handle", { needs: "any" }, async () => {
    await withProxy(async ({ proxy, pool, store, truth, win }) => {
      proxy.dropAfter = "FROM ins";
      const id = await win.append({ kind: "tool", text: "the copy" });
      expect(proxy.drops).toBe(1);
      expect(win.entries()[0]).toMatchObject({ state: "live", handle: "#1" });
      expect(await truth.lookup("s", { spanId: refSpanId(id) })).toMatchObject({ status: "found", handle: "#1", text: "the copy" });
      expect(await win.applyDirective({ op: "prune", span_id: id, mode: "drop" })).toMatchObject({ status: "reversible", handle: "#1" });
    });
  }, 30_000);
});

describe("Finding 25.12: the window's queue of unwritten audit records (no server needed)", () => {
  it("an append whose outcome is unknown waits with the store's resolve, which is asked before it is appended again", async () => {
    const inner = new MemoryStore({ name: "log" });
    let lose = 0;
    let reachable = true;
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop !== "appendAudit") {
          const v = Reflect.get(target, prop, receiver);
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        }
        return async (session: string, draft: Parameters<MemoryStore["appendAudit"]>[1]) => {
          if (!reachable) throw new Error("unreachable");
          const record = await target.appendAudit(session, draft);
          if (lose === 0) return record;
          lose--;
          // Committed, and the answer lost; asking again fails until the store is reachable.
          const resolve = async (): Promise<AuditRecord | null> => {
            if (!reachable) throw new Error("still unreachable");
            return (await target.auditLog(session)).find((r) => r.hash === record.hash) ?? null;
          };
          throw new OutcomeUnknownError<AuditRecord>("log", "COMMIT sent, answer lost", resolve);
        };
      },
    });
    const win = new ContextWindow(immediate({ session: "s", stores: { log: store }, kinds }));
    const id = await win.append({ kind: "tool", text: "bytes" });
    lose = 1;
    expect(await win.recall(id)).toMatchObject({ status: "found", auditSeq: null });
    reachable = false;
    expect(await win.recall(id)).toMatchObject({ status: "found", auditSeq: null });
    reachable = true;
    expect((await win.recall(id)).auditSeq).toBe(3);
    const recalls = (await inner.auditLog("s")).filter((r) => r.op === "recall");
    expect(recalls).toHaveLength(3);
    expect(verifyAuditChain(await inner.auditLog("s"))).toBeNull();
  });
});
