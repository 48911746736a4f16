/**
 * Validates the front end's output against the IR schema. A failure is reported as PG1011 at the most
 * precise location the IR knows for the failing path (a field's location, else its node's).
 *
 * A valid candidate is read by `parsePolicyIR` (plain code, the same result); the zod schema is asked only
 * when that cannot vouch for the candidate, so a compile of valid policies need not load zod. The schema is
 * here once `schema.ts` has been loaded (it hands itself over: the compiler's API, `index.ts`, loads it);
 * the incremental build, which compiles through `compile.ts` alone, loads it with `loadIrSchema` when a
 * validation throws `IrSchemaNeeded`, and compiles that entry again.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "./location.js";
import { parsePolicyIR } from "./parse.js";
import type { PolicyIR } from "./schema.js";

type Schema = (typeof import("./schema.js"))["PolicyIR"];

let schema: Schema | undefined;

/** Called by `schema.ts` as it loads. */
export function provideIrSchema(s: Schema): void {
  schema = s;
}

/** Loads the zod schema of the IR (and with it zod), for the validations `parsePolicyIR` cannot answer. */
export async function loadIrSchema(): Promise<void> {
  schema ??= (await import("./schema.js")).PolicyIR;
}

/** A candidate needs the zod schema to be told what is wrong with it, and it is not loaded: `loadIrSchema`, then validate again. */
export class IrSchemaNeeded extends Error {
  override readonly name = "IrSchemaNeeded";
}

export function validatePolicy(candidate: unknown): { policy: PolicyIR | undefined; diagnostics: Diagnostic[] } {
  const parsed = parsePolicyIR(candidate);
  if (parsed !== undefined) return { policy: parsed, diagnostics: [] };
  if (schema === undefined) throw new IrSchemaNeeded("the IR schema is not loaded: call loadIrSchema() first");
  const result = schema.safeParse(candidate);
  if (result.success) return { policy: result.data, diagnostics: [] };
  const diagnostics = result.error.issues.map((issue) =>
    diagnostic("PG1011", locationFor(candidate, issue.path), { message: `${describePath(candidate, issue.path)}: ${issue.message.toLowerCase()}` }),
  );
  return { policy: undefined, diagnostics };
}

/** Walks `path` through the candidate, keeping the deepest `fields[key]` or `location` seen. */
function locationFor(root: unknown, path: readonly PropertyKey[]): Location | null {
  let best: Location | null = null;
  let node: unknown = root;
  for (const key of path) {
    if (!isRecord(node)) break;
    if (isLocation(node["location"])) best = node["location"];
    const fields = node["fields"];
    if (typeof key === "string" && isRecord(fields) && isLocation(fields[key])) best = fields[key];
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  if (isRecord(node) && isLocation(node["location"])) best = node["location"];
  return best;
}

/**
 * The failing path as the author wrote it, as the runtime names a field (`kinds.audit.lossy`): an element of
 * the IR's arrays of kinds, stores and pins by its name, not its index, which the author never wrote.
 */
function describePath(root: unknown, path: readonly PropertyKey[]): string {
  let node: unknown = root;
  const parts: string[] = [];
  for (const key of path) {
    node = isRecord(node) ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    parts.push(typeof key === "number" && isRecord(node) && typeof node["name"] === "string" ? node["name"] : String(key));
  }
  return parts.length === 0 ? "policy" : parts.join(".");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function isLocation(v: unknown): v is Location {
  return isRecord(v) && typeof v["file"] === "string" && typeof v["line"] === "number";
}
