import type { PruneOutcome } from "./outcome.js";

/**
 * Thrown by the typed `ContextWindow.prune` when the runtime cannot prove a prune reversible and the
 * request did not (or could not) accept a lossy commitment. The window is unchanged; `outcome` is the
 * same structured outcome the untrusted path returns, and it was audited.
 */
export class IrreversiblePruneError extends Error {
  override readonly name = "IrreversiblePruneError";
  readonly outcome: Extract<PruneOutcome, { status: "rejected" | "invalid" }>;
  constructor(outcome: Extract<PruneOutcome, { status: "rejected" | "invalid" }>) {
    super(outcome.message);
    this.outcome = outcome;
  }
}

/** A backing store failed (I/O, lost connection, timeout). Nothing was committed by the failing call. */
export class StoreError extends Error {
  override readonly name: string = "StoreError";
  readonly store: string;
  constructor(store: string, message: string, options?: { cause?: unknown }) {
    super(`store ${store}: ${message}`, options);
    this.store = store;
  }
}

/**
 * A store sent COMMIT and lost the answer (the connection dropped), and could not read back whether the
 * transaction committed. `resolve` asks again: the commit as it was made, `null` when nothing committed,
 * or a throw when the store still cannot say.
 */
export class OutcomeUnknownError<T = unknown> extends StoreError {
  override readonly name = "OutcomeUnknownError";
  readonly resolve: () => Promise<T | null>;
  constructor(store: string, message: string, resolve: () => Promise<T | null>, options?: { cause?: unknown }) {
    super(store, message, options);
    this.resolve = resolve;
  }
}

/**
 * An optional peer dependency a feature needs is not installed (`pg` for the PostgreSQL store): the message
 * says what needs it and how to install it, instead of Node's `Cannot find package 'pg' imported from …`.
 */
export class MissingPeerError extends Error {
  override readonly name = "MissingPeerError";
  readonly packageName: string;
  constructor(packageName: string, feature: string, options?: { cause?: unknown }) {
    super(`${feature} needs the package \`${packageName}\`, an optional peer dependency that is not installed: run \`npm install ${packageName}\``, options);
    this.packageName = packageName;
  }
}

/** Whether `err` is Node's failure to find `packageName` (and not a module of its own that is missing). */
export function isMissingPackage(err: unknown, packageName: string): boolean {
  return (
    err instanceof Error &&
    (err as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND" &&
    err.message.startsWith(`Cannot find package '${packageName}' `)
  );
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
