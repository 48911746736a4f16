/** Markdown for pull-request comments and docs: GitHub-flavoured tables whose cells cannot break the table. */

/** A cell: pipes escaped, line breaks as spaces, so text from a policy file stays in its cell. */
export function mdCell(text: string): string {
  return text.replace(/\r\n|\r|\n/g, " ").replace(/\\/g, "\\\\").replace(/\|/g, "\\|").trim() || " ";
}

/** `` `code` `` that holds any text: the fence is one backtick longer than the longest run inside. */
export function mdCode(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = "`".repeat(longest + 1);
  return `${fence}${/^`|`$/.test(text) ? ` ${text} ` : text}${fence}`;
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map(mdCell).join(" | ")} |`;
  return [line(header), `|${header.map(() => " --- ").join("|")}|`, ...rows.map(line)].join("\n");
}
