/**
 * A backend terminated as it started: its FATAL arrives in the same read as the ReadyForQuery that finished
 * the connect, after pg-pool removed the connection's idle listener and before the caller could add its
 * own. pg emits `error` then, and an unheard `error` event ends the process. A real server does this only
 * by chance under pg_terminate_backend (figure 13's fault run met it); this local server, which speaks just
 * enough of the protocol, does it every time. Pools from `createPool` and pools users build themselves both
 * survive, and the call that met the dead connection fails with a StoreError.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { StoreError } from "../../src/errors.js";
import { createPool, PostgresStore } from "../../src/postgres.js";

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** AuthenticationOk, ReadyForQuery and a FATAL 57P01 in one write, then the socket closes. */
function terminatedAtStart(socket: Socket): void {
  socket.once("data", () => {
    const fields = Buffer.from("SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0", "latin1");
    const auth = Buffer.alloc(4);
    socket.end(Buffer.concat([message("R", auth), message("Z", Buffer.from("I")), message("E", fields)]));
  });
  socket.on("error", () => undefined);
}

describe("a connection whose backend is terminated as the connect completes", () => {
  let server: Server;
  let url = "";
  beforeAll(async () => {
    server = createServer(terminatedAtStart);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    url = `postgres://agent@127.0.0.1:${address.port}/agents`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ["createPool", () => createPool({ url, max: 2 })],
    ["a pool the application built", () => {
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      pool.on("error", () => undefined);
      return pool;
    }],
  ])("%s: the call fails with a StoreError and the process goes on", async (_name, make) => {
    const pool = make();
    const store = new PostgresStore({ name: "toolLog", pool, schema: "pruneguard" });
    try {
      for (let i = 0; i < 3; i++) {
        const failure = await store.auditLog("s1").then(() => null, (err: unknown) => err);
        expect(failure).toBeInstanceOf(StoreError);
      }
    } finally {
      await store.close();
      await pool.end();
    }
  });
});
