import { defineConfig } from "vitest/config";

// Which Node runs the suite: the repository's Node 24 (the `node` devDependency), or Node 22 in CI's second run.
console.log(`pruneguard: tests run on Node ${process.version}`);

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "dist/**", "test/**/fixtures/**"],
    // Finds the PostgreSQL the store suites use when PRUNEGUARD_PG_URL is not set: a server answering on
    // 127.0.0.1:5432, else a throwaway server started from installed binaries, else PGlite behind a socket
    // server (for the suites where it is faithful); it prints which at the start of the run.
    globalSetup: ["test/setup/global-postgres.ts"],
    // The suites share a 2-core machine with a PostgreSQL server; keep parallelism modest. Timeouts only
    // catch a hang: a correct test on a loaded machine can be ten times slower than on an idle one.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
