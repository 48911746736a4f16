// Watchdog of a throwaway PostgreSQL server the test run started (test/setup/postgres.ts): a detached
// process that polls the run; once the run is gone without having stopped the server (killed, crashed),
// it shuts the server down (SIGQUIT: immediate shutdown) and deletes its directory. It exits on its own
// when the directory disappears (the run's normal teardown) and on SIGTERM (sent by that teardown).
//
// Usage: node postgres-watchdog.mjs '{"ownerPid":123,"dir":"/tmp/pruneguard-pg-x","data":"/tmp/pruneguard-pg-x/data"}'
import { existsSync, readFileSync, rmSync } from "node:fs";

const { ownerPid, dir, data } = JSON.parse(process.argv[2] ?? "{}");
if (!Number.isInteger(ownerPid) || typeof dir !== "string" || typeof data !== "string") process.exit(2);

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
};

function postmaster() {
  try {
    const pid = Number(readFileSync(`${data}/postmaster.pid`, "utf8").split("\n")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres")) return null;
    } catch {
      // no /proc (macOS): the pid file is the server's own, written when it started
    }
    return pid;
  } catch {
    return null;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (;;) {
  if (!existsSync(dir)) process.exit(0);
  if (!alive(ownerPid)) break;
  await sleep(500);
}

const pid = postmaster();
if (pid !== null) {
  try {
    process.kill(pid, "SIGQUIT");
  } catch {
    // gone already
  }
  for (let i = 0; i < 40 && alive(pid); i++) await sleep(250);
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
    await sleep(250);
  }
}
rmSync(dir, { recursive: true, force: true });
