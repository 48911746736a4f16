/**
 * Lowering: IR → the runtime's policy object (`RuntimePolicy`, what `ContextWindow` takes) and the store
 * declarations a program needs to construct its stores. Locations and presets are dropped; nothing else.
 */
import type { CompactionPolicy } from "../../src/policy/kinds.js";
import type { KindPolicy, PinPattern, RuntimePolicy } from "../../src/types.js";
import type { PinIR, PolicyIR, SessionIR, StoreIR } from "./schema.js";

/** What a program needs to construct one store: the runtime store options minus the clock, plus the engine. */
export interface StoreDecl {
  readonly name: string;
  readonly engine: StoreIR["engine"];
  /** Milliseconds; `null` keeps copies forever. */
  readonly retentionMs: number | null;
  readonly holds: boolean;
  readonly distinguishesAbsent: boolean;
  readonly writable: boolean;
}

export interface LoweredPolicy {
  readonly policy: RuntimePolicy;
  readonly stores: readonly StoreDecl[];
}

/** Lowers a resolved policy. Pure; the result is frozen. */
export function lowerToRuntime(ir: PolicyIR): LoweredPolicy {
  const kinds: Record<string, KindPolicy> = {};
  for (const k of ir.kinds) {
    kinds[k.name] = Object.freeze({
      store: k.store,
      modes: Object.freeze([...k.modes]),
      lossy: k.lossy,
      repersist: k.repersist,
      pins: lowerPins(k.pins),
      ...(k.compressTargetTokens === null ? {} : { compressTargetTokens: k.compressTargetTokens }),
    });
  }
  const policy: RuntimePolicy = Object.freeze({
    kinds: Object.freeze(kinds),
    session: Object.freeze({
      maxLengthMs: ir.session.maxLengthMs,
      lossyBudget: ir.session.lossyBudget,
      ...(ir.session.searchTokens === null ? {} : { searchTokens: ir.session.searchTokens }),
      ...(ir.session.compaction === null ? {} : { compaction: lowerCompaction(ir.session.compaction) }),
      ...(ir.session.providerCompaction === null ? {} : { providerCompaction: ir.session.providerCompaction }),
    }),
    pins: lowerPins(ir.pins),
    ...(ir.tombstone === null ? {} : { tombstone: ir.tombstone.text }),
  });
  const stores = ir.stores.map(
    (s): StoreDecl =>
      Object.freeze({
        name: s.name,
        engine: s.engine,
        retentionMs: s.retentionMs,
        holds: s.holds,
        distinguishesAbsent: s.distinguishesAbsent,
        writable: s.writable,
      }),
  );
  return Object.freeze({ policy, stores: Object.freeze(stores) });
}

function lowerCompaction(c: Exclude<SessionIR["compaction"], null>): CompactionPolicy | "immediate" {
  return c === "immediate" ? c : Object.freeze({ minFreedTokens: c.minFreedTokens, atTokens: c.atTokens });
}

function lowerPins(pins: readonly PinIR[]): readonly PinPattern[] {
  return Object.freeze(pins.map((p) => Object.freeze({ name: p.name, pattern: p.pattern })));
}
