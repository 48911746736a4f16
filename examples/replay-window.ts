/**
 * The window the incident replay drives. The policy is written inline here; once the example policies
 * are compiled, this is replaced by the generated guard's `createWindow`.
 */
import { presetPins } from "../dsl/pins.js";
import { ContextWindow, type BackingStore, type Clock } from "../src/index.js";

export function createWindow(o: { session: string; stores: { toolLog: BackingStore }; clock: Clock; repersist: boolean }) {
  return new ContextWindow({
    session: o.session,
    stores: o.stores,
    clock: o.clock,
    pins: [presetPins.requestId, presetPins.errorCode],
    kinds: {
      toolResult: { store: "toolLog", modes: ["drop", "summarize", "compress"], lossy: "with-flag", repersist: o.repersist },
      scratch: { store: null, modes: ["drop"], lossy: "with-flag" },
    },
  });
}
