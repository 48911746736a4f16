#!/usr/bin/env node
// Packs the two published packages from one build (`npm run build` first), into the folder given
// (default dist/packages):
//   pruneguard      the runtime and the policy DSL — what an agent process and a policy file import.
//                   Its only dependencies are zod, gpt-tokenizer and re2js; `pg` is an optional peer.
//   pruneguard-cli  the `pruneguard` command (init, compile, check, explain, diff, migrate, audit), with
//                   ts-morph, commander, chokidar and tinyglobby, and `pruneguard-cli/testing`, the entry
//                   point of policy tests (it needs the compiler). Installed as a devDependency, like a
//                   build tool.
// Prints the two tarball paths, one per line.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

// The runtime package is the repository's own package.json (its `files` select dist/src and dist/dsl).
const runtime = npmPack(root);

// The CLI package: the compiled compiler with the runtime modules it imports, and a manifest naming
// only what the CLI itself loads.
const cliDir = path.join(out, "pruneguard-cli");
rmSync(cliDir, { recursive: true, force: true });
for (const part of ["compiler", "src", "dsl"]) cpSync(path.join(root, "dist", part), path.join(cliDir, "dist", part), { recursive: true });
cpSync(path.join(root, "bin", "pruneguard.js"), path.join(cliDir, "bin", "pruneguard.js"));
cpSync(path.join(root, "LICENSE"), path.join(cliDir, "LICENSE"));
cpSync(path.join(root, "docs"), path.join(cliDir, "docs"), { recursive: true });
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
      dependencies: Object.fromEntries([...Object.keys(pkg.dependencies), ...cliDeps].sort().map((n) => [n, version(n)])),
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
