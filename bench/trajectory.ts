/**
 * A trajectory of real tool outputs for benchmark 11: the commands a coding agent runs while reading a
 * repository — file reads, greps, git logs, directory listings — run for real over this repository at
 * its current commit. The outputs differ per commit, so they are made when the benchmark runs and never
 * committed. Each output is cut at `MAX_OUTPUT_CHARS`, as agent tools cut theirs.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";

/** One tool call the agent makes and what it printed. */
export interface ToolStep {
  readonly tool: "read_file" | "grep" | "git_log" | "list_dir";
  readonly input: Readonly<Record<string, string>>;
  readonly output: string;
}

/** Agent tools cut long outputs; 12 KB is what common ones keep (a few thousand tokens). */
export const MAX_OUTPUT_CHARS = 12_000;

/** `text` cut at `max` characters, saying so, as agent tools cut their outputs. */
const cutAt = (max: number) => (text: string) => (text.length > max ? `${text.slice(0, max)}\n[output cut at ${max} characters]` : text);

/** Identifiers worth grepping for: exported names, read off the files the agent opens. */
function identifiers(text: string): string[] {
  return [...text.matchAll(/export (?:async )?(?:function|class|const|interface|type) ([A-Za-z_]\w{5,})/g)].map((m) => m[1]!);
}

/** Source files under `dir`, in a stable order. */
function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(path.join(root, d)).sort()) {
      const rel = path.posix.join(d, name);
      const st = statSync(path.join(root, rel));
      if (st.isDirectory()) walk(rel);
      else if (/\.ts$/.test(name)) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

function git(root: string, args: readonly string[]): string {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "ignore"] });
  } catch (err) {
    // `git grep` exits 1 when nothing matches; a clone without history has no log: the tool says so.
    const out = (err as { stdout?: string }).stdout;
    return typeof out === "string" && out.length > 0 ? out : `(no output: git ${args[0]} failed)`;
  }
}

/**
 * `steps` tool calls over the repository at `root`: read a file, grep for a name it exports, now and then
 * a directory listing or a git log — the mix of a session that reads its way into a code base. Each output
 * is cut at `maxChars` (default `MAX_OUTPUT_CHARS`; tools that keep less make pruning free less per call).
 */
export function makeTrajectory(root: string, steps: number, maxChars: number = MAX_OUTPUT_CHARS): ToolStep[] {
  const cut = cutAt(maxChars);
  const files = ["src", "compiler", "dsl", "test", "bench"].flatMap((d) => sourceFiles(root, d));
  const out: ToolStep[] = [];
  const names: string[] = [];
  let f = 0;
  for (let i = 0; out.length < steps; i++) {
    const phase = i % 6;
    if (phase === 5) {
      out.push({ tool: "git_log", input: { args: `-n 12 --stat --skip=${i}` }, output: cut(git(root, ["log", "-n", "12", "--stat", `--skip=${i}`])) });
    } else if (phase === 2 && names.length > 0) {
      const name = names[(i * 7) % names.length]!;
      out.push({ tool: "grep", input: { pattern: name }, output: cut(git(root, ["grep", "-n", "-e", name, "--", "src", "compiler", "test"])) });
    } else if (phase === 4) {
      const dir = path.posix.dirname(files[f % files.length]!);
      out.push({ tool: "list_dir", input: { path: dir }, output: cut(readdirSync(path.join(root, dir)).sort().join("\n")) });
    } else {
      const file = files[f++ % files.length]!;
      const text = readFileSync(path.join(root, file), "utf8");
      names.push(...identifiers(text));
      out.push({ tool: "read_file", input: { path: file }, output: cut(text) });
    }
  }
  return out;
}
