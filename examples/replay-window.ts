/**
 * The windows the incident replay drives, from the generated guards of the example policies:
 * `generated/org.guard.ts` (tool results re-persist) and `generated/team-payments.guard.ts` (the payments
 * team turned re-persist off). The replay supplies the tool log; the policies' other stores are opened
 * in memory from the declarations the guards export.
 */
import { MemoryStore, type BackingStore, type Clock } from "../src/index.js";
import * as org from "../generated/org.guard.js";
import * as payments from "../generated/team-payments.guard.js";

/** A policy's other stores, in memory, each with its own handle prefix so handles cannot collide. */
function otherStores(declarations: typeof org.storeDeclarations, clock: Clock) {
  const open = (name: "transcript" | "notes" | "archive", handlePrefix: string) => {
    const d = declarations[name];
    return new MemoryStore({ name, clock, handlePrefix, retentionMs: d.retentionMs, holds: d.holds, distinguishesAbsent: d.distinguishesAbsent, writable: d.writable });
  };
  return { transcript: open("transcript", "t"), notes: open("notes", "n"), archive: open("archive", "a") };
}

/**
 * A window of the organisation policy (`repersist: true`: `toolResult` copies that expired are written
 * back from the window) or of the payments policy (`repersist: false`).
 */
export function createWindow(o: { session: string; toolLog: BackingStore; clock: Clock; repersist: boolean }): org.PolicyWindow | payments.PolicyWindow {
  const guard = o.repersist ? org : payments;
  return guard.createWindow({ session: o.session, clock: o.clock, stores: { toolLog: o.toolLog, ...otherStores(guard.storeDeclarations, o.clock) } });
}
