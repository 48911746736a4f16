/**
 * Diagnostics as data: the one shape every phase reports, and the one way to make one. Plain interfaces
 * and a plain check, without zod, like `Location`: the incremental build replays diagnostics from its
 * manifest without loading it.
 */
import { isLocation, type Location } from "../ir/location.js";
import { hasExactKeys, isRecord } from "../ir/shape.js";
import { catalogue, renderTemplate, type DiagnosticCode, type Params } from "./catalogue.js";

export interface RelatedInformation {
  message: string;
  location: Location;
}

export interface Diagnostic {
  /** `PG` and four digits: 1xxx front end, 2xxx IR, 3xxx checks (docs/diagnostics.md). */
  code: string;
  category: "error" | "warning";
  message: string;
  /** `null` only for diagnostics about the whole run (none today); every policy diagnostic has a location. */
  location: Location | null;
  related: RelatedInformation[];
}

/** Whether `v` is a `Diagnostic` (exactly its members; a code of the form `PG[123]nnn`), as read back from disk. */
export function isDiagnostic(v: unknown): v is Diagnostic {
  if (!isRecord(v) || !hasExactKeys(v, ["code", "category", "message", "location", "related"])) return false;
  return (
    typeof v.code === "string" &&
    /^PG[123]\d{3}$/.test(v.code) &&
    (v.category === "error" || v.category === "warning") &&
    typeof v.message === "string" &&
    (v.location === null || isLocation(v.location)) &&
    Array.isArray(v.related) &&
    v.related.every((r) => isRecord(r) && hasExactKeys(r, ["message", "location"]) && typeof r.message === "string" && isLocation(r.location))
  );
}

/**
 * The most of one parameter a message holds. A value from a policy file (a name, a pattern, a wording) can
 * be 64 Ki characters long (PG1023 stops longer ones); where a message quotes one it cuts it much shorter
 * (`excerpt`), and this bound holds for every parameter, so no message grows with its policy.
 */
export const MAX_PARAM_LENGTH = 1000;

/** `text` cut to `max` characters, on a code point, with `…` when it was cut: a value from a policy, quoted in a message. */
export function excerpt(text: string, max = 80): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 2);
  return `${text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 2 : max - 1)}…`;
}

/** Makes a diagnostic from the catalogue. The category comes from the catalogue, never from the caller. */
export function diagnostic<C extends DiagnosticCode>(
  code: C,
  location: Location | null,
  params: Params<C>,
  related: readonly RelatedInformation[] = [],
): Diagnostic {
  const entry = catalogue[code];
  const bounded: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(params as Readonly<Record<string, string | number>>)) bounded[name] = typeof value === "string" ? excerpt(value, MAX_PARAM_LENGTH) : value;
  return {
    code,
    category: entry.category,
    message: renderTemplate(entry.template, bounded),
    location,
    related: [...related],
  };
}

/**
 * Appends `more` to `into` one at a time. `into.push(...more)` passes every item as an argument, on the
 * stack, and a list whose length a policy decides (its diagnostics, say) can be long enough to exhaust it.
 */
export function append<T>(into: T[], more: Iterable<T>): void {
  for (const item of more) into.push(item);
}

export function isError(d: Diagnostic): boolean {
  return d.category === "error";
}

/** Orders diagnostics by file, position, then code, so output is the same however the checks ran. */
export function sortDiagnostics(ds: readonly Diagnostic[]): Diagnostic[] {
  return [...ds].sort((a, b) => {
    const fa = a.location?.file ?? "";
    const fb = b.location?.file ?? "";
    if (fa !== fb) return fa < fb ? -1 : 1;
    const la = a.location?.line ?? 0;
    const lb = b.location?.line ?? 0;
    if (la !== lb) return la - lb;
    const ca = a.location?.column ?? 0;
    const cb = b.location?.column ?? 0;
    if (ca !== cb) return ca - cb;
    return a.code < b.code ? -1 : a.code > b.code ? 1 : a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
  });
}

/** Drops repeats (same code, location and message), keeping the first: a base's problem reported by each overlay is one problem. */
export function dedupeDiagnostics(ds: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return ds.filter((d) => {
    const key = JSON.stringify([d.code, d.location, d.message]);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
