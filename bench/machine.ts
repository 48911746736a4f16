/** The machine a run measured, printed at the top of the report and copied into BENCHMARKS.md. */
import { readFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export function describeMachine(root: string): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() || "unknown CPU";
  const ts = versionOf(path.join(root, "node_modules/typescript/package.json"));
  const load = os.loadavg().map((l) => l.toFixed(2)).join(" ");
  return [
    `${model}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM`,
    `${os.type()} ${os.release()} (${os.arch()})`,
    `Node.js ${process.versions.node}, TypeScript ${ts}`,
    `load average at start: ${load}`,
  ].join("; ");
}

function versionOf(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(pkg, "utf8")) as { version?: string }).version ?? "?";
  } catch {
    return "?";
  }
}
