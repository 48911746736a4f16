/** What the CLI's HTML pages (`explain --format html`, `audit --format html`) share. */

/** HTML text: `&`, `<`, `>` and quotes escaped, so nothing from a policy file or a store becomes markup. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
