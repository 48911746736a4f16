/**
 * A generated guard's `createWindow` / `resumeWindow` take `telemetry` and hand it to the `ContextWindow`
 * they build: a prune through a window of `generated/org.guard.ts` records its span into the tracer
 * provider the option names (the real SDK, in memory, as `helpers.ts` builds it), and a window built
 * without the option records nothing into it (that provider is never registered globally).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWindow, openStores, resumeWindow } from "../../generated/org.guard.js";
import { ManualClock } from "../../src/index.js";
import { recording, type Recording } from "./helpers.js";

let r: Recording;
beforeEach(() => {
  r = recording();
});
afterEach(async () => {
  await r.shutdown();
});

describe("the telemetry option of a generated guard", () => {
  it("createWindow({ telemetry }) records a prune's span into that provider", async () => {
    const clock = new ManualClock(0);
    const win = createWindow({ session: "s-guard", clock, stores: await openStores({ memory: true, clock }), telemetry: r.telemetry });
    const ref = await win.append({ kind: "toolResult", text: "HTTP 502 req_7f3a9c2e41" });
    expect(await win.prune(ref, { mode: "drop" })).toMatchObject({ status: "reversible" });
    const prunes = r.named("pruneguard.prune");
    expect(prunes).toHaveLength(1);
    expect(prunes[0]!.instrumentationScope.name).toBe("pruneguard");
    expect(prunes[0]!.attributes).toMatchObject({ "pruneguard.status": "reversible", "pruneguard.span.kind": "toolResult", "pruneguard.store": "toolLog" });
  });

  it("resumeWindow({ telemetry }) records its resume and later prunes into that provider", async () => {
    const clock = new ManualClock(0);
    const stores = await openStores({ memory: true, clock });
    const first = createWindow({ session: "s-resume", clock, stores, telemetry: false });
    await first.append({ kind: "toolResult", text: "HTTP 502 req_7f3a9c2e41" });
    expect(r.spans()).toHaveLength(0);
    const win = await resumeWindow({ session: "s-resume", clock, stores, telemetry: r.telemetry });
    expect(r.named("pruneguard.resume")).toHaveLength(1);
    const ref = await win.append({ kind: "toolResult", text: "HTTP 504 req_0b1c2d3e4f" });
    await win.prune(ref, { mode: "drop" });
    expect(r.named("pruneguard.prune")).toHaveLength(1);
  });

  it("without the option, nothing is recorded into that provider", async () => {
    const clock = new ManualClock(0);
    const win = createWindow({ session: "s-plain", clock, stores: await openStores({ memory: true, clock }) });
    const ref = await win.append({ kind: "toolResult", text: "HTTP 502 req_7f3a9c2e41" });
    expect(await win.prune(ref, { mode: "drop" })).toMatchObject({ status: "reversible" });
    expect(r.spans()).toHaveLength(0);
  });
});
