/** Renders `docs/diagnostics.md` from the catalogue; a test keeps the committed file equal to this. */
import { catalogue, type CatalogueEntry } from "./catalogue.js";

const RANGES: ReadonlyArray<readonly [string, string]> = [
  ["PG1", "PG1xxx — syntax and extraction"],
  ["PG2", "PG2xxx — semantics"],
  ["PG3", "PG3xxx — analysis warnings"],
];

export function renderDiagnosticsDoc(): string {
  const out: string[] = [
    "# Diagnostics",
    "",
    "<!-- generated from compiler/diagnostics/catalogue.ts by `UPDATE_DOCS=1 npx vitest run test/compiler/catalogue.test.ts`; do not edit -->",
    "",
    "Every diagnostic the policy compiler reports has a stable code. Errors make `pruneguard check` and",
    "`pruneguard compile` exit with 1; warnings are printed and do not change the exit code.",
    "Diagnostics print like the TypeScript compiler's (`path:line:col - error PG2003: message` and a code",
    "frame); `--format json` prints the same data.",
    "",
  ];
  for (const [prefix, heading] of RANGES) {
    out.push(`## ${heading}`, "");
    for (const [code, entry] of Object.entries(catalogue) as Array<[string, CatalogueEntry]>) {
      if (!code.startsWith(prefix)) continue;
      out.push(`### ${code} — ${entry.title} (${entry.category})`, "", `Message: ${entry.template}`, "", "Example:", "", "```ts", entry.example, "```", "");
    }
  }
  return `${out.join("\n").trimEnd()}\n`;
}
