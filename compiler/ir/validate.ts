/**
 * Validates the front end's output against the IR schema. A failure is reported as PG1011 at the most
 * precise location the IR knows for the failing path (a field's location, else its node's).
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Location } from "./location.js";
import { PolicyIR } from "./schema.js";

export function validatePolicy(candidate: unknown): { policy: PolicyIR | undefined; diagnostics: Diagnostic[] } {
  const result = PolicyIR.safeParse(candidate);
  if (result.success) return { policy: result.data, diagnostics: [] };
  const diagnostics = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? ` (at ${issue.path.map(String).join(".")})` : "";
    const subject = describePath(candidate, issue.path);
    return diagnostic("PG1011", locationFor(candidate, issue.path), { message: `${subject}: ${issue.message.toLowerCase()}${where}` });
  });
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

function describePath(root: unknown, path: readonly PropertyKey[]): string {
  let node: unknown = root;
  let subject = "policy";
  for (const key of path) {
    if (!isRecord(node) && !Array.isArray(node)) break;
    node = (node as Record<PropertyKey, unknown>)[key];
    if (isRecord(node) && typeof node["name"] === "string" && typeof key === "number") subject = `\`${node["name"]}\``;
  }
  return subject;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function isLocation(v: unknown): v is Location {
  return isRecord(v) && typeof v["file"] === "string" && typeof v["line"] === "number";
}
