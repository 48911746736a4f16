/** Child processes for the session tests: spawn `session-child.mjs`, read its JSON lines. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./session-child.mjs", import.meta.url));

/** Must match `textFor` in session-child.mjs. */
export const textFor = (n: number): string => `output ${n}: ${"x".repeat(n % 53)} req_${n.toString(16).padStart(8, "0")}`;

export interface Child {
  readonly proc: ChildProcess;
  /** Every JSON line printed so far. */
  readonly lines: Array<Record<string, unknown>>;
  /** Resolves with the first line (already printed or to come) that matches. */
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export function spawnChild(args: Record<string, unknown>): Child {
  const proc = spawn(process.execPath, [CHILD, JSON.stringify(args)], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<{ match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }> = [];
  let buf = "";
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  proc.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
      buf = buf.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal, stderr })),
  );
  return {
    proc,
    lines,
    exited,
    waitFor(match, timeoutMs = 60_000) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching line within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
        waiters.push({ match, resolve: (l) => { clearTimeout(timer); resolve(l); } });
        void exited.then((e) => {
          clearTimeout(timer);
          if (!lines.some(match)) reject(new Error(`child exited (${e.code ?? e.signal}) without a matching line; stderr: ${e.stderr}`));
        });
      });
    },
  };
}
