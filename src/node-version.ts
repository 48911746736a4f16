/**
 * The Node.js versions pruneguard runs on, said once, at start-up, in words. Below 22.13 `node:sqlite` is
 * missing or behind a flag, and an agent on Node 20 used to fail deep inside its first SQLite store
 * (`Cannot destructure property 'DatabaseSync' of 'process.getBuiltinModule(...)'`), or `pruneguard audit`
 * with `No such built-in module: node:sqlite`. The runtime's entry points check on import
 * (`assert-node.ts`) and the CLI before it loads anything (`bin/pruneguard.js`). Imports nothing, so the
 * check runs before any module that could fail on an older Node.
 */

/** The lowest supported version: package.json's `engines.node` (`>=22.13`; a test keeps the two equal). */
export const SUPPORTED_NODE = { major: 22, minor: 13 } as const;

/**
 * Why this Node.js cannot run pruneguard, as one message naming the version found, the version needed and
 * how to get it; `null` when it can. A runtime that reports no Node version (not Node) is not judged here.
 */
export function unsupportedNode(version: string | undefined = process.versions?.node): string | null {
  const m = /^(\d+)\.(\d+)/.exec(version ?? "");
  if (!m) return null;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  const { major: needMajor, minor: needMinor } = SUPPORTED_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return (
    `Node.js ${version} is too old for pruneguard, which needs Node.js ${needMajor}.${needMinor} or later (its SQLite store uses node:sqlite). ` +
    `Install Node.js ${needMajor} LTS or later from https://nodejs.org/, or with a version manager (\`nvm install ${needMajor}\`, \`fnm install ${needMajor}\`), and run again.`
  );
}

/** Throws the message of `unsupportedNode` when there is one. Cheap: one regular expression, at import. */
export function assertSupportedNode(): void {
  const problem = unsupportedNode();
  if (problem !== null) throw new Error(problem);
}
