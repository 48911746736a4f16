/**
 * vitest globalSetup: finds the PostgreSQL the store suites use (see `postgres.ts` for the order), says
 * which in one line at the start of the run, hands it to the test workers (`provide` here, `inject` in
 * `test/stores/pg-helpers.ts`), and stops what it started when the run ends.
 *
 * A real server (given, found or started) is also exported as PRUNEGUARD_PG_URL, as CI does, so the test
 * workers and the processes they spawn see it like any user's environment. The PGlite socket server is
 * not: only the suites that declared it good enough (`needs: "any"`) are pointed at it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { TestProject } from "vitest/node";
import { findPostgres, type PostgresForTests } from "./postgres.js";

/** The suites that declare `needs: "server"`, by file: what a run on PGlite leaves out. */
function serverOnlySuites(root: string): string[] {
  const out: string[] = [];
  const declared = /(?:describe|it)WithServer\(\s*(["'`])((?:(?!\1).)*)\1\s*,\s*\{\s*needs:\s*"server"/gs;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules" && e.name !== "fixtures") walk(p);
      } else if (e.name.endsWith(".test.ts")) {
        const text = readFileSync(p, "utf8");
        for (const m of text.matchAll(declared)) out.push(`${relative(root, p)}: "${m[2]}"`);
      }
    }
  };
  try {
    walk(join(root, "test"));
  } catch {
    // no test directory: nothing to list
  }
  return out;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const found = await findPostgres();
  const provided: PostgresForTests = { kind: found.kind, url: found.url, description: found.description, reason: found.reason };
  project.provide("pruneguardPostgres", provided);
  if (found.kind === "server") process.env["PRUNEGUARD_PG_URL"] = found.url;

  let line = `PostgreSQL store suites: ${found.description}`;
  if (found.kind === "pglite") {
    const skipped = serverOnlySuites(project.config.root);
    line += ` (${skipped.length} suite${skipped.length === 1 ? "" : "s"} need a real server and are skipped: ${skipped.join(", ")}; no real server because ${found.reason || "none was looked for"})`;
  } else if (found.kind === "none") {
    line += ` — every PostgreSQL suite is skipped: ${found.reason}`;
  }
  console.log(line);

  return async () => {
    await found.stop();
  };
}
