#!/usr/bin/env node
// Packs the two published packages from one build (`npm run build` first), into the folder given
// (default dist/packages):
//   pruneguard      the runtime and the policy DSL — what an agent process and a policy file import.
//                   Its only dependencies are zod, gpt-tokenizer and re2js; `pg` is an optional peer.
//   pruneguard-cli  the `pruneguard` command (init, compile, check, explain, diff, migrate, audit), with
//                   ts-morph, commander, chokidar and tinyglobby, and `pruneguard-cli/testing`, the entry
//                   point of policy tests (it needs the compiler). Installed as a devDependency, like a
//                   build tool. It depends on `pruneguard` at the same version and carries no runtime code.
// Prints the two tarball paths, one per line.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.resolve(process.argv[2] ?? path.join(root, "dist", "packages"));
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
if (!existsSync(path.join(root, "dist", "compiler", "cli", "main.js"))) {
  console.error("pack: dist/ is missing; run `npm run build` first");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const npmPack = (dir) => {
  const json = execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: dir, encoding: "utf8" });
  return path.join(out, JSON.parse(json)[0].filename);
};

// The runtime package: the repository's package.json and its `files`, with one export added for the CLI.
// `pruneguard/internal/*` maps onto dist/ (`pruneguard/internal/src/policy/durations.js`): the modules the
// compiler shares with the runtime but the public entry points do not export. It is not public API: it
// exists so that the CLI, released in lockstep from the same build, loads the runtime the project installed
// instead of a copy of its own; nothing else may import it, and any release may change what is under it.
const INTERNAL = "./internal/*";
const runtimeDir = path.join(out, "pruneguard");
rmSync(runtimeDir, { recursive: true, force: true });
for (const entry of pkg.files) cpSync(path.join(root, entry), path.join(runtimeDir, entry), { recursive: true });
writeFileSync(
  path.join(runtimeDir, "package.json"),
  `${JSON.stringify({ ...pkg, exports: { ...pkg.exports, [INTERNAL]: "./dist/*" } }, null, 2)}\n`,
);
const runtime = npmPack(runtimeDir);

// The CLI package: the compiled compiler and the command, and a manifest naming what the CLI itself loads.
// The compiler's imports of runtime modules (`../../src/policy/durations.js`) become imports of the runtime
// package: a public entry point where the module is one (`../../src/index.js` is `pruneguard`), else its
// internal path. So a project has one runtime, and a window the CLI opens (`pruneguard-cli/testing`) is
// made of the same classes as the project's.
const cliDir = path.join(out, "pruneguard-cli");
rmSync(cliDir, { recursive: true, force: true });
cpSync(path.join(root, "dist", "compiler"), path.join(cliDir, "dist", "compiler"), { recursive: true });
cpSync(path.join(root, "bin", "pruneguard.js"), path.join(cliDir, "bin", "pruneguard.js"));
cpSync(path.join(root, "LICENSE"), path.join(cliDir, "LICENSE"));
cpSync(path.join(root, "docs"), path.join(cliDir, "docs"), { recursive: true });
const publicEntries = new Map(
  Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === "object" && typeof target.default === "string")
    .map(([subpath, target]) => [path.join(root, target.default), `${pkg.name}${subpath.slice(1)}`]),
);
const runtimeFolders = ["src", "dsl"].map((f) => path.join(root, "dist", f) + path.sep);
/** The package specifier of a runtime module, by its path in this build; `undefined` for any other file. */
function runtimeSpecifier(file) {
  if (publicEntries.has(file)) return publicEntries.get(file);
  if (!runtimeFolders.some((f) => file.startsWith(f))) return undefined;
  return `${pkg.name}/${INTERNAL.slice(2, -1)}${path.relative(path.join(root, "dist"), file).split(path.sep).join("/")}`;
}
// Every relative module specifier in emitted JavaScript and declarations: `from "…"`, `import "…"`, `import("…")`.
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.\.?\/[^"']*)\2/g;
const rewritten = [];
for (const [copy, original] of [
  ...listFiles(path.join(cliDir, "dist", "compiler")).map((f) => [f, path.join(root, "dist", "compiler", path.relative(path.join(cliDir, "dist", "compiler"), f))]),
  [path.join(cliDir, "bin", "pruneguard.js"), path.join(root, "bin", "pruneguard.js")],
]) {
  if (!/\.(js|d\.ts)$/.test(copy)) continue;
  const text = readFileSync(copy, "utf8");
  const next = text.replace(SPECIFIER, (whole, head, q, spec) => {
    const target = runtimeSpecifier(path.resolve(path.dirname(original), spec));
    if (target !== undefined) return `${head}${q}${target}${q}`;
    // A module of this build that the CLI does not ship would fail at its first import. (A specifier that
    // names no file here is text in a string, such as a file `pruneguard init` writes.)
    if (existsSync(path.resolve(path.dirname(original), spec)) && !existsSync(path.resolve(path.dirname(copy), spec))) {
      throw new Error(`pack: ${path.relative(cliDir, copy)} imports ${spec}, which pruneguard-cli does not ship`);
    }
    return whole;
  });
  if (next !== text) {
    writeFileSync(copy, next);
    rewritten.push(copy);
  }
}
if (rewritten.length === 0) throw new Error("pack: no runtime import found in the compiler; the specifier pattern no longer matches tsc's output");
const cliDeps = ["ts-morph", "commander", "chokidar", "tinyglobby"];
const version = (name) => pkg.dependencies?.[name] ?? pkg.devDependencies?.[name];
writeFileSync(
  path.join(cliDir, "package.json"),
  `${JSON.stringify(
    {
      name: "pruneguard-cli",
      version: pkg.version,
      description: "The pruneguard command: compiles pruneguard policies to branded types and guards, checks them in CI, explains them, migrates and audits stores.",
      type: "module",
      license: pkg.license,
      engines: pkg.engines,
      bin: { pruneguard: "./bin/pruneguard.js" },
      // Policy tests import the compiler through this one entry; the command is the package's bin.
      exports: {
        "./testing": { types: "./dist/compiler/testing.d.ts", default: "./dist/compiler/testing.js" },
        "./package.json": "./package.json",
      },
      files: ["dist", "bin", "docs", "LICENSE", "README.md"],
      // The runtime at exactly this version: the CLI imports its internal modules, which no version range
      // promises anything about. zod, gpt-tokenizer and re2js the compiler also loads itself (or reads the
      // version of, for its fingerprint), at the runtime's versions, so npm installs each once.
      dependencies: Object.fromEntries([[pkg.name, pkg.version], ...[...Object.keys(pkg.dependencies), ...cliDeps].sort().map((n) => [n, version(n)])]),
      peerDependencies: { pg: pkg.peerDependencies.pg },
      peerDependenciesMeta: { pg: { optional: true } },
    },
    null,
    2,
  )}\n`,
);
writeFileSync(
  path.join(cliDir, "README.md"),
  `# pruneguard-cli\n\nThe \`pruneguard\` command. Install it next to the runtime:\n\n\`\`\`sh\nnpm install pruneguard\nnpm install --save-dev pruneguard-cli\nnpx pruneguard --help\n\`\`\`\n\n\`pruneguard init\` sets a package up, \`pruneguard compile\` turns policy files into branded types and guard modules, \`pruneguard check\` fails CI when they are stale, \`pruneguard explain\` prints what each kind's prunes become (also as markdown or one HTML page), \`pruneguard diff\` says what a change to the policies does and fails when it loosens one, \`pruneguard migrate\` and \`pruneguard audit\` work on stores. Policy tests import \`pruneguard-cli/testing\`. See docs/adopting.md and the pruneguard README.\n`,
);
const cli = npmPack(cliDir);
process.stdout.write(`${runtime}\n${cli}\n`);

function listFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}
