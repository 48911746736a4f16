/**
 * A PostgreSQL wire-protocol server over one in-process PGlite, for the test run when no real server is
 * available: `pg` clients, the CLI and child processes connect to it by URL as they would to a server.
 *
 * PGlite is one session. Connections take turns: a connection owns the session from its first message
 * until PGlite answers ReadyForQuery "idle" — so a transaction, or an extended-protocol exchange
 * (Parse/Bind/Execute/Sync), always runs whole, and every other connection waits until it ends. This is
 * a valid serial schedule of what a server would run concurrently, which is why suites that only need
 * SQL to behave like PostgreSQL are faithful here, and suites that need two sessions at once (one
 * blocking on another's lock, a backend terminated, a statement timeout on a lock) are not: they must
 * declare `needs: "server"`. Session state is shared too (a plain `SET` by one connection is seen by all).
 *
 * A connection that closes has the messages it sent run, and then what it left open rolled back, as a
 * server does for a lost client.
 *
 * Written here rather than taken from @electric-sql/pglite-socket: no release of that package accepts the
 * PGlite this repository pins (0.2.17 requires @electric-sql/pglite 0.5.14 exactly, and seven extension
 * packages as required peers); its multiplexer also hands the session over between the messages of one
 * extended-protocol exchange outside a transaction, which this one does not.
 */
import { createServer, type Server, type Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/** Sync ('S', length 4). */
const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4);

/** Bind (unnamed portal) to a prepared statement nobody has: an error that aborts the exchange it is in. */
const ABORT_EXCHANGE = (() => {
  const body = Buffer.concat([Buffer.from("\0pruneguard_abandoned_client\0", "utf8"), Buffer.from([0, 0, 0, 0, 0, 0])]);
  const m = Buffer.alloc(5 + body.length);
  m[0] = 0x42;
  m.writeInt32BE(4 + body.length, 1);
  body.copy(m, 5);
  return new Uint8Array(m);
})();

/** A simple Query message for `sql`. */
function queryMessage(sql: string): Uint8Array {
  const body = Buffer.from(`${sql}\0`, "utf8");
  const m = Buffer.alloc(5 + body.length);
  m[0] = 0x51;
  m.writeInt32BE(4 + body.length, 1);
  body.copy(m, 5);
  return m;
}

/** The transaction status of the last ReadyForQuery in `reply` ('I', 'T' or 'E'), or null if it has none. */
function lastReadyStatus(reply: Uint8Array): string | null {
  let status: string | null = null;
  const view = Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength);
  let at = 0;
  while (at + 5 <= view.length) {
    const type = view[at]!;
    const len = view.readInt32BE(at + 1);
    if (len < 4) break;
    if (type === 0x5a && len === 5 && at + 5 < view.length) status = String.fromCharCode(view[at + 5]!);
    at += 1 + len;
  }
  return status;
}

interface Conn {
  readonly id: number;
  readonly socket: Socket;
  buffer: Buffer;
  started: boolean;
  closed: boolean;
  /** Complete messages not yet run. */
  readonly queue: Uint8Array[];
  /** Messages have run since PGlite last said "idle": this connection must keep the session. */
  busy: boolean;
}

export interface PgliteServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (PGlite has one database; the name is not checked). */
  readonly url: string;
  readonly db: PGlite;
  /** Stops listening, drops the connections and closes the PGlite. */
  stop(): Promise<void>;
}

export interface PgliteServerOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** An existing PGlite; default: a new in-memory one, closed by `stop()`. */
  readonly db?: PGlite;
}

export async function startPgliteServer(options: PgliteServerOptions = {}): Promise<PgliteServer> {
  const host = options.host ?? "127.0.0.1";
  let db = options.db;
  if (db === undefined) {
    const { PGlite } = await import("@electric-sql/pglite");
    db = new PGlite();
  }
  await db.waitReady;
  const pglite = db;

  let owner: Conn | null = null;
  const waiting: Conn[] = [];
  const conns = new Set<Conn>();
  let nextId = 1;
  let running = false;

  const exec = (message: Uint8Array) => pglite.runExclusive(() => pglite.execProtocolRaw(message, { syncToFs: false }));

  /** Runs the owner's messages; hands the session on when the owner is idle and has nothing queued. */
  async function pump(): Promise<void> {
    if (running) return;
    running = true;
    try {
      for (;;) {
        if (owner === null) {
          const next = waiting.shift();
          if (next === undefined) return;
          owner = next;
        }
        const conn: Conn = owner;
        const message = conn.queue.shift();
        if (message === undefined) {
          if (conn.closed) await abandon(conn);
          if (conn.closed || !conn.busy) {
            owner = null;
            continue;
          }
          return; // mid-transaction: wait for this connection's next message
        }
        let reply: Uint8Array;
        try {
          reply = await exec(message);
        } catch (err) {
          // PGlite itself failed (not an SQL error, which comes back as an ErrorResponse): drop the client.
          conn.closed = true;
          conn.queue.length = 0;
          conn.socket.destroy(err instanceof Error ? err : new Error(String(err)));
          await abandon(conn);
          owner = null;
          continue;
        }
        const status = lastReadyStatus(reply);
        conn.busy = status === null ? true : status !== "I";
        if (!conn.closed && reply.length > 0) conn.socket.write(reply);
        if (!conn.busy && conn.queue.length === 0) owner = null;
        else if (!conn.busy) {
          // Idle with more queued: let the others in first, so one chatty connection cannot starve them.
          owner = null;
          if (!waiting.includes(conn)) waiting.push(conn);
        }
      }
    } finally {
      running = false;
    }
  }

  /**
   * A client gone mid-exchange or mid-transaction: roll back what it left open, as a server does. A bare
   * Sync would commit an extended-protocol exchange cut short before its Sync, so an error comes first
   * (a Bind to a statement that does not exist), which aborts it; then Sync, then ROLLBACK if a
   * transaction block is still open.
   */
  async function abandon(conn: Conn): Promise<void> {
    if (!conn.busy) return;
    try {
      await exec(ABORT_EXCHANGE);
      let status = lastReadyStatus(await exec(SYNC));
      if (status !== "I") status = lastReadyStatus(await exec(queryMessage("ROLLBACK")));
    } catch {
      // Nothing more to do: the next client finds PGlite as it is.
    }
    conn.busy = false;
  }

  function enqueue(conn: Conn, message: Uint8Array): void {
    conn.queue.push(message);
    if (owner !== conn && !waiting.includes(conn)) waiting.push(conn);
    void pump();
  }

  /** Splits the buffer into messages: the untyped ones before startup, typed ones after. */
  function onData(conn: Conn, data: Buffer): void {
    conn.buffer = conn.buffer.length === 0 ? data : Buffer.concat([conn.buffer, data]);
    for (;;) {
      const b = conn.buffer;
      if (!conn.started) {
        if (b.length < 8) return;
        const len = b.readInt32BE(0);
        if (b.length < len) return;
        const code = b.readInt32BE(4);
        conn.buffer = b.subarray(len);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          conn.socket.write("N");
          continue;
        }
        if (code === CANCEL_REQUEST) {
          // No backend to signal: a cancel does nothing here (the wire protocol expects no answer).
          conn.socket.end();
          return;
        }
        if (code !== PROTOCOL_3) {
          conn.socket.destroy();
          return;
        }
        conn.started = true;
        enqueue(conn, new Uint8Array(b.subarray(0, len)));
        continue;
      }
      if (b.length < 5) return;
      const len = b.readInt32BE(1);
      if (b.length < 1 + len) return;
      const message = new Uint8Array(b.subarray(0, 1 + len));
      conn.buffer = b.subarray(1 + len);
      if (message[0] === 0x58) {
        // Terminate: the client is leaving; close as a server does (PGlite's own session stays).
        conn.socket.end();
        return;
      }
      enqueue(conn, message);
    }
  }

  /**
   * The client is gone. As a server does, the messages it sent before leaving still run (their replies go
   * nowhere) — a COMMIT whose reply is lost has committed — and then what it left open is rolled back.
   */
  function onClose(conn: Conn): void {
    if (conn.closed) return;
    conn.closed = true;
    conns.delete(conn);
    if (owner !== conn && conn.queue.length === 0) {
      const i = waiting.indexOf(conn);
      if (i >= 0) waiting.splice(i, 1);
      return;
    }
    void pump();
  }

  const server: Server = createServer((socket) => {
    const conn: Conn = { id: nextId++, socket, buffer: Buffer.alloc(0), started: false, closed: false, queue: [], busy: false };
    conns.add(conn);
    socket.setNoDelay(true);
    socket.on("data", (d: Buffer) => onData(conn, d));
    socket.on("error", () => onClose(conn));
    socket.on("close", () => onClose(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("PGlite server: no TCP address");
  const port = address.port;

  return {
    port,
    url: `postgres://postgres@${host}:${port}/postgres`,
    db: pglite,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const c of conns) c.socket.destroy();
      await closed;
      // Let a message already running finish before PGlite goes away.
      await pglite.runExclusive(async () => undefined);
      if (options.db === undefined) await pglite.close();
    },
  };
}
