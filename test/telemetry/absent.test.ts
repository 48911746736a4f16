/**
 * Without `@opentelemetry/api` (an optional peer dependency), nothing is loaded and nothing is recorded:
 * `node:module`'s `require` is replaced so that every `@opentelemetry/*` module is missing, as in a project
 * that never installed it. The runtime asks for the API once (at the first window built without
 * `telemetry: false`), never again, and never at all when every window says `telemetry: false`; sessions
 * behave exactly as they do with it. An SDK registered in this process (through the test's own copy of the
 * API) receives nothing from the runtime.
 */
import { trace } from "@opentelemetry/api";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ContextWindow, MemoryStore } from "../../src/index.js";
import { loadOtelApi } from "../../src/telemetry/index.js";
import { recording } from "./helpers.js";

const asked = vi.hoisted(() => [] as string[]);

vi.mock("node:module", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:module")>();
  return {
    ...real,
    createRequire: (from: string | URL) => {
      const require = real.createRequire(from);
      const missing = (id: string) => {
        asked.push(id);
        if (id.startsWith("@opentelemetry/")) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
        return require(id);
      };
      return Object.assign(missing, require);
    },
  };
});

const r = recording();
trace.setGlobalTracerProvider(r.provider);
afterAll(() => r.shutdown());

async function session(id: string, telemetry?: false) {
  const mem = new MemoryStore({ name: "mem" });
  const win = new ContextWindow({
    session: id, stores: { mem }, kinds: { tool: { store: "mem", modes: ["drop"], lossy: "with-flag" }, note: { store: null, modes: ["drop"], lossy: "with-flag" } },
    ...(telemetry === false ? { telemetry } : {}),
  });
  const a = await win.append({ kind: "tool", text: "GET /deploy -> 500 req_8f3a2c91" });
  const b = await win.append({ kind: "note", text: "scratch" });
  const outcomes = [
    (await win.applyDirective({ op: "prune", span_id: a, mode: "drop" })).status,
    (await win.applyDirective({ op: "prune", span_id: b, mode: "drop", accept_lossy: true })).status,
    (await win.recall(a)).status,
    (await win.search("req_8f3a2c91")).status,
    (await win.compact()).status,
  ];
  win.render();
  return outcomes;
}

const EXPECTED = ["reversible", "lossy", "found", "match", "compacted"];

describe("telemetry without @opentelemetry/api", () => {
  it("telemetry: false never looks for the API", async () => {
    expect(await session("off", false)).toEqual(EXPECTED);
    expect(asked).toEqual([]);
  });

  it("otherwise the API is looked for once, found missing, and the session runs as before, recording nothing", async () => {
    expect(await session("s1")).toEqual(EXPECTED);
    expect(await session("s2")).toEqual(EXPECTED);
    expect(asked).toEqual(["@opentelemetry/api"]);
    expect(loadOtelApi()).toBeNull();
    expect(r.spans()).toEqual([]);
  });

  it("a tracer given explicitly still records, without the API (no context propagation then)", async () => {
    const mem = new MemoryStore({ name: "mem" });
    const win = new ContextWindow({ session: "explicit", stores: { mem }, kinds: { tool: { store: "mem", modes: ["drop"], lossy: "with-flag" } }, telemetry: { tracer: r.telemetry.tracer } });
    const a = await win.append({ kind: "tool", text: "x" });
    await win.tryPrune({ span: a, mode: "drop" });
    expect(r.named("pruneguard.prune").map((s) => s.attributes["gen_ai.conversation.id"])).toEqual(["explicit"]);
  });
});
