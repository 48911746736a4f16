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

/** Makes a diagnostic from the catalogue. The category comes from the catalogue, never from the caller. */
export function diagnostic<C extends DiagnosticCode>(
  code: C,
  location: Location | null,
  params: Params<C>,
  related: readonly RelatedInformation[] = [],
): Diagnostic {
  const entry = catalogue[code];
  return {
    code,
    category: entry.category,
    message: renderTemplate(entry.template, params as Readonly<Record<string, string | number>>),
    location,
    related: [...related],
  };
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
