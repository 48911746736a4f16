/**
 * Telemetry that fails on request, the way `FaultyStore` (test/reliability/helpers.ts) fails a store: a
 * tracer, its spans, a meter, its instruments and a context manager (with the contexts it hands out), each
 * wrapping the real SDK's, numbering every call the runtime — or the SDK on its behalf — makes through
 * them. A plan makes call N (once, or every call from N on) misbehave in one of the ways a broken SDK or
 * context manager can: throw before or after doing its work, do its work twice, hide its result, return a
 * rejected promise, or — a context manager's `with()` — never run the callback.
 */
import { context, type Context, type ContextManager } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { TelemetryMeter, TelemetrySpan, TelemetryTracer } from "../../src/telemetry/index.js";

/**
 * How call N misbehaves:
 * - `throw-before`: throws without doing its work (`with()`: the callback never runs);
 * - `throw-after`: does its work, then throws (`with()`: runs the callback, then throws);
 * - `twice`: does its work twice and returns the second result (`with()`: runs the callback twice);
 * - `skip`: returns `undefined` without doing its work (`with()`: never calls the callback, and returns);
 * - `hide`: does its work and returns `undefined` instead of its result;
 * - `reject`: does its work and returns a rejected promise instead of its result (`with()` around a promise:
 *   one nobody else handles, so a runtime that ignores it shows up as an unhandled rejection).
 */
export const FAULTS = ["throw-before", "throw-after", "twice", "skip", "hide", "reject"] as const;
export type Fault = (typeof FAULTS)[number];

export interface TelemetryFaultPlan {
  /** 1-based index of the call that misbehaves; `Infinity`: none. */
  readonly at: number;
  readonly fault: Fault;
  /** Every call from `at` on misbehaves, not only call `at`. */
  readonly persistent: boolean;
  /** Count only the calls of this name (`context.with`): `at: 1` is its first call. */
  readonly only?: string;
}

const NONE: TelemetryFaultPlan = { at: Number.POSITIVE_INFINITY, fault: "throw-before", persistent: false };

export class InjectedTelemetryFault extends Error {
  override readonly name = "InjectedTelemetryFault";
}

/** The numbered calls, and the plan that decides which of them misbehave. */
export class FaultyTelemetry {
  /** Every call's name, in order: `calls.length` is how many a session made. */
  readonly calls: string[] = [];
  plan: TelemetryFaultPlan = NONE;
  /** Calls that misbehaved. */
  tripped = 0;

  #trip(name: string): Fault | null {
    this.calls.push(name);
    const { at, fault, persistent, only } = this.plan;
    if (only !== undefined && name !== only) return null;
    const n = only === undefined ? this.calls.length : this.calls.filter((c) => c === only).length;
    if (n !== at && !(persistent && n >= at)) return null;
    this.tripped++;
    return fault;
  }

  #error(name: string, fault: Fault): InjectedTelemetryFault {
    return new InjectedTelemetryFault(`injected ${fault} at telemetry call ${this.calls.length} (${name})`);
  }

  /** One call of an SDK method. */
  call<T>(name: string, work: () => T): T {
    const fault = this.#trip(name);
    if (fault === null) return work();
    switch (fault) {
      case "throw-before":
        throw this.#error(name, fault);
      case "skip":
        return undefined as T;
      case "twice":
        work();
        return work();
      case "hide":
        work();
        return undefined as T;
      case "reject": {
        work();
        const rejected = Promise.reject(this.#error(name, fault));
        // The runtime ignores what these calls return (as OpenTelemetry's own API does); only `with()`'s
        // rejection is left for the runtime to deal with.
        rejected.catch(() => undefined);
        return rejected as T;
      }
      case "throw-after":
        work();
        throw this.#error(name, fault);
    }
  }

  /** `ContextManager.with()`: the callback is what the plan's fault runs (or does not). */
  with<R>(inner: ContextManager, ctx: Context, fn: () => R): R {
    const fault = this.#trip("context.with");
    if (fault === null) return inner.with(ctx, fn);
    switch (fault) {
      case "throw-before":
        throw this.#error("context.with", fault);
      case "skip":
        return undefined as R;
      case "twice":
        inner.with(ctx, fn);
        return inner.with(ctx, fn);
      case "hide":
        inner.with(ctx, fn);
        return undefined as R;
      case "reject": {
        const result = inner.with(ctx, fn);
        const rejected = Promise.reject(this.#error("context.with", fault));
        // Left unhandled only where the caller awaits what `with()` returns (the runtime's decisions); the
        // SDK's own `with()` around a synchronous export ignores its result, and its rejection would be ours.
        if (!(result instanceof Promise)) rejected.catch(() => undefined);
        return rejected as R;
      }
      case "throw-after":
        inner.with(ctx, fn);
        throw this.#error("context.with", fault);
    }
  }

  /** A tracer whose `startSpan` and whose spans' methods are numbered calls. */
  tracer(inner: TelemetryTracer): TelemetryTracer {
    return {
      startSpan: (name, options, ctx) => {
        const span = this.call("tracer.startSpan", () => inner.startSpan(name, options, ctx));
        return span === null || typeof span !== "object" ? span : this.#span(span);
      },
    };
  }

  #span(inner: TelemetrySpan): TelemetrySpan {
    return this.#methods(inner, "span") as TelemetrySpan;
  }

  /** A meter whose instrument factories and instruments' `add`/`record` are numbered calls. */
  meter(inner: TelemetryMeter): TelemetryMeter {
    const instrument = <I extends object>(made: I): I => (made === null || typeof made !== "object" ? made : this.#methods(made, "instrument"));
    return {
      createCounter: (name, options) => instrument(this.call("meter.createCounter", () => inner.createCounter(name, options))),
      createHistogram: (name, options) => instrument(this.call("meter.createHistogram", () => inner.createHistogram(name, options))),
    };
  }

  /**
   * A context manager over `AsyncLocalStorageContextManager`: `active()` and `with()` are numbered calls,
   * and so are the methods of the context `active()` hands out (`trace.setSpan` calls its `setValue`).
   */
  contextManager(): ContextManager {
    const inner = new AsyncLocalStorageContextManager();
    const manager: ContextManager = {
      active: () => this.call("context.active", () => this.#methods(inner.active(), "context")),
      with: (ctx, fn, thisArg, ...args) => this.with(inner, ctx, () => fn.call(thisArg, ...args)),
      bind: (ctx, target) => inner.bind(ctx, target),
      enable: () => {
        inner.enable();
        return manager;
      },
      disable: () => {
        inner.disable();
        return manager;
      },
    };
    return manager;
  }

  /** The object with each of its methods a numbered call (`span.setAttributes`, `instrument.add`, …). */
  #methods<O extends object>(target: O, label: string): O {
    return new Proxy(target, {
      get: (t, prop, receiver) => {
        const value: unknown = Reflect.get(t, prop, receiver);
        if (typeof value !== "function" || typeof prop !== "string") return value;
        return (...args: unknown[]) => this.call(`${label}.${prop}`, () => (value as (...a: unknown[]) => unknown).apply(t, args));
      },
    });
  }
}

/** Installs `f`'s context manager as the global one until the returned function is called. */
export function installContextManager(f: FaultyTelemetry): () => void {
  const manager = f.contextManager().enable();
  context.disable();
  context.setGlobalContextManager(manager);
  return () => {
    manager.disable();
    context.disable();
  };
}
