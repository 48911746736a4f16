/**
 * A SQLite store on a real temporary file, and a way to edit that file behind the runtime's back (as a
 * person with write access to it could), for suites that check what the window does when a copy is
 * deleted or altered.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import type { Clock } from "../../src/types.js";

const HOUR = 3_600_000;

export function sqliteFile(clock: Clock, prefix: string) {
  const path = join(mkdtempSync(join(tmpdir(), `pruneguard-${prefix}-`)), "agent.db");
  const log = new SqliteStore({ name: "log", path, retentionMs: 2 * HOUR, clock });
  /** Runs one statement on the file through a connection of its own. */
  const sql = (statement: string, ...args: string[]): void => {
    const db = new DatabaseSync(path);
    db.prepare(statement).run(...args);
    db.close();
  };
  return { path, log, sql };
}
