/**
 * The manifest's seal: an HMAC-SHA256 of the manifest's bytes under a key that lives outside every project,
 * in the user's cache folder. A manifest is a local cache, but it sits in the output folder, where a pull
 * request can plant one: unsealed, a planted manifest could replay warnings located in any file (printing it
 * in a code frame) or describe a policy with errors as clean, so that `check` passes on outputs it never
 * compiled. Only a manifest this machine's compiler wrote verifies; anything else is ignored whole, and the
 * build is a full one.
 *
 * The key is 32 random bytes in `<cache>/manifest.key` (mode 0600), where `<cache>` is
 * `PRUNEGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/pruneguard`, else `~/.cache/pruneguard`. It is refused (and
 * the build is then never incremental) when it is not a regular file of this user's that nobody else can
 * write, or when it lies inside the project root, where a pull request could plant it too.
 */
import { homedir } from "node:os";
import * as path from "node:path";
import { isInside, toPosix } from "../frontend/paths.js";

// Built-ins through `process.getBuiltinModule`, as in compiler/emit/files.ts: this module is on the path of a `check` with nothing to do.
const { createHmac, randomBytes, timingSafeEqual } = process.getBuiltinModule("node:crypto");
const { lstatSync, mkdirSync, readFileSync, realpathSync, writeFileSync } = process.getBuiltinModule("node:fs");

const KEY_FILE = "manifest.key";

/** The folder the key lives in. */
export function cacheFolder(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PRUNEGUARD_CACHE_DIR) return path.resolve(env.PRUNEGUARD_CACHE_DIR);
  if (env.XDG_CACHE_HOME) return path.join(path.resolve(env.XDG_CACHE_HOME), "pruneguard");
  return path.join(homedir(), ".cache", "pruneguard");
}

const keys = new Map<string, Buffer | undefined>();

/**
 * This machine's key, created on first use; `undefined` when it cannot be had safely (the build then reads
 * and writes no manifest). `root` is the project root (absolute): a key inside it is never used.
 */
export function manifestKey(root: string): Buffer | undefined {
  const folder = cacheFolder();
  const file = path.join(folder, KEY_FILE);
  if (isInside(toPosix(realOr(root)), toPosix(realOr(folder)))) return undefined;
  if (keys.has(file)) return keys.get(file);
  let key = readKey(file);
  if (key === undefined) {
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      writeFileSync(file, randomBytes(32).toString("hex"), { flag: "wx", mode: 0o600 });
    } catch {
      // Another process made it first (EEXIST), or the folder is not writable: read what is there.
    }
    key = readKey(file);
  }
  keys.set(file, key);
  return key;
}

function readKey(file: string): Buffer | undefined {
  try {
    const st = lstatSync(file);
    if (!st.isFile() || (st.mode & 0o022) !== 0) return undefined;
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) return undefined;
    const hex = readFileSync(file, "utf8").trim();
    return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, "hex") : undefined;
  } catch {
    return undefined;
  }
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The seal of `body` under `key`, as hex. */
export function seal(key: Buffer, body: string): string {
  return createHmac("sha256", key).update(body, "utf8").digest("hex");
}

/** Whether `mac` is the seal of `body` under `key` (compared in constant time). */
export function verifySeal(key: Buffer, body: string, mac: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(mac)) return false;
  return timingSafeEqual(Buffer.from(seal(key, body), "hex"), Buffer.from(mac, "hex"));
}
