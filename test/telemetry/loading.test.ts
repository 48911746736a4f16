/**
 * What importing the runtime loads, on the built output users import (`npm test` builds first): nothing of
 * OpenTelemetry at import, nothing for a window with `telemetry: false`, and `@opentelemetry/api` alone
 * (never an SDK) at the first window that leaves telemetry to the global providers, when it is installed.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";

const built = "dist/src/index.js";

describe("loading @opentelemetry/api", () => {
  beforeAll(() => {
    expect(existsSync(built), `${built} is missing: run npm run build first`).toBe(true);
  });

  it("is loaded only by a window that does not turn telemetry off, and nothing else of OpenTelemetry is", () => {
    const script = `
      const { createRequire } = await import("node:module");
      const require = createRequire(import.meta.url);
      const otel = () => Object.keys(require.cache).filter((k) => k.includes("/node_modules/@opentelemetry/")).map((k) => k.replace(/^.*\\/node_modules\\/(@opentelemetry\\/[^/]+)\\/.*$/, "$1"));
      const m = await import("./${built}");
      const seen = [[...new Set(otel())]];
      const mem = new m.MemoryStore({ name: "mem" });
      const kinds = { k: { store: "mem", modes: ["drop"], lossy: "with-flag" } };
      const off = new m.ContextWindow({ session: "off", stores: { mem }, kinds, telemetry: false });
      await off.tryPrune({ span: await off.append({ kind: "k", text: "x" }), mode: "drop" });
      seen.push([...new Set(otel())]);
      const auto = new m.ContextWindow({ session: "auto", stores: { mem }, kinds });
      await auto.tryPrune({ span: await auto.append({ kind: "k", text: "x" }), mode: "drop" });
      seen.push([...new Set(otel())]);
      console.log(JSON.stringify(seen));
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toEqual([[], [], ["@opentelemetry/api"]]);
  });
});
