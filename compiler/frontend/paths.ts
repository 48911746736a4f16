/** Path helpers: the front end works in absolute paths and reports paths relative to the cwd, POSIX style. */
import * as path from "node:path";

export function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}

export function resolvePath(cwd: string, p: string): string {
  return toPosix(path.resolve(cwd, p));
}

export function displayPath(cwd: string, absolute: string): string {
  const rel = toPosix(path.relative(cwd, absolute));
  return rel === "" ? "." : rel;
}

/** `p` is `dir` or inside it (both absolute, POSIX). */
export function isInside(dir: string, p: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !path.posix.isAbsolute(rel));
}
