// The project configuration is read from package.json, which a pull request can plant: it is read only as a
// regular file inside the project and of a bounded size (compiler/cli/config.ts `loadConfig`), and everything
// else is a one-line usage error. A link to /dev/zero was read until memory ran out.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, MAX_PACKAGE_JSON_BYTES } from "../../compiler/cli/config.js";
import { CliError } from "../../compiler/cli/context.js";
import { printable } from "../../compiler/diagnostics/format.js";
import { runCli } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const project = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-config-"));
  dirs.push(dir);
  return dir;
};
const FIELD = JSON.stringify({ type: "module", pruneguard: { out: "gen" } });

describe("reading package.json", () => {
  it("reads a plain file, and a link to a file inside the project", async () => {
    const dir = project();
    writeFileSync(path.join(dir, "package.json"), FIELD);
    expect((await loadConfig(dir)).out).toBe("gen");
    const linked = project();
    mkdirSync(path.join(linked, "config"));
    writeFileSync(path.join(linked, "config", "package.json"), FIELD);
    symlinkSync(path.join(linked, "config", "package.json"), path.join(linked, "package.json"));
    expect((await loadConfig(linked)).out).toBe("gen");
  });

  it("takes no package.json as no configuration", async () => {
    expect((await loadConfig(project())).out).toBe("generated");
  });

  it.each([
    ["a device", () => "/dev/zero", /leads outside the project/],
    ["a file outside the project", () => {
      const outside = path.join(project(), "package.json");
      writeFileSync(outside, FIELD);
      return outside;
    }, /leads outside the project/],
    ["nothing", () => "/nonexistent/package.json", /leads nowhere/],
  ])("refuses a link to %s with a usage error, reading nothing", async (_what, target, message) => {
    const dir = project();
    symlinkSync(target(), path.join(dir, "package.json"));
    const err = await loadConfig(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as Error).message).toMatch(message);
  });

  it("refuses a package.json larger than the bound, a FIFO and a folder of that name", async () => {
    const fifo = project();
    execFileSync("mkfifo", [path.join(fifo, "package.json")]);
    // Opened, a FIFO with no writer would block: it is refused before any open.
    await expect(loadConfig(fifo)).rejects.toThrow(/not a regular file/);
    const big = project();
    writeFileSync(path.join(big, "package.json"), `{"description":"${"x".repeat(MAX_PACKAGE_JSON_BYTES)}"}`);
    await expect(loadConfig(big)).rejects.toThrow(/larger than 1 MiB/);
    const folder = project();
    mkdirSync(path.join(folder, "package.json"));
    await expect(loadConfig(folder)).rejects.toThrow(/not a regular file/);
  });
});

describe("what package.json says is printed as text, never as terminal control", () => {
  it("a pattern with an escape sequence or a bidirectional override is quoted escaped in the usage error", async () => {
    const dir = project();
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module", pruneguard: { policies: ["\u001b[2J\u001b[Hpolicies\u202e/x.policy.ts"] } }));
    const r = await runCli(["check"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/[\u001b\u202e]/);
    expect(r.stderr).toContain("\\u001b[2J");
    expect(r.stderr).toContain("\\u202e");
  });

  it("printable escapes the invisible and bidirectional characters too, and keeps tabs, newlines and other text", () => {
    expect(printable("a\u202eb\u2066c\u200bd\ufeffe\u00adf\u061cg")).toBe("a\\u202eb\\u2066c\\u200bd\\ufeffe\\u00adf\\u061cg");
    expect(printable("tab\there\nnext é ✓")).toBe("tab\there\nnext é ✓");
  });
});
