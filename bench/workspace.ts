/**
 * Scratch folders for the CLI and type-check benchmarks: a temporary directory that resolves
 * `pruneguard` and `pruneguard/dsl` to this repository's built package (through a symlinked
 * `node_modules/pruneguard`), as a consumer's project would after `npm install pruneguard`.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";

export interface Workspace {
  readonly dir: string;
  write(file: string, contents: string): void;
  /** A `tsconfig.json` in `sub` (default the workspace) that type-checks `include`, strict, no emit. */
  tsconfig(include: readonly string[], sub?: string): string;
  remove(): void;
}

export function createWorkspace(root: string, tag: string): Workspace {
  const dir = mkdtempSync(path.join(tmpdir(), `pruneguard-bench-${tag}-`));
  mkdirSync(path.join(dir, "node_modules"), { recursive: true });
  symlinkSync(root, path.join(dir, "node_modules", "pruneguard"), "dir");
  // Under NodeNext a .ts file is ESM only inside a "type": "module" package, as the repository's own are.
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: `bench-${tag}`, private: true, type: "module" }, null, 2));
  const write = (file: string, contents: string) => {
    const target = path.join(dir, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, contents);
  };
  return {
    dir,
    write,
    tsconfig(include, sub = ".") {
      const file = path.join(sub, "tsconfig.json");
      write(
        file,
        JSON.stringify(
          {
            compilerOptions: {
              target: "ES2022",
              lib: ["ES2023"],
              module: "NodeNext",
              moduleResolution: "NodeNext",
              strict: true,
              exactOptionalPropertyTypes: true,
              noUncheckedIndexedAccess: true,
              verbatimModuleSyntax: true,
              skipLibCheck: true,
              types: [],
              noEmit: true,
            },
            include,
          },
          null,
          2,
        ),
      );
      return path.join(dir, file);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
