/**
 * Finds a PostgreSQL for the test run, so that `npm test` exercises the PostgreSQL store on any machine:
 *
 *   1. `PRUNEGUARD_PG_URL`, when set (CI sets it to its own server): used as is.
 *   2. `running` — a server already answering on 127.0.0.1:5432 (or `PGHOST`/`PGPORT`) as user `postgres`
 *      (or `PGUSER`) without a password (or with `PGPASSWORD`); its database `test` is created when missing.
 *   3. `start` — a throwaway server started from installed binaries (`PRUNEGUARD_PG_BINDIR`, else
 *      `pg_config --bindir`, `initdb` on the PATH, /usr/lib/postgresql/N/bin and other usual places):
 *      initdb into a temporary directory, started on a free port of 127.0.0.1 with its socket in that
 *      directory, stopped and deleted by `stop()`. As root, initdb and the server run as the `postgres` user.
 *   4. `pglite` — PGlite behind the wire-protocol server in `pglite-server.ts`: faithful for suites that
 *      need PostgreSQL's SQL, not for suites that need concurrent sessions (`needs: "server"`).
 *   5. Nothing: the suites skip out loud with the reason (what was tried, and how to fix it).
 *
 * `PRUNEGUARD_PG_AUTO` (comma-separated, default `running,start,pglite`) chooses which of 2–4 are tried;
 * `PRUNEGUARD_PG_BINDIR=none` makes 3 find no binaries. Both are for trying the other paths on a machine
 * that has everything.
 *
 * A run that is killed never gets to `stop()`: a detached watchdog process (`postgres-watchdog.mjs`)
 * polls the process that started the server and, once that is gone, shuts the server down (SIGQUIT to
 * the postmaster) and deletes the directory. Each start also sweeps directories left by runs whose owner
 * and watchdog are both gone (a machine that lost power keeps nothing running anyway).
 */
import { spawn, spawnSync, type SpawnOptions } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startPgliteServer } from "./pglite-server.js";

/** What the store suites run against; passed to the test workers through vitest's `provide`/`inject`. */
export interface PostgresForTests {
  /** `server`: a real PostgreSQL server; `pglite`: the PGlite socket server; `none`: nothing found. */
  readonly kind: "server" | "pglite" | "none";
  /** Empty when `kind` is `none`. */
  readonly url: string;
  /** For the run's first line: which PostgreSQL this is. */
  readonly description: string;
  /** Why no real server is used (`pglite`), or why nothing is (`none`); empty for `server`. */
  readonly reason: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** Set by test/setup/global-postgres.ts; read by test/stores/pg-helpers.ts. */
    pruneguardPostgres: PostgresForTests;
  }
}

export interface FoundPostgres extends PostgresForTests {
  readonly source: "env" | "running" | "started" | "pglite" | "none";
  /** Stops what this run started (nothing for `env`, `running` and `none`) and deletes its directory. */
  stop(): Promise<void>;
}

export type Step = "running" | "start" | "pglite";
const ALL_STEPS: readonly Step[] = ["running", "start", "pglite"];

export interface FindOptions {
  /** Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Connect timeout of the probe; default 2000 ms. */
  readonly probeTimeoutMs?: number;
  /** The process whose death makes the watchdog stop a started server; default this process. */
  readonly ownerPid?: number;
}

const FIX = "install PostgreSQL (its server binaries: initdb, pg_ctl, postgres), or set PRUNEGUARD_PG_URL to a server's URL";

function steps(env: NodeJS.ProcessEnv): Step[] {
  const raw = env["PRUNEGUARD_PG_AUTO"];
  if (raw === undefined || raw.trim() === "") return [...ALL_STEPS];
  const list = raw.split(",").map((s) => s.trim()).filter((s) => s !== "" && s !== "none");
  const bad = list.filter((s) => !(ALL_STEPS as readonly string[]).includes(s));
  if (bad.length > 0) throw new Error(`PRUNEGUARD_PG_AUTO: unknown step ${bad.join(", ")} (use ${ALL_STEPS.join(", ")} or none)`);
  return list as Step[];
}

/** host:port/database of a URL, without user or password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "(an unparsable URL)";
  }
}

function errText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const msg = typeof e?.message === "string" && e.message !== "" ? e.message : String(err);
  return typeof e?.code === "string" && !msg.includes(e.code) ? `${msg} [${e.code}]` : msg;
}

/** Connects, runs `SELECT version()`, disconnects: the server's version string, or throws. */
export async function probe(url: string, timeoutMs = 2000): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, application_name: "pruneguard test setup" });
  client.on("error", () => {});
  try {
    await client.connect();
    const r = await client.query<{ version: string }>("SELECT version() AS version");
    return r.rows[0]!.version;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Creates database `name` through the server's `postgres` database (the server must let the user). */
async function createDatabase(url: string, name: string, timeoutMs: number): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: timeoutMs, application_name: "pruneguard test setup" });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`).catch((err: unknown) => {
      if ((err as { code?: unknown }).code !== "42P04") throw err; // another run created it meanwhile
    });
  } finally {
    await client.end().catch(() => {});
  }
}

/** The server the environment points at (PGHOST/PGPORT/PGUSER), and its database `test`. */
export function runningServerUrl(env: NodeJS.ProcessEnv): string {
  const rawHost = env["PGHOST"] ?? "";
  // A socket directory (PGHOST=/var/run/postgresql) is not probed: the suites need a TCP address.
  const host = rawHost === "" || rawHost.startsWith("/") ? "127.0.0.1" : rawHost;
  const port = env["PGPORT"] && /^\d+$/.test(env["PGPORT"]) ? env["PGPORT"] : "5432";
  const u = new URL("postgres://127.0.0.1/test");
  u.hostname = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  u.port = port;
  u.username = encodeURIComponent(env["PGUSER"] ?? "postgres");
  return u.toString();
}

async function tryRunning(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ url: string; version: string } | string> {
  const url = runningServerUrl(env);
  const where = `${new URL(url).username}@${describeUrl(url).replace(/\/test$/, "")}`;
  try {
    return { url, version: await probe(url, timeoutMs) };
  } catch (err) {
    if ((err as { code?: unknown }).code !== "3D000") return `no server answering as ${where} (${errText(err)})`;
  }
  try {
    await createDatabase(url, "test", timeoutMs);
    return { url, version: await probe(url, timeoutMs) };
  } catch (err) {
    return `the server at ${where} has no database "test" and it could not be created (${errText(err)})`;
  }
}

// --- Binaries -----------------------------------------------------------------------------------------

const hasServerBinaries = (dir: string) => ["initdb", "pg_ctl", "postgres"].every((b) => existsSync(join(dir, b)));

function versionOrder(a: string, b: string): number {
  const n = (s: string) => Number(/(\d+)(?:\D*)$/.exec(s)?.[1] ?? 0);
  return n(b) - n(a);
}

function globDirs(parent: string, match: RegExp, sub: string): string[] {
  try {
    return readdirSync(parent).filter((d) => match.test(d)).sort(versionOrder).map((d) => join(parent, d, sub));
  } catch {
    return [];
  }
}

/**
 * The directory holding initdb, pg_ctl and postgres, or null; `tried` says where it looked. The override
 * `PRUNEGUARD_PG_BINDIR` is the only place looked at when set (`none`: nowhere).
 */
export function findBinDir(env: NodeJS.ProcessEnv): { dir: string | null; tried: string } {
  const override = env["PRUNEGUARD_PG_BINDIR"];
  if (override !== undefined && override !== "") {
    if (override === "none") return { dir: null, tried: "PRUNEGUARD_PG_BINDIR=none" };
    return hasServerBinaries(override) ? { dir: override, tried: override } : { dir: null, tried: `PRUNEGUARD_PG_BINDIR=${override} (no initdb, pg_ctl and postgres there)` };
  }
  const candidates: string[] = [];
  const pgConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8", timeout: 5000, env });
  if (pgConfig.status === 0 && pgConfig.stdout.trim() !== "") candidates.push(pgConfig.stdout.trim());
  for (const p of (env["PATH"] ?? "").split(delimiter)) if (p !== "" && existsSync(join(p, "initdb"))) candidates.push(p);
  candidates.push(
    ...globDirs("/usr/lib/postgresql", /^\d+$/, "bin"), // Debian, Ubuntu
    ...globDirs("/usr", /^pgsql-\d+$/, "bin"), // RHEL, Fedora (PGDG)
    "/usr/local/pgsql/bin", // built from source
    ...globDirs("/opt/homebrew/opt", /^postgresql(@\d+)?$/, "bin"), // Homebrew, Apple silicon
    ...globDirs("/usr/local/opt", /^postgresql(@\d+)?$/, "bin"), // Homebrew, Intel
    ...globDirs("/Applications/Postgres.app/Contents/Versions", /^\d+$/, "bin"),
  );
  for (const dir of candidates) if (hasServerBinaries(dir)) return { dir, tried: dir };
  return { dir: null, tried: "pg_config --bindir, the PATH, /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin, /usr/local/pgsql/bin, Homebrew and Postgres.app" };
}

// --- A server of this run's own -----------------------------------------------------------------------

const DIR_PREFIX = "pruneguard-pg-";
const WATCHDOG = fileURLToPath(new URL("./postgres-watchdog.mjs", import.meta.url));

function userIds(name: string): { uid: number; gid: number } | null {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const f = line.split(":");
      if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    // no /etc/passwd
  }
  const id = spawnSync("id", ["-u", name], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
  return id.status === 0 && gid.status === 0 ? { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) } : null;
}

function run(cmd: string, args: string[], options: SpawnOptions, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = a !== null && typeof a === "object" ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function signal(pid: number | null | undefined, sig: NodeJS.Signals): void {
  if (pid === null || pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** The postmaster's pid from its pid file, if that process is alive and is a postgres. */
export function postmasterPid(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres")) return null;
  } catch {
    const ps = spawnSync("ps", ["-p", String(pid), "-o", "comm="], { encoding: "utf8" });
    if (ps.status !== 0 || !/postgres|postmaster/.test(ps.stdout)) return null;
  }
  return pid;
}

/** Deletes the directories of earlier runs whose owner and watchdog are both gone, stopping their servers. */
export function sweepAbandoned(parent = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(parent, name);
    try {
      const owner = JSON.parse(readFileSync(join(dir, "owner.json"), "utf8")) as { pid: number; watchdog?: number };
      if (alive(owner.pid) || (owner.watchdog !== undefined && alive(owner.watchdog))) continue;
      signal(postmasterPid(join(dir, "data")), "SIGQUIT");
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Not ours to judge (no owner file yet, or another run is sweeping it): leave it.
    }
  }
}

export interface StartedServer {
  readonly url: string;
  readonly dir: string;
  readonly port: number;
  readonly binDir: string;
  stop(): Promise<void>;
}

/** initdb, start on a free port, create database `test`; the watchdog stops it if `ownerPid` dies first. */
export async function startThrowawayServer(binDir: string, ownerPid = process.pid): Promise<StartedServer> {
  sweepAbandoned();
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const ids = asRoot ? userIds("postgres") : null;
  if (asRoot && ids === null) throw new Error("running as root and there is no postgres user to run initdb and the server as (initdb refuses root)");
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  const data = join(dir, "data");
  const as: SpawnOptions = ids === null ? {} : { uid: ids.uid, gid: ids.gid };
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: "C", LANG: "C" };
  delete env["PGDATA"];
  let watchdog: number | undefined;
  const writeOwner = () => writeFileSync(join(dir, "owner.json"), JSON.stringify({ pid: ownerPid, watchdog }));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  try {
    writeOwner();
    if (ids !== null) chownSync(dir, ids.uid, ids.gid);
    const init = await run(join(binDir, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"], { ...as, env, cwd: dir }, 120_000);
    if (init.code !== 0) throw new Error(`initdb failed (exit ${init.code}): ${init.output.trim().split("\n").slice(-3).join(" / ")}`);
    // The watchdog first, so that no moment has a server running and nobody to stop it.
    const dog = spawn(process.execPath, [WATCHDOG, JSON.stringify({ ownerPid, dir, data })], { detached: true, stdio: "ignore" });
    dog.unref();
    watchdog = dog.pid;
    writeOwner();
    let lastError = "";
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const opts = [`-p ${port}`, "-c listen_addresses=127.0.0.1", `-k '${dir}'`, "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200"].join(" ");
      const start = await run(join(binDir, "pg_ctl"), ["-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", opts, "start"], { ...as, env, cwd: dir }, 90_000);
      if (start.code === 0) {
        const url = `postgres://postgres@127.0.0.1:${port}/test`;
        await createDatabase(url, "test", 10_000);
        const stop = async () => {
          await run(join(binDir, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"], { ...as, env, cwd: dir }, 45_000).catch(() => undefined);
          signal(postmasterPid(data), "SIGQUIT");
          signal(watchdog, "SIGTERM");
          removeDir();
        };
        return { url, dir, port, binDir, stop };
      }
      let log = "";
      try {
        log = readFileSync(join(dir, "server.log"), "utf8").trim().split("\n").slice(-3).join(" / ");
      } catch {
        // no log
      }
      lastError = `pg_ctl start failed (exit ${start.code}): ${(log || start.output.trim()).slice(0, 500)}`;
      if (!/in use|could not bind|could not create listen socket/i.test(lastError)) break;
    }
    throw new Error(lastError);
  } catch (err) {
    signal(postmasterPid(data), "SIGQUIT");
    signal(watchdog, "SIGTERM");
    removeDir();
    throw err;
  }
}

// --- The search ---------------------------------------------------------------------------------------

export async function findPostgres(options: FindOptions = {}): Promise<FoundPostgres> {
  const env = options.env ?? process.env;
  const timeoutMs = options.probeTimeoutMs ?? 2000;
  const nothing = async () => {};

  const explicit = env["PRUNEGUARD_PG_URL"];
  if (explicit !== undefined && explicit !== "") {
    return { kind: "server", source: "env", url: explicit, description: `the server at PRUNEGUARD_PG_URL (${describeUrl(explicit)})`, reason: "", stop: nothing };
  }

  const tried: string[] = [];
  const wanted = steps(env);
  for (const step of ALL_STEPS) {
    if (!wanted.includes(step)) {
      tried.push(`${step}: not tried (PRUNEGUARD_PG_AUTO=${env["PRUNEGUARD_PG_AUTO"]})`);
      continue;
    }
    if (step === "running") {
      const r = await tryRunning(env, timeoutMs);
      if (typeof r === "string") {
        tried.push(r);
        continue;
      }
      if (/PGlite/.test(r.version)) {
        return { kind: "pglite", source: "running", url: r.url, description: `the PGlite server answering at ${describeUrl(r.url)}`, reason: `the server answering at ${describeUrl(r.url)} is PGlite`, stop: nothing };
      }
      return { kind: "server", source: "running", url: r.url, description: `the server on ${describeUrl(r.url)} (${r.version.split(" ").slice(0, 2).join(" ")})`, reason: "", stop: nothing };
    }
    if (step === "start") {
      const bin = findBinDir(env);
      if (bin.dir === null) {
        tried.push(`no PostgreSQL server binaries (looked in ${bin.tried})`);
        continue;
      }
      try {
        const s = await startThrowawayServer(bin.dir, options.ownerPid);
        return { kind: "server", source: "started", url: s.url, description: `a server this run started from ${bin.dir} (127.0.0.1:${s.port}, in ${s.dir})`, reason: "", stop: s.stop };
      } catch (err) {
        tried.push(`starting a server from ${bin.dir} failed: ${errText(err)}`);
        continue;
      }
    }
    if (step === "pglite") {
      try {
        const s = await startPgliteServer();
        const reason = tried.join("; ");
        return { kind: "pglite", source: "pglite", url: s.url, description: `the PGlite socket server on 127.0.0.1:${s.port}`, reason, stop: () => s.stop() };
      } catch (err) {
        tried.push(`the PGlite socket server did not start: ${errText(err)}`);
      }
    }
  }
  const reason = `no PostgreSQL for the test run: ${tried.join("; ")} — ${FIX}`;
  return { kind: "none", source: "none", url: "", description: "none", reason, stop: nothing };
}

/** Whether a path exists (the tests check that `stop()` leaves nothing behind). */
export function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

export { FIX as HOW_TO_FIX };
