/**
 * The paths `pruneguard init` reads and writes, confined to the project root (issue 35). The compiler refuses
 * to read through a link leaving the root (PG1018); init, which writes, is stricter: it refuses any symbolic
 * link on the way to a file it touches — the file itself or a folder between the root and it — wherever the
 * link points, since a link inside the project today can be repointed out of it by the next pull request.
 *
 * Node has no `openat`, so a folder swapped for a link between the check and the write cannot be prevented,
 * only caught: every write re-checks the folders after opening its file and compares the opened file with the
 * one the path names, and undoes a write that landed elsewhere. The file itself is never followed: a new file
 * is created with O_EXCL (which fails on any link), a rewritten one goes through a temporary file and a rename
 * (which replaces a link planted meanwhile rather than writing through it).
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, realpathSync, renameSync, unlinkSync, writeSync, type Stats } from "node:fs";
import * as path from "node:path";
import { printable } from "../../diagnostics/format.js";
import { readBoundedSync } from "../../emit/files.js";
import { isInside, toPosix } from "../../frontend/paths.js";
import { CliError } from "../context.js";

/** Larger than any package.json, .gitignore or tsconfig.json init has any business reading. */
const MAX_INIT_READ_BYTES = 16 * 1024 * 1024;

/** What is at a path init may use: nothing yet (init may create it), or a regular file in real folders. */
export type PathState = { readonly kind: "absent" } | { readonly kind: "file"; readonly stats: Stats };

/** A path init will not touch, and why, as one clause of the refusal message. */
export interface Refusal {
  readonly file: string;
  readonly why: string;
}

export type Checked = { readonly ok: true; readonly state: PathState } | { readonly ok: false; readonly refusal: Refusal };

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** The project root init writes in, and its real path (links above the root, such as macOS's /tmp, are the user's own). */
export class ProjectRoot {
  readonly dir: string;
  #real: string | undefined;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /** `rel` shown as the user would type it, with control characters escaped: `--policies` is free text. */
  show(rel: string): string {
    return printable(toPosix(rel));
  }

  /**
   * Whether init may read or write `rel` (relative to the root): inside the root, no component below the root
   * a symbolic link, every folder a folder, and the file, if it exists, a regular file.
   */
  check(rel: string): Checked {
    const abs = path.resolve(this.dir, rel);
    const shown = this.show(path.relative(this.dir, abs) || rel);
    if (!isInside(toPosix(this.dir), toPosix(abs)) || abs === this.dir) return refuse(this.show(rel), "is outside the project root");
    const parts = path.relative(this.dir, abs).split(path.sep);
    let at = this.dir;
    for (let i = 0; i < parts.length; i++) {
      at = path.join(at, parts[i]!);
      const last = i === parts.length - 1;
      const name = this.show(path.relative(this.dir, at));
      let st: Stats | undefined;
      try {
        st = lstatSync(at, { throwIfNoEntry: false });
      } catch (err) {
        return refuse(shown, `cannot be checked (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      }
      if (st === undefined) return { ok: true, state: { kind: "absent" } };
      const its = last ? "" : `its folder ${name} `;
      if (st.isSymbolicLink()) return refuse(shown, `${its}is a symbolic link to ${this.#pointsAt(at, last ? "a file" : "a folder")}`);
      if (!last && !st.isDirectory()) return refuse(shown, `${its}is not a folder`);
      if (last && !st.isFile()) return refuse(shown, "is not a regular file");
      if (last) return { ok: true, state: { kind: "file", stats: st } };
    }
    return { ok: true, state: { kind: "absent" } };
  }

  /** Where a link leads, in words: never its target's text, which the repository chose and may be anything. */
  #pointsAt(link: string, what: string): string {
    let target: string;
    try {
      target = realpathSync(link);
    } catch {
      return "nothing (a dangling link)";
    }
    return isInside(toPosix(this.#realRoot()), toPosix(target)) ? `${what} inside the project root` : `${what} outside the project root`;
  }

  #realRoot(): string {
    if (this.#real === undefined) {
      try {
        this.#real = realpathSync(this.dir);
      } catch {
        this.#real = this.dir;
      }
    }
    return this.#real;
  }

  /** `check`, throwing the refusal: for the moment of writing, after everything was checked once already. */
  #mustBe(rel: string, kind: PathState["kind"] | "any"): PathState {
    const c = this.check(rel);
    if (!c.ok) throw refusalError([c.refusal], "init stopped");
    if (kind !== "any" && c.state.kind !== kind) throw new CliError(`${this.show(rel)} changed while init was writing (it ${c.state.kind === "absent" ? "is gone" : "appeared"}); init stopped`);
    return c.state;
  }

  /**
   * The text of a file `check` found regular. Read without following a link (the compiler's bounded read), and
   * checked again afterwards: a folder swapped for a link mid-read shows as another file.
   */
  read(rel: string, checked: Stats): string {
    const text = readBoundedSync(path.resolve(this.dir, rel), MAX_INIT_READ_BYTES);
    const now = this.#mustBe(rel, "file");
    if (text === undefined) throw new CliError(`cannot read ${this.show(rel)}: larger than ${MAX_INIT_READ_BYTES} bytes, or it changed while init read it`);
    if (now.kind !== "file" || !sameFile(now.stats, checked)) throw new CliError(`${this.show(rel)} changed while init read it; init left it alone`);
    return text;
  }

  /** Creates `rel`, which must not exist: its missing folders one at a time, each checked, then the file with O_EXCL. */
  create(rel: string, text: string): void {
    this.#folders(path.dirname(rel));
    this.#mustBe(rel, "absent");
    const abs = path.resolve(this.dir, rel);
    this.#writeOpened(rel, abs, () => openSync(abs, CREATE_FLAGS, 0o666), text);
  }

  /**
   * Replaces `rel`, a regular file `check` found, with `text`: through a temporary file in the same folder and a
   * rename, keeping the file's permissions.
   */
  replace(rel: string, text: string, checked: Stats): void {
    const now = this.#mustBe(rel, "file");
    if (now.kind !== "file" || !sameFile(now.stats, checked)) throw new CliError(`${this.show(rel)} changed while init was writing; init left it alone`);
    const abs = path.resolve(this.dir, rel);
    const tempRel = path.join(path.dirname(rel), `.${path.basename(rel)}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`);
    const temp = path.resolve(this.dir, tempRel);
    this.#writeOpened(tempRel, temp, () => {
      const fd = openSync(temp, CREATE_FLAGS, 0o600);
      try {
        fchmodSync(fd, checked.mode & 0o7777);
      } catch (err) {
        closeSync(fd);
        removeQuietly(temp);
        throw err;
      }
      return fd;
    }, text);
    try {
      this.#mustBe(rel, "any");
      renameSync(temp, abs);
    } catch (err) {
      removeQuietly(temp);
      throw err instanceof CliError ? err : new CliError(`cannot write ${this.show(rel)}: ${(err as Error).message}`);
    }
  }

  /** Opens `abs` with `open`, confirms the opened file is the one `rel` names inside the root, then writes. */
  #writeOpened(rel: string, abs: string, open: () => number, text: string): void {
    let fd: number;
    try {
      fd = open();
    } catch (err) {
      throw new CliError(`cannot write ${this.show(rel)}: ${(err as Error).message}`);
    }
    let opened: Stats | undefined;
    try {
      opened = fstatSync(fd);
      const now = this.check(rel);
      // A folder on the way became a link after the check: the file just made is wherever it leads.
      if (!now.ok) throw refusalError([now.refusal], "init stopped");
      if (now.state.kind !== "file" || !sameFile(now.state.stats, opened)) throw new CliError(`${this.show(rel)} changed while init was writing; init stopped`);
      const bytes = Buffer.from(text, "utf8");
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    } catch (err) {
      // Only the file this call made is removed, never one that took its name meanwhile.
      if (opened !== undefined) removeIfSame(abs, opened);
      throw err instanceof CliError ? err : new CliError(`cannot write ${this.show(rel)}: ${(err as Error).message}`);
    } finally {
      closeSync(fd);
    }
  }

  /** Makes the folders of `relDir` that are missing, one level at a time, never through a link. */
  #folders(relDir: string): void {
    const parts = path.relative(this.dir, path.resolve(this.dir, relDir)).split(path.sep).filter((p) => p !== "");
    let rel = "";
    for (const part of parts) {
      rel = path.join(rel, part);
      const abs = path.resolve(this.dir, rel);
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (st === undefined) {
        try {
          // Not recursive: mkdir -p would follow a link planted above it since the check.
          mkdirSync(abs);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new CliError(`cannot make the folder ${this.show(rel)}: ${(err as Error).message}`);
        }
      }
      const now = lstatSync(abs, { throwIfNoEntry: false });
      if (now === undefined || now.isSymbolicLink() || !now.isDirectory()) {
        throw new CliError(`${this.show(rel)} ${now?.isSymbolicLink() ? "became a symbolic link" : "is not a folder"} while init was writing; init stopped`);
      }
    }
  }
}

function refuse(file: string, why: string): Checked {
  return { ok: false, refusal: { file, why } };
}

/** One line naming every refused path, so fixing the first does not reveal the second on the next run. */
export function refusalError(refusals: readonly Refusal[], ending = "nothing was written"): CliError {
  const clauses = refusals.map((r) => (r.why.startsWith("its folder ") ? `${r.file}: ${r.why}` : `${r.file} ${r.why}`));
  return new CliError(`init writes only inside the project root and never through a symbolic link: ${clauses.join("; ")}; ${ending}`);
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone, or never made: either way there is nothing of init's left to remove.
  }
}

function removeIfSame(file: string, made: Stats): void {
  const now = lstatSync(file, { throwIfNoEntry: false });
  if (now !== undefined && sameFile(now, made)) removeQuietly(file);
}
