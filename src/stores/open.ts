/**
 * Stores opened from a policy's declarations, and the check that stores passed in by hand match them.
 *
 * A declaration says what a store promises: its engine, retention, holds, provenance and writability.
 * `explain` and the generated types reason from those promises; a store that makes other ones (a second of
 * retention where the policy says "forever", no holds where it says holds) would make both wrong at run
 * time. `openStores` opens exactly what was declared; `checkStoreDeclarations` refuses anything else, with
 * an error naming the store and the difference.
 */
import { formatDuration } from "../policy/durations.js";
import { ENGINES, isEngine, type Engine, type StoreDeclaration } from "../policy/stores.js";
import { closest } from "../policy/suggest.js";
import type { Clock } from "../types.js";
import { ENGINE_ADAPTERS, openOnEngine, type EnginePlaces, type OpenedStoreOptions } from "./engine-adapters.js";
import type { BackingStore } from "./store.js";

/**
 * Where the declared stores live: a field per engine whose stores need a place, named for the engine
 * (`sqlite: { path }`, `postgres: { pool | url, schema }`; `EnginePlaces`, read from each engine's entry in
 * `ENGINE_ADAPTERS`). Only the engines a policy declares need a place.
 */
export interface OpenStoresOptions extends EnginePlaces {
  /**
   * Open every store in process memory instead, with the declared retention and promises: for tests. Such
   * a store keeps nothing across a restart, whatever engine the policy declares.
   */
  readonly memory?: boolean;
  readonly clock?: Clock;
}

/**
 * Opens the stores a policy declares (a generated guard's `storeDeclarations`), each with its declared
 * retention, holds, provenance and writability, under the policy's store names. The first store mints
 * plain handles (`#3`); each other gets a short prefix derived from its name (`t#3`), the same in every
 * process, so one window's handles never collide. Throws naming the store when its place is missing or
 * it cannot be opened; stores already opened are closed again.
 */
export async function openStores<N extends string>(
  declarations: { readonly [P in N]: StoreDeclaration },
  options: OpenStoresOptions,
): Promise<{ [P in N]: BackingStore }> {
  const names = Object.keys(declarations) as N[];
  const prefixes = handlePrefixes(names);
  const opened: Partial<Record<N, BackingStore>> = {};
  try {
    for (const name of names) {
      const d = declarations[name];
      const common = {
        name, retentionMs: d.retentionMs, holds: d.holds, distinguishesAbsent: d.distinguishesAbsent, writable: d.writable,
        handlePrefix: prefixes.get(name)!, ...(options.clock ? { clock: options.clock } : {}),
      };
      opened[name] = await openOne(d.engine, common, options);
    }
  } catch (err) {
    for (const s of Object.values(opened) as BackingStore[]) await s.close().catch(() => undefined);
    throw err;
  }
  return opened as { [P in N]: BackingStore };
}

/**
 * The engines `openStores` can open: every engine with an entry in `ENGINE_ADAPTERS`, which is typed over
 * `Engine` (a test checks the two agree).
 */
export const OPENABLE_ENGINES: readonly Engine[] = Object.freeze(Object.keys(ENGINE_ADAPTERS) as Engine[]);

async function openOne(engine: Engine, common: OpenedStoreOptions, options: OpenStoresOptions): Promise<BackingStore> {
  if (options.memory === true) return ENGINE_ADAPTERS.memory.open(common);
  // Declarations written by hand in JavaScript reach here unchecked: an engine the table does not have is
  // named, not opened as some other engine.
  if (!isEngine(engine)) {
    const near = typeof engine === "string" ? closest(engine, ENGINES) : undefined;
    const hint = near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`;
    throw new TypeError(`openStores: store ${common.name} is declared on engine ${JSON.stringify(engine)}, which is not one of ${ENGINES.join(", ")}${hint}`);
  }
  return openOnEngine(engine, common, options);
}

/** `""` for the first store, then the shortest unused prefix of each name's letters (up to four), deterministic. */
export function handlePrefixes(names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  names.forEach((name, i) => {
    let prefix = i === 0 ? "" : null;
    const letters = name.toLowerCase().replace(/[^a-z]/g, "") || "s";
    for (let n = 1; prefix === null && n <= Math.min(4, letters.length); n++) if (!used.has(letters.slice(0, n))) prefix = letters.slice(0, n);
    for (let k = 0; prefix === null; k++) {
      const candidate = `${letters.slice(0, 3)}${"abcdefghijklmnopqrstuvwxyz"[k % 26]}`.slice(0, 4);
      if (!used.has(candidate)) prefix = candidate;
      if (k > 26 * 26) throw new RangeError(`openStores: no handle prefix left for store ${name}`);
    }
    used.add(prefix);
    out.set(name, prefix);
  });
  return out;
}

/** One way a store differs from its declaration. */
export interface StoreMismatch {
  readonly store: string;
  readonly property: "missing" | "retentionMs" | "holds" | "distinguishesAbsent" | "writable";
  readonly declared: string;
  readonly actual: string;
}

/**
 * How each store differs from its declaration (empty when they all match). The promises are compared,
 * not the engine: a store on another engine that makes the same promises (the PostgreSQL store where the
 * policy names SQLite, a `MemoryStore` in tests) decides every prune the same way.
 */
export function storeMismatches(
  declarations: { readonly [name: string]: StoreDeclaration },
  stores: ReadonlyMap<string, BackingStore>,
): StoreMismatch[] {
  const out: StoreMismatch[] = [];
  for (const [name, d] of Object.entries(declarations)) {
    const s = stores.get(name);
    if (s === undefined) {
      out.push({ store: name, property: "missing", declared: `a ${d.engine} store`, actual: "none" });
      continue;
    }
    if (s.retentionMs !== d.retentionMs) {
      out.push({ store: name, property: "retentionMs", declared: formatDuration(d.retentionMs), actual: formatDuration(s.retentionMs) });
    }
    for (const p of ["holds", "distinguishesAbsent", "writable"] as const) {
      if (s.capabilities[p] !== d[p]) out.push({ store: name, property: p, declared: String(d[p]), actual: String(s.capabilities[p]) });
    }
  }
  return out;
}

/** Throws a `TypeError` naming every store that does not match its declaration. */
export function checkStoreDeclarations(declarations: { readonly [name: string]: StoreDeclaration }, stores: ReadonlyMap<string, BackingStore>): void {
  const found = storeMismatches(declarations, stores);
  if (found.length === 0) return;
  const lines = found.map((m) =>
    m.property === "missing"
      ? `store ${m.store}: the policy declares ${m.declared}, none was given`
      : `store ${m.store}: the policy declares ${m.property} ${m.declared}, the store has ${m.actual}`,
  );
  throw new TypeError(`ContextWindow: stores do not match the policy's declarations (open them with openStores):\n  ${lines.join("\n  ")}`);
}
