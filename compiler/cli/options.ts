/** Options several commands share, as commander options (only the command registrations load commander). */
import { Option } from "commander";

/**
 * `--format pretty|json`, the same on every command; with `json`, errors (exit 2) are JSON on stdout too.
 * A command with more renderings (`diff`: markdown; `explain`: markdown, html) lists them after these two.
 */
export const formatOption = (more: readonly string[] = [], what = "json prints results and errors as data on stdout") =>
  new Option("--format <format>", `output format; ${what}`).choices(["pretty", "json", ...more]).default("pretty");

/** `--root <dir>`: the only folder policy files are read from. */
export const rootOption = () =>
  new Option("--root <dir>", 'the project root: no policy file, import or link outside it is read (default: package.json "pruneguard".root, else the working directory)');
