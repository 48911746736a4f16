// `explain --format markdown|html`. The HTML page is self-contained (no script, font, image or URL leaves
// it) and is rendered in a real headless browser, Debian's `chromium` (.ci/run installs it; where it is
// missing the browser test is skipped, saying so): it renders (a PNG screenshot, whose path the test
// prints) and nothing overflows a 1280 px window, measured in the page by a script this test adds to a copy.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli as run } from "./helpers.js";

const CHROMIUM = ["chromium", "chromium-browser"].find((c) => spawnSync("sh", ["-c", `command -v ${c}`]).status === 0);
if (!CHROMIUM) console.warn("explain-html.test.ts: chromium is not installed (apt-get install -y chromium), so the page is not rendered in a browser here");

/** A policy with long names and pins, so the layout has to wrap (nothing from a policy may widen the page). */
const WIDE = `import { definePolicy, extendPolicy, store, hours, days, pin } from "pruneguard/dsl";
export const veryLongIdentifierPatternName = pin("veryLongIdentifierPatternNameThatNeverEnds", /ORDERNUMBER-[0-9]{10,20}-[A-Z]{3,9}-SUFFIX/);
export default definePolicy({
  name: "org-with-a-rather-long-policy-name",
  stores: {
    aStoreWithAnExtraordinarilyLongNameForTesting: store.postgres({ retention: days(400), holds: false }),
    log: store.sqlite({ retention: hours(2) }),
  },
  kinds: {
    theKindWhoseNameIsLongerThanAnyColumnWouldLike: { store: "aStoreWithAnExtraordinarilyLongNameForTesting", modes: ["drop", "summarize", "compress"], lossy: "with-flag", pins: [veryLongIdentifierPatternName] },
    shortLived: { store: "log", modes: ["drop"], lossy: "with-flag" },
    notes: { store: null, modes: ["drop"], lossy: "with-flag" },
  },
  tombstone: "{span} pruned <b>for</b> good",
});
`;

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pruneguard-explain-"));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  return dir;
}

/** Runs chromium headless on a file, as CI would, with nothing of its own to fetch. */
function chromium(args: readonly string[], file: string, profile: string) {
  return spawnSync(
    CHROMIUM!,
    ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", `--user-data-dir=${profile}`, "--window-size=1280,900", ...args, `file://${file}`],
    { encoding: "utf8", timeout: 60_000 },
  );
}

describe("explain --format html", () => {
  it("is one self-contained page: no script, link, font, image or URL, everything from the policy escaped", async () => {
    const r = await run(["explain", "examples/policies", "--format", "html"]);
    expect(r.code, r.stderr).toBe(0);
    const html = r.stdout;
    expect(html.startsWith("<!doctype html>\n")).toBe(true);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'">`);
    for (const banned of [/<script/i, /<link/i, /<img/i, /<iframe/i, /\ssrc=/i, /url\(/i, /@import/i, /@font-face/i, /https?:\/\//i]) expect(html, String(banned)).not.toMatch(banned);
    // The only links are to the page's own sections.
    for (const m of html.matchAll(/href="([^"]*)"/g)) expect(m[1]).toMatch(/^#policy-[a-z0-9-]+$/);
    // One section per policy; an overlay is shown against its base, each kind with its fate as a timeline.
    expect(html.match(/<section id="policy-/g)).toHaveLength(3);
    expect(html).toContain("<h3>Against its base org</h3>");
    expect(html).toContain('aria-label="0–2h reversible; 2h–8h lossy only with flag"');
    for (const phase of ["reversible", "lossy-with-flag", "never"]) expect(html).toContain(`class="seg p-${phase}"`);
    const wide = await run(["explain", "org.policy.ts", "--format", "html"], project({ "org.policy.ts": WIDE }));
    expect(wide.stdout).toContain("&quot;{span} pruned &lt;b&gt;for&lt;/b&gt; good&quot;");
    expect(wide.stdout).not.toContain("<b>for</b>");
    expect(wide.stdout).toContain('class="seg p-reversible-until"');
  });

  it.skipIf(!CHROMIUM)(`renders in headless Chromium, and nothing overflows at 1280 px${CHROMIUM ? "" : " (skipped: chromium is not installed; apt-get install -y chromium)"}`, async () => {
    const dir = project({ "org.policy.ts": WIDE });
    const pages: Array<[string, string]> = [
      ["examples", (await run(["explain", "examples/policies", "--format", "html"])).stdout],
      ["wide", (await run(["explain", "org.policy.ts", "--format", "html"], dir)).stdout],
    ];
    const out = mkdtempSync(path.join(tmpdir(), "pruneguard-explain-html-"));
    for (const [name, html] of pages) {
      const page = path.join(out, `${name}.html`);
      writeFileSync(page, html);
      const shot = path.join(out, `${name}.png`);
      const s = chromium([`--screenshot=${shot}`], page, path.join(out, `profile-${name}`));
      expect(s.status, s.stderr).toBe(0);
      const png = readFileSync(shot);
      expect(png.length).toBeGreaterThan(10_000);
      expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      console.log(`explain --format html (${name}), rendered by ${CHROMIUM} at 1280×900: ${shot}`);

      // The measurement: a copy of the page with a script that writes, into the DOM, how wide the document
      // is and every box whose content is wider than the box (the page's own policy forbids scripts, so
      // the copy drops it). --dump-dom prints the DOM once the page has loaded and the script has run.
      const probe = html.replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, "").replace(
        "</body>",
        `<script>
const over = [];
for (const el of document.querySelectorAll("body *")) {
  const cs = getComputedStyle(el);
  if (cs.display === "inline" || el.clientWidth === 0) continue;
  const r = el.getBoundingClientRect();
  if (el.scrollWidth > el.clientWidth + 1 || r.right > innerWidth + 0.5) over.push(el.tagName.toLowerCase() + "." + el.className + " " + el.scrollWidth + ">" + el.clientWidth);
}
const pre = document.createElement("pre");
pre.id = "measure";
pre.textContent = JSON.stringify({ innerWidth, scrollWidth: document.documentElement.scrollWidth, over });
document.body.append(pre);
</script></body>`,
      );
      const probeFile = path.join(out, `${name}.probe.html`);
      writeFileSync(probeFile, probe);
      const d = chromium(["--dump-dom"], probeFile, path.join(out, `profile-${name}-probe`));
      expect(d.status, d.stderr).toBe(0);
      const m = /<pre id="measure">(.*?)<\/pre>/.exec(d.stdout);
      expect(m, d.stdout.slice(-500)).not.toBeNull();
      const measured = JSON.parse(m![1]!.replace(/&gt;/g, ">").replace(/&lt;/g, "<").replace(/&quot;/g, '"').replace(/&amp;/g, "&")) as { innerWidth: number; scrollWidth: number; over: string[] };
      expect(measured.innerWidth).toBe(1280);
      expect(measured.scrollWidth, name).toBeLessThanOrEqual(1280);
      expect(measured.over, name).toEqual([]);
    }
    // The screenshots stay for the reader; the browser profiles go.
    for (const [name] of pages) for (const p of [`profile-${name}`, `profile-${name}-probe`]) rmSync(path.join(out, p), { recursive: true, force: true });
  });
});

describe("explain --format markdown", () => {
  it("prints tables: stores, kinds, fates over the session, and an overlay against its base", async () => {
    const r = await run(["explain", "examples/policies/team-search.policy.ts", "--format", "markdown"]);
    expect(r.code, r.stderr).toBe(0);
    const md = r.stdout;
    expect(md).toContain("## `team-search` (extends `org`)");
    expect(md).toContain("| store | engine | retention | holds | distinguishes absent | writable | backs |");
    expect(md).toContain("| searchIndex | postgres | 7d | yes | yes | yes | searchHit |");
    expect(md).toContain("| kind | store | retention | holds | modes | lossy | re-persist | pins | fate |");
    expect(md).toContain("| kind | team-search | org |");
    expect(md).toContain("| toolResult | 0–4h reversible | 0–8h reversible |");
    expect(md).toContain("| searchHit | 0–4h reversible | (not in the base) |");
    expect(md).toContain("### Against its base `org`");
    expect(md).toContain("| kind toolResult | lossy | with-flag | forbid | tightening |");
    expect(md).toContain("| session | lossyBudget | 5 | 2 | tightening |");
  });
});
