/**
 * The run's PostgreSQL finder (test/setup/postgres.ts) and the PGlite socket server: each path is taken
 * here on purpose, whatever this machine has — the probe pointed at a closed port so that a server is
 * started from the installed binaries (skipped, saying so, where there are none), the watchdog stopping a
 * server whose run died, PGlite when nothing else may be used, and the reason given when nothing is found.
 * Nothing started here outlives its test: each checks that the server is gone and its directory deleted.
 */
import { spawn } from "node:child_process";
import net from "node:net";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { exists, findBinDir, findPostgres, freePort, postmasterPid, probe, startThrowawayServer } from "./postgres.js";
import { startPgliteServer, type PgliteServer } from "./pglite-server.js";

const BIN = findBinDir(process.env);
const NO_BINARIES = BIN.dir === null ? `no PostgreSQL server binaries on this machine (looked in ${BIN.tried}): install PostgreSQL to run it` : null;
if (NO_BINARIES !== null) console.warn(`test/setup/postgres.test.ts: the tests that start a server are skipped: ${NO_BINARIES}`);
const withBinaries = (name: string) => (NO_BINARIES === null ? name : `${name} [skipped: ${NO_BINARIES}]`);

/**
 * An environment in which nothing answers where the finder probes, and it may take every path (`extra`
 * narrows that). A `PRUNEGUARD_PG_BINDIR` of the run's own stays: where the run simulates a machine without
 * binaries, so does this file.
 */
async function closedPortEnv(extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env, PGHOST: "127.0.0.1", PGPORT: String(await freePort()) };
  delete env["PRUNEGUARD_PG_URL"];
  delete env["PRUNEGUARD_PG_AUTO"];
  return { ...env, ...extra };
}

async function refused(url: string): Promise<boolean> {
  return probe(url, 2000).then(() => false, () => true);
}

async function until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

describe("finding a PostgreSQL for the test run", () => {
  it("uses PRUNEGUARD_PG_URL as it is, and never prints its password", async () => {
    const found = await findPostgres({ env: { PRUNEGUARD_PG_URL: "postgres://u:secret@db.example:6543/agents" } });
    expect(found).toMatchObject({ kind: "server", source: "env", url: "postgres://u:secret@db.example:6543/agents" });
    expect(found.description).toBe("the server at PRUNEGUARD_PG_URL (db.example:6543/agents)");
  });

  it("a closed port is given up on quickly, and with nothing else allowed the reason names what was tried and the fix", async () => {
    const env = await closedPortEnv({ PRUNEGUARD_PG_AUTO: "running" });
    const t0 = Date.now();
    const found = await findPostgres({ env });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(found).toMatchObject({ kind: "none", url: "" });
    expect(found.reason).toMatch(new RegExp(`no server answering as postgres@127\\.0\\.0\\.1:${env["PGPORT"]} .*ECONNREFUSED`));
    expect(found.reason).toContain("start: not tried (PRUNEGUARD_PG_AUTO=running)");
    expect(found.reason).toContain("install PostgreSQL");
    expect(found.reason).toContain("set PRUNEGUARD_PG_URL");
    const noBinaries = await findPostgres({ env: await closedPortEnv({ PRUNEGUARD_PG_AUTO: "running,start", PRUNEGUARD_PG_BINDIR: "none" }) });
    expect(noBinaries.kind).toBe("none");
    expect(noBinaries.reason).toContain("no PostgreSQL server binaries (looked in PRUNEGUARD_PG_BINDIR=none)");
    await expect(findPostgres({ env: { PRUNEGUARD_PG_AUTO: "runing" } })).rejects.toThrow(/unknown step runing/);
  });

  it.skipIf(NO_BINARIES !== null)(withBinaries("nothing answering: starts a server of its own, which serves queries and is gone after stop()"), async () => {
    const env = await closedPortEnv({ PRUNEGUARD_PG_AUTO: "running,start" });
    const found = await findPostgres({ env });
    let stopped = false;
    try {
      expect(found).toMatchObject({ kind: "server", source: "started" });
      expect(found.description).toMatch(/^a server this run started from .+ \(127\.0\.0\.1:\d+, in .+\)$/);
      expect(found.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/test$/);
      const client = new pg.Client({ connectionString: found.url });
      await client.connect();
      try {
        await client.query("CREATE TABLE t (x int)");
        await client.query("INSERT INTO t VALUES (1), (2)");
        expect((await client.query("SELECT sum(x)::int AS s, current_database() AS db FROM t")).rows).toEqual([{ s: 3, db: "test" }]);
      } finally {
        await client.end();
      }
      const dir = /, in (.+)\)$/.exec(found.description)![1]!;
      const pid = postmasterPid(join(dir, "data"));
      expect(pid).not.toBeNull();
      await found.stop();
      stopped = true;
      expect(exists(dir)).toBe(false);
      expect(await refused(found.url)).toBe(true);
      expect(await until(() => { try { process.kill(pid!, 0); return false; } catch { return true; } }, 5000)).toBe(true);
    } finally {
      if (!stopped) await found.stop();
    }
  });

  it.skipIf(NO_BINARIES !== null)(withBinaries("a run killed before its teardown: the watchdog stops the server and deletes its directory"), async () => {
    // The "run" is a process of its own that is killed (SIGKILL: no teardown of any kind runs).
    const run = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], { stdio: "ignore" });
    const server = await startThrowawayServer(BIN.dir!, run.pid!);
    try {
      const pid = postmasterPid(join(server.dir, "data"));
      expect(pid).not.toBeNull();
      expect(await probe(server.url)).toMatch(/^PostgreSQL /);
      run.kill("SIGKILL");
      expect(await until(() => !exists(server.dir), 20_000)).toBe(true);
      expect(await until(() => postmasterPid(join(server.dir, "data")) === null && !alive(pid!), 5000)).toBe(true);
      expect(await refused(server.url)).toBe(true);
    } finally {
      run.kill("SIGKILL");
      await server.stop();
    }
  });

  it("nothing else allowed: the PGlite socket server, with the reason a real server is not used", async () => {
    const found = await findPostgres({ env: await closedPortEnv({ PRUNEGUARD_PG_BINDIR: "none" }) });
    try {
      expect(found).toMatchObject({ kind: "pglite", source: "pglite" });
      expect(found.reason).toMatch(/no server answering .*; no PostgreSQL server binaries \(looked in PRUNEGUARD_PG_BINDIR=none\)/);
      expect(await probe(found.url)).toMatch(/PGlite/);
    } finally {
      await found.stop();
    }
    expect(await refused(found.url)).toBe(true);
  });
});

/** Wire messages by hand: a typed message, and the startup message (user postgres, database postgres). */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([head, body]);
}
const cstr = (s: string) => Buffer.from(`${s}\0`, "utf8");

/** Connects, then sends Parse/Bind/Execute of `sql` without the Sync that would end it, and disconnects. */
async function sendWithoutSync(port: number, sql: string): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  let received = Buffer.alloc(0);
  const waitFor = (pred: (b: Buffer) => boolean) => new Promise<void>((resolve, reject) => {
    const check = () => (pred(received) ? resolve() : undefined);
    socket.on("data", (d: Buffer) => {
      received = Buffer.concat([received, d]);
      check();
    });
    socket.on("error", reject);
    check();
  });
  await new Promise<void>((r) => socket.once("connect", () => r()));
  const params = Buffer.concat([cstr("user"), cstr("postgres"), cstr("database"), cstr("postgres"), Buffer.from([0])]);
  const startup = Buffer.alloc(8);
  startup.writeInt32BE(8 + params.length, 0);
  startup.writeInt32BE(196608, 4);
  socket.write(Buffer.concat([startup, params]));
  await waitFor((b) => b.includes(Buffer.from([0x5a, 0, 0, 0, 5, 0x49]))); // ReadyForQuery, idle
  socket.write(Buffer.concat([
    message("P", Buffer.concat([cstr(""), cstr(sql), Buffer.from([0, 0])])),
    message("B", Buffer.concat([cstr(""), cstr(""), Buffer.from([0, 0, 0, 0, 0, 0])])),
    message("E", Buffer.concat([cstr(""), Buffer.from([0, 0, 0, 0])])),
  ]));
  await new Promise((r) => setTimeout(r, 100));
  socket.destroy();
  await new Promise((r) => setTimeout(r, 100));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the PGlite socket server", () => {
  let server: PgliteServer | null = null;
  const open: pg.Client[] = [];
  const client = async () => {
    if (server === null) server = await startPgliteServer();
    const c = new pg.Client({ connectionString: server.url });
    c.on("error", () => {});
    await c.connect();
    open.push(c);
    return c;
  };
  afterAll(async () => {
    for (const c of open) await c.end().catch(() => {});
    await server?.stop();
  });

  it("a transaction runs whole: another connection waits until it commits, and then sees it", async () => {
    const a = await client();
    const b = await client();
    await a.query("CREATE TABLE tx (x int)");
    await a.query("BEGIN");
    await a.query("INSERT INTO tx VALUES ($1)", [1]);
    const order: string[] = [];
    const seen = b.query("SELECT count(*)::int AS n FROM tx").then((r) => {
      order.push("b read");
      return r.rows[0].n as number;
    });
    await new Promise((r) => setTimeout(r, 200));
    order.push("a commits");
    await a.query("INSERT INTO tx VALUES ($1)", [2]);
    await a.query("COMMIT");
    expect(await seen).toBe(2);
    expect(order).toEqual(["a commits", "b read"]);
  });

  it("parameterized queries from many connections at once each get their own answer", async () => {
    const pool = new pg.Pool({ connectionString: server!.url, max: 6 });
    try {
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => pool.query("SELECT $1::int * 2 AS v, $2::text AS t", [i, `q${i}`])));
      expect(answers.map((r) => r.rows[0])).toEqual(Array.from({ length: 60 }, (_, i) => ({ v: i * 2, t: `q${i}` })));
    } finally {
      await pool.end();
    }
  });

  it("a client that leaves mid-transaction has it rolled back; what it committed before leaving stays", async () => {
    const a = await client();
    await a.query("CREATE TABLE left_behind (x int)");
    await a.query("BEGIN");
    await a.query("INSERT INTO left_behind VALUES (1)");
    // A COMMIT sent and the connection dropped before its reply: committed, as on a server.
    const committing = a.query("COMMIT").catch(() => undefined);
    (a as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await committing;
    const c = await client();
    await c.query("BEGIN");
    await c.query("INSERT INTO left_behind VALUES (2)");
    (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const d = await client();
    expect((await d.query("SELECT array_agg(x ORDER BY x) AS xs FROM left_behind")).rows[0].xs).toEqual([1]);
    // And the session is free again: a new transaction starts and ends normally.
    await d.query("BEGIN");
    await d.query("INSERT INTO left_behind VALUES (3)");
    await d.query("COMMIT");
    expect((await d.query("SELECT count(*)::int AS n FROM left_behind")).rows[0].n).toBe(2);
  });

  it("an extended-protocol exchange cut off before its Sync commits nothing, as on a server", async () => {
    const a = await client();
    await a.query("CREATE TABLE cut (x int)");
    await sendWithoutSync(server!.port, "INSERT INTO cut VALUES (7)");
    const b = await client();
    expect((await b.query("SELECT count(*)::int AS n FROM cut")).rows[0].n).toBe(0);
    await b.query("INSERT INTO cut VALUES (8)");
    expect((await b.query("SELECT array_agg(x) AS xs FROM cut")).rows[0].xs).toEqual([8]);
  });

  it("an error in a transaction answers like PostgreSQL's, and ROLLBACK frees the session", async () => {
    const a = await client();
    await a.query("BEGIN");
    await expect(a.query("SELECT 1/0")).rejects.toMatchObject({ code: "22012" });
    await expect(a.query("SELECT 1")).rejects.toMatchObject({ code: "25P02" });
    await a.query("ROLLBACK");
    const b = await client();
    expect((await b.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });
});
